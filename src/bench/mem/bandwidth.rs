//! A bandwidth point: each pinned thread's arrays allocated and first touched, one pass of
//! the workload's kernel calibrated to the duration (or fixed work), then timed repetitions,
//! rated as STREAM counts bytes.

use super::kernels;
use super::order::BlockOrder;
use super::records::record;
use super::session::on_each;
use super::{MemError, MemPoint, MemSession, MemWorkload, default_array_bytes};
use crate::bench::buffer::{Buffer, HugePages};
use crate::bench::timeline::scaled_to;
use crate::measure::steady::{Feeder, Steady};
use crate::measure::timeline::{Marks, RoundMarks};
use crate::results::params::{self as rp, Params};
use crate::results::phases::Sustain;
use crate::results::{Metric, ResultRecord, Unit};
use crate::runner::{self, Repetition, affinity};
use crate::sysinfo::peak::Peak;
use crate::workload::spec::Work;

/// Thread i's arrays for one point.
type Arrays = Vec<Buffer>;

/// How a bandwidth point lays out its arrays and blocks ([`MemSession::shape`]).
struct Shape {
    /// Each thread's array, bytes (whole 64-byte lines).
    per_thread: u64,
    block: u64,
    blocks: u64,
    /// Arrays read and written by a pass.
    reads: u64,
    writes: u64,
    /// Bytes of each array a pass touches.
    touched: u64,
    bytewise: bool,
    wordwise: bool,
    kernels: kernels::Kernels,
    /// Non-temporal stores.
    streams: bool,
}

/// What one pass of a bandwidth workload runs: a STREAM kernel over whole arrays, or a block
/// kernel over every block (copied, filled or read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Copy,
    Scale,
    Add,
    Triad,
    /// The sum of a whole array (read only).
    Sum,
    /// Three arrays read into a fourth (MIX 3:1).
    Add3,
    /// A whole array written (MIX 0:1).
    Fill,
    Blocks {
        read: bool,
        write: bool,
    },
}

impl Pass {
    /// The pass of `point`'s workload (MIX: of its mix); `None` for the workloads that are not
    /// bandwidth workloads (their points never come here). Exhaustive: a workload without its
    /// pass does not compile.
    fn of(point: MemPoint) -> Option<Pass> {
        let w = point.workload;
        Some(match w {
            MemWorkload::Mix => match point.traffic() {
                (1, 0) => Pass::Sum,
                (0, 1) => Pass::Fill,
                (1, 1) => Pass::Copy,
                (2, 1) => Pass::Add,
                (3, 1) => Pass::Add3,
                _ => return None,
            },
            MemWorkload::Copy => Pass::Copy,
            MemWorkload::Scale => Pass::Scale,
            MemWorkload::Add => Pass::Add,
            MemWorkload::Triad => Pass::Triad,
            MemWorkload::Sum => Pass::Sum,
            MemWorkload::Rws
            | MemWorkload::Rwr
            | MemWorkload::Ws
            | MemWorkload::Wr
            | MemWorkload::Rs
            | MemWorkload::Rr => match w.spec().work {
                Work::Blocks { read, write } => Pass::Blocks { read, write },
                _ => return None,
            },
            MemWorkload::Latency
            | MemWorkload::Loaded
            | MemWorkload::C2c
            | MemWorkload::Numa
            | MemWorkload::Null => {
                return None;
            }
        })
    }
}

/// Bytes of each of the point's arrays, all threads together.
fn point_array(point: MemPoint, sys: &crate::sysinfo::SystemInfo) -> u64 {
    point.array.unwrap_or_else(|| default_array_bytes(sys))
}

fn ptr(b: &Buffer) -> *mut f64 {
    b.as_ptr() as *mut f64
}

/// The stores a pass used: none where it writes nothing, else non-temporal or regular.
fn store_kind(writes: u64, streams: bool) -> rp::StoreKind {
    match (writes, streams) {
        (0, _) => rp::StoreKind::None,
        (_, true) => rp::StoreKind::Nt,
        (_, false) => rp::StoreKind::Regular,
    }
}

impl MemSession<'_> {
    /// Fixed work: the passes that move each thread's share of `total` bytes (at least one).
    fn fixed_passes(&self, total: u64, threads: usize, pass_bytes: u64) -> u64 {
        let share = match self.opts.scaling {
            rp::Scaling::Strong => total / threads as u64,
            rp::Scaling::Weak => total,
        };
        share.div_ceil(pass_bytes.max(1)).max(1)
    }

    /// How a bandwidth point lays out its arrays and blocks, and the kernels it runs.
    fn shape(&self, point: MemPoint) -> Shape {
        let w = point.workload;
        let array = point_array(point, self.sys);
        // Each thread's arrays: a whole number of 64-byte lines.
        let per_thread = (array / point.threads.max(1) as u64) / 64 * 64;
        let block = point.block.unwrap_or(per_thread);
        let blocks = per_thread / block.max(1);
        let (reads, writes) = point.traffic();
        let touched = if w.uses_blocks() {
            blocks * block
        } else {
            per_thread / 8 * 8
        };
        // A block that is not whole 8-byte words is moved byte by byte, with byte stores; a
        // small one word by word.
        let bytewise = !block.is_multiple_of(8);
        let wordwise = !bytewise && block < WORD_BLOCKS_BELOW;
        let in_cache =
            (self.sys.llc_total_bytes()).is_some_and(|llc| (reads + writes) * array <= llc);
        let (kernels, streams) = self.kernels_for(block, in_cache);
        Shape {
            per_thread,
            block,
            blocks,
            reads,
            writes,
            touched,
            bytewise,
            wordwise,
            kernels,
            streams: streams && !bytewise && !wordwise,
        }
    }

    /// A bandwidth point's parameters, run on `cpus` with `passes` a repetition.
    fn params(&self, point: MemPoint, shape: &Shape, cpus: &[usize], passes: u64) -> Params {
        let w = point.workload;
        let threads = point.threads as u64;
        Params::Mem(rp::MemParams {
            threads: point.threads,
            cpu_quota: None,
            kernel: Some(rp::MemKernel {
                cpus: cpus.to_vec(),
                isa: self.isa,
                stores: store_kind(shape.writes, shape.streams),
                mix: point.mix,
                blocks: w.uses_blocks().then(|| rp::MemBlocks {
                    block_size_bytes: shape.block,
                    blocks_per_thread: shape.blocks,
                    order: if w.random() {
                        rp::Order::Random
                    } else {
                        rp::Order::Sequential
                    },
                }),
                array_bytes_per_thread: shape.per_thread,
                pages: HugePages::On.pages(),
                working_set_bytes: (shape.reads + shape.writes) * shape.per_thread * threads,
                bytes_read_per_pass: shape.reads * shape.touched * threads,
                bytes_written_per_pass: shape.writes * shape.touched * threads,
                passes,
                total_bytes: self.opts.total_bytes,
                scaling: self.opts.total_bytes.map(|_| self.opts.scaling),
                byte_counting: rp::ByteCounting::Stream,
            }),
            node: rp::NodeTag::default(),
        })
    }

    /// A bandwidth point's parameters before it runs (its passes not calibrated yet: 0), on
    /// the CPUs it will run on, or NULL's; `None` for another workload.
    pub fn planned_params(&self, point: MemPoint) -> Option<Params> {
        if point.workload == MemWorkload::Null {
            return Some(super::session::null_params(point.threads));
        }
        Pass::of(point)?;
        let placement = affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
        Some(self.params(point, &self.shape(point), &placement.cpus, 0))
    }

    /// Runs a bandwidth point: its throughput record; a block workload's also the time of one
    /// operation.
    pub(super) fn bandwidth(
        &self,
        point: MemPoint,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let w = point.workload;
        let Some(kind) = Pass::of(point) else {
            return Err(MemError::Invalid(format!(
                "{w} is not a bandwidth workload"
            )));
        };
        let placement = affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
        let cpus = &placement.cpus;
        let array = point_array(point, self.sys);
        let shape = self.shape(point);
        let Shape {
            per_thread,
            block,
            blocks,
            reads,
            writes,
            touched,
            bytewise,
            wordwise,
            kernels: k,
            streams,
        } = shape;
        let elems = (per_thread / 8) as usize;
        let block_elems = (block / 8) as usize;
        let pass_bytes = (reads + writes) * touched;

        // Allocate on each pinned thread: first touch places the pages on its node.
        let arrays: Vec<Arrays> = on_each(cpus, (reads + writes) * array, |_| {
            (0..(reads + writes).max(1))
                .map(|k| {
                    let b = Buffer::new(per_thread as usize, HugePages::On)?;
                    // SAFETY: the buffer holds `elems` f64.
                    unsafe { (self.regular.fill)(ptr(&b), 1.0 + k as f64, elems) };
                    Ok(b)
                })
                .collect()
        })?;

        // One pass over thread i's arrays; `seed` varies the random block order.
        let pass = |i: usize, seed: u64| {
            let a = &arrays[i];
            let p = |n: usize| ptr(&a[n]);
            // SAFETY: every pointer and length stays within thread i's arrays of `elems` f64;
            // blocks are whole and inside (blocks × block ≤ per_thread).
            unsafe {
                match kind {
                    Pass::Copy => (k.copy)(p(1), p(0), elems),
                    Pass::Scale => (k.scale)(p(1), p(0), 3.0, elems),
                    Pass::Add => (k.add)(p(2), p(0), p(1), elems),
                    Pass::Triad => (k.triad)(p(2), p(0), p(1), 3.0, elems),
                    Pass::Sum => {
                        std::hint::black_box((k.read)(p(0), elems));
                    }
                    Pass::Add3 => (k.add3)(p(3), p(0), p(1), p(2), elems),
                    Pass::Fill => (k.fill)(p(0), 2.0, elems),
                    Pass::Blocks { read, write } if bytewise || wordwise => {
                        // A copy's second array; the others have one.
                        let to = if read && write { p(1) } else { p(0) };
                        let order = w.random().then_some(seed ^ (i as u64) << 32);
                        let ends = (read, write);
                        let acc = if bytewise {
                            element_pass::<u8>(p(0) as _, to as _, (block, blocks), ends, order)
                        } else {
                            let words = (block / 8, blocks);
                            element_pass::<u64>(p(0) as _, to as _, words, ends, order)
                        };
                        std::hint::black_box(acc);
                    }
                    Pass::Blocks { read, write } => {
                        let mut acc = 0u64;
                        let mut one = |b: u64| {
                            let off = b as usize * block_elems;
                            match (read, write) {
                                (true, true) => (k.copy)(p(1).add(off), p(0).add(off), block_elems),
                                (false, _) => (k.fill)(p(0).add(off), 2.0, block_elems),
                                (true, false) => {
                                    acc = acc.wrapping_add((k.read)(p(0).add(off), block_elems))
                                }
                            }
                        };
                        if w.random() {
                            BlockOrder::new(blocks, seed ^ (i as u64) << 32).for_each(&mut one);
                        } else {
                            (0..blocks).for_each(&mut one);
                        }
                        std::hint::black_box(acc);
                    }
                }
            }
            // Only streaming stores need ordering (an sfence); loads and regular stores
            // need none.
            if streams {
                kernels::fence();
            }
        };
        let Timed {
            passes,
            times,
            marks,
            interval,
            sustain,
        } = self.timed_passes(cpus, pass_bytes, &pass, tick, self.opts.sustain)?;
        let total = pass_bytes as f64 * passes as f64 * point.threads as f64;
        let samples = times
            .iter()
            .map(|t| total / t.as_secs_f64() / 1e9)
            .collect();
        let params = self.params(point, &shape, cpus, passes);
        // Every thread moves `passes × blocks` blocks in the repetition's time, at once.
        let ops = passes * blocks;
        let moved = (reads + writes) * block * point.threads as u64;
        let mut out = self.records(w, params, samples, &times, ops, moved);
        for r in &mut out {
            r.sustain.clone_from(&sustain);
        }
        crate::bench::timeline::timed(&mut out[0], &marks, self.reps, interval, pass_bytes as f64);
        Ok(out)
    }

    /// The marks a thread makes in a round of many passes ([`Self::timed_passes`]).
    const MARKS: u64 = 100;

    /// The point's repetitions: the passes of one ([`Self::passes`]), then each repetition's
    /// time of that many passes on every thread at once, `tick` after each; and each thread's
    /// marks of each round (every hundredth of its passes: a pass of a cache-resident array
    /// is shorter than reading the clock). With `sustain` (`--sustain`, a bandwidth point's),
    /// a repetition runs until its rate is steady, `sustain` at most, and its marks are five an
    /// interval at least ([`crate::measure::steady::calls`]).
    pub(super) fn timed_passes(
        &self,
        cpus: &[usize],
        pass_bytes: u64,
        pass: &(dyn Fn(usize, u64) + Sync),
        tick: &mut dyn FnMut(),
        sustain: Option<std::time::Duration>,
    ) -> Result<Timed, MemError> {
        let threads = cpus.len();
        let longest = sustain.unwrap_or(self.opts.duration);
        let passes = self.passes(cpus, threads, pass_bytes, pass, longest, sustain.is_some())?;
        let interval = match self.opts.total_bytes {
            Some(_) => std::time::Duration::from_millis(100),
            None => crate::measure::timeline::interval_of(longest),
        };
        let marks_per_round = match sustain {
            Some(d) => crate::measure::steady::calls(d, interval, Self::MARKS),
            None => Self::MARKS,
        };
        let every = (passes / marks_per_round).max(1);
        let steady = sustain.map(|d| Steady::over(d, interval, threads));
        let mut steady_s = Vec::new();
        let reps = self.reps;
        let marks: Vec<std::sync::Mutex<Vec<Marks>>> =
            (0..threads).map(|_| Default::default()).collect();
        let rounds = runner::run_rounds_per_thread(
            cpus,
            reps,
            |i| {
                let mut m = Marks::with_capacity(marks_per_round.min(1024) as usize + 2);
                let start = std::time::Instant::now();
                let mut last = start;
                m.push((last, 0.0));
                let mut feeder =
                    (steady.as_ref()).map(|s| Feeder::new(s, last, interval, pass_bytes as f64));
                // A countdown, not a division a pass: a pass of an L1-resident array is a
                // few hundred cycles.
                let (mut done, mut left) = (0, every);
                for s in 1..=passes {
                    pass(i, s);
                    left -= 1;
                    if left == 0 || s == passes {
                        let now = std::time::Instant::now();
                        let work = (s - done) as f64;
                        m.push((now, work));
                        (done, left) = (s, every);
                        // Steady, or past its longest time (its passes were calibrated with
                        // every thread at once, but a host can slow them).
                        if feeder.as_mut().is_some_and(|f| f.call(last, now, work))
                            || sustain.is_some_and(|d| now - start >= d)
                        {
                            break;
                        }
                        last = now;
                    }
                }
                marks[i].lock().expect("marks").push(m);
            },
            |_| {},
            |round| {
                if let Some(s) = &steady {
                    s.round_ended(round >= reps.warmup, interval.as_secs_f64(), &mut steady_s);
                }
                tick()
            },
        )
        .map_err(|e| MemError::Pin(e.to_string()))?;
        let marks: RoundMarks = marks
            .into_iter()
            .map(|m| m.into_inner().expect("marks"))
            .collect();
        // A repetition that ended once steady made fewer passes than asked: its time is
        // scaled to those asked (its rate as it was).
        let times = match sustain {
            Some(_) => scaled_to(rounds, &marks, reps, passes as f64).wall,
            None => rounds.wall,
        };
        Ok(Timed {
            passes,
            times,
            marks,
            interval,
            sustain: sustain.map(|d| Sustain {
                max_s: d.as_secs_f64(),
                steady_s,
            }),
        })
    }

    /// The passes of a repetition: the fixed work's (`--total-bytes`), else calibrated — rounds
    /// of 1, 2, 4, … passes until one takes a twentieth of the time (1 ms at least), then
    /// as many as fill `longest`. One pass of a cache-resident array is shorter than starting
    /// the threads, and timing one alone left repetitions at 60–80 % of --duration. With
    /// `sustain`, calibrated on 2 s at most (a calibration costs a tenth of its time).
    fn passes(
        &self,
        cpus: &[usize],
        threads: usize,
        pass_bytes: u64,
        pass: &(dyn Fn(usize, u64) + Sync),
        longest: std::time::Duration,
        sustain: bool,
    ) -> Result<u64, MemError> {
        if let Some(total) = self.opts.total_bytes {
            return Ok(self.fixed_passes(total, threads, pass_bytes));
        }
        let once = Repetition {
            warmup: 0,
            repeat: 1,
        };
        let target = match sustain {
            true => longest.min(std::time::Duration::from_secs(2)),
            false => longest,
        }
        .as_secs_f64();
        let floor = (target / 20.0).max(1e-3);
        let mut n: u64 = 1;
        loop {
            let round = runner::run_rounds(
                cpus,
                once,
                |i| (1..=n).for_each(|s| pass(i, s)),
                |_| {},
                |_| {},
            )
            .map_err(|e| MemError::Pin(e.to_string()))?;
            let t = round[0].as_secs_f64().max(1e-9);
            if t >= floor || n >= 1 << 40 {
                let passes = n as f64 * longest.as_secs_f64() / t;
                return Ok(passes.ceil().clamp(1.0, (1u64 << 50) as f64) as u64);
            }
            n *= 2;
        }
    }

    /// A bandwidth point's records: its throughput, and a block workload's time of one
    /// operation (each thread did `ops` of them in a repetition, all threads together moving
    /// `moved` bytes in one).
    fn records(
        &self,
        w: MemWorkload,
        params: Params,
        samples: Vec<f64>,
        times: &[std::time::Duration],
        ops: u64,
        moved: u64,
    ) -> Vec<ResultRecord> {
        let mut out = Vec::new();
        if w.uses_blocks() {
            let ops = ops.max(1) as f64;
            let ns = times.iter().map(|t| t.as_secs_f64() * 1e9 / ops).collect();
            let floor = op_floor(&self.opts.peak, moved, &self.peak);
            out.push(record(
                w,
                params.clone(),
                Metric::Latency,
                Unit::Nanos,
                ns,
                floor,
            ));
        }
        let bandwidth = self.peak.clone();
        out.insert(
            0,
            record(
                w,
                params,
                Metric::Throughput,
                Unit::GBPerSec,
                samples,
                bandwidth,
            ),
        );
        out
    }
}

/// The least time of one block operation, ns: the memory's rated latency (`--mem-latency-ns`,
/// or `--mem-cl` with `--mem-mts`) plus the bytes all threads move in one operation each (`moved`) at the bandwidth peak,
/// where that is known; unknown without a rated latency.
fn op_floor(
    rated: &crate::sysinfo::peak::MemPeakOverrides,
    moved: u64,
    bandwidth: &Result<Peak, String>,
) -> Result<Peak, String> {
    let mut floor = crate::sysinfo::peak::memory_latency(rated)?;
    match bandwidth {
        Ok(bw) => {
            // GB/s: bytes per ns.
            floor.value += moved as f64 / bw.value.max(1e-9);
            floor.formula =
                "rated + bytes moved per operation (all threads) / bandwidth peak".into();
            floor.inputs.insert(
                "bytes_moved".into(),
                crate::sysinfo::peak::PeakInput {
                    value: moved as f64,
                    unit: "bytes".into(),
                    source: crate::sysinfo::Source::Detected,
                },
            );
            floor.inputs.insert(
                "bandwidth".into(),
                crate::sysinfo::peak::PeakInput {
                    value: bw.value,
                    unit: bw.unit.to_string(),
                    source: crate::sysinfo::Source::Detected,
                },
            );
        }
        Err(why) => {
            floor.formula = format!("rated (the transfer is not counted: {why})");
        }
    }
    Ok(floor)
}

/// An element a small block is moved by: a byte, or an 8-byte word.
trait Element: Copy {
    /// What a write stores.
    const FILL: Self;
    fn widen(self) -> u64;
}

impl Element for u8 {
    const FILL: u8 = 2;
    fn widen(self) -> u64 {
        self as u64
    }
}

impl Element for u64 {
    const FILL: u64 = 2;
    fn widen(self) -> u64 {
        self
    }
}

/// Blocks of whole 8-byte words below this size are moved word by word in one inlined loop:
/// the vector kernels would spend an indirect call and their reduction on each block, and
/// their vector loop (four vectors at a time) never runs on one this small.
pub(super) const WORD_BLOCKS_BELOW: u64 = 256;

/// One pass of blocks of `size` elements (`count` of them) moved element by element — bytes
/// for a block that is not whole words, 8-byte words for a small one: each element one
/// volatile load and/or store, never merged or vectorised; in sequence (one run over all the blocks), or in the
/// random order of `seed`. Returns the sum of the elements read.
///
/// # Safety
/// `from`, and `to` for a copy, hold at least `size × count` elements.
unsafe fn element_pass<T: Element>(
    from: *mut T,
    to: *mut T,
    (size, count): (u64, u64),
    (read, write): (bool, bool),
    seed: Option<u64>,
) -> u64 {
    let mut acc = 0u64;
    // Elements `off..off + n`, each its own load and/or store.
    let mut run = |off: usize, n: usize| {
        for j in off..off + n {
            // SAFETY: j < size × count, within both buffers (the caller's contract).
            unsafe {
                match (read, write) {
                    (true, true) => to.add(j).write_volatile(from.add(j).read_volatile()),
                    (false, _) => from.add(j).write_volatile(T::FILL),
                    (true, false) => acc = acc.wrapping_add(from.add(j).read_volatile().widen()),
                }
            }
        }
    };
    match seed {
        Some(seed) => {
            BlockOrder::new(count, seed).for_each(|b| run((b * size) as usize, size as usize))
        }
        // Blocks in sequence are the same loads and stores in the same order as one run over
        // them all: no bookkeeping between blocks.
        None => run(0, (size * count) as usize),
    }
    acc
}

/// A point's timed repetitions ([`MemSession::timed_passes`]).
pub(super) struct Timed {
    /// The passes asked of each thread in a repetition (with `--sustain`, the most).
    pub passes: u64,
    /// Each timed repetition's time (with `--sustain`, scaled to `passes` on every thread from
    /// the passes it made).
    pub times: Vec<std::time::Duration>,
    /// Each thread's marks of each round, the warm-ups first.
    pub marks: RoundMarks,
    /// The intervals of the point's series.
    pub interval: std::time::Duration,
    /// `--sustain`: its longest time and when each timed repetition was steady.
    pub sustain: Option<Sustain>,
}
