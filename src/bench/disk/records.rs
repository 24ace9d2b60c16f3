//! A point's measurements as records: the threads' figures of each repetition as MB/s, IOPS
//! and mean latency, the latency percentiles over every I/O, the parameters with Little's law,
//! the peaks of the device, and the last repetition's throughput per interval.

use super::DiskPoint;
use super::engine::EngineKind;
use super::session::DiskSession;
use super::thread::{MAX_INTERVALS, ThreadStats, timeline_interval};
use crate::measure::latency::histogram as new_hist;
use crate::results::ResultRecord;
use crate::results::params::{self as rp, DiskParams, LittlesLaw, NodeTag, Params};
use crate::results::{Metric, Unit};
use crate::sysinfo::peak::{self, Peak};
use hdrhistogram::Histogram;

/// The rates of a point's repetitions, the threads of each together.
struct Rates {
    /// Per repetition: MB/s, IOPS and the mean latency in µs.
    mbps: Vec<f64>,
    iops: Vec<f64>,
    mean_us: Vec<f64>,
    /// The latencies of every I/O of every repetition.
    all: Histogram<u64>,
    read_total: u64,
    written_total: u64,
}

impl Rates {
    /// The first `reps` repetitions of `stats` (per thread, per repetition), each over its
    /// longest thread's window.
    fn of(stats: &[Vec<ThreadStats>], reps: usize) -> Rates {
        let (mut mbps, mut iops, mut mean_us) = (Vec::new(), Vec::new(), Vec::new());
        let mut all = new_hist();
        let (mut read_total, mut written_total) = (0u64, 0u64);
        for r in 0..reps {
            let round: Vec<&ThreadStats> = stats.iter().map(|s| &s[r]).collect();
            let window = round
                .iter()
                .map(|s| s.window)
                .max()
                .unwrap_or_default()
                .as_secs_f64()
                .max(1e-9);
            let bytes: u64 = round.iter().map(|s| s.read_bytes + s.written_bytes).sum();
            let ios: u64 = round.iter().map(|s| s.ios).sum();
            read_total += round.iter().map(|s| s.read_bytes).sum::<u64>();
            written_total += round.iter().map(|s| s.written_bytes).sum::<u64>();
            mbps.push(bytes as f64 / window / 1e6);
            iops.push(ios as f64 / window);
            let mut h = new_hist();
            for s in &round {
                let _ = h.add(&s.hist);
            }
            mean_us.push(h.mean() / 1000.0);
            let _ = all.add(&h);
        }
        Rates {
            mbps,
            iops,
            mean_us,
            all,
            read_total,
            written_total,
        }
    }

    /// The share of the bytes that were read (1 where none moved).
    fn read_share(&self) -> f64 {
        if self.read_total + self.written_total > 0 {
            self.read_total as f64 / (self.read_total + self.written_total) as f64
        } else {
            1.0
        }
    }

    /// Little's law: outstanding I/Os = IOPS × mean latency.
    fn littles_law(&self, point: DiskPoint) -> LittlesLaw {
        let iops_mean = self.iops.iter().sum::<f64>() / self.iops.len().max(1) as f64;
        let lat_mean_s = self.all.mean() / 1e9;
        let expected = (point.threads * point.iodepth) as f64 / lat_mean_s.max(1e-12);
        let ratio = iops_mean / expected;
        LittlesLaw {
            outstanding: point.threads * point.iodepth,
            expected_iops: expected,
            ratio,
            within_5_percent: (ratio - 1.0).abs() <= 0.05,
        }
    }
}

/// The I/Os `point` keeps in flight: its threads × its queue depth.
fn outstanding(point: DiskPoint) -> u64 {
    (point.threads as u64).saturating_mul(point.iodepth as u64)
}

/// How the latency of an I/O is measured with `engine`.
fn latency_definition(engine: EngineKind) -> &'static str {
    if engine.caps().synchronous() {
        "per I/O, the duration of its synchronous call (fio's clat); samples are per-repetition means, percentiles over all repetitions"
    } else {
        "per I/O, from handing it to the engine to reaping its completion (fio's lat); samples are per-repetition means, percentiles over all repetitions"
    }
}

impl DiskSession<'_> {
    /// The throughput, IOPS and latency records of `point`, run on `cpus`, from what its
    /// threads measured (`stats[thread][repetition]`).
    pub(super) fn records(
        &self,
        point: DiskPoint,
        cpus: &[usize],
        stats: Vec<Vec<ThreadStats>>,
        cpu: rp::CpuUse,
    ) -> Vec<ResultRecord> {
        let reps = stats.iter().map(|s| s.len()).min().unwrap_or(0);
        let rates = Rates::of(&stats, reps);
        let sync_s = stats
            .iter()
            .flatten()
            .map(|s| s.sync.as_secs_f64())
            .fold(0.0, f64::max);
        let read_share = rates.read_share();
        let mut params = self.params(point, cpus, sync_s, rates.littles_law(point));
        params.cpu = Some(cpu);
        let label = point.workload;
        let mut out = vec![
            ResultRecord::new(
                label,
                Params::Disk(params.clone()),
                Metric::Throughput,
                Unit::MBPerSec,
                rates.mbps,
                self.throughput_peak(read_share),
            ),
            ResultRecord::new(
                label,
                Params::Disk(params.clone()),
                Metric::Iops,
                Unit::Iops,
                rates.iops,
                peak::disk_iops(
                    &self.opts.peaks,
                    read_share,
                    point.block,
                    self.link(),
                    point.workload.random(),
                    outstanding(point),
                ),
            ),
        ];
        params.latency_definition = Some(latency_definition(self.opts.engine).into());
        let mut lat = ResultRecord::new(
            label,
            Params::Disk(params),
            Metric::Latency,
            Unit::Micros,
            rates.mean_us,
            peak::disk_latency(
                &self.opts.peaks,
                read_share,
                point.block,
                self.link(),
                point.workload.random(),
            ),
        );
        lat.percentiles =
            crate::measure::latency::percentiles_s(&rates.all, &self.opts.percentiles);
        out.push(lat);
        // Each repetition's bytes per interval: the last one's are the record's intervals, all
        // of them back to back its phases.
        let interval = self.interval();
        let secs = interval.as_secs_f64();
        let per_rep: Vec<Vec<u64>> = (0..reps)
            .map(|rep| self.bytes_per_interval(&stats, rep, interval))
            .collect();
        let rate = |b: &u64| *b as f64 / secs;
        if let Some(last) = per_rep.last().filter(|b| b.len() >= 2) {
            out[0].intervals = Some(crate::results::Intervals {
                interval_s: secs,
                values: last.iter().map(rate).collect(),
            });
        }
        let rounds: Vec<Vec<f64>> = (per_rep.iter())
            .map(|r| r.iter().map(rate).collect())
            .collect();
        out[0].phases = crate::results::phases::of_rounds(&rounds, secs);
        // The same phases in I/Os a second (one I/O a block): the IOPS a table leads with
        // after a burst are those the point kept.
        out[1].phases = out[0].phases.clone().map(|phases| {
            phases
                .into_iter()
                .map(|p| crate::results::phases::Phase {
                    value: p.value / point.block as f64,
                    ..p
                })
                .collect()
        });
        out
    }

    /// `point`'s records before it runs, with the parameters it will run with (its CPUs and
    /// file): what the reference tools are asked before it runs.
    pub fn planned(&self, point: DiskPoint) -> Vec<ResultRecord> {
        let cpus = self.placement(point.threads).cpus;
        let law = planned_law(point);
        planned(point, self.params(point, &cpus, 0.0, law), self.repeat)
    }

    /// The parameters of `point`'s records (without the latency's definition): the point's
    /// own ([`point_params`]) with its CPUs, its file and how its I/O went.
    fn params(
        &self,
        point: DiskPoint,
        cpus: &[usize],
        final_sync_s: f64,
        littles_law: LittlesLaw,
    ) -> DiskParams {
        let falls_back = self.target().falls_back(point.block);
        DiskParams {
            io_mode: if self.opts.direct && !falls_back {
                rp::IoMode::Direct
            } else {
                rp::IoMode::Buffered
            },
            io_mode_reason: falls_back.then(|| self.fallback_reason(point)),
            file_size_bytes: self.target().size,
            final_sync_s,
            cpus: cpus.to_vec(),
            target: self.target().path.display().to_string(),
            device: self.target().device.as_ref().map(|d| d.name.clone()),
            file_system: self.target().file_system.clone(),
            littles_law,
            ..point_params(self.opts, point)
        }
    }

    /// Why `point`'s records went through the page cache although O_DIRECT was asked for.
    fn fallback_reason(&self, point: DiskPoint) -> String {
        format!(
            "{} B records are not whole {}-byte logical blocks, which O_DIRECT needs: through the page cache, each thread's region written back and dropped from it (POSIX_FADV_DONTNEED) before each repetition{}",
            point.block,
            self.target().align,
            if point.workload.random() {
                ", read-ahead off (POSIX_FADV_RANDOM)"
            } else {
                ""
            }
        )
    }

    /// The length of the timelines' intervals.
    fn interval(&self) -> std::time::Duration {
        timeline_interval(self.opts.runtime, self.opts.total_bytes.is_some())
    }

    /// The bytes of repetition `rep`, all threads together, per whole interval of its window
    /// (the shortest thread's).
    fn bytes_per_interval(
        &self,
        stats: &[Vec<ThreadStats>],
        rep: usize,
        interval: std::time::Duration,
    ) -> Vec<u64> {
        let round: Vec<&ThreadStats> = stats.iter().filter_map(|s| s.get(rep)).collect();
        let window = round.iter().map(|s| s.window).min().unwrap_or_default();
        let whole = (window.as_nanos() / interval.as_nanos().max(1)) as usize;
        let mut bytes = vec![0u64; whole.min(MAX_INTERVALS)];
        for s in &round {
            for (b, v) in bytes.iter_mut().zip(&s.timeline) {
                *b += v;
            }
        }
        bytes
    }

    /// The device's link bandwidth in MB/s and how it was found, where it has one.
    fn link(&self) -> Option<(f64, String)> {
        let d = self.target().device.as_ref()?;
        d.link_bytes_per_sec.map(|b| (b / 1e6, d.link.clone()))
    }

    /// The throughput peak of the point's read/write mix (see [`peak::disk_throughput`]).
    fn throughput_peak(&self, read_share: f64) -> Result<Peak, String> {
        let device = self.target().device.as_ref();
        peak::disk_throughput(
            &self.opts.peaks,
            read_share,
            self.link(),
            &device.map_or("its device is unknown".to_string(), |d| {
                format!("{} has no link bound ({})", d.name, d.link)
            }),
        )
    }
}

/// The parameters of `point` under `opts`, before any file or CPU is chosen: what the dry run
/// plans, and what the session completes with its file, CPUs and figures.
pub fn point_params(opts: &super::DiskOptions, point: DiskPoint) -> DiskParams {
    DiskParams {
        threads: point.threads,
        iodepth: point.iodepth,
        block_size_bytes: point.block,
        engine: opts.engine,
        io_mode: if opts.direct {
            rp::IoMode::Direct
        } else {
            rp::IoMode::Buffered
        },
        io_mode_reason: None,
        sync: opts.sync,
        file_per_thread: opts.file_per_thread,
        pattern: point.workload.pattern(),
        stride_blocks: (point.workload.pattern() == rp::IoPattern::Stride).then_some(opts.stride),
        stream_buffer_bytes: opts
            .engine
            .caps()
            .stream_buffer
            .then_some(opts.stream_buffer),
        read_percent: point.workload.read_percent(opts.read_percent),
        file_size_bytes: opts.size,
        runtime_s: if opts.total_bytes.is_some() {
            0.0
        } else {
            opts.runtime.as_secs_f64()
        },
        // Measured: the session sets it (`--sustain`).
        steady_s: None,
        total_bytes: opts.total_bytes,
        scaling: opts.total_bytes.map(|_| opts.scaling),
        ramp_s: opts.ramp.as_secs_f64(),
        final_sync_s: 0.0,
        cpus: Vec::new(),
        target: String::new(),
        device: None,
        file_system: None,
        littles_law: planned_law(point),
        latency_definition: None,
        cpu: None,
        node: NodeTag::default(),
    }
}

/// Little's law before a point runs: its I/Os in flight, nothing measured.
fn planned_law(point: DiskPoint) -> LittlesLaw {
    LittlesLaw {
        outstanding: point.threads * point.iodepth,
        expected_iops: 0.0,
        ratio: 0.0,
        within_5_percent: false,
    }
}

/// `point`'s records with `params` before it runs ([`ResultRecord::planned`]).
pub fn planned(point: DiskPoint, params: DiskParams, repeat: usize) -> Vec<ResultRecord> {
    point
        .workload
        .spec()
        .metrics
        .iter()
        .map(|&metric| ResultRecord::planned(point.workload, params.clone(), metric, repeat))
        .collect()
}
