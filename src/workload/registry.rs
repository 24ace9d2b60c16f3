//! Every workload peakbench measures, in one list: each subsystem's workload enums' specs
//! ([`Spec`]), in the order of the reports. The command line's defaults and refusals, the
//! reference tools' coverage and the conformance test (tests/conformance.rs, which runs a tiny
//! point of each one through every output) read it; a new workload is its enum's variant and
//! its spec, and a variant without a spec does not compile.

use super::Workload;
use super::spec::Spec;
use crate::ids::Subsystem;

/// Every workload's spec, subsystem by subsystem.
pub fn all() -> Vec<Spec> {
    Subsystem::ALL.iter().flat_map(|s| of(*s)).collect()
}

/// The specs of `subsystem`'s workloads, in the order its command line lists them.
pub fn of(subsystem: Subsystem) -> Vec<Spec> {
    Workload::of(subsystem)
        .into_iter()
        .map(Workload::spec)
        .collect()
}

/// The workloads of `subsystem` run when none is named.
pub fn defaults(subsystem: Subsystem) -> Vec<Spec> {
    of(subsystem).into_iter().filter(|s| s.default).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::cpu::CpuWorkload;
    use crate::workload::disk::DiskWorkload;
    use crate::workload::linalg::LinalgWorkload;
    use crate::workload::mem::MemWorkload;
    use crate::workload::net::NetWorkload;

    /// Every spec is complete and says which subsystem it is of; names are unique within a
    /// subsystem; every option a spec names is an option of its subsystem's command.
    #[test]
    fn every_spec_is_complete() {
        for sub in Subsystem::ALL {
            let specs = of(sub);
            assert!(!specs.is_empty(), "{sub}");
            let mut names: Vec<&str> = specs.iter().map(|s| s.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), specs.len(), "{sub}: a name twice");
            for s in &specs {
                assert_eq!(s.subsystem, sub, "{}", s.name);
                assert!(!s.metrics.is_empty() && !s.what.is_empty(), "{}", s.name);
            }
            assert!(!defaults(sub).is_empty(), "{sub}: nothing runs by default");
        }
        assert_eq!(
            CpuWorkload::defaults(),
            [
                CpuWorkload::Qp,
                CpuWorkload::Hp,
                CpuWorkload::Sp,
                CpuWorkload::Dp,
                CpuWorkload::Int32,
                CpuWorkload::Int64
            ]
        );
    }

    /// A name is parsed in any case, and an unknown one is refused with every name.
    #[test]
    fn names_parse_and_an_unknown_one_lists_them_all() {
        for w in CpuWorkload::ALL {
            assert_eq!(w.name().parse::<CpuWorkload>(), Ok(w));
        }
        assert_eq!("dp".parse::<CpuWorkload>(), Ok(CpuWorkload::Dp));
        assert!("FP8".parse::<CpuWorkload>().is_err());
        assert_eq!("linpack".parse(), Ok(LinalgWorkload::Linpack));
        assert!("HPL".parse::<LinalgWorkload>().is_err());
        assert_eq!("triad".parse::<MemWorkload>(), Ok(MemWorkload::Triad));
        assert_eq!(" rr ".parse::<DiskWorkload>(), Ok(DiskWorkload::Rr));
        let e = "SEQ".parse::<DiskWorkload>().unwrap_err();
        assert_eq!(
            e,
            "unknown disk workload 'SEQ'; use RS, WS, RR, WR, RW, COPY, WNEW, REREAD, RB or RSTRIDE"
        );
        let e = "x\u{1b}[2J".parse::<NetWorkload>().unwrap_err();
        assert!(!e.contains('\u{1b}'), "{e}");
    }
}
