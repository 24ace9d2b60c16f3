//! The options that only some workloads use, as one table (fio's option table is the model):
//! each row names an option, the workloads it applies to and what it does for them. The
//! command line refuses an option that no chosen workload uses from it, with the row's words
//! ([`Row::refusal`]); a workload answers whether it uses an option from it
//! ([`Workload::uses`]). An option of a subsystem's command that is in no row applies to every
//! workload, or is checked against other options where it is parsed (`--rate` paces UDP
//! streams only, `--stores` needs a mix that writes).
//!
//! Adding an option that only some workloads use: its row here, and its use.

use super::Workload;
use super::disk::DiskWorkload as D;
use super::linalg::LinalgWorkload;
use super::mem::MemWorkload as M;
use super::net::NetWorkload as N;
use super::spec::Work;
use crate::ids::Subsystem;

/// One option, or options refused together, and the workloads that use it.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub subsystem: Subsystem,
    /// Its long names without dashes, the first the option itself; the others are refused
    /// with it (`--mem-cl` goes with `--mem-latency-ns`).
    pub names: &'static [&'static str],
    /// The workloads that use it.
    pub users: fn(Workload) -> bool,
    /// What it does, after `--name`; `{}` is where its users are named.
    pub does: &'static str,
    /// Its users named as a group instead of one by one ("the bandwidth workloads"), and one
    /// of them as a fix says it ("a bandwidth workload").
    pub group: Option<(&'static str, &'static str)>,
}

// The users of most rows follow from the work model of each workload's spec, so that a new
// workload of the same kind is theirs without a line here.

/// The memory workloads that move blocks (RWS … RR).
fn blocks(w: Workload) -> bool {
    w.mem().is_some() && matches!(w.spec().work, Work::Blocks { .. })
}

/// The memory bandwidth workloads: arrays streamed (STREAM's kernels, SUM, MIX) or blocks.
fn bandwidth(w: Workload) -> bool {
    w.mem().is_some() && matches!(w.spec().work, Work::Arrays { .. } | Work::Blocks { .. })
}

/// The memory workloads whose kernels and peak are the bandwidth's: the bandwidth ones, the
/// traffic of LOADED and NUMA's read bandwidth.
fn kernels_and_peak(w: Workload) -> bool {
    bandwidth(w) || matches!(w, Workload::Mem(M::Loaded | M::Numa))
}

/// The memory workloads with a floor of a load from memory: blocks, and the chases whose
/// staircase or matrix ends in memory.
fn floored(w: Workload) -> bool {
    blocks(w) || matches!(w, Workload::Mem(M::Latency | M::Loaded | M::Numa))
}

/// The memory workloads that store: those whose work writes, and LOADED's traffic (in a mix
/// that writes).
fn storing(w: Workload) -> bool {
    w.mem().is_some()
        && match w.spec().work {
            Work::Arrays { written, .. } => written > 0,
            Work::Blocks { write, .. } => write,
            _ => w == Workload::Mem(M::Loaded),
        }
}

/// The CPU's kernels (NULL runs none; the linear-algebra workloads are sized by --n).
fn cpu_kernels(w: Workload) -> bool {
    w.spec().work == Work::KernelOps
}

/// The linear-algebra workloads: a solve or multiply of order N.
fn linalg(w: Workload) -> bool {
    w.spec().work == Work::Flops
}

/// Every row, subsystem by subsystem.
pub const TABLE: &[Row] = &[
    Row {
        subsystem: Subsystem::Cpu,
        names: &["scaling"],
        users: cpu_kernels,
        does: "splits the work of {} between threads",
        group: Some(("the kernels (QP to INT64)", "a kernel workload")),
    },
    Row {
        subsystem: Subsystem::Cpu,
        names: &["duration", "total-ops", "sustain"],
        users: cpu_kernels,
        does: "sets how much each repetition of {} runs (LINPACK, DGEMM and SGEMM time one solve or multiply, sized by --n)",
        group: Some(("the kernels (QP to INT64)", "a kernel workload")),
    },
    Row {
        subsystem: Subsystem::Cpu,
        names: &["isa"],
        users: |w| cpu_kernels(w) || linalg(w),
        does: "chooses the instructions of {}",
        group: Some((
            "the kernels (QP to INT64) and the built-in LINPACK, DGEMM and SGEMM",
            "a workload",
        )),
    },
    Row {
        subsystem: Subsystem::Cpu,
        names: &["n", "memory-fraction"],
        users: linalg,
        does: "sizes {}",
        group: None,
    },
    Row {
        subsystem: Subsystem::Cpu,
        names: &["blas", "blas-library"],
        users: linalg,
        does: "chooses the engine of {}",
        group: None,
    },
    Row {
        subsystem: Subsystem::Cpu,
        names: &["nb"],
        users: |w| w == Workload::Linalg(LinalgWorkload::Linpack),
        does: "sets {}'s block",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["block-size"],
        users: blocks,
        does: "sizes the blocks of {}",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["latency-max"],
        users: |w| w == Workload::Mem(M::Latency),
        does: "applies to the {} staircase (its shape, its memory floor)",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["huge-pages"],
        users: |w| matches!(w, Workload::Mem(M::Latency | M::Loaded)),
        does: "chooses the pages that {} chase through",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["cpus"],
        users: |w| w == Workload::Mem(M::C2c),
        does: "names the CPUs that {} pairs",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["mix"],
        users: |w| matches!(w, Workload::Mem(M::Mix | M::Loaded)),
        does: "chooses the read/write mixes of {}",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["mem-latency-ns", "mem-cl"],
        users: floored,
        does: "is the floor of a load from memory, for {} (the staircase's memory plateau, one block operation)",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["stores"],
        users: storing,
        does: "chooses the store instructions of the workloads that write ({})",
        group: None,
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["isa", "mem-peak-gbs", "mem-channels"],
        users: kernels_and_peak,
        does: "applies to {} (their kernels, their peak)",
        group: Some((
            "the bandwidth workloads, LOADED's traffic and NUMA's bandwidth",
            "a bandwidth workload",
        )),
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["total-bytes"],
        users: bandwidth,
        does: "sets the bytes of each repetition of {}",
        group: Some(("the bandwidth workloads", "a bandwidth workload")),
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["sustain"],
        users: bandwidth,
        does: "runs each repetition of {} until its rate is steady",
        group: Some(("the bandwidth workloads", "a bandwidth workload")),
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["duration"],
        users: |w| w.mem().is_some() && w.spec().work != Work::Nothing,
        does: "sets how long {} measure",
        group: Some((
            "the workloads other than NULL (the harness alone)",
            "a workload",
        )),
    },
    Row {
        subsystem: Subsystem::Mem,
        names: &["array-size"],
        users: |w| bandwidth(w) || matches!(w, Workload::Mem(M::Latency | M::Loaded | M::Numa)),
        does: "sizes the arrays of {}",
        group: Some((
            "the bandwidth workloads, LATENCY, LOADED and NUMA",
            "one of them",
        )),
    },
    Row {
        subsystem: Subsystem::Disk,
        names: &["read-percent"],
        users: |w| w == Workload::Disk(D::Rw),
        does: "sets {}'s share of reads",
        group: None,
    },
    Row {
        subsystem: Subsystem::Disk,
        names: &["stride"],
        users: |w| w == Workload::Disk(D::Rstride),
        does: "sets {}'s distance between blocks",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["reverse", "busy-poll"],
        users: |w| w == Workload::Net(N::Throughput),
        does: "applies to {} (its direction, its receivers; a ping-pong goes both ways, one message at a time)",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["propagation-us"],
        users: |w| w == Workload::Net(N::Latency),
        does: "enters the floor of {}'s round trips",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["bidir", "total-bytes", "zerocopy"],
        users: |w| w == Workload::Net(N::Throughput),
        does: "applies to {} (its streams)",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["sustain"],
        users: |w| w == Workload::Net(N::Throughput),
        does: "runs {}'s streams until their goodput is steady",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["load"],
        users: |w| w == Workload::Net(N::Latency),
        does: "runs {} under load",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["window", "congestion", "mss", "no-delay"],
        users: |w| matches!(w, Workload::Net(N::Throughput | N::Latency)),
        does: "applies to the sockets of {} (CONNECT's connections take the kernel's options)",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["percentiles"],
        users: |w| matches!(w, Workload::Net(N::Latency | N::Connect)),
        does: "chooses the percentiles of {} (round trips, connections)",
        group: None,
    },
    Row {
        subsystem: Subsystem::Net,
        names: &["count", "mps"],
        users: |w| matches!(w, Workload::Net(N::Latency | N::Connect)),
        does: "applies to {} (round trips, connections)",
        group: None,
    },
];

/// The row of `subsystem`'s option `name` (a long name without dashes), if only some of its
/// workloads use it.
pub fn row(subsystem: Subsystem, name: &str) -> Option<&'static Row> {
    TABLE
        .iter()
        .find(|r| r.subsystem == subsystem && r.names.contains(&name))
}

/// `subsystem`'s rows.
pub fn rows(subsystem: Subsystem) -> impl Iterator<Item = &'static Row> {
    TABLE.iter().filter(move |r| r.subsystem == subsystem)
}

impl Workload {
    /// Whether it uses its subsystem's option `name` (a long name without dashes): an option
    /// in no row of [`TABLE`] applies to every workload.
    pub fn uses(self, name: &str) -> bool {
        row(self.subsystem(), name).is_none_or(|r| (r.users)(self))
    }
}

impl Row {
    /// The workloads that use it, in their command line's order.
    pub fn users(&self) -> Vec<Workload> {
        Workload::of(self.subsystem)
            .into_iter()
            .filter(|w| (self.users)(*w))
            .collect()
    }

    /// Why the option `given` (one of its names) does not apply to a run of the workloads
    /// `chosen`, as one line ("--nb sets LINPACK's block, and LINPACK is not in --workload:
    /// add LINPACK to --workload or drop it"); `None` where one of them uses it.
    pub fn refusal(&self, given: &str, chosen: &[Workload]) -> Option<String> {
        if chosen.iter().any(|w| (self.users)(*w)) {
            return None;
        }
        let names: Vec<&str> = self.users().iter().map(|w| w.name()).collect();
        let (who, missing, add) = match (self.group, names.as_slice()) {
            (Some((group, one)), _) => {
                let chosen: Vec<&str> = chosen.iter().map(|w| w.name()).collect();
                (
                    group.to_string(),
                    format!("--workload has only {}", and(&chosen)),
                    one.to_string(),
                )
            }
            (None, [one]) => (
                one.to_string(),
                format!("{one} is not in --workload"),
                one.to_string(),
            ),
            (None, _) => (
                and(&names),
                "none of them is in --workload".to_string(),
                "one of them".to_string(),
            ),
        };
        Some(format!(
            "--{given} {}, and {missing}: add {add} to --workload or drop it",
            self.does.replace("{}", &who)
        ))
    }

    /// What its help says of the workloads it applies to ("Only for LATENCY and LOADED.").
    pub fn help(&self) -> String {
        let names: Vec<&str> = self.users().iter().map(|w| w.name()).collect();
        format!("Only for {}.", and(&names))
    }
}

/// Names as a sentence lists them: "A", "A and B", "A, B and C".
fn and(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row names options, has users and non-users (else it is no row), and says where
    /// its users go; no option is in two rows of one subsystem.
    #[test]
    fn every_row_divides_its_subsystem() {
        for r in TABLE {
            let users = r.users();
            assert!(!users.is_empty(), "{:?} has no users", r.names);
            assert!(
                users.len() < Workload::of(r.subsystem).len(),
                "{:?} applies to every workload: no row",
                r.names
            );
            assert!(r.does.contains("{}"), "{:?}", r.names);
            for n in r.names {
                assert!(!n.contains('_') && !n.starts_with('-'), "{n}");
                assert_eq!(
                    rows(r.subsystem).filter(|x| x.names.contains(n)).count(),
                    1,
                    "{n} in two rows"
                );
            }
        }
    }

    /// The users each row derives from the work models, as the specs listed them by hand.
    #[test]
    fn the_rows_users_are_the_workloads_that_use_them() {
        let users = |sub: Subsystem, name: &str| -> String {
            let names: Vec<&str> = row(sub, name)
                .unwrap()
                .users()
                .iter()
                .map(|w| w.name())
                .collect();
            names.join(",")
        };
        let bandwidth = "RWS,RWR,WS,WR,RS,RR,COPY,SCALE,ADD,TRIAD,SUM,MIX";
        let mem = |name| users(Subsystem::Mem, name);
        assert_eq!(mem("block-size"), "RWS,RWR,WS,WR,RS,RR");
        assert_eq!(mem("total-bytes"), bandwidth);
        assert_eq!(mem("isa"), format!("{bandwidth},LOADED,NUMA"));
        assert_eq!(
            mem("array-size"),
            format!("{bandwidth},LATENCY,LOADED,NUMA")
        );
        assert_eq!(
            mem("duration"),
            format!("{bandwidth},LATENCY,LOADED,C2C,NUMA")
        );
        assert_eq!(mem("mem-cl"), "RWS,RWR,WS,WR,RS,RR,LATENCY,LOADED,NUMA");
        assert_eq!(
            mem("stores"),
            "RWS,RWR,WS,WR,COPY,SCALE,ADD,TRIAD,MIX,LOADED"
        );
        let kernels = "QP,HP,SP,DP,SPFA,DPFA,INT8-DOT,BF16-DOT,INT8-MM,BF16-MM,INT32,INT64";
        assert_eq!(users(Subsystem::Cpu, "scaling"), kernels);
        assert_eq!(
            users(Subsystem::Cpu, "isa"),
            format!("{kernels},LINPACK,DGEMM,SGEMM")
        );
        assert_eq!(users(Subsystem::Cpu, "n"), "LINPACK,DGEMM,SGEMM");
        assert_eq!(users(Subsystem::Net, "mss"), "THROUGHPUT,LATENCY");
    }

    #[test]
    fn a_refusal_names_the_users_and_the_fix() {
        let nb = row(Subsystem::Cpu, "nb").unwrap();
        assert_eq!(
            nb.refusal("nb", &[Workload::Linalg(LinalgWorkload::Dgemm)])
                .unwrap(),
            "--nb sets LINPACK's block, and LINPACK is not in --workload: add LINPACK to --workload or drop it"
        );
        assert_eq!(
            nb.refusal("nb", &[Workload::Linalg(LinalgWorkload::Linpack)]),
            None
        );
        let pages = row(Subsystem::Mem, "huge-pages").unwrap();
        assert_eq!(
            pages
                .refusal("huge-pages", &[Workload::Mem(M::Triad)])
                .unwrap(),
            "--huge-pages chooses the pages that LATENCY and LOADED chase through, and none of them is in --workload: add one of them to --workload or drop it"
        );
        let total = row(Subsystem::Mem, "total-bytes").unwrap();
        assert_eq!(
            total
                .refusal(
                    "total-bytes",
                    &[Workload::Mem(M::Latency), Workload::Mem(M::Null)]
                )
                .unwrap(),
            "--total-bytes sets the bytes of each repetition of the bandwidth workloads, and --workload has only LATENCY and NULL: add a bandwidth workload to --workload or drop it"
        );
        assert_eq!(pages.help(), "Only for LATENCY and LOADED.");
        // An option in no row is every workload's.
        assert!(Workload::Disk(D::Rs).uses("block-size"));
        assert!(!Workload::Disk(D::Rs).uses("stride"));
        assert!(Workload::Mem(M::C2c).uses("duration"));
        assert!(!Workload::Mem(M::C2c).uses("array-size"));
    }
}
