//! The application: what a command does once its arguments are read. `cli` only parses the
//! command line into these types and chooses what to print; the recorder, the suite of jobs
//! and the multi-node run live here.

pub mod cluster;
pub mod cpu;
pub mod disk;
pub mod mem;
pub mod net;
pub mod outputs;
pub mod recorder;
pub mod suite;
pub mod workloads;

pub use outputs::Outputs;
pub use recorder::Recorder;
