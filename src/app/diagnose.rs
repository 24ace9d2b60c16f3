//! `--diagnose`: the points of a request below 90 % of their peak measured once more, each
//! with the knob of its first cause turned where the cause has one, and marked as measuring it
//! again (`rerun`); the diagnosis then says whether the gain confirms the cause
//! (docs/diagnosis.md).

use super::Recorder;
use crate::results::ResultRecord;
use crate::results::diagnosis::Rerun;

/// Measures again each point of the records from `from` on whose diagnosis (below its peak)
/// names first a cause that `knob` turns: `knob(record, cause)` gives the option changed and
/// the request that measures the point with it, `measure` runs that request into `rec`.
/// `command` names the command in the line said for each.
pub(super) fn again<R>(
    rec: &mut Recorder,
    from: usize,
    command: &str,
    knob: impl Fn(&ResultRecord, &str) -> Option<(String, R)>,
    measure: impl Fn(&R, &mut Recorder) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let Some(report) = rec.report() else {
        return Ok(());
    };
    let diagnoses = crate::report::diagnosis::of_report(report);
    let mut todo = Vec::new();
    // One run again for each point (a disk point's throughput and IOPS are one point).
    let mut points = std::collections::HashSet::new();
    for (of, d) in diagnoses.iter().enumerate().skip(from) {
        let Some(first) = d
            .as_ref()
            .filter(|d| d.efficiency < 1.0)
            .and_then(|d| d.causes.first())
        else {
            continue;
        };
        let r = &report.results[of];
        let point = (
            r.workload,
            serde_json::to_string(&r.params).unwrap_or_default(),
        );
        if !points.insert(point) {
            continue;
        }
        if let Some((knob, request)) = knob(r, &first.cause) {
            let label = crate::results::point::label(r);
            todo.push((
                Rerun {
                    of,
                    cause: first.cause.clone(),
                    knob,
                },
                label,
                request,
            ));
        }
    }
    let say = |line: String| {
        eprintln!(
            "{}",
            crate::text::wrap(&line, crate::text::terminal_width(), "  ")
        );
    };
    if todo.is_empty() && !rec.quiet() {
        let low = (diagnoses.iter().skip(from).flatten())
            .filter(|d| d.efficiency < 1.0)
            .count();
        say(match low {
            0 => format!(
                "peakbench {command} --diagnose: nothing to measure again: no point below 90 % of its peak"
            ),
            _ => format!(
                "peakbench {command} --diagnose: nothing to measure again: {low} point{} below 90 % of {} peak, and none names first a cause whose knob it turns (docs/diagnosis.md)",
                if low == 1 { "" } else { "s" },
                if low == 1 { "its" } else { "their" }
            ),
        });
    }
    for (rerun, label, request) in todo {
        if crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        if !rec.quiet() {
            say(format!(
                "peakbench {command} --diagnose: {label}: `{}` named first; measured again with {}",
                rerun.cause, rerun.knob
            ));
        }
        let before = rec.results().len();
        measure(&request, rec)?;
        rec.mark_reruns(before, &rerun);
    }
    Ok(())
}
