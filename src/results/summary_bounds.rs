//! A document's summary figures (percentiles, the interval of the mean) are kept only as a run
//! writes them ([`super::ResultRecord::with_finite_figures`]): what another file holds is
//! hostile until checked.

use super::ResultRecord;
use super::tests::cpu_point;

/// A document's percentiles are kept only under the keys a run writes, as many as a list
/// may name: others (`p1e-5`, `p99.90`, `x`) would make CSV columns of their own.
#[test]
fn a_documents_percentile_keys_are_the_ones_a_run_writes() {
    let good = serde_json::to_value(cpu_point(vec![40.0, 42.0], 50.0)).unwrap();
    let mut doc = good.clone();
    let mut keys = serde_json::Map::new();
    for k in [
        "min", "max", "p50", "p99.9", "p1e-5", "p99.90", "x", "p100", "p0",
    ] {
        keys.insert(k.into(), serde_json::json!(1.0));
    }
    for i in 1..40 {
        keys.insert(format!("p{i}"), serde_json::json!(1.0));
    }
    doc["percentiles"] = serde_json::Value::Object(keys);
    let rec: ResultRecord = serde_json::from_value(doc).unwrap();
    let p = rec.percentiles.unwrap();
    assert!(
        p.len() <= crate::measure::latency::Percentiles::MOST + 2,
        "{p:?}"
    );
    assert!(p.contains_key("min") && p.contains_key("max"), "{p:?}");
    for bad in ["p1e-5", "p99.90", "x", "p100", "p0"] {
        assert!(!p.contains_key(bad), "{bad}: {p:?}");
    }
}

/// A document's 95 % interval is kept only around its mean, both ends finite; one that
/// leaves it out (an older document) has none.
#[test]
fn a_documents_interval_is_kept_only_around_its_mean() {
    let good = serde_json::to_value(cpu_point(vec![40.0, 42.0], 50.0)).unwrap();
    let mean = good["mean"].as_f64().unwrap();
    let read = |ci: serde_json::Value| {
        let mut doc = good.clone();
        doc["ci95"] = ci;
        serde_json::from_value::<ResultRecord>(doc).map(|r| r.summary.ci95)
    };
    assert!(
        read(serde_json::json!([mean - 1.0, mean + 1.0]))
            .unwrap()
            .is_some()
    );
    for hostile in [
        serde_json::json!([mean + 1.0, mean + 2.0]),
        serde_json::json!([mean + 1.0, mean - 1.0]),
        serde_json::json!([-1e308, 1e308 * 10.0]),
    ] {
        // Dropped, or (a number JSON cannot hold) the record refused.
        assert!(!matches!(read(hostile.clone()), Ok(Some(_))), "{hostile}");
    }
    let mut old = good.clone();
    old.as_object_mut().unwrap().remove("ci95");
    let rec: ResultRecord = serde_json::from_value(old).unwrap();
    assert_eq!(rec.summary.ci95, None);
}
