//! The charts' unit tests: LINPACK against N and threads with its peak, series split by their
//! conditions, per-point charts in parts, and slugs.

use super::per_point::percentile_charts;
use super::series::peak_guide;
use super::sweeps::sweep_charts;
use super::{Plot, slug};
use crate::results::Unit;
use crate::results::params::{CpuParams, LinalgParams, NodeTag, Params};
use crate::results::{Metric, ResultRecord, Subsystem, Workload};
use crate::sysinfo::peak::Peak;
use crate::workload::{cpu::CpuWorkload, linalg::LinalgWorkload, mem::MemWorkload};

/// A LINPACK point at order `n` on `threads` threads, its peak 50 GOPS per thread.
pub(in crate::report) fn linpack(n: usize, threads: usize, gops: f64) -> ResultRecord {
    let params = Params::Cpu(CpuParams {
        threads,
        cpu_quota: None,
        cpus: (0..threads).collect(),
        cores: threads as u32,
        oversubscribed: false,
        kernel: None,
        linalg: Some(LinalgParams {
            n,
            memory_fraction: None,
            engine: crate::results::params::LinalgEngine::BuiltIn,
            micro_kernel: "AVX-512 24x8".into(),
            micro_kernel_isa: None,
            library: None,
            library_threads: None,
            nb: Some(256),
            flops: crate::workload::linalg::hpl_flops(n),
            residual: Some(0.01),
            residual_passed: Some(true),
        }),
        node: NodeTag::default(),
    });
    let peak = Peak {
        value: 50e9 * threads as f64,
        unit: Unit::OpsPerSec,
        formula: String::new(),
        inputs: Default::default(),
    };
    ResultRecord::new(
        crate::workload::linalg::LinalgWorkload::Linpack,
        params,
        Metric::Throughput,
        Unit::Gops,
        vec![gops],
        Ok(peak),
    )
}

/// LINPACK at two N and two thread counts: a chart against threads with a line per N and the
/// peak (the same at each thread count), and a chart against N with a line and a dashed peak
/// per thread count.
#[test]
fn linpack_is_drawn_against_n_and_threads_with_its_peak() {
    let recs = [
        linpack(1000, 1, 30.0),
        linpack(4000, 1, 42.0),
        linpack(1000, 2, 50.0),
        linpack(4000, 2, 80.0),
    ];
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let charts = sweep_charts(Subsystem::Cpu, &refs);
    let slugs: Vec<&str> = charts.iter().map(|c| c.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "cpu-linpack-throughput-vs-threads",
            "cpu-linpack-throughput-vs-n"
        ]
    );
    let by_n = &charts[1];
    assert_eq!(by_n.title, "CPU LINPACK: throughput vs N");
    let Plot::Lines { series, guides, .. } = &by_n.plot else {
        panic!("{:?}", by_n.plot)
    };
    assert_eq!(series.len(), 2);
    assert_eq!(series[1].name, "2 threads");
    assert_eq!(series[1].points, vec![(1000.0, 50e9), (4000.0, 80e9)]);
    assert_eq!(guides.len(), 2);
    assert_eq!(guides[1].name, "peak, 2 threads");
    assert_eq!(guides[1].points, vec![(1000.0, 100e9), (4000.0, 100e9)]);
    let svg = super::super::plot::svg(by_n).unwrap().unwrap();
    assert!(
        svg.contains("peak, 2 threads") && svg.contains("4000"),
        "{svg}"
    );
    // Against threads: one line per N, the peak at 1 and 2 threads, ideal scaling.
    let Plot::Lines { guides, series, .. } = &charts[0].plot else {
        panic!()
    };
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["N = 1000", "N = 4000"]);
    assert_eq!(guides[0].points, vec![(1.0, 50e9), (2.0, 100e9)]);
    assert!(
        guides
            .iter()
            .any(|g| g.name.starts_with("ideal linear scaling"))
    );
    // One N and one thread count: nothing was swept, no chart.
    assert!(sweep_charts(Subsystem::Cpu, &refs[..1]).is_empty());
}

/// Points whose peaks differ at the same x have no single peak line.
#[test]
fn differing_peaks_draw_no_guide() {
    let mut other = linpack(4000, 1, 40.0);
    other.peak.as_mut().unwrap().value = 70e9;
    let recs = [linpack(1000, 1, 30.0), other];
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let threads = |r: &ResultRecord| Some(r.params.threads() as f64);
    assert!(peak_guide(&refs, threads, "peak".into()).is_none());
    assert!(peak_guide(&refs[..1], threads, "peak".into()).is_some());
}

fn disk(engine: &str, iodepth: u32, iops: f64) -> ResultRecord {
    let params = crate::results::params::Params::with_defaults(
        crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
        serde_json::json!({"threads": 1, "iodepth": iodepth, "block_size_bytes": 4096,
            "engine": engine, "io_mode": "direct", "sync": "none", "pattern": "random"}),
    )
    .unwrap();
    ResultRecord::new(
        crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
        params,
        Metric::Iops,
        Unit::Iops,
        vec![iops],
        Err("none".into()),
    )
}

/// A psync QD1 point and io_uring points are two lines, never one joined across engines.
#[test]
fn series_are_split_by_their_conditions() {
    let recs = [
        disk("psync", 1, 15e3),
        disk("io_uring", 1, 14e3),
        disk("io_uring", 32, 75e3),
    ];
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let charts = sweep_charts(Subsystem::Disk, &refs);
    assert_eq!(charts.len(), 1);
    assert_eq!(charts[0].title, "Disk RR: IOPS vs queue depth");
    let Plot::Lines { series, .. } = &charts[0].plot else {
        panic!("{:?}", charts[0].plot)
    };
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["RR · psync", "RR · io_uring"]);
    assert_eq!(series[0].points, vec![(1.0, 15e3)]);
    assert_eq!(series[1].points, vec![(1.0, 14e3), (32.0, 75e3)]);
}

/// A reference that stands in for some of its points says so in its legend, and each such
/// point's label says what the tool measured.
#[test]
fn stand_in_references_say_so() {
    let with = |iodepth: u32, differs: Option<&str>| {
        let mut r = disk("io_uring", iodepth, 1e4);
        r.reference = Some(crate::results::Reference {
            tool: "tool".into(),
            mean: 2e4,
            differs: differs.map(String::from),
            ..Default::default()
        });
        r
    };
    let recs = [with(1, None), with(32, Some("the tool ran in sequence"))];
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let charts = sweep_charts(Subsystem::Disk, &refs);
    let Plot::Lines { series, .. } = &charts[0].plot else {
        panic!("{:?}", charts[0].plot)
    };
    let reference = series
        .iter()
        .find(|s| s.name.starts_with("tool"))
        .expect("a reference series");
    assert_eq!(reference.name, "tool (stand-in in part): RR");
    let labels: Vec<&str> = reference.details.iter().map(|d| d.tip.as_str()).collect();
    assert!(!labels[0].contains("in sequence"), "{labels:?}");
    assert!(
        labels[1].ends_with("(the tool ran in sequence)"),
        "{labels:?}"
    );
}

/// Twenty points' percentiles: three charts of eight, eight and four lines, none left out.
#[test]
fn many_points_are_drawn_in_parts_none_left_out() {
    let recs: Vec<ResultRecord> = (0..20)
        .map(|i| {
            let mut r = disk("psync", i + 1, 1e3);
            r.metric = Metric::Latency;
            r.percentiles = Some(
                [("p50".to_string(), 1e-4), ("p99".to_string(), 2e-4)]
                    .into_iter()
                    .collect(),
            );
            r
        })
        .collect();
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let charts = percentile_charts(Subsystem::Disk, &refs);
    let lines: Vec<usize> = charts
        .iter()
        .map(|c| match &c.plot {
            Plot::Lines { series, .. } => series.len(),
            _ => 0,
        })
        .collect();
    assert_eq!(lines, [8, 8, 4]);
    assert!(
        charts[1].title.ends_with("(part 2 of 3)"),
        "{}",
        charts[1].title
    );
    let slugs: std::collections::BTreeSet<&str> = charts.iter().map(|c| c.slug.as_str()).collect();
    assert_eq!(slugs.len(), 3, "{slugs:?}");
}

/// Lines of different `--percentiles` lists in one chart put their max at one place, one nine
/// beyond the finest percentile of them all, never on another line's percentile.
#[test]
fn every_lines_max_is_past_the_finest_percentile_of_the_chart() {
    let with = |keys: &[&str], iodepth: u32| {
        let mut r = disk("psync", iodepth, 1e3);
        r.metric = Metric::Latency;
        let mut p: std::collections::BTreeMap<String, f64> =
            keys.iter().map(|k| (k.to_string(), 1e-4)).collect();
        p.insert("max".into(), 1e-3);
        r.percentiles = Some(p);
        r
    };
    let recs = [with(&["p50", "p99"], 1), with(&["p50", "p99.999"], 2)];
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let charts = percentile_charts(Subsystem::Disk, &refs);
    let Plot::Lines { series, .. } = &charts[0].plot else {
        panic!("no lines")
    };
    let maxes: Vec<f64> = series
        .iter()
        .map(|s| s.points.iter().map(|p| p.0).fold(f64::MIN, f64::max))
        .collect();
    assert_eq!(series.len(), 2, "{series:?}");
    assert!(
        (maxes[0] - 6.0).abs() < 1e-9 && (maxes[1] - 6.0).abs() < 1e-9,
        "{maxes:?}"
    );
}

#[test]
fn slugs_are_file_names() {
    assert_eq!(slug(&["cpu", "DP", "throughput"]), "cpu-dp-throughput");
    assert_eq!(
        slug(&["net", "THROUGHPUT ×2", "streams"]),
        "net-throughput-2-streams"
    );
}

/// The quick profile's run has DP and SP peaks, COPY and TRIAD and a LINPACK: its roofline
/// places LINPACK at 2/3·N³ ÷ 8·N² FLOP/byte and TRIAD at 2 FLOP per 24 bytes, under roofs
/// min(peak, bandwidth × intensity) bent at their ridges.
#[test]
fn the_roofline_places_each_kernel_at_its_intensity() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let bytes = std::fs::read(dir.join("quick.json")).unwrap();
    let run = crate::results::Report::from_json(&bytes).unwrap();
    let run = run.displayed(&Default::default());
    let charts = super::for_report(&run);
    let roof = charts
        .iter()
        .find(|c| c.slug == "cpu-mem-roofline")
        .expect("a roofline");
    let Plot::Lines { series, guides, .. } = &roof.plot else {
        panic!("{:?}", roof.plot)
    };
    let at = |w: &str| {
        series
            .iter()
            .find(|s| s.name.starts_with(w))
            .unwrap()
            .points[0]
    };
    let rec = |w: Workload| run.results.iter().find(|r| r.workload == w).unwrap();
    let n = 2000.0;
    let linpack = at("LINPACK");
    assert!((linpack.0 - crate::workload::linalg::hpl_flops(2000) / (8.0 * n * n)).abs() < 1e-9);
    assert_eq!(
        linpack.1,
        rec(Workload::Linalg(LinalgWorkload::Linpack)).summary.mean
    );
    let triad = at("TRIAD");
    assert!((triad.0 - 2.0 / 24.0).abs() < 1e-12);
    assert!(
        (triad.1 - rec(Workload::Mem(MemWorkload::Triad)).summary.mean * 2.0 / 24.0).abs() < 1e-9
    );
    assert_eq!(guides.len(), 2, "DP and SP under COPY's bandwidth");
    let copy = rec(Workload::Mem(MemWorkload::Copy)).summary.mean;
    let dp = rec(Workload::Cpu(CpuWorkload::Dp))
        .peak
        .as_ref()
        .unwrap()
        .value;
    for &(x, y) in &guides[0].points {
        assert!((y - (copy * x).min(dp)).abs() <= 1e-9 * y, "({x}, {y})");
    }
    // The roof bends at the ridge: a point at peak ÷ bandwidth.
    assert!(
        guides[0]
            .points
            .iter()
            .any(|p| (p.0 - dp / copy).abs() < 1e-9)
    );
}

/// Where the run measured bandwidth with arrays that fit a cache, the roofline has that
/// level's diagonal too (under the first ceiling), named after the level, beside memory's.
#[test]
fn the_roofline_has_a_diagonal_per_level_measured() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let bytes = std::fs::read(dir.join("quick.json")).unwrap();
    let mut run = crate::results::Report::from_json(&bytes).unwrap();
    let l2 = run
        .system
        .caches
        .iter()
        .find(|c| c.level == 2)
        .expect("the fixture's machine has an L2")
        .size_bytes;
    let copy = run
        .results
        .iter()
        .find(|r| r.workload == crate::workload::mem::MemWorkload::Copy)
        .unwrap();
    let mut in_l2 = copy.clone();
    let threads = in_l2.params.threads() as u64;
    if let crate::results::params::Params::Mem(m) = &mut in_l2.params {
        m.kernel.as_mut().unwrap().working_set_bytes = l2 / 2 * threads;
    }
    in_l2.summary.mean = copy.summary.mean * 4.0;
    run.results.push(in_l2);
    let run = run.displayed(&Default::default());
    let roof = super::for_report(&run)
        .into_iter()
        .find(|c| c.slug == "cpu-mem-roofline")
        .expect("a roofline");
    let Plot::Lines { guides, .. } = &roof.plot else {
        panic!("{:?}", roof.plot)
    };
    let names: Vec<&str> = guides.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names[0].starts_with("DP") && names[0].contains("COPY measured"),
        "{names:?}"
    );
    assert!(
        names[1].starts_with("DP") && names[1].contains("L2 measured (COPY"),
        "{names:?}"
    );
    assert!(
        names[2].starts_with("SP") && names[2].contains("COPY measured"),
        "{names:?}"
    );
    let bw = run.results.last().unwrap().summary.mean;
    let &(x, y) = guides[1].points.first().unwrap();
    assert!((y - bw * x).abs() <= 1e-9 * y, "({x}, {y}) under {bw} GB/s");
}

/// A COPY point of the stored quick run at each working set per thread of `gbps` (bytes, GB/s),
/// on the fixture's machine.
fn copy_staircase(gbps: &[(u64, f64)]) -> crate::results::Report {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let bytes = std::fs::read(dir.join("quick.json")).unwrap();
    let mut run = crate::results::Report::from_json(&bytes).unwrap();
    let copy = run
        .results
        .iter()
        .find(|r| r.workload == crate::workload::mem::MemWorkload::Copy)
        .unwrap()
        .clone();
    run.results.clear();
    for &(ws, rate) in gbps {
        let mut r = copy.clone();
        let threads = r.params.threads() as u64;
        if let Params::Mem(m) = &mut r.params {
            let k = m.kernel.as_mut().unwrap();
            k.working_set_bytes = ws * threads;
            k.array_bytes_per_thread = ws / 2;
        }
        r.summary.mean = rate * 1e9;
        r.samples = vec![rate * 1e9];
        run.results.push(r);
    }
    run.displayed(&Default::default())
}

/// A run over working sets draws the bandwidth staircase (one thread's working set along x,
/// the caches marked), and its findings name the levels instead of scaling each size.
#[test]
fn a_bandwidth_staircase_is_drawn_and_its_levels_found() {
    let run = copy_staircase(&[
        (16 << 10, 180.0),
        (22 << 10, 178.0),
        (32 << 10, 170.0),
        (45 << 10, 115.0),
        (64 << 10, 110.0),
        (128 << 10, 108.0),
        (256 << 10, 106.0),
        (512 << 10, 104.0),
        (1 << 20, 92.0),
        (2 << 20, 90.0),
        (4 << 20, 90.0),
        (8 << 20, 88.0),
        (16 << 20, 40.0),
        (32 << 20, 29.0),
        (64 << 20, 28.0),
        (256 << 20, 27.5),
        (1 << 30, 27.0),
    ]);
    let chart = super::for_report(&run)
        .into_iter()
        .find(|c| c.slug == "mem-bandwidth-staircase")
        .expect("a staircase");
    let Plot::Lines {
        series, markers, x, ..
    } = &chart.plot
    else {
        panic!("{:?}", chart.plot)
    };
    assert_eq!(series.len(), 1, "{series:?}");
    assert_eq!(series[0].points.len(), 17);
    assert_eq!(series[0].points[0], ((16 << 10) as f64, 180.0));
    assert!(x.label.contains("per thread"), "{}", x.label);
    let sizes: Vec<u64> = run
        .system
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.size_bytes)
        .collect();
    let marked: Vec<u64> = markers.iter().map(|m| m.x as u64).collect();
    assert_eq!(marked, sizes);
    let found = crate::report::findings::of(&run);
    let levels: Vec<&str> = found
        .iter()
        .filter(|f| f.kind == crate::report::findings::Kind::Levels)
        .map(|f| f.text.as_str())
        .collect();
    assert_eq!(levels.len(), 1, "{found:?}");
    assert!(
        levels[0].starts_with("COPY · 2 threads over 17 working sets per thread: L1 ")
            && levels[0].contains("(sysfs 32 KiB); L2 ")
            && levels[0].contains("(sysfs 1 MiB); L3 ")
            && levels[0].ends_with("; memory 27.50 GB/s at 64 MiB–1 GiB"),
        "{}",
        levels[0]
    );
    assert!(
        !found
            .iter()
            .any(|f| f.kind == crate::report::findings::Kind::Scaling),
        "{found:?}"
    );
}

/// A run at one array size has no staircase.
#[test]
fn one_array_size_draws_no_staircase() {
    let run = copy_staircase(&[(64 << 20, 28.0)]);
    assert!(
        !super::for_report(&run)
            .iter()
            .any(|c| c.slug == "mem-bandwidth-staircase")
    );
}

/// Per point, three bars: measured, the reference tool's and the peak; a missing figure is no
/// bar and says "n/a", never a bar of zero; a point with neither is left out; many points are
/// drawn in parts.
#[test]
fn grouped_bars_show_measured_reference_and_peak() {
    let mut recs: Vec<ResultRecord> = (1..=15)
        .map(|t| linpack(1000, t, 10.0 * t as f64))
        .collect();
    // In the record's unit (op/s): peaks at twice the figures, a reference above the first.
    for r in recs.iter_mut() {
        r.peak.as_mut().unwrap().value = 2.0 * r.summary.mean;
    }
    let first = recs[0].summary.mean;
    recs[0].reference = Some(crate::results::Reference::measured(
        "HPL",
        "2.3",
        vec![1.2 * first],
        |_| None,
        (Vec::new(), String::new()),
    ));
    recs[1].reference = recs[0].reference.clone();
    // A twin of the third point but for its panel width: told apart by it.
    recs[3] = recs[2].clone();
    if let Params::Cpu(CpuParams {
        linalg: Some(l), ..
    }) = &mut recs[3].params
    {
        l.nb = Some(128);
    }
    recs[1].peak = None;
    recs[14].peak = None;
    let refs: Vec<&ResultRecord> = recs.iter().collect();
    let charts = super::measured_bars::measured_bars(Subsystem::Cpu, &refs);
    let slugs: Vec<&str> = charts.iter().map(|c| c.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "cpu-throughput-measured-bars-part-1",
            "cpu-throughput-measured-bars-part-2"
        ]
    );
    let Plot::Bars {
        rows,
        series,
        value,
        ..
    } = &charts[0].plot
    else {
        panic!("{:?}", charts[0].plot)
    };
    assert_eq!(rows.len(), 12);
    // The variant is the same for all: not repeated in each row.
    assert_eq!(rows[0], "LINPACK ×1");
    assert_eq!(rows[2..4], ["LINPACK ×3 · nb 256", "LINPACK ×3 · nb 128"]);
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["peakbench measured", "HPL measured", "theoretical peak"]
    );
    assert_eq!(value.label, "throughput (op/s)");
    assert_eq!(series[0].values[0], Some(first));
    assert_eq!(
        series[1].values[..3],
        [Some(1.2 * first), Some(1.2 * first), None]
    );
    assert_eq!(
        series[2].values[..3],
        [Some(2.0 * first), None, Some(6.0 * first)]
    );
    let Plot::Bars { rows, .. } = &charts[1].plot else {
        panic!()
    };
    assert_eq!(rows.len(), 2, "the 15th point has neither figure: {rows:?}");
    let svg = super::super::plot::svg(&charts[0]).unwrap().unwrap();
    assert_eq!(svg.matches("n/a").count(), 11, "{svg}");
    assert_eq!(charts[0].title, "CPU LINPACK: throughput, tool, peak (1/2)");
}
