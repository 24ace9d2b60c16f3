//! `--json-stream FILE`: the run as it happens, as NDJSON (one JSON object a line, each line
//! flushed as it is written, as iperf3's `--json-stream`): the run's start with its system
//! information, then for each point as soon as it is measured the figures of its intervals
//! (where it keeps them: its last repetition's, fio's and iperf3's per-second lines) and its
//! record, then the run's end. A reader (a CI job, `jq --seq`, a dashboard) parses each line as
//! it comes, while the run goes on. Every object has `event`: `start`, `interval`, `point` or
//! `end` (docs/json-schema.md, "The event stream").

use crate::results::{Report, ResultRecord};
use serde_json::json;
use std::io::Write;

/// The stream's format version, in its `start` event.
pub const STREAM_VERSION: u32 = 1;

/// An open event stream. A write that fails (a reader that went away, a full disk) is said
/// once on standard error and ends the stream; the run goes on and keeps its other outputs.
pub struct Stream {
    out: Option<Box<dyn Write + Send>>,
    name: String,
}

impl Stream {
    /// The stream into `out`, named `name` in its warning.
    pub fn new(out: Box<dyn Write + Send>, name: String) -> Stream {
        Stream {
            out: Some(out),
            name,
        }
    }

    /// Writes `event` as one line and flushes it.
    fn emit(&mut self, event: serde_json::Value) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let mut line = event.to_string();
        line.push('\n');
        if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
            eprintln!(
                "peakbench: warning: the event stream to {} stops here: {e}",
                crate::text::printable(&self.name)
            );
            self.out = None;
        }
    }

    /// The run's start: its version, tool, start, command line and system information.
    pub fn start(&mut self, report: &Report) {
        self.emit(json!({
            "event": "start",
            "stream_version": STREAM_VERSION,
            "schema_version": report.schema_version,
            "tool": report.tool,
            "started_at": report.started_at,
            "command_line": report.command_line,
            "system": report.system,
        }));
    }

    /// Points measured: for each record (its index in the run's `results` from `first`), its
    /// intervals, then the record itself.
    pub fn points(&mut self, first: usize, records: &[ResultRecord]) {
        for (i, r) in records.iter().enumerate() {
            let seq = first + i;
            let label = crate::results::point::label(r);
            if let Some(iv) = &r.intervals {
                for (k, v) in iv.values.iter().enumerate() {
                    self.emit(json!({
                        "event": "interval",
                        "seq": seq,
                        "label": label,
                        "subsystem": r.subsystem,
                        "workload": r.workload,
                        "metric": r.metric,
                        "unit": r.unit,
                        "index": k,
                        "start_s": k as f64 * iv.interval_s,
                        "end_s": (k + 1) as f64 * iv.interval_s,
                        "value": finite(*v),
                    }));
                }
            }
            self.emit(json!({
                "event": "point",
                "seq": seq,
                "label": label,
                "record": r,
            }));
        }
    }

    /// The run's end: how it ended and its points.
    pub fn end(&mut self, status: &str, points: usize) {
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        self.emit(json!({
            "event": "end",
            "status": status,
            "finished_at": now,
            "points": points,
        }));
    }
}

/// A figure as JSON: null where it is not finite (JSON has no NaN).
fn finite(v: f64) -> serde_json::Value {
    if v.is_finite() {
        json!(v)
    } else {
        serde_json::Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer that keeps what it is given, shared with the test.
    #[derive(Clone, Default)]
    struct Kept(Arc<Mutex<Vec<u8>>>);

    impl Write for Kept {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A writer that fails.
    struct Broken;

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Each event a line of its own that parses alone; an interval's NaN is null; a failed
    /// write ends the stream without a panic.
    #[test]
    fn every_line_is_an_event_of_its_own() {
        let report: Report = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/history/base.json"
        )))
        .unwrap();
        let kept = Kept::default();
        let mut s = Stream::new(Box::new(kept.clone()), "test".into());
        s.start(&report);
        let mut rec = report.results[0].clone();
        rec.intervals = Some(crate::results::Intervals {
            interval_s: 0.5,
            values: vec![1.0, f64::NAN],
        });
        s.points(3, &[rec]);
        s.end("complete", 4);
        let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
        let events: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<&str> = events
            .iter()
            .map(|e| e["event"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["start", "interval", "interval", "point", "end"]);
        assert_eq!(events[2]["value"], serde_json::Value::Null);
        assert_eq!(events[2]["end_s"], 1.0);
        assert_eq!(events[3]["seq"], 3);
        assert_eq!(events[4]["points"], 4);
        let mut broken = Stream::new(Box::new(Broken), "pipe".into());
        broken.start(&report);
        assert!(broken.out.is_none());
        broken.end("complete", 0);
    }
}
