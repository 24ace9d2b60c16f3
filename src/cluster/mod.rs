//! Many machines (SPEC §5): peakbench under the launchers a cluster already has (mpirun, srun,
//! SSH host lists, Kubernetes indexed Jobs). So far: each process's identity from its launcher.

pub mod identity;
