//! The phases a point's figure went through while it ran ([`crate::results::phases`]): a burst
//! said with its rate, its length and its volume, then the rate the point kept ("burst: 3000
//! MB/s for 31.2 s (about 93600 MB), then 100 MB/s: what it keeps is the last"); other phases
//! as the levels in order with the time each began; under `--sustain`, when the points were
//! steady, and those that never were.

use super::{Finding, Kind};
use crate::results::phases::burst;
use crate::results::{Metric, ResultRecord};
use crate::units::format_sig;

/// The findings of the records `recs` that went through phases (a disk point's IOPS go
/// through its throughput's, one I/O a block: its throughput says them), and under `--sustain`
/// when they were steady, and those that never were.
pub(super) fn of<'a>(recs: impl Iterator<Item = &'a ResultRecord>) -> Vec<Finding> {
    let recs: Vec<&ResultRecord> = recs.filter(|r| r.metric != Metric::Iops).collect();
    let mut out = levels(&recs);
    out.extend(steady(&recs));
    out.extend(recs.iter().filter_map(|r| unsteady(r)));
    out
}

/// The `--sustain` points steady in every repetition, as one line: how many, and after how long
/// (fio prints the time its steadystate was met). A link's way is counted at its sender (its
/// receiver's record repeats it).
fn steady(recs: &[&ResultRecord]) -> Option<Finding> {
    let receiver = |r: &ResultRecord| {
        (r.params.net()).is_some_and(|n| n.side == Some(crate::results::params::Side::Receiver))
    };
    let sustained: Vec<&crate::results::phases::Sustain> = (recs.iter())
        .filter(|r| r.metric == Metric::Throughput && !receiver(r))
        .filter_map(|r| r.sustain.as_ref())
        .collect();
    let times: Vec<f64> = (sustained.iter())
        .filter(|s| s.never() == 0)
        .flat_map(|s| s.steady_s.iter().flatten().copied())
        .collect();
    let points = sustained.iter().filter(|s| s.never() == 0).count();
    let (lo, hi) = (
        times.iter().copied().reduce(f64::min)?,
        times.iter().copied().reduce(f64::max)?,
    );
    let longest = sustained.iter().map(|s| s.max_s).fold(0.0, f64::max);
    let subsystem = recs.first()?.subsystem;
    Some(Finding {
        subsystem,
        kind: Kind::Phases,
        text: format!(
            "--sustain: {points} point{} steady in every repetition, after {} s (of {} s at most): {}",
            if points == 1 { "" } else { "s" },
            if lo == hi {
                format_sig(lo)
            } else {
                format!("{}–{}", format_sig(lo), format_sig(hi))
            },
            format_sig(longest),
            if points == 1 {
                "its figure is a steady state"
            } else {
                "their figures are steady states"
            }
        ),
        cites: vec![points as f64, lo, hi],
    })
}

/// A `--sustain` point some repetition of which ran to its end without a steady window: its
/// figure is no steady state.
fn unsteady(r: &ResultRecord) -> Option<Finding> {
    let s = r
        .sustain
        .as_ref()
        .filter(|_| r.metric == Metric::Throughput)?;
    let never = s.never();
    (never > 0).then(|| Finding {
        subsystem: r.subsystem,
        kind: Kind::Phases,
        text: format!(
            "{}: not steady within --sustain's {} s in {never} of {} repetitions: its figure is no steady state (give a longer --sustain)",
            crate::results::point::label(r),
            format_sig(s.max_s),
            s.steady_s.len()
        ),
        cites: vec![s.max_s, never as f64],
    })
}

/// The findings of the records `recs` that went through phases.
fn levels(recs: &[&ResultRecord]) -> Vec<Finding> {
    recs.iter().filter_map(|r| {
        let phases = r.phases.as_deref().filter(|p| p.len() >= 2)?;
        let unit = r.unit.to_string();
        let label = crate::results::point::label(r);
        Some(match burst(phases) {
            Some((b, then)) => {
                let secs = b.end_s - b.start_s;
                // A rate per second over seconds: its amount in the rate's unit ("MB").
                let volume = unit
                    .strip_suffix("/s")
                    .map(|amount| format!(" (about {} {amount})", format_sig(b.value * secs)))
                    .unwrap_or_default();
                Finding {
                    subsystem: r.subsystem,
                    kind: Kind::Phases,
                    text: format!(
                        "{label}: burst: {} {unit} for {} s{volume}, then {} {unit} from {} s on: what it keeps is the last, not its mean",
                        format_sig(b.value),
                        format_sig(secs),
                        format_sig(then.value),
                        format_sig(then.start_s)
                    ),
                    cites: vec![b.value, secs, then.value],
                }
            }
            None => Finding {
                subsystem: r.subsystem,
                kind: Kind::Phases,
                text: format!(
                    "{label}: not steady while it ran: {}",
                    phases
                        .iter()
                        .map(|p| format!(
                            "{} {unit} from {} s{}",
                            format_sig(p.value),
                            format_sig(p.start_s),
                            if p.between_repetitions {
                                " (a repetition's start)"
                            } else {
                                ""
                            }
                        ))
                        .collect::<Vec<_>>()
                        .join(", then ")
                ),
                cites: phases.iter().map(|p| p.value).collect(),
            },
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Kind, of as findings};
    use crate::results::phases::Phase;
    use crate::results::{Metric, Report, Subsystem};

    /// The recorded quick run, its first disk throughput point given `phases` (in B/s).
    fn quick_with(phases: Vec<Phase>) -> Report {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let mut r = Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
        let disk = r
            .results
            .iter_mut()
            .find(|x| x.subsystem == Subsystem::Disk && x.metric == Metric::Throughput)
            .unwrap();
        disk.phases = Some(phases);
        r.displayed(&Default::default())
    }

    fn said(r: &Report) -> Vec<String> {
        findings(r)
            .into_iter()
            .filter(|f| f.kind == Kind::Phases)
            .map(|f| f.text)
            .collect()
    }

    #[test]
    fn a_burst_is_said_with_its_length_volume_and_what_follows() {
        let phase = Phase::new;
        let r = quick_with(vec![phase(0.0, 31.2, 3e9), phase(31.2, 60.0, 1e8)]);
        let text = said(&r);
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(
            text[0].contains(
                "burst: 3000 MB/s for 31.20 s (about 93600 MB), then 100.0 MB/s from 31.20 s on"
            ),
            "{text:?}"
        );
        // No phases, nothing said; phases that are no burst, in order.
        assert!(said(&quick_with(Vec::new())).is_empty());
        let r = quick_with(vec![phase(0.0, 2.0, 1e8), phase(2.0, 9.0, 5e8)]);
        assert!(
            said(&r)[0].ends_with(
                "not steady while it ran: 100.0 MB/s from 0 s, then 500.0 MB/s from 2.00 s"
            ),
            "{:?}",
            said(&r)
        );
    }

    /// A `--sustain` point a repetition of which was never steady says so, once; one steady in
    /// every repetition says nothing.
    #[test]
    fn a_point_never_steady_under_sustain_says_so() {
        let with = |steady: Vec<Option<f64>>| {
            let mut r = quick_with(Vec::new());
            for x in r
                .results
                .iter_mut()
                .filter(|x| x.subsystem == Subsystem::Disk)
            {
                x.sustain = Some(crate::results::phases::Sustain {
                    max_s: 10.0,
                    steady_s: steady.clone(),
                });
            }
            findings(&r)
                .into_iter()
                .filter(|f| f.kind == Kind::Phases)
                .map(|f| f.text)
                .collect::<Vec<_>>()
        };
        let text = with(vec![Some(2.5), None, None]);
        let text: Vec<String> = text
            .into_iter()
            .filter(|t| !t.starts_with("--sustain:"))
            .collect();
        let disk_throughput = quick_with(Vec::new())
            .results
            .iter()
            .filter(|x| x.subsystem == Subsystem::Disk && x.metric == Metric::Throughput)
            .count();
        assert_eq!(text.len(), disk_throughput, "one per point: {text:?}");
        assert!(
            text[0].contains("not steady within --sustain's")
                && text[0].contains("in 2 of 3 repetitions"),
            "{text:?}"
        );
        // Steady in every repetition: one line for all of them.
        let steady = with(vec![Some(2.5), Some(3.0)]);
        assert_eq!(steady.len(), 1, "{steady:?}");
        assert!(
            steady[0].contains(&format!("--sustain: {disk_throughput} point"))
                && steady[0].contains("after 2.50–3.00 s (of 10.00 s at most)"),
            "{steady:?}"
        );
    }
}
