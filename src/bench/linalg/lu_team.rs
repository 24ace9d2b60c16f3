//! HPL's solve ([`solve_carried`]), its factorisation on a team of threads that lives as long as
//! the solve: the matrix is cut once into blocks of NB columns (and one of the carried columns),
//! the blocks travel between the threads by value, and between steps the helpers spin instead
//! of sleeping, as an MPI rank polls for HPL. Under a hypervisor a sleeping thread's virtual CPU
//! halts and takes tens of microseconds to wake, which KVM's halt polling only learns to cover
//! after many wake-ups: with a thread spawned per step, the first solves at N = 1000 on two
//! threads ran at two thirds of the rate of the later ones.
//!
//! Each step is the one of [`super::lu`]: the main thread brings the next panel's block up to
//! date and factors it (look-ahead of depth one) while the helpers update the other blocks,
//! then it joins them. Where the point has a CPU for each thread, each is pinned to its own (a
//! spinning helper must never share a CPU with the thread it waits for).

use super::gemm::{Gemm, MatRef, PackedA};
use super::lu::{LuError, back_substitute, factor_carrying, getrf2, pack_inverse, update_columns};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What every thread of a step reads: the factored panel and its pivots.
struct Panel {
    /// Its first column (and row), its width.
    j: usize,
    jb: usize,
    /// Its rows swaps, absolute row numbers.
    piv: Vec<usize>,
    /// L11⁻¹ and L21, packed.
    l11_inv: PackedA,
    l21: PackedA,
}

/// A step's work: its panel and the blocks still to update (with their first column).
struct Step<'a> {
    panel: Option<Arc<Panel>>,
    todo: Vec<(usize, &'a mut [f64])>,
}

/// The state the threads share.
struct Team<'a> {
    /// The matrix's factored and total columns, and NB: a block's width from its first column.
    n: usize,
    cols: usize,
    nb: usize,
    /// Bumped once a step's panel and blocks are in place.
    epoch: AtomicUsize,
    stop: AtomicBool,
    /// A block and the panel it is to be updated with are taken together, so that a thread
    /// late from one step never applies its panel to the next step's blocks.
    step: Mutex<Step<'a>>,
    done: Mutex<Vec<(usize, &'a mut [f64])>>,
    /// Blocks of this step not yet back in `done`.
    pending: AtomicUsize,
    failed: Mutex<Option<LuError>>,
}

impl<'a> Team<'a> {
    /// The width of the block starting at column `first`.
    fn width(&self, first: usize) -> usize {
        if first >= self.n {
            self.cols - self.n
        } else {
            self.nb.min(self.n - first)
        }
    }

    /// Updates blocks of the current step until none is left.
    fn drain(&self, one: &Gemm, work: &mut Vec<f64>, ld: usize) {
        loop {
            let next = {
                let mut step = self.step.lock().unwrap_or_else(PoisonError::into_inner);
                match (step.panel.clone(), step.todo.pop()) {
                    (Some(panel), Some(block)) => Some((panel, block)),
                    _ => None,
                }
            };
            let Some((panel, (first, block))) = next else {
                return;
            };
            // Back in `done` (and counted) however the update ends.
            struct Back<'t, 'a>(&'t Team<'a>, Option<(usize, &'a mut [f64])>);
            impl Drop for Back<'_, '_> {
                fn drop(&mut self) {
                    if let Some(b) = self.1.take() {
                        self.0
                            .done
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(b);
                    }
                    if std::thread::panicking() {
                        self.0.stop.store(true, Ordering::Release);
                    }
                    self.0.pending.fetch_sub(1, Ordering::AcqRel);
                }
            }
            let width = self.width(first);
            let mut back = Back(self, Some((first, block)));
            let Some((_, block)) = back.1.as_mut() else {
                return;
            };
            if let Err(e) = update_columns(
                one,
                &panel.l11_inv,
                &panel.l21,
                block,
                width,
                panel.j,
                panel.jb,
                ld,
                &panel.piv,
                work,
            ) {
                self.failed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(e.into());
            }
        }
    }
}

/// Solves A·x = b as HPL does: `ab` holds [A | b] (`n × (n + 1)`, leading dimension `ld`), b is
/// carried through the factorisation as one more column of the trailing matrix (so that it
/// becomes L⁻¹·P·b, and the rows of L are never swapped back, since nothing reads them again),
/// then U·x = that column is solved by back substitution. x is left in column `n`. On more than
/// one thread the factorisation runs on the team.
pub fn solve_carried(
    g: &Gemm,
    ab: &mut [f64],
    n: usize,
    ld: usize,
    nb: usize,
    ipiv: &mut [usize],
) -> Result<(), LuError> {
    if g.threads > 1 {
        super::gemm::fits(n, n + 1, ld, ab.len())?;
        super::gemm::fits(n, 1, n.max(1), ipiv.len())?;
        factor(g, ab, n, n + 1, ld, nb, ipiv)?;
    } else {
        factor_carrying(g, ab, n, n + 1, ld, nb, ipiv, false)?;
    }
    let (u, b) = ab.split_at_mut(n * ld);
    back_substitute(u, n, ld, &mut b[..n]);
    Ok(())
}

/// Factors the first `n` of the `cols` columns of `a` (the others carried along) on
/// `g.threads` threads; as [`super::lu`]'s `factor_carrying` without the swaps to the left.
#[allow(clippy::too_many_arguments)]
fn factor(
    g: &Gemm,
    a: &mut [f64],
    n: usize,
    cols: usize,
    ld: usize,
    nb: usize,
    ipiv: &mut [usize],
) -> Result<(), LuError> {
    let one = Gemm { threads: 1, ..*g };
    let nb = nb.max(1);
    // Blocks of NB columns, then one of the carried columns (each block its full height; the
    // last may end short of a whole column's stride).
    let split = (n * ld).min(a.len());
    let (factored, carried) = a.split_at_mut(split);
    let mut blocks: Vec<Option<(usize, &mut [f64])>> = factored
        .chunks_mut(nb * ld)
        .enumerate()
        .map(|(k, b)| Some((k * nb, b)))
        .collect();
    if cols > n {
        blocks.push(Some((n, carried)));
    }
    let team = Team {
        n,
        cols,
        nb,
        epoch: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        step: Mutex::new(Step {
            panel: None,
            todo: Vec::new(),
        }),
        done: Mutex::new(Vec::new()),
        pending: AtomicUsize::new(0),
        failed: Mutex::new(None),
    };
    // One thread a CPU where the point has as many (a spinning helper must not share its CPU
    // with the main thread); the main thread's CPUs are given back after.
    let cpus = crate::runner::affinity::allowed_cpus();
    let pinned = cpus.len() >= g.threads.max(1);
    std::thread::scope(|s| -> Result<(), LuError> {
        for t in 1..g.threads.max(1) {
            let (team, one, cpus) = (&team, &one, &cpus);
            s.spawn(move || {
                if pinned {
                    let _ = crate::runner::affinity::pin_current_thread(cpus[t]);
                }
                let mut work = Vec::new();
                let mut seen = 0;
                loop {
                    let now = team.epoch.load(Ordering::Acquire);
                    if team.stop.load(Ordering::Acquire) {
                        return;
                    }
                    if now == seen {
                        wait(pinned);
                        continue;
                    }
                    seen = now;
                    team.drain(one, &mut work, ld);
                }
            });
        }
        // Stops the helpers however the steps end, so that the scope can close.
        struct Stop<'t, 'a>(&'t Team<'a>);
        impl Drop for Stop<'_, '_> {
            fn drop(&mut self) {
                self.0.stop.store(true, Ordering::Release);
            }
        }
        let _stop = Stop(&team);
        if pinned {
            let _ = crate::runner::affinity::pin_current_thread(cpus[0]);
        }
        let done = steps(&team, &one, &mut blocks, n, ld, nb, ipiv, pinned);
        if pinned {
            let _ = crate::runner::affinity::restrict_current_thread(&cpus);
        }
        done
    })
}

/// The main thread's part: every step's panel, then its share of the blocks.
#[allow(clippy::too_many_arguments)]
fn steps<'a>(
    team: &Team<'a>,
    one: &Gemm,
    blocks: &mut [Option<(usize, &'a mut [f64])>],
    n: usize,
    ld: usize,
    nb: usize,
    ipiv: &mut [usize],
    pinned: bool,
) -> Result<(), LuError> {
    let mut work = Vec::new();
    let Some((_, first)) = blocks.first_mut().and_then(Option::take) else {
        return Ok(());
    };
    let jb0 = nb.min(n);
    getrf2(one, first, n, jb0, ld, 0, &mut ipiv[..jb0], &mut work)?;
    let mut panel_block: &'a [f64] = first;
    let mut j = 0;
    let mut jb = jb0;
    for k in 0.. {
        let next = j + jb;
        let l21 = one.pack(MatRef {
            data: &panel_block[next.min(panel_block.len())..],
            rows: n - next,
            cols: jb,
            ld,
        })?;
        let panel = Arc::new(Panel {
            j,
            jb,
            piv: ipiv[j..next].to_vec(),
            l11_inv: pack_inverse(one, &panel_block[j.min(panel_block.len())..], jb, ld)?,
            l21,
        });
        // The next panel's block stays here; the others go to the team.
        let jb2 = nb.min(n.saturating_sub(next));
        let ahead = if jb2 > 0 {
            blocks.get_mut(k + 1).and_then(Option::take)
        } else {
            None
        };
        let rest: Vec<_> = blocks
            .iter_mut()
            .skip(k + 1)
            .filter_map(Option::take)
            .collect();
        if ahead.is_none() && rest.is_empty() {
            break;
        }
        team.pending.store(rest.len(), Ordering::Release);
        *team.step.lock().unwrap_or_else(PoisonError::into_inner) = Step {
            panel: Some(panel.clone()),
            todo: rest,
        };
        team.epoch.fetch_add(1, Ordering::AcqRel);
        let mut factored = None;
        if let Some((first_col, block)) = ahead {
            update_columns(
                one,
                &panel.l11_inv,
                &panel.l21,
                block,
                jb2,
                j,
                jb,
                ld,
                &panel.piv,
                &mut work,
            )?;
            getrf2(
                one,
                &mut block[next..],
                n - next,
                jb2,
                ld,
                next,
                &mut ipiv[next..next + jb2],
                &mut work,
            )?;
            for p in &mut ipiv[next..next + jb2] {
                *p += next;
            }
            factored = Some((first_col, block));
        }
        team.drain(one, &mut work, ld);
        while team.pending.load(Ordering::Acquire) > 0 {
            if team.stop.load(Ordering::Acquire) {
                return Err(team_failed(team));
            }
            wait(pinned);
        }
        team.step
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .panel = None;
        if let Some(e) = team
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            return Err(e);
        }
        for (first_col, block) in team
            .done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            let at = if first_col >= n {
                blocks.len() - 1
            } else {
                first_col / nb
            };
            blocks[at] = Some((first_col, block));
        }
        let Some((_, block)) = factored else {
            break;
        };
        panel_block = block;
        j = next;
        jb = jb2;
    }
    Ok(())
}

/// One turn of a wait for the other threads: a spin where each thread has a CPU of its own, a
/// yield where they share CPUs (a spinning thread would take the CPU from the one it waits for).
fn wait(own_cpu: bool) {
    if own_cpu {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// The error of a team whose helper stopped it (a panic: its thread's join reports it).
fn team_failed(team: &Team<'_>) -> LuError {
    team.failed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .unwrap_or(LuError::Singular(usize::MAX))
}
