//! The workloads' specs, as the command line reads them (its help, defaults and refusals).

pub use crate::workload::registry;
pub use crate::workload::spec::{Spec, non_users_of, users_of};
