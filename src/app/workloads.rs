//! The workloads' specs, as the command line reads them (its help, defaults and refusals).

pub use crate::workload::Workload;
pub use crate::workload::options;
pub use crate::workload::registry;
pub use crate::workload::spec::Spec;
