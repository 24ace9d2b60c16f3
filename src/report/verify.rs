//! `peakbench verify`'s checks as a table (terminal, Markdown, HTML) and as the one line each
//! says when it is done: what was imposed, the figure expected, the figure measured, their
//! ratio, the tolerance and PASS, FAIL or SKIP.

use crate::results::verify::{Check, Status, Verification};
use crate::text::printable;
use crate::units::{Display, format_sig};

/// A figure of `check` in the unit that suits it (its unit already where the report was
/// converted for display).
fn figure(check: &Check, v: f64) -> String {
    if check.unit == crate::ids::Unit::Bytes && v.is_finite() {
        // An amount in MB (decimal, as the rates' MB/s), to four significant digits.
        return format!("{} MB", format_sig(v / 1e6));
    }
    let display = Display::default().fitted([(check.subsystem, check.unit, v)]);
    match display.conversion(check.subsystem, check.unit) {
        Some(c) => format!("{} {}", format_sig(c.apply(v)), c.unit),
        None => format!("{} {}", format_sig(v), check.unit),
    }
}

fn or_dash(check: &Check, v: Option<f64>) -> String {
    v.map_or("—".into(), |v| figure(check, v))
}

/// The check's tolerance as it states it.
fn tolerance(check: &Check) -> String {
    printable(&check.tolerance_text)
}

/// "rate tcp: PASS: 191.2 Mbit/s measured, 191.3 Mbit/s expected (ratio 0.999, ±3 %)", or
/// "delay: SKIP: no TUN device: …".
pub fn one_line(check: &Check) -> String {
    match (check.status, check.measured, check.expected) {
        (_, Some(m), Some(e)) => format!(
            "{}: {}: {} measured, {} expected (ratio {}, {}) — imposed {}",
            printable(&check.name),
            check.status.name(),
            figure(check, m),
            figure(check, e),
            check.ratio().map_or("—".into(), |r| format!("{r:.3}")),
            tolerance(check),
            printable(&check.imposed)
        ),
        _ => format!(
            "{}: {}: {}",
            printable(&check.name),
            check.status.name(),
            printable(&check.reason)
        ),
    }
}

pub fn headers() -> Vec<String> {
    [
        "Check",
        "Imposed",
        "Expected",
        "Measured",
        "Ratio",
        "Tolerance",
        "Result",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A row per check.
pub fn rows(v: &Verification) -> Vec<Vec<String>> {
    v.checks
        .iter()
        .map(|c| {
            vec![
                printable(&c.name),
                printable(&c.imposed),
                or_dash(c, c.expected),
                or_dash(c, c.measured),
                c.ratio().map_or("—".into(), |r| format!("{r:.3}")),
                if c.tolerance_text.is_empty() {
                    "—".into()
                } else {
                    tolerance(c)
                },
                c.status.name().into(),
            ]
        })
        .collect()
}

/// A line per check: how its expected figure follows (or why it was skipped or failed), and
/// the command lines that measured it.
pub fn notes(v: &Verification) -> Vec<String> {
    v.checks
        .iter()
        .map(|c| {
            let mut line = format!("{}: {}", printable(&c.name), printable(&c.reason));
            if !c.commands.is_empty() {
                line.push_str(&format!(
                    "; measured by `{}`",
                    printable(&c.commands.join("`, `"))
                ));
            }
            line
        })
        .collect()
}

/// The summary line: "6 checks: 5 passed, 1 skipped", "1 check: 1 passed".
pub fn summary(v: &Verification) -> String {
    let count = |s: Status| v.checks.iter().filter(|c| c.status == s).count();
    let mut parts = vec![format!("{} passed", count(Status::Pass))];
    for (s, word) in [(Status::Fail, "failed"), (Status::Skip, "skipped")] {
        if count(s) > 0 {
            parts.push(format!("{} {word}", count(s)));
        }
    }
    let n = v.checks.len();
    let noun = if n == 1 { "check" } else { "checks" };
    format!("{n} {noun}: {}", parts.join(", "))
}

/// The checks as the exporters show them.
#[derive(Debug, Clone)]
pub struct VerifyView {
    /// "Verification (7 checks: 7 passed)".
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

pub fn view(v: &Verification) -> VerifyView {
    VerifyView {
        title: format!("Verification ({})", summary(v)),
        headers: headers(),
        rows: rows(v),
        notes: notes(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{Subsystem, Unit};

    fn check(status: Status, measured: Option<f64>) -> Check {
        Check {
            name: "rate tcp".into(),
            group: "net".into(),
            imposed: "tbf 200 Mbit/s".into(),
            status,
            reason: "the rate × the payload's share".into(),
            subsystem: Subsystem::Net,
            unit: Unit::BitsPerSec,
            expected: Some(191.3e6),
            measured,
            tolerance: Some(5.739e6),
            tolerance_text: "±3 %".into(),
            commands: vec!["peakbench net --server 10.233.0.1".into()],
            points: vec![0],
        }
    }

    #[test]
    fn each_check_says_its_figures_or_its_reason() {
        let pass = one_line(&check(Status::Pass, Some(191.2e6)));
        assert_eq!(
            pass,
            "rate tcp: PASS: 191.2 Mbit/s measured, 191.3 Mbit/s expected (ratio 0.999, ±3 %) — imposed tbf 200 Mbit/s"
        );
        let mut skip = check(Status::Skip, None);
        skip.expected = None;
        skip.reason = "no TUN device: \x1b[31m".into();
        let line = one_line(&skip);
        assert!(
            line.starts_with("rate tcp: SKIP: no TUN device: "),
            "{line}"
        );
        assert!(!line.contains('\x1b'), "{line}");
        let v = Verification {
            checks: vec![check(Status::Pass, Some(191.2e6)), skip],
        };
        assert_eq!(summary(&v), "2 checks: 1 passed, 1 skipped");
        let shown = view(&v);
        assert_eq!(shown.title, "Verification (2 checks: 1 passed, 1 skipped)");
        assert_eq!(shown.rows[0][6], "PASS");
        assert_eq!(shown.rows[1][2], "—");
        assert!(shown.notes[0].ends_with("measured by `peakbench net --server 10.233.0.1`"));
    }
}
