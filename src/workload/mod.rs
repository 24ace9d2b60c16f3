//! What a workload is, below everything that measures or reports one: each subsystem's
//! workload enum (as users type it) and its [`spec::Spec`], returned from a `match` with no
//! wildcard so that a variant without a spec does not compile, and the [`registry`] of them
//! all. The benchmarks (`bench`) implement them; the command line, the reports, the reference
//! tools and the results read them from here.

pub mod cpu;
pub mod disk;
pub mod linalg;
pub mod mem;
pub mod net;
pub mod registry;
pub mod spec;
