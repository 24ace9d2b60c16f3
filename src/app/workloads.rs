//! The workloads' specs, as the command line reads them (its help, defaults and refusals).

pub use crate::bench::registry;
pub use crate::bench::spec::{Spec, non_users_of, users_of};
