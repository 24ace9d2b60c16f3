//! The loaded-latency chart (LOADED): the chasing thread's latency against the bandwidth of all
//! threads, a point per injection delay, a line per mix, thread count and page size — the curve
//! from idle latency to the bandwidth wall that Intel MLC's `--loaded_latency` prints.

use super::super::plot::{Axis, Chart, Plot, Scale, Series, Ticks};
use super::series::detail;
use crate::results::params::Pages;
use crate::results::point::identity;
use crate::results::{Metric, ResultRecord, Subsystem};
use std::collections::{BTreeMap, HashMap};

/// The curve of each line of LOADED records, or `None` where there are none.
pub(super) fn loaded_latency(records: &[&ResultRecord]) -> Option<Chart> {
    let loaded = |r: &&ResultRecord| r.params.latency().is_some_and(|l| l.load.is_some());
    // The point a record is of, whatever its metric.
    let point_key =
        |r: &ResultRecord| serde_json::Value::Object(identity(&r.params, &[])).to_string();
    // Each point's bandwidth, by its key (the two records of a delay share their parameters).
    let bandwidth: HashMap<String, &ResultRecord> = (records.iter().copied())
        .filter(loaded)
        .filter(|r| r.metric == Metric::Throughput)
        .map(|r| (point_key(r), r))
        .collect();
    let latency: Vec<&ResultRecord> = (records.iter().copied())
        .filter(loaded)
        .filter(|r| r.metric == Metric::Latency)
        .collect();
    let (y_unit, x_unit) = (latency.first()?.unit, bandwidth.values().next()?.unit);
    let mut lines: BTreeMap<String, Series> = BTreeMap::new();
    for r in latency {
        let (Some(l), Some(bw)) = (r.params.latency(), bandwidth.get(&point_key(r))) else {
            continue;
        };
        let (Some(load), Some(chase)) = (&l.load, &l.chase) else {
            continue;
        };
        let pages = match chase.pages {
            Pages::Thp => "huge pages",
            Pages::Small => "4 KiB pages",
        };
        // A multi-node run's nodes each have their curve.
        let host = r
            .params
            .node()
            .node
            .map(|n| format!(", node {n}"))
            .unwrap_or_default();
        let name = format!("{}, {} threads, {pages}{host}", load.mix.words(), l.threads);
        let (x, y) = (bw.summary.mean, r.summary.mean);
        let line = lines.entry(name.clone()).or_insert_with(|| Series {
            name: name.clone(),
            ..Series::default()
        });
        line.points.push((x, y));
        let mut d = detail(r, x, y, &name);
        d.tip.push_str(&format!(
            "\nbandwidth of all threads: {} {x_unit}",
            crate::units::format_sig(x)
        ));
        line.details.push(d);
    }
    Some(Chart {
        slug: "mem-loaded-latency".into(),
        subsystem: Subsystem::Mem,
        title: "Loaded latency".into(),
        note: "One thread chases pointers through a ring of --array-size bytes (4 × the last-level cache by default: in DRAM) while the \
               others run the mix's kernel in bursts of 64 KiB per array, pausing the injection \
               delay after each: each point is one delay, from idle (no traffic, at the left) to \
               none (the bandwidth wall, at the right). The x axis is the bandwidth of all \
               threads (the traffic as STREAM counts it and the chaser's lines)."
            .into(),
        plot: Plot::Lines {
            x: Axis::new(
                format!("bandwidth ({x_unit})"),
                Scale::Linear,
                Ticks::Number,
            ),
            y: Axis::new(
                format!("latency per load ({y_unit})"),
                Scale::Linear,
                Ticks::Number,
            ),
            series: lines.into_values().collect(),
            guides: Vec::new(),
            markers: Vec::new(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Unit;
    use crate::results::params::Params;

    /// A LOADED record of `metric` at a delay, for a mix.
    fn rec(mix: &str, delay: Option<u64>, metric: Metric, value: f64) -> ResultRecord {
        let params = serde_json::json!({
            "threads": 2, "probe": "loaded", "cpus": [0],
            "working_set_bytes": 134217728, "pages": "thp", "huge_page_bytes": null,
            "loads": 1000, "clock_ghz": null,
            "injection_delay_ns": delay, "mix": mix, "burst_bytes": 4096, "traffic_cpus": [1],
            "isa": "avx512", "stores": "none", "array_bytes_per_thread": 1048576
        });
        let params = Params::decode(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Loaded),
            params,
        )
        .unwrap();
        let unit = match metric {
            Metric::Latency => Unit::Nanos,
            _ => Unit::GBPerSec,
        };
        ResultRecord::new(
            crate::workload::mem::MemWorkload::Loaded,
            params,
            metric,
            unit,
            vec![value],
            Err(String::new()),
        )
    }

    /// Each delay's latency is drawn at its own bandwidth (the records paired by their
    /// parameters), a line per mix; other records are left out.
    #[test]
    fn latency_is_drawn_against_the_bandwidth_of_its_delay() {
        let mut recs = Vec::new();
        for (mix, scale) in [("1:0", 1.0), ("1:1", 2.0)] {
            for (delay, lat, bw) in [
                (None, 100.0, 0.5),
                (Some(400), 120.0, 10.0),
                (Some(0), 200.0, 20.0),
            ] {
                recs.push(rec(mix, delay, Metric::Latency, lat * scale));
                recs.push(rec(mix, delay, Metric::Throughput, bw * scale));
            }
        }
        let refs: Vec<&ResultRecord> = recs.iter().collect();
        let chart = loaded_latency(&refs).unwrap();
        let Plot::Lines { series, .. } = &chart.plot else {
            panic!("not lines");
        };
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "1:1 reads-writes, 2 threads, huge pages",
                "all reads, 2 threads, huge pages"
            ]
        );
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        let reads = &series[1].points;
        assert_eq!(reads.len(), 3);
        for (&(x, y), (bw, lat)) in
            reads
                .iter()
                .zip([(0.5e9, 100e-9), (10e9, 120e-9), (20e9, 200e-9)])
        {
            assert!(close(x, bw) && close(y, lat), "{x} {y}");
        }
        assert!(
            series[1].details[2]
                .tip
                .contains("bandwidth of all threads")
        );
        assert!(loaded_latency(&[]).is_none());
    }
}
