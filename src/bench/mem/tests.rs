//! The memory benchmark's unit tests: every workload at a tiny size, the LATENCY point on one
//! and two threads, and the options refused.

use super::*;
use crate::results::{ResultRecord, Unit};

fn tiny(workloads: Vec<MemWorkload>) -> MemOptions {
    MemOptions {
        workloads,
        block_sizes: vec![8, 1000, 65536],
        threads: vec![1, 2],
        array_sizes: vec![1 << 20],
        stores: Stores::Nt,
        isa: None,
        huge_pages: vec![HugePages::On],
        latency_max_bytes: 64 << 10,
        latency_threads: vec![1, 2],
        c2c_cpus: Vec::new(),
        mixes: Vec::new(),
        latency_sample: Duration::from_millis(2),
        total_bytes: None,
        sustain: None,
        scaling: crate::results::params::Scaling::Strong,
        duration: Duration::from_millis(2),
        reps: Repetition {
            warmup: 0,
            repeat: 2,
        },
        peak: MemPeakOverrides {
            gbs: Some(100.0),
            ..Default::default()
        },
        diagnose: false,
        precision: None,
    }
}

fn sys() -> SystemInfo {
    crate::sysinfo::collect(crate::sysinfo::ClockBudget {
        warmup: Duration::from_millis(1),
        sample: Duration::from_millis(1),
        samples: 1,
    })
}

/// The staircase's memory plateau has the modules' rated latency (`--mem-latency-ns`, the
/// user's) as its floor, a cache plateau its own: on a staircase drawn past this machine's
/// caches (a measured one would have to reach 8 × the last cache, which on a guest whose
/// sysfs says 300 MiB takes 40 s in a test build).
#[test]
fn the_memory_plateaus_floor_is_the_rated_latency() {
    let sys = sys();
    let last = sys
        .caches
        .iter()
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(16 << 10);
    let mut opts = tiny(vec![MemWorkload::Latency]);
    opts.peak.latency_ns = Some(80.0);
    // Past the caches, as the option asks (nothing is measured here).
    opts.latency_max_bytes = last.saturating_mul(16);
    let session = MemSession::new(&sys, &opts).unwrap();
    let stair: Vec<(u64, f64)> = latency::staircase_sizes(4096, last.saturating_mul(16))
        .into_iter()
        .map(|s| (s, if s <= last { 2.0 } else { 120.0 }))
        .collect();
    let recs = session.levels(&stair, HugePages::On, Some(3.0), &[0]);
    let level = |r: &&ResultRecord| r.params.latency().and_then(|l| l.level.clone());
    let memory = recs
        .iter()
        .find(|r| level(r).is_some_and(|l| l.level == crate::results::levels::LevelKind::Memory(1)))
        .expect("a memory plateau");
    let peak = memory
        .peak
        .as_ref()
        .expect("the rated latency as its floor");
    let rated = &peak.inputs["rated"];
    assert_eq!(
        (rated.value, rated.source),
        (80.0, crate::sysinfo::Source::User)
    );
    assert!((peak.value - 80e-9).abs() < 1e-15, "{}", peak.value);
    // Without the input, the memory plateau's floor is unknown, and says what to give.
    opts.peak.latency_ns = None;
    let session = MemSession::new(&sys, &opts).unwrap();
    let recs = session.levels(&stair, HugePages::On, Some(3.0), &[0]);
    let memory = recs
        .iter()
        .find(|r| level(r).is_some_and(|l| l.level == crate::results::levels::LevelKind::Memory(1)))
        .unwrap();
    assert!(
        memory
            .peak_unknown_reason
            .as_deref()
            .is_some_and(|why| why.contains("--mem-latency-ns")),
        "{:?}",
        memory.peak_unknown_reason
    );
}

/// Every workload runs at a tiny size with every store mode and gives finite, positive
/// figures with the bytes it declares.
#[test]
fn conformance_every_workload() {
    let sys = sys();
    for stores in [Stores::Nt, Stores::Regular, Stores::Auto] {
        let mut opts = tiny(MemWorkload::ALL.to_vec());
        opts.stores = stores;
        let session = MemSession::new(&sys, &opts).unwrap();
        for point in points(&opts) {
            let recs = session.run(point, &mut || {}).unwrap();
            assert!(!recs.is_empty());
            for r in &recs {
                assert!(
                    r.samples.iter().all(|s| s.is_finite() && *s > 0.0),
                    "{point:?} {:?}",
                    r.samples
                );
            }
            let r = &recs[0];
            if r.unit == Unit::BytesPerSec {
                let (reads, writes) = point.traffic();
                let k = r.params.mem().unwrap().kernel.as_ref().unwrap();
                let (read, written) = (k.bytes_read_per_pass, k.bytes_written_per_pass);
                assert_eq!(read * writes, written * reads, "{point:?}");
                assert_eq!(r.peak.as_ref().unwrap().value, 100e9);
                assert!(r.efficiency.is_some());
            }
        }
    }
}

#[test]
fn latency_gives_staircase_levels_and_probes() {
    let sys = sys();
    let opts = tiny(vec![MemWorkload::Latency]);
    let session = MemSession::new(&sys, &opts).unwrap();
    let latency_points = points(&opts);
    assert_eq!(
        latency_points.iter().map(|p| p.threads).collect::<Vec<_>>(),
        [1, 2],
        "one LATENCY point per thread count"
    );
    let recs = session.run(latency_points[0], &mut || {}).unwrap();
    let probe_of = |r: &ResultRecord| r.params.latency().unwrap().probe.to_string();
    let probe = |p: &str| recs.iter().filter(|r| probe_of(r) == p).count();
    assert_eq!(probe("chase"), staircase_sizes(4096, 64 << 10).len());
    // Whether a plateau is found depends on timings (machines are shared and noisy; the
    // detection itself is tested on a recorded staircase): only its records' shape here.
    for level in recs.iter().filter(|r| probe_of(r) == "level") {
        assert!(level.params.latency().unwrap().level.is_some());
        assert!(level.summary.mean > 0.0);
    }
    assert_eq!(
        probe("seq-1B") + probe("seq-8B") + probe("random-1B") + probe("random-8B"),
        4
    );
    assert!(recs.iter().all(|r| r.unit == Unit::Seconds));
    // Steps and probes have no floor of their own; a level has its cache's, where known,
    // with efficiency floor ÷ measured.
    for r in &recs {
        match (probe_of(r).as_str(), &r.peak) {
            ("level", Some(p)) => {
                assert!((r.efficiency.unwrap() - p.value / r.summary.mean).abs() < 1e-9)
            }
            ("level", None) => assert!(r.peak_unknown_reason.is_some()),
            (_, peak) => assert!(peak.is_none()),
        }
    }
    // Cycles from the mean in ns, not from the stored seconds.
    for r in recs.iter().filter(|r| probe_of(r) == "chase") {
        let c = r.params.latency().unwrap().chase.clone().unwrap();
        if let (Some(cycles), Some(ghz)) = (c.latency_cycles, c.clock_ghz) {
            let ns = r.summary.mean * 1e9;
            assert!(
                (cycles / ghz - ns).abs() <= ns * 1e-9,
                "{cycles} cycles, {ns} ns"
            );
        }
    }
}

/// With two threads every chase and probe point runs two chains at once: each thread's own
/// latency, the mean of them as the point's figure, and the rate of both together.
#[test]
fn latency_on_two_threads_runs_a_chain_on_each() {
    let sys = sys();
    let mut opts = tiny(vec![MemWorkload::Latency]);
    opts.latency_threads = vec![2];
    let session = MemSession::new(&sys, &opts).unwrap();
    let recs = session.run(points(&opts)[0], &mut || {}).unwrap();
    let mut measured = 0;
    for r in &recs {
        let l = r.params.latency().unwrap();
        assert_eq!(l.threads, 2, "{}", l.probe);
        if l.probe == crate::results::params::Probe::Level {
            continue;
        }
        measured += 1;
        assert_eq!(l.cpus.len(), 2, "{}", l.probe);
        assert_eq!(l.thread_latency_ns.len(), 2, "{}", l.probe);
        assert!(
            l.thread_latency_ns
                .iter()
                .all(|t| *t > 0.0 && t.is_finite())
        );
        // The point's figure is the mean of the threads' (each round's mean, then the mean
        // of rounds: the same sum), in seconds.
        let mean_ns = l.thread_latency_ns.iter().sum::<f64>() / 2.0;
        assert!(
            (r.summary.mean * 1e9 - mean_ns).abs() <= mean_ns * 1e-6,
            "{} {} vs {mean_ns}",
            l.probe,
            r.summary.mean * 1e9
        );
        // Together: the mean over rounds of the sum of the threads' rates, which is at
        // least the sum of the rates of their mean latencies (the mean of inverses is at
        // least the inverse of the mean), whatever the machine's noise.
        let rate = l.ops_per_s.unwrap();
        let floor: f64 = l.thread_latency_ns.iter().map(|ns| 1e9 / ns).sum();
        assert!(
            rate.is_finite() && rate >= floor * (1.0 - 1e-9),
            "{} {rate} {floor}",
            l.probe
        );
    }
    assert_eq!(measured, staircase_sizes(4096, 64 << 10).len() + 4);
}

#[test]
fn bad_options_are_refused() {
    let sys = sys();
    let err = |opts: MemOptions| validate(&opts, &sys).unwrap_err();
    let mut o = tiny(vec![MemWorkload::Rws]);
    o.block_sizes = vec![0];
    assert_eq!(err(o), MemError::BlockRange(0));
    let mut o = tiny(vec![MemWorkload::Rws]);
    o.block_sizes = vec![(1 << 30) + 1];
    assert_eq!(err(o), MemError::BlockRange((1 << 30) + 1));
    let mut o = tiny(vec![MemWorkload::Rws]);
    o.block_sizes = vec![1 << 20];
    assert!(matches!(err(o), MemError::BlockTooLarge { .. }));
    let mut o = tiny(vec![MemWorkload::Copy]);
    o.array_sizes = vec![1 << 50];
    assert!(matches!(err(o), MemError::TooMuchMemory { .. }));
    let mut o = tiny(vec![MemWorkload::Latency]);
    o.latency_max_bytes = 1 << 50;
    assert!(matches!(err(o), MemError::TooMuchMemory { .. }));
    // Each LATENCY thread has its own ring: a ring that fits once may not fit four times.
    if let Some(&available) = sys.memory.available_bytes.get() {
        let mut o = tiny(vec![MemWorkload::Latency]);
        o.latency_max_bytes = available / 2;
        o.latency_threads = vec![1];
        assert!(validate(&o, &sys).is_ok());
        o.latency_threads = vec![1, 4];
        assert!(matches!(err(o), MemError::TooMuchMemory { .. }));
    }
    // Block sizes only matter to the block workloads.
    let mut o = tiny(vec![MemWorkload::Copy]);
    o.block_sizes = vec![0];
    assert!(validate(&o, &sys).is_ok());
}

/// Blocks of 1 and 3 bytes (not whole 8-byte words) are moved byte by byte, with regular
/// stores whatever --stores asks (a byte is no streaming store); each point has its
/// throughput and the time of one operation, and 1-byte blocks move the bytes they count.
#[test]
fn byte_blocks_move_each_byte_once() {
    let sys = sys();
    let mut opts = tiny(vec![MemWorkload::Rws, MemWorkload::Rr, MemWorkload::Ws]);
    opts.block_sizes = vec![1, 3];
    opts.threads = vec![1];
    validate(&opts, &sys).unwrap();
    let session = MemSession::new(&sys, &opts).unwrap();
    for p in points(&opts) {
        let recs = session.run(p, &mut || {}).unwrap();
        assert_eq!(recs.len(), 2, "{}", p.workload);
        let (rate, op) = (&recs[0], &recs[1]);
        assert_eq!(
            (rate.metric, op.metric),
            (
                crate::results::Metric::Throughput,
                crate::results::Metric::Latency
            )
        );
        let k = rate.params.mem().unwrap().kernel.as_ref().unwrap();
        let blocks = k.blocks.as_ref().unwrap();
        assert!(matches!(blocks.block_size_bytes, 1 | 3));
        // Every block of the thread's array, whole: the bytes counted are the bytes moved.
        let (r, w) = p.workload.traffic();
        assert_eq!(
            k.bytes_read_per_pass + k.bytes_written_per_pass,
            (r + w) * blocks.block_size_bytes * blocks.blocks_per_thread
        );
        if p.workload != MemWorkload::Rr {
            assert_eq!(k.stores, crate::results::params::StoreKind::Regular);
        }
        assert!(rate.summary.mean > 0.0 && op.summary.mean > 0.0);
    }
}

/// A list of array sizes gives a bandwidth point per size (in the order given, each thread's
/// share of it), LATENCY and NULL none; with --stores auto, streaming stores only for arrays
/// that do not fit in the last-level cache; the smallest size is checked against the threads.
#[test]
fn array_sizes_give_a_point_each() {
    let sys = sys();
    let mut opts = tiny(vec![
        MemWorkload::Copy,
        MemWorkload::Latency,
        MemWorkload::Null,
    ]);
    opts.stores = Stores::Auto;
    opts.threads = vec![1];
    opts.latency_threads = vec![1];
    let llc = sys.llc_bytes();
    let big = llc.map_or(64 << 20, |l| 4 * l);
    opts.array_sizes = vec![16 << 10, big];
    let pts = points(&opts);
    let arrays: Vec<(MemWorkload, Option<u64>)> =
        pts.iter().map(|p| (p.workload, p.array)).collect();
    assert_eq!(
        arrays,
        [
            (MemWorkload::Copy, Some(16 << 10)),
            (MemWorkload::Copy, Some(big)),
            (MemWorkload::Latency, None),
            (MemWorkload::Null, None),
        ]
    );
    let session = MemSession::new(&sys, &opts).unwrap();
    let small = session.planned_params(pts[0]).unwrap();
    let k = small.mem().unwrap().kernel.clone().unwrap();
    assert_eq!(
        (k.array_bytes_per_thread, k.working_set_bytes),
        (16 << 10, 32 << 10)
    );
    use crate::results::params::StoreKind;
    assert_eq!(k.stores, StoreKind::Regular, "16 KiB arrays are in a cache");
    let large = session.planned_params(pts[1]).unwrap();
    let streams = super::kernels::kernels(session.isa(), true).1;
    if llc.is_some() && streams {
        let k = large.mem().unwrap().kernel.clone().unwrap();
        assert_eq!(k.stores, StoreKind::Nt, "4 × LLC is past the caches");
    }
    // A size too small for the most threads is refused, whichever place it has in the list.
    opts.threads = vec![1, 8];
    opts.array_sizes = vec![1 << 20, 16 << 10];
    assert_eq!(
        validate(&opts, &sys),
        Err(MemError::WorkingSetTooSmall(16 << 10))
    );
}

/// MIX: MLC's four mixes by default, a point per mix; each moves its reads and writes (the
/// bytes of a pass in the mix's ratio, the arrays of its working set) and names its mix.
#[test]
fn mixes_move_their_reads_and_writes() {
    use crate::results::params::Mix;
    let sys = sys();
    let mut opts = tiny(vec![MemWorkload::Mix]);
    opts.threads = vec![1];
    let names = |o: &MemOptions| -> Vec<String> {
        points(o)
            .iter()
            .map(|p| p.mix.unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&opts), ["1:0", "3:1", "2:1", "1:1"]);
    opts.mixes = ["0:1", "3:1", "2:2"]
        .map(|m| Mix::parse(m).unwrap())
        .to_vec();
    assert_eq!(names(&opts), ["0:1", "3:1", "1:1"]);
    let session = MemSession::new(&sys, &opts).unwrap();
    for point in points(&opts) {
        let mix = point.mix.unwrap();
        let recs = session.run(point, &mut || {}).unwrap();
        let k = recs[0].params.mem().unwrap().kernel.clone().unwrap();
        assert_eq!(k.mix, Some(mix));
        let each = k.array_bytes_per_thread;
        assert_eq!(k.bytes_read_per_pass, mix.reads as u64 * each, "{mix}");
        assert_eq!(k.bytes_written_per_pass, mix.writes as u64 * each, "{mix}");
        assert_eq!(k.working_set_bytes, mix.arrays() * each, "{mix}");
        assert!(recs[0].summary.mean > 0.0);
        let label = crate::results::point::label(&recs[0]);
        assert!(label.contains(&mix.words()), "{label}");
    }
}

/// LOADED: at two threads or more (one chases, the others make traffic), a point per
/// injection delay from idle to none, each a latency and a bandwidth record with the same
/// parameters; traffic flat out moves more than idle; one thread is refused.
#[test]
fn loaded_gives_a_curve_from_idle_to_flat_out() {
    use crate::results::params::Mix;
    let sys = sys();
    let mut opts = tiny(vec![MemWorkload::Loaded]);
    opts.mixes = vec![Mix::parse("2:1").unwrap()];
    opts.reps.repeat = 1;
    // A ring in DRAM, where an idle chase moves far less than the traffic flat out (in a
    // cache the chase alone moved 5.5 GB/s).
    opts.array_sizes = vec![64 << 20];
    let pts = points(&opts);
    assert_eq!(pts.len(), 1, "{pts:?}");
    assert_eq!(pts[0].threads, 2);
    let session = MemSession::new(&sys, &opts).unwrap();
    let mut ticks = 0;
    let recs = session.run(pts[0], &mut || ticks += 1).unwrap();
    assert_eq!(ticks, rounds(&pts[0], &opts));
    assert_eq!(recs.len(), 2 * loaded::DELAYS_NS.len());
    let mut delays = Vec::new();
    for pair in recs.chunks(2) {
        assert_eq!(
            (pair[0].metric, pair[1].metric),
            (
                crate::results::Metric::Latency,
                crate::results::Metric::Throughput
            )
        );
        assert_eq!(pair[0].params, pair[1].params);
        let l = pair[0].params.latency().unwrap();
        let load = l.load.as_ref().unwrap();
        assert_eq!(load.mix, opts.mixes[0]);
        // Idle runs no traffic.
        let traffic = usize::from(load.injection_delay_ns.is_some());
        assert_eq!(load.traffic_cpus.len(), traffic);
        assert_eq!(
            l.chase.as_ref().unwrap().working_set_bytes,
            loaded::ring_bytes(&opts, &sys)
        );
        delays.push(load.injection_delay_ns);
    }
    assert_eq!(delays, loaded::DELAYS_NS);
    // Every point moved bytes. How much more flat out moves than idle is a timing, checked by
    // the memory profile's run, not here: beside other tests the traffic thread may get no CPU
    // (idle 0.86 GB/s against 0.36 flat out, once).
    for r in recs
        .iter()
        .filter(|r| r.metric == crate::results::Metric::Throughput)
    {
        assert!(
            r.samples.iter().all(|v| v.is_finite() && *v > 0.0),
            "{:?}",
            r.samples
        );
    }
    // A CPU per thread, or the chaser would share one with the traffic.
    let allowed = affinity::allowed_cpus().len();
    opts.threads = vec![2, allowed + 1];
    assert_eq!(
        validate(&opts, &sys).unwrap_err(),
        MemError::LoadedOversubscribed(allowed + 1, allowed)
    );
    opts.threads = vec![1];
    assert_eq!(
        validate(&opts, &sys).unwrap_err(),
        MemError::LoadedNeedsTwo(1)
    );
}

/// NUMA on this machine: a latency and a bandwidth record per cell of its matrix (one cell on
/// one node), each naming its cell, its node's CPUs, the machine's node count and whether the
/// memory was bound.
#[test]
fn numa_gives_a_latency_and_a_bandwidth_per_cell() {
    let sys = sys();
    let opts = tiny(vec![MemWorkload::Numa]);
    let pts = points(&opts);
    assert_eq!(pts.len(), 1);
    let (cells, nodes, bound) = numa_matrix::matrix_cells(&affinity::allowed_cpus());
    assert!(!cells.is_empty());
    let mut ticks = 0;
    let session = MemSession::new(&sys, &opts).unwrap();
    let recs = session.run(pts[0], &mut || ticks += 1).unwrap();
    assert_eq!(ticks, rounds(&pts[0], &opts));
    assert_eq!(recs.len(), 2 * cells.len());
    for (pair, cell) in recs.chunks(2).zip(&cells) {
        assert_eq!(
            (pair[0].metric, pair[1].metric),
            (
                crate::results::Metric::Latency,
                crate::results::Metric::Throughput
            )
        );
        assert_eq!(pair[0].params, pair[1].params);
        let c = pair[0].params.latency().unwrap().cell.clone().unwrap();
        assert_eq!((c.cpu_node, c.mem_node), (cell.cpu_node, cell.mem_node));
        assert_eq!(c.bandwidth_cpus, cell.cpus);
        assert_eq!((c.nodes, c.bound), (nodes, bound));
        assert!(pair.iter().all(|r| r.samples.iter().all(|s| *s > 0.0)));
    }
}

/// Finding 5: the largest fixed work, weak, at 4096 threads saturates the estimate instead of
/// panicking, and the check refuses it by its time, in one line.
#[test]
fn a_fixed_amount_beyond_a_day_saturates_the_estimate_and_is_refused() {
    let sys = sys();
    let mut o = tiny(vec![MemWorkload::Copy]);
    o.total_bytes = Some(u64::MAX);
    o.scaling = crate::results::params::Scaling::Weak;
    o.threads = (1..=4096).collect();
    o.array_sizes = vec![64 << 30];
    o.reps.repeat = 1000;
    // Saturated or not (it depends on the CPUs here), far beyond a day, and no panic.
    assert!(estimate(&o, &sys) > Duration::from_secs(1 << 40));
    let err = validate(&o, &sys).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, MemError::WorkTooLong(_)), "{text}");
    assert!(err.is_usage());
    assert!(
        text.contains("more than 24 h") && text.contains("--duration"),
        "{text}"
    );
    assert!(!text.contains('\n'), "{text}");
    // A workload whose work is its own is not refused for the bytes.
    o.workloads = vec![MemWorkload::Null];
    assert!(!matches!(validate(&o, &sys), Err(MemError::WorkTooLong(_))));
}
