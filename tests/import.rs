//! Imported JSON documents, what `history --import`, `compare` and `report` read (bounded
//! property tests): arbitrary bytes and mutated reports never panic and are refused with an
//! error or read as a report that every consumer takes; valid reports round trip.

mod common;

use peakbench::history::Store;
use peakbench::history::compare::{Criteria, compare};
use peakbench::report;
use peakbench::results::Report;
use peakbench::results::point::point_key;
use peakbench::units::Display;
use proptest::prelude::*;
use serde_json::Value;

/// Valid documents: the recorded runs of tests/fixtures/history (schema version 2, figures in
/// the benchmarks' units) and the fixed reports of tests/common (this version).
fn documents() -> &'static [Vec<u8>] {
    static DOCS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    DOCS.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/history/");
        let mut docs: Vec<Vec<u8>> = ["base.json", "regressed.json"]
            .iter()
            .map(|f| std::fs::read(format!("{dir}{f}")).unwrap())
            .collect();
        docs.push(report::json::render(&common::fixed_report()));
        docs.push(report::json::render(&common::chart_report()));
        docs
    })
}

/// Everything the commands do with a report they read, none of which may panic: every text
/// exporter and the HTML page (its SVG charts) in both display modes, comparing it with itself, and reading back what it writes
/// (the same document again).
fn use_everywhere(r: &Report) -> Result<(), TestCaseError> {
    let mib = Display {
        mib: true,
        gbit: true,
        ..Default::default()
    };
    for shown in [r.displayed(&Display::default()), r.displayed(&mib)] {
        report::csv::render(&shown);
        report::markdown::render(&shown);
        report::table::render(&shown, 100);
        report::summary::render(&shown, 100);
        report::html::render(&shown);
    }
    let criteria = Criteria {
        alpha: 0.05,
        threshold: 0.05,
        same_machine: true,
    };
    let changes = compare(&r.results, &r.results, criteria);
    // Compared with itself, nothing changes (where each point is there once: a document
    // whose memory records lack their kernel's fields, as the chart fixture's do, has points
    // that share a key).
    let keys: std::collections::BTreeSet<String> = r.results.iter().map(point_key).collect();
    if keys.len() == r.results.len() {
        prop_assert!(changes.iter().all(|c| !c.regression && !c.improvement));
    }
    let written = report::json::render(r);
    let again = Report::from_json(&written);
    prop_assert!(
        again.is_ok(),
        "what peakbench wrote reads back: {:?}",
        again.err()
    );
    prop_assert_eq!(report::json::render(&again.unwrap()), written);
    Ok(())
}

/// A JSON value of any shape, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(vec![
            "",
            "NaN",
            "cpu",
            "mem",
            "disk",
            "net",
            "DP",
            "LATENCY",
            "GOPS",
            "B/s",
            "p99",
            "\u{1b}[2J",
            "é",
        ])
        .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The JSON pointer of every value in `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
    out.push(at);
}

/// How a valid document is damaged.
#[derive(Debug, Clone)]
enum Mutation {
    /// The value at one place replaced by another of any shape.
    Replace(usize, Value),
    /// One member of an object removed.
    Remove(usize),
    /// One byte set.
    Byte(usize, u8),
    /// Cut short.
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), any_json()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        1 => any::<usize>().prop_map(Mutation::Remove),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// `doc` damaged by `m`.
fn mutate(doc: &[u8], m: &Mutation) -> Vec<u8> {
    let tree = || serde_json::from_slice::<Value>(doc).unwrap();
    match m {
        Mutation::Replace(i, v) => {
            let mut t = tree();
            let mut at = Vec::new();
            pointers(&t, String::new(), &mut at);
            match at[i % at.len()].as_str() {
                "" => t = v.clone(),
                p => *t.pointer_mut(p).unwrap() = v.clone(),
            }
            serde_json::to_vec(&t).unwrap()
        }
        Mutation::Remove(i) => {
            let mut t = tree();
            let mut at = Vec::new();
            pointers(&t, String::new(), &mut at);
            let p = &at[i % at.len()];
            if let Some((parent, key)) = p.rsplit_once('/')
                && let Some(Value::Object(o)) = t.pointer_mut(parent)
            {
                o.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            serde_json::to_vec(&t).unwrap()
        }
        Mutation::Byte(i, b) => {
            let mut d = doc.to_vec();
            let i = i % d.len();
            d[i] = *b;
            d
        }
        Mutation::Truncate(i) => doc[..i % doc.len()].to_vec(),
    }
}

thread_local! {
    /// One results database for all the cases of a test (in its own temporary directory).
    static STORE: std::cell::RefCell<(Store, tempfile::TempDir)> = {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("history.db")).unwrap();
        std::cell::RefCell::new((store, dir))
    };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Bytes of any kind are refused with an error.
    #[test]
    fn arbitrary_bytes_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        prop_assert!(Report::from_json(&bytes).is_err());
    }

    /// JSON of any shape but a report's is refused with an error that says what it is not.
    #[test]
    fn arbitrary_json_is_refused(v in any_json()) {
        let e = Report::from_json(&serde_json::to_vec(&v).unwrap());
        prop_assert!(e.is_err());
        let m = e.err().unwrap().to_string();
        prop_assert!(!m.is_empty() && !m.contains('\n'), "{}", m);
    }

    /// A damaged report never panics: it is refused with a one-line error, or it reads as a
    /// report that every consumer takes and that reads back as itself. A document cut before
    /// its last brace is always refused.
    #[test]
    fn mutated_reports_never_panic(doc in 0usize..4, m in mutation()) {
        let doc = &documents()[doc];
        let bytes = mutate(doc, &m);
        match Report::from_json(&bytes) {
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!m.contains('\n'), "{}", m);
            }
            Ok(r) => {
                if let Mutation::Truncate(i) = m {
                    let last = doc.iter().rposition(|b| *b == b'}').unwrap();
                    prop_assert!(i % doc.len() > last, "a cut document was accepted");
                }
                use_everywhere(&r)?;
            }
        }
    }

    /// A valid report with figures, samples and text of any value (NaN and infinities
    /// included, which JSON writes as null) reads back as the same document, is stored in the
    /// results database and loads from it with the same points.
    #[test]
    fn valid_reports_round_trip(
        samples in prop::collection::vec(
            prop::collection::vec(prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY)], 0..6),
            6,
        ),
        means in prop::collection::vec(any::<f64>(), 6),
        text in prop::collection::vec(".{0,16}", 3),
    ) {
        let mut r = common::fixed_report();
        for ((rec, s), mean) in r.results.iter_mut().zip(samples).zip(means) {
            rec.samples = s;
            rec.summary.mean = mean;
            rec.warnings = vec![text[0].clone()];
        }
        r.command_line.push(text[1].clone());
        r.started_at = text[2].clone();
        let written = report::json::render(&r);
        let back = Report::from_json(&written);
        prop_assert!(back.is_ok(), "{:?}", back.err());
        let back = back.unwrap();
        prop_assert_eq!(report::json::render(&back), written.clone());
        use_everywhere(&back)?;

        let loaded = STORE.with_borrow_mut(|(store, _)| {
            let run = store.import(&back).unwrap();
            store.load(run).unwrap()
        });
        prop_assert_eq!(
            serde_json::to_value(&loaded.results).unwrap(),
            serde_json::to_value(&back.results).unwrap()
        );
    }
}
