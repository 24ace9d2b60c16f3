//! Many machines (SPEC §5): peakbench under the launchers a cluster already has (mpirun, srun,
//! SSH host lists, Kubernetes indexed Jobs). Each process learns its rank from its launcher
//! ([`identity`]), finds rank 0's coordinator ([`rendezvous`]), runs the node-local profile when
//! told to and the network tests between nodes in rounds ([`schedule`]); rank 0 merges
//! everything into one report ([`fleet`]).

pub mod channel;
pub mod coordinator;
pub mod hpl;
pub mod identity;
pub mod merge;
pub mod messages;
pub mod open_files;
pub mod rendezvous;
pub mod schedule;
pub mod worker;
