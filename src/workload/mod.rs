//! What a workload is, below everything that measures or reports one: each subsystem's
//! workload enum (as users type it) and its [`spec::Spec`], returned from a `match` with no
//! wildcard so that a variant without a spec does not compile, the [`registry`] of them all,
//! and [`Workload`], any one of them: what a record measured. The benchmarks (`bench`)
//! implement them; the command line, the reports, the reference tools and the results read
//! them from here.

pub mod cpu;
pub mod disk;
pub mod linalg;
pub mod mem;
pub mod net;
pub mod options;
pub mod registry;
pub mod spec;

use crate::ids::Subsystem;
use cpu::CpuWorkload;
use disk::DiskWorkload;
use linalg::LinalgWorkload;
use mem::MemWorkload;
use net::NetWorkload;
use spec::Spec;

/// A workload of any subsystem: what a record measured. It is written as its name (the JSON
/// document's `workload`); a name is read back with its record's subsystem, since two
/// subsystems share some names (`COPY` is a memory and a disk workload, `LATENCY` a memory
/// and a network one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    Cpu(CpuWorkload),
    Linalg(LinalgWorkload),
    Mem(MemWorkload),
    Disk(DiskWorkload),
    Net(NetWorkload),
}

impl Workload {
    /// Its name, as users type it and records hold it.
    pub const fn name(self) -> &'static str {
        match self {
            Workload::Cpu(w) => w.name(),
            Workload::Linalg(w) => w.name(),
            Workload::Mem(w) => w.name(),
            Workload::Disk(w) => w.name(),
            Workload::Net(w) => w.name(),
        }
    }

    /// What it is.
    pub fn spec(self) -> Spec {
        match self {
            Workload::Cpu(w) => w.spec(),
            Workload::Linalg(w) => w.spec(),
            Workload::Mem(w) => w.spec(),
            Workload::Disk(w) => w.spec(),
            Workload::Net(w) => w.spec(),
        }
    }

    /// The subsystem it measures (a linear-algebra workload is the CPU's).
    pub const fn subsystem(self) -> Subsystem {
        match self {
            Workload::Cpu(_) | Workload::Linalg(_) => Subsystem::Cpu,
            Workload::Mem(_) => Subsystem::Mem,
            Workload::Disk(_) => Subsystem::Disk,
            Workload::Net(_) => Subsystem::Net,
        }
    }

    /// Every workload of `subsystem`, in the order its command line lists them.
    pub fn of(subsystem: Subsystem) -> Vec<Workload> {
        match subsystem {
            Subsystem::Cpu => CpuWorkload::ALL
                .into_iter()
                .map(Workload::Cpu)
                .chain(LinalgWorkload::ALL.into_iter().map(Workload::Linalg))
                .collect(),
            Subsystem::Mem => MemWorkload::ALL.into_iter().map(Workload::Mem).collect(),
            Subsystem::Disk => DiskWorkload::ALL.into_iter().map(Workload::Disk).collect(),
            Subsystem::Net => NetWorkload::ALL.into_iter().map(Workload::Net).collect(),
        }
    }

    /// The workload of `subsystem` named exactly `name` (as a record holds it), or what is
    /// wrong (the name made printable).
    pub fn named(subsystem: Subsystem, name: &str) -> Result<Workload, String> {
        Workload::of(subsystem)
            .into_iter()
            .find(|w| w.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown {subsystem} workload '{}'; a record names one of {}",
                    crate::text::printable(name),
                    crate::text::one_of(Workload::of(subsystem).iter().map(|w| w.name()))
                )
            })
    }

    /// The CPU kernel it is, if it is one.
    pub const fn cpu(self) -> Option<CpuWorkload> {
        match self {
            Workload::Cpu(w) => Some(w),
            _ => None,
        }
    }

    /// The dense solve or multiply it is, if it is one.
    pub const fn linalg(self) -> Option<LinalgWorkload> {
        match self {
            Workload::Linalg(w) => Some(w),
            _ => None,
        }
    }

    /// The memory workload it is, if it is one.
    pub const fn mem(self) -> Option<MemWorkload> {
        match self {
            Workload::Mem(w) => Some(w),
            _ => None,
        }
    }

    /// The disk workload it is, if it is one.
    pub const fn disk(self) -> Option<DiskWorkload> {
        match self {
            Workload::Disk(w) => Some(w),
            _ => None,
        }
    }

    /// The network workload it is, if it is one.
    pub const fn net(self) -> Option<NetWorkload> {
        match self {
            Workload::Net(w) => Some(w),
            _ => None,
        }
    }
}

impl std::fmt::Display for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Each subsystem's workload is a [`Workload`], and compares with one.
macro_rules! any_workload {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Workload {
            fn from(w: $t) -> Workload {
                Workload::$v(w)
            }
        }

        impl PartialEq<$t> for Workload {
            fn eq(&self, other: &$t) -> bool {
                *self == Workload::$v(*other)
            }
        }
    )*};
}
any_workload!(CpuWorkload => Cpu, LinalgWorkload => Linalg, MemWorkload => Mem,
    DiskWorkload => Disk, NetWorkload => Net);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload is read back from its name with its subsystem; the names two subsystems
    /// share are told apart by it, and an unknown or another subsystem's name is refused.
    #[test]
    fn a_name_and_its_subsystem_give_the_workload_back() {
        for sub in Subsystem::ALL {
            for w in Workload::of(sub) {
                assert_eq!(w.subsystem(), sub, "{w}");
                assert_eq!(Workload::named(sub, w.name()), Ok(w));
                assert_eq!(w.spec().name, w.name());
                assert_eq!(serde_json::to_value(w).unwrap(), w.name());
            }
        }
        assert_eq!(
            Workload::named(Subsystem::Mem, "COPY"),
            Ok(Workload::Mem(MemWorkload::Copy))
        );
        assert_eq!(
            Workload::named(Subsystem::Disk, "COPY"),
            Ok(Workload::Disk(DiskWorkload::Copy))
        );
        assert_eq!(
            Workload::named(Subsystem::Cpu, "LINPACK"),
            Ok(Workload::Linalg(LinalgWorkload::Linpack))
        );
        assert!(Workload::named(Subsystem::Net, "TRIAD").is_err());
        assert!(Workload::named(Subsystem::Mem, "triad").is_err());
        let e = Workload::named(Subsystem::Disk, "X\u{1b}[2J").unwrap_err();
        assert!(!e.contains('\u{1b}') && e.contains("RS"), "{e}");
        assert!(Workload::Mem(MemWorkload::Copy) == MemWorkload::Copy);
        assert!(Workload::Disk(DiskWorkload::Copy) != MemWorkload::Copy);
    }
}
