//! Who this process is in a multi-node run: its rank, the world size and its rank on its node,
//! learnt from the launcher that started it (peakbench links no MPI library; it reads what the
//! launchers export).
//!
//! Sources, first match wins — the innermost launcher when they are nested (mpirun inside a
//! Slurm allocation sets Open MPI's variables, and srun's `SLURM_NTASKS` is then the allocation's,
//! not this job's):
//! 1. explicit flags (`--rank`, `--world-size`, `--local-rank`);
//! 2. Open MPI: `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_LOCAL_RANK`;
//! 3. PMI (MPICH's Hydra, `srun --mpi=pmi2`): `PMI_RANK`, `PMI_SIZE`, `MPI_LOCALRANKID`;
//! 4. PMIx: `PMIX_RANK`, the size from `OMPI_COMM_WORLD_SIZE`, `SLURM_NTASKS` or the flag;
//! 5. Slurm, only inside a job step (`SLURM_STEP_ID` set; under `salloc … mpirun` the
//!    allocation's `SLURM_NTASKS` is set without a rank): `SLURM_PROCID`, `SLURM_NTASKS`,
//!    `SLURM_LOCALID`;
//! 6. a Kubernetes indexed Job: `JOB_COMPLETION_INDEX`, the size from the flag or
//!    `PEAKBENCH_WORLD_SIZE` (Kubernetes does not export the completion count);
//! 7. none of these: a single process, rank 0 of 1.

use serde::Serialize;

/// The most ranks a run may have (the coordinator holds one connection per rank, and all pairs
/// grow with its square).
pub const MAX_WORLD_SIZE: u32 = 4096;

/// Where the identity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Flags,
    OpenMpi,
    Pmi,
    Pmix,
    Slurm,
    Kubernetes,
    Single,
}

/// This process's place in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Identity {
    pub rank: u32,
    pub world_size: u32,
    /// Rank among the processes on this node, when the launcher says.
    pub local_rank: Option<u32>,
    pub source: Source,
}

/// What the user gave on the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags {
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub local_rank: Option<u32>,
}

/// The identity from `flags` and the environment `env` (a lookup, so that tests need not touch
/// the process's environment). An error names the variable or flag that is wrong.
pub fn detect(flags: Flags, env: impl Fn(&str) -> Option<String>) -> Result<Identity, String> {
    let num = |name: &str| -> Result<Option<u32>, String> {
        match env(name) {
            None => Ok(None),
            Some(v) => v.trim().parse::<u32>().map(Some).map_err(|_| {
                format!(
                    "{name}={v:?} is not a non-negative integer; check the launcher's environment"
                )
            }),
        }
    };
    let size_of = |names: &[&str]| -> Result<Option<u32>, String> {
        for n in names {
            if let Some(v) = num(n)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    };
    let pick = |rank: Option<u32>,
                size: Option<u32>,
                local: Option<u32>,
                source: Source,
                size_hint: &str|
     -> Result<Option<Identity>, String> {
        let Some(rank) = rank else {
            return Ok(None);
        };
        let world_size = flags.world_size.or(size).ok_or_else(|| {
            format!("rank {rank} came from {source:?} but the world size is unknown: {size_hint}")
        })?;
        Ok(Some(Identity {
            rank,
            world_size,
            local_rank: flags.local_rank.or(local),
            source,
        }))
    };
    let found = if let Some(rank) = flags.rank {
        pick(Some(rank), None, None, Source::Flags, "add --world-size")?
    } else if let Some(id) = pick(
        num("OMPI_COMM_WORLD_RANK")?,
        num("OMPI_COMM_WORLD_SIZE")?,
        num("OMPI_COMM_WORLD_LOCAL_RANK")?,
        Source::OpenMpi,
        "OMPI_COMM_WORLD_SIZE is missing; add --world-size",
    )? {
        Some(id)
    } else if let Some(id) = pick(
        num("PMI_RANK")?,
        num("PMI_SIZE")?,
        num("MPI_LOCALRANKID")?,
        Source::Pmi,
        "PMI_SIZE is missing; add --world-size",
    )? {
        Some(id)
    } else if let Some(id) = pick(
        num("PMIX_RANK")?,
        size_of(&["OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"])?,
        num("OMPI_COMM_WORLD_LOCAL_RANK")?.or(num("SLURM_LOCALID")?),
        Source::Pmix,
        "PMIx does not export it; add --world-size",
    )? {
        Some(id)
    } else if env("SLURM_STEP_ID").is_some()
        && let Some(id) = pick(
            num("SLURM_PROCID")?,
            num("SLURM_NTASKS")?,
            num("SLURM_LOCALID")?,
            Source::Slurm,
            "SLURM_NTASKS is missing; add --world-size",
        )?
    {
        Some(id)
    } else {
        pick(
            num("JOB_COMPLETION_INDEX")?,
            num("PEAKBENCH_WORLD_SIZE")?,
            None,
            Source::Kubernetes,
            "Kubernetes does not export the completion count; set PEAKBENCH_WORLD_SIZE or --world-size",
        )?
    };
    let id = found.unwrap_or(Identity {
        rank: 0,
        world_size: flags.world_size.unwrap_or(1),
        local_rank: flags.local_rank,
        source: Source::Single,
    });
    if id.world_size == 0 || id.world_size > MAX_WORLD_SIZE {
        return Err(format!(
            "the world size {} (from {:?}) is out of range: 1 to {MAX_WORLD_SIZE}",
            id.world_size, id.source
        ));
    }
    if id.rank >= id.world_size {
        return Err(format!(
            "rank {} is not below the world size {} (from {:?})",
            id.rank, id.world_size, id.source
        ));
    }
    if let Some(l) = id.local_rank
        && l >= id.world_size
    {
        return Err(format!(
            "local rank {l} is not below the world size {}",
            id.world_size
        ));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn id(rank: u32, size: u32, local: Option<u32>, source: Source) -> Identity {
        Identity {
            rank,
            world_size: size,
            local_rank: local,
            source,
        }
    }

    #[test]
    fn each_launcher_is_recognised() {
        let none = Flags::default();
        let cases = [
            (
                vec![
                    ("OMPI_COMM_WORLD_RANK", "2"),
                    ("OMPI_COMM_WORLD_SIZE", "3"),
                    ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
                ],
                id(2, 3, Some(0), Source::OpenMpi),
            ),
            (
                vec![
                    ("PMI_RANK", "1"),
                    ("PMI_SIZE", "4"),
                    ("MPI_LOCALRANKID", "1"),
                ],
                id(1, 4, Some(1), Source::Pmi),
            ),
            (
                vec![
                    ("PMIX_RANK", "5"),
                    ("SLURM_NTASKS", "8"),
                    ("SLURM_LOCALID", "1"),
                ],
                id(5, 8, Some(1), Source::Pmix),
            ),
            (
                vec![
                    ("SLURM_STEP_ID", "0"),
                    ("SLURM_PROCID", "3"),
                    ("SLURM_NTASKS", "4"),
                    ("SLURM_LOCALID", "3"),
                ],
                id(3, 4, Some(3), Source::Slurm),
            ),
            (
                vec![("JOB_COMPLETION_INDEX", "6"), ("PEAKBENCH_WORLD_SIZE", "7")],
                id(6, 7, None, Source::Kubernetes),
            ),
            (vec![], id(0, 1, None, Source::Single)),
        ];
        for (vars, want) in cases {
            assert_eq!(detect(none, env(&vars)), Ok(want), "{vars:?}");
        }
    }

    #[test]
    fn the_innermost_launcher_wins() {
        // mpirun inside a Slurm allocation: no step, the allocation's task count; Open MPI wins.
        let nested = [
            ("SLURM_NTASKS", "64"),
            ("SLURM_JOB_ID", "12"),
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "3"),
        ];
        assert_eq!(
            detect(Flags::default(), env(&nested)).unwrap(),
            id(1, 3, None, Source::OpenMpi)
        );
        // srun --mpi=pmi2 sets both PMI and Slurm step variables: PMI wins.
        let srun = [
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "2"),
            ("SLURM_NTASKS", "3"),
            ("PMI_RANK", "2"),
            ("PMI_SIZE", "3"),
        ];
        assert_eq!(
            detect(Flags::default(), env(&srun)).unwrap().source,
            Source::Pmi
        );
        // Slurm variables outside a step (salloc … mpirun without Open MPI's): not a rank.
        let alloc = [("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")];
        assert_eq!(
            detect(Flags::default(), env(&alloc)).unwrap().source,
            Source::Single
        );
        // Flags beat everything.
        let flags = Flags {
            rank: Some(0),
            world_size: Some(2),
            local_rank: None,
        };
        assert_eq!(
            detect(flags, env(&nested)).unwrap(),
            id(0, 2, None, Source::Flags)
        );
    }

    #[test]
    fn bad_environments_name_the_culprit() {
        type Vars<'a> = &'a [(&'a str, &'a str)];
        let cases: [(Vars, Flags, &str); 6] = [
            (
                &[("OMPI_COMM_WORLD_RANK", "x")],
                Flags::default(),
                "OMPI_COMM_WORLD_RANK",
            ),
            (
                &[("OMPI_COMM_WORLD_RANK", "1")],
                Flags::default(),
                "world size is unknown",
            ),
            (
                &[("PMI_RANK", "4"), ("PMI_SIZE", "4")],
                Flags::default(),
                "not below",
            ),
            (
                &[("JOB_COMPLETION_INDEX", "0")],
                Flags::default(),
                "PEAKBENCH_WORLD_SIZE",
            ),
            (
                &[("PMI_RANK", "0"), ("PMI_SIZE", "0")],
                Flags::default(),
                "world size 0 (from Pmi) is out of range",
            ),
            (
                &[],
                Flags {
                    rank: Some(1),
                    world_size: None,
                    local_rank: None,
                },
                "--world-size",
            ),
        ];
        for (vars, flags, want) in cases {
            let err = detect(flags, env(vars)).unwrap_err();
            assert!(err.contains(want), "{vars:?}: {err}");
        }
    }

    #[test]
    fn a_huge_world_is_refused() {
        let env = |k: &str| (k == "PMI_SIZE").then(|| "100000".to_string());
        let env = |k: &str| env(k).or_else(|| (k == "PMI_RANK").then(|| "0".to_string()));
        let e = detect(Flags::default(), env).unwrap_err();
        assert!(e.contains("out of range: 1 to 4096"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The launcher's variables are read from outside: any values give an identity or a
        /// message, never a panic, and an identity's rank is inside its world.
        #[test]
        fn any_launcher_values_give_an_identity_or_a_message(
            values in proptest::collection::vec(proptest::option::of("[0-9]{0,12}|-?[0-9]{1,3}|.{0,8}"), 8),
        ) {
            let names = [
                "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                "PMIX_RANK", "SLURM_PROCID", "SLURM_NTASKS", "JOB_COMPLETION_INDEX",
            ];
            let lookup = |k: &str| {
                names.iter().position(|n| *n == k).and_then(|i| values[i].clone())
            };
            if let Ok(id) = detect(Flags::default(), lookup) {
                proptest::prop_assert!(id.rank < id.world_size, "{id:?}");
            }
        }
    }
}
