//! The notes', rows' and groups' tests, on recorded runs.

use super::notes::point_and_metric;
use super::*;
use crate::results::params::Params;
use crate::results::{Metric, Reference, Subsystem, Unit};
use crate::sysinfo::peak::{CpuPeakOverrides, OpClass, cpu_peak};

/// Points without a reference figure are said once per reason, by workload and variant,
/// however many metrics and thread counts share it.
#[test]
fn reference_gaps_are_said_once_per_reason() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let run =
        crate::results::Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
    let mut recs: Vec<ResultRecord> = run
        .results
        .iter()
        .filter(|r| {
            use crate::results::Workload::{Cpu, Mem};
            use crate::workload::{
                cpu::CpuWorkload::Dp,
                mem::MemWorkload::{Copy, Triad},
            };
            matches!(r.workload, Mem(Copy | Triad) | Cpu(Dp))
        })
        .cloned()
        .collect();
    for r in &mut recs {
        r.reference_unknown_reason = Some(if r.workload == crate::workload::cpu::CpuWorkload::Dp {
            "likwid-bench not found: apt-get install likwid".into()
        } else {
            "no reference tool measures it".into()
        });
    }
    // A reference that is not exactly its point says what it measured, once too.
    let mut stand_in = recs[0].clone();
    stand_in.reference_unknown_reason = None;
    stand_in.reference = Some(Reference {
        differs: Some("the tool takes the blocks in sequence".into()),
        ..Reference::default()
    });
    recs.push(stand_in);
    let mut twice = recs.clone();
    twice.extend(recs.iter().cloned());
    let refs: Vec<&ResultRecord> = twice.iter().collect();
    let notes = reference_gap_notes(&refs);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("no reference figure for DP ")
                && n.ends_with(": likwid-bench not found: apt-get install likwid")),
        "{notes:?}"
    );
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(
        notes.iter().any(|n| n.starts_with("the reference for ")
            && n.ends_with(": the tool takes the blocks in sequence")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("no reference figure for COPY 128 MiB arrays, TRIAD")),
        "{notes:?}"
    );
}

/// A whole-array kernel's row names its arrays (each, all threads together, as
/// --array-size gives them), so that runs over several sizes tell their rows apart; a
/// block workload's names its blocks.
#[test]
fn memory_rows_name_their_arrays_or_blocks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let run =
        crate::results::Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
    let copy = run
        .results
        .iter()
        .find(|r| r.workload == crate::workload::mem::MemWorkload::Copy)
        .unwrap();
    // 64 MiB per thread, two threads.
    assert_eq!(row(copy).variant, "128 MiB arrays");
    let mut smaller = copy.clone();
    if let Params::Mem(m) = &mut smaller.params {
        m.kernel.as_mut().unwrap().array_bytes_per_thread = 16 << 10;
    }
    assert_eq!(row(&smaller).variant, "32 KiB arrays");
    assert_eq!(variant_header(Subsystem::Mem), "Size");
}

/// Several threads or streams at once: each one's figure in a note, with memory's loads
/// per second together; of a staircase only its largest working set; one thread, no note.
#[test]
fn concurrency_notes_give_each_thread_and_stream() {
    use crate::reference::testing::record;
    use serde_json::json;
    let chase = |ws: u64, threads: usize, each: &[f64]| {
        record(
            "mem",
            "LATENCY",
            "latency",
            "ns",
            json!({"threads": threads, "probe": "chase", "cpus": [0, 1],
                   "thread_latency_ns": each, "ops_per_s": 2.0e7,
                   "working_set_bytes": ws, "pages": "thp", "huge_page_bytes": null,
                   "loads": 1000, "clock_ghz": null}),
            None,
        )
    };
    let net = |streams: u32, each: &[f64]| {
        record(
            "net",
            "LATENCY",
            "latency",
            "us",
            json!({"threads": streams, "streams": streams, "protocol": "TCP",
                   "message_size_bytes": 1, "duration_s": 1.0, "omit_s": 0.0,
                   "side": "client", "stream_rtt_us": each}),
            None,
        )
    };
    let notes = concurrency_notes(&[
        chase(1 << 20, 2, &[100.0, 110.0]),
        chase(1 << 30, 2, &[150.0, 160.5]),
        chase(1 << 30, 1, &[150.0]),
        net(2, &[30.0, 31.25]),
        net(1, &[30.0]),
    ]);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].ends_with("×2: per thread 150.0, 160.5 ns; together 20.00 M loads/s"),
        "{}",
        notes[0]
    );
    assert!(
        notes[1].ends_with("×2: per stream 30.00, 31.25 µs"),
        "{}",
        notes[1]
    );
}

/// A LINPACK point's note gives the time of one solve from its count and rate, in base or
/// display units alike, and the residual's verdict; a FAILED verdict is said as such.
#[test]
fn solve_notes_give_the_time_and_the_residual_verdict() {
    // 2/3·2000³ + 1.5·2000² = 5.339 GFLOP at 40 GOPS: 133.5 ms.
    let rec = super::charts::tests::linpack(2000, 2, 40.0);
    let base = solve_notes(std::slice::from_ref(&rec));
    assert_eq!(base.len(), 1);
    assert!(
        base[0].starts_with("LINPACK N=2000 AVX-512 24x8 ×2: 133.5 ms per solve (mean of 1"),
        "{}",
        base[0]
    );
    assert!(base[0].ends_with("(threshold 16): PASSED"), "{}", base[0]);
    let display = crate::units::Display {
        mib: false,
        gbit: false,
        ..Default::default()
    };
    let shown = rec.clone().converted(&|s, u| display.conversion(s, u));
    assert_eq!(shown.unit, Unit::Gops);
    assert_eq!(solve_notes(&[shown]), base);
    let mut failed = rec;
    if let Params::Cpu(c) = &mut failed.params {
        c.linalg.as_mut().unwrap().residual_passed = Some(false);
    }
    assert!(solve_notes(&[failed])[0].ends_with(": FAILED"));
}
use crate::sysinfo::uarch::lookup_x86;
use crate::sysinfo::{Isa, Source};

fn dp(mean: f64, clock: Result<f64, String>, user_clock: Option<f64>) -> ResultRecord {
    let peak = cpu_peak(
        OpClass::Fma { element_bits: 64 },
        1,
        clock,
        lookup_x86("AuthenticAMD", 0x19, 0x11),
        &[Isa::Avx512, Isa::Avx2],
        &CpuPeakOverrides {
            clock_ghz: user_clock,
            ..Default::default()
        },
    );
    let params = Params::with_defaults(
        crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
        serde_json::json!({}),
    )
    .unwrap();
    ResultRecord::new(
        crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
        params,
        Metric::Throughput,
        Unit::Gops,
        vec![mean],
        peak,
    )
}

#[test]
fn unknown_clock_says_so_in_the_efficiency_column() {
    let rec = dp(60.0, Err("the probes disagree".into()), None);
    assert_eq!(rec.efficiency, None);
    assert_eq!(row(&rec).efficiency, "unknown (clock)");
    assert!(rec.warnings.is_empty());
    let notes = peak_notes(std::slice::from_ref(&rec));
    assert!(notes[0].contains("the probes disagree"), "{notes:?}");
}

#[test]
fn efficiency_above_peak_under_a_user_clock_is_flagged() {
    // Zen 4 DP: 16 FLOP/cycle; a user clock of 2 GHz gives 32 GOPS, below the 60 measured.
    let rec = dp(60.0, Ok(3.7), Some(2.0));
    assert_eq!(
        rec.peak.as_ref().unwrap().inputs["clock"].source,
        Source::User
    );
    assert!(rec.efficiency.unwrap() > 1.0);
    assert!(
        rec.warnings[0].contains("user-given clock"),
        "{:?}",
        rec.warnings
    );
    assert!(row(&rec).efficiency.contains("above peak"));
    let notes = notice_notes(std::slice::from_ref(&rec));
    assert!(
        notes.iter().any(|n| n.contains("! efficiency 187.5 %")),
        "{notes:?}"
    );
    let json = serde_json::to_value(&rec).unwrap();
    assert!(json["warnings"][0].is_string());
    // A measured clock never warns, and a user clock below 100 % does not either.
    assert!(dp(60.0, Ok(1.0), None).warnings.is_empty());
    assert!(dp(30.0, Ok(3.7), Some(2.0)).warnings.is_empty());
}

/// Unknown peaks that share a reason: a few points each by its label, many by their
/// workload and count; a metric that repeats the workload's name is not said twice.
#[test]
fn unknown_peaks_name_their_points() {
    use crate::reference::testing::record;
    use serde_json::json;
    let chase = |ws: u64, reason: &str| {
        let mut r = record(
            "mem",
            "LATENCY",
            "latency",
            "ns",
            json!({"threads": 1, "probe": "chase", "cpus": [0],
                   "thread_latency_ns": [80.0], "ops_per_s": 1.0e7,
                   "working_set_bytes": ws, "pages": "4k", "huge_page_bytes": null,
                   "loads": 1000, "clock_ghz": null}),
            None,
        );
        r.peak = None;
        r.peak_unknown_reason = Some(reason.into());
        r
    };
    let many: Vec<ResultRecord> = (12..17).map(|k| chase(1 << k, "a")).collect();
    assert_eq!(
        peak_notes(&many),
        ["LATENCY (5 points): peak unknown: a"],
        "one line for the five, no 'LATENCY latency'"
    );
    let few = [
        chase(1 << 12, "a"),
        chase(1 << 20, "a"),
        chase(1 << 30, "b"),
    ];
    assert_eq!(
        peak_notes(&few),
        [
            "LATENCY · 1 thread · 4 KiB working set · 4k pages · chase, LATENCY · 1 thread · 1 MiB working set · 4k pages · chase: peak unknown: a",
            "LATENCY · 1 thread · 1 GiB working set · 4k pages · chase: peak unknown: b",
        ]
    );
    assert_eq!(
        point_and_metric("DP · 2 threads", Metric::Throughput),
        "DP · 2 threads throughput"
    );
    assert_eq!(
        point_and_metric("LATENCY (3 points)", Metric::Latency),
        "LATENCY (3 points)"
    );
}

/// A point whose phases show a burst leads with the rate it kept, marked, in the summary, the
/// full tables and the card, its efficiency that rate's; a note under the tables says what the
/// mark means. Without the burst, the mean as before and no mark.
#[test]
fn a_burst_point_leads_with_the_rate_it_kept() {
    use crate::results::phases::Phase;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let plain =
        crate::results::Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
    let mut burst = plain.clone();
    let at = burst
        .results
        .iter()
        .position(|x| {
            x.metric == Metric::Throughput
                && x.params
                    .disk()
                    .is_some_and(|d| d.block_size_bytes >= 64 << 10)
        })
        .unwrap();
    let mut peak = burst.results[0].peak.clone().unwrap();
    (peak.value, peak.unit) = (5e8, Unit::BytesPerSec);
    let rec = &mut burst.results[at];
    rec.peak = Some(peak);
    let mean = rec.summary.mean;
    rec.phases = Some(vec![Phase::new(0.0, 3.0, 3e9), Phase::new(3.0, 8.0, 1e8)]);
    assert_eq!(rec.headline(), 1e8);
    assert_eq!(rec.headline_efficiency(), Some(0.2));
    let mark = rows::BURST_MARK;
    for (r, bursts) in [(&plain, false), (&burst, true)] {
        let shown = r.displayed(&Default::default());
        let summary = summary::render(&shown, 100);
        let full = table::render(&shown, 100);
        let card = card::summary(&shown).map(|c| match c.plot {
            super::plot::Plot::Bars { rows, .. } => rows.join("\n"),
            _ => String::new(),
        });
        for text in [&summary, &full] {
            assert_eq!(text.contains(&format!("100.0{mark}")), bursts, "{text}");
            assert_eq!(
                text.contains("the rate the point kept after a burst"),
                bursts
            );
            assert_eq!(
                text.contains(&crate::units::format_sig(mean / 1e6)),
                !bursts,
                "the mean {mean} is not the figure of a burst point: {text}"
            );
        }
        // The efficiency of the rate kept: 100 MB/s of 500.
        assert_eq!(full.contains("20.0"), bursts, "{full}");
        if bursts {
            let card = card.expect("a card with the disk point");
            assert!(card.contains("100.0 MB/s after a burst"), "{card}");
        }
    }
}
