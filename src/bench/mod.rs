//! The benchmarks, one folder per subsystem.

pub mod buffer;
pub mod cpu;
pub mod disk;
pub mod linalg;
pub mod mem;
pub mod net;
pub mod registry;
pub mod rng;
pub mod spec;
