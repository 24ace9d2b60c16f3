//! `--diagnose`'s verdicts: a point measured again with its cause's knob turned confirms the
//! cause or drops it (docs/diagnosis.md).

use super::{FLAT, PAGES, what};
use crate::results::diagnosis::{Confirmation, Diagnosis, Rerun};
use crate::results::{Report, ResultRecord};

/// `--diagnose`: the record of the same metric of each point measured again (its `rerun`) of
/// the point at `at` of `report` (or of another record of that point: a disk point's
/// throughput and IOPS) confirms or drops the cause of `d` (that record's diagnosis) it tests:
/// confirmed where it gained half of what the cause's ceiling promised or more, in the log of
/// the efficiency (the point over the ceiling, at most the peak). Where the run measured no
/// ceiling for it before (LINPACK's N below 1000 and no larger N), confirmed where it gained
/// [`FLAT`] or more (the least gain that tells), and the re-run's figure is then the cause's
/// ceiling, the shares worked out again.
pub(in crate::report) fn confirm(report: &Report, at: usize, d: &mut Diagnosis) {
    let e = d.efficiency;
    let Some(me) = report.results.get(at) else {
        return;
    };
    let same_point = |of: usize| {
        report
            .results
            .get(of)
            .is_some_and(|o| o.workload == me.workload && o.params == me.params)
    };
    // A staircase measured again on huge pages (`pages`) is one re-run of all its levels:
    // each is the level of the same point but its pages.
    let me_but_pages = what(me, PAGES);
    let measures_me = |x: &ResultRecord, r: &Rerun| {
        if r.cause == "pages" {
            x.workload == me.workload && what(x, PAGES) == me_but_pages
        } else {
            same_point(r.of)
        }
    };
    // Whether a re-run measured a cause's ceiling the run had not.
    let mut measured = false;
    for x in &report.results {
        let Some(rerun) = x
            .rerun
            .as_ref()
            .filter(|r| x.metric == me.metric && x.unit == me.unit && measures_me(x, r))
        else {
            continue;
        };
        let Some(cause) = d.causes.iter_mut().find(|c| c.cause == rerun.cause) else {
            continue;
        };
        let Some(after) = x.efficiency.filter(|a| *a > 0.0) else {
            continue;
        };
        let least = cause.confirmation.as_ref().is_some_and(|k| k.least)
            || cause.ceiling.is_none_or(|c| c <= 0.0);
        let (expected, confirmed) = match cause.ceiling.filter(|c| *c > 0.0 && !least) {
            Some(ceiling) => {
                let expected = (e / ceiling).min(1.0);
                (expected, (after / e).ln() >= 0.5 * (expected / e).ln())
            }
            None => {
                let least = (e * FLAT).min(1.0);
                let confirmed = after >= least;
                if confirmed {
                    cause.ceiling = Some((e / after).min(1.0));
                    measured = true;
                }
                (least, confirmed)
            }
        };
        cause.confirmation = Some(Confirmation {
            knob: rerun.knob.clone(),
            efficiency: after,
            expected,
            confirmed,
            least,
        });
    }
    if measured {
        d.unexplained = super::apportion(e, &mut d.causes);
    }
}
