//! `compare --junit FILE`: the comparison as a JUnit XML report, the format CI systems read
//! natively (GitLab's `artifacts:reports:junit`, Jenkins' junit step, GitHub actions that
//! publish test results): a test suite per subsystem, a test case per paired point; a
//! regression is a failure, a point the comparison could not decide (inconclusive, not tested,
//! not comparable) is skipped with the reason, anything else passes. Each case's output holds
//! both means, the change and the p-value. The elements and attributes are those of the
//! schema these systems read (docs/history.md, "In CI"; tests/fixtures/junit.xsd).

use crate::history::compare::{Change, Unpaired, Verdict};
use crate::results::Subsystem;
use crate::units::format_sig;

/// The JUnit XML report of the comparison of run `a` with run `b`.
pub fn compare(a: &str, b: &str, changes: &[Change], only: [&[Unpaired]; 2]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let failures = changes.iter().filter(|c| c.regression).count();
    let undecided = changes.iter().filter(|c| skipped(c).is_some()).count();
    out.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{undecided}\">\n",
        attr(&format!("peakbench compare {a} {b}")),
        changes.len()
    ));
    for sub in Subsystem::ALL {
        let cases: Vec<&Change> = changes.iter().filter(|c| c.subsystem == sub).collect();
        if cases.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "  <testsuite name=\"peakbench.{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
            sub.name(),
            cases.len(),
            cases.iter().filter(|c| c.regression).count(),
            cases.iter().filter(|c| skipped(c).is_some()).count()
        ));
        for c in cases {
            out.push_str(&case(c));
        }
        let unpaired: Vec<String> = only
            .iter()
            .zip(["A", "B"])
            .flat_map(|(list, side)| {
                list.iter()
                    .filter(|u| u.subsystem == sub)
                    .map(move |u| format!("only in {side}: {}", u.label))
            })
            .collect();
        if !unpaired.is_empty() {
            out.push_str(&format!(
                "    <system-out>{}</system-out>\n",
                text(&unpaired.join("\n"))
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Why a point is skipped: the comparison could not decide it.
fn skipped(c: &Change) -> Option<String> {
    match c.verdict() {
        v @ (Verdict::NotComparable(_)
        | Verdict::NotTested
        | Verdict::Inconclusive(_)
        | Verdict::Uncalibrated) => Some(v.to_string()),
        _ => None,
    }
}

/// One point's test case.
fn case(c: &Change) -> String {
    // In the units the tables use (GOPS, MB/s, µs), as a person reads them.
    let (a, b, unit) = match crate::units::Display::default().conversion(c.subsystem, c.unit) {
        Some(cv) => (cv.apply(c.mean_a), cv.apply(c.mean_b), cv.unit),
        None => (c.mean_a, c.mean_b, c.unit),
    };
    let name = format!("{} ({}, {unit})", c.label, c.metric);
    let figures = format!(
        "A: {} {unit} ({} repetitions), B: {} {unit} ({} repetitions), change {:+.2} %, p (Holm) {}: {}",
        format_sig(a),
        c.n_a,
        format_sig(b),
        c.n_b,
        c.change * 100.0,
        c.p_adjusted.map_or("—".into(), |p| format!("{p:.3}")),
        c.verdict(),
    );
    let mut out = format!(
        "    <testcase classname=\"peakbench.{}.{}\" name=\"{}\">\n",
        c.subsystem.name(),
        attr(c.workload.name()),
        attr(&name)
    );
    if c.regression {
        out.push_str(&format!(
            "      <failure type=\"regression\" message=\"{}\">{}</failure>\n",
            attr(&format!(
                "REGRESSION: {:+.2} % (B against A)",
                c.change * 100.0
            )),
            text(&figures)
        ));
    } else if let Some(why) = skipped(c) {
        out.push_str(&format!("      <skipped message=\"{}\"/>\n", attr(&why)));
    }
    out.push_str(&format!(
        "      <system-out>{}</system-out>\n",
        text(&figures)
    ));
    out.push_str("    </testcase>\n");
    out
}

/// `s` as XML character data: every character XML 1.0 cannot hold (controls but tab and
/// newline, U+FFFE and U+FFFF; a `str` has no lone surrogate) replaced by U+FFFD, then the five
/// special characters escaped ([`crate::text::xml_escape`]). Labels come from documents:
/// hostile until checked.
fn text(s: &str) -> String {
    let held: String = s
        .chars()
        .map(|c| match c {
            '\t' | '\n' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect();
    crate::text::xml_escape(&held)
}

/// `s` as an attribute's value: [`text`], with tabs and newlines as character references (an
/// attribute's whitespace is normalised away otherwise).
fn attr(s: &str) -> String {
    text(s).replace('\t', "&#9;").replace('\n', "&#10;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped_and_what_xml_cannot_hold_is_replaced() {
        assert_eq!(
            text("a<b>&\"c'\u{1b}[31m\u{0}\u{FFFF}\tz\n"),
            "a&lt;b&gt;&amp;&quot;c&#39;\u{FFFD}[31m\u{FFFD}\u{FFFD}\tz\n"
        );
        assert_eq!(attr("x\ty\nz"), "x&#9;y&#10;z");
    }
}
