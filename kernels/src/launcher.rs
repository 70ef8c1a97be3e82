//! Measurements under the cluster's own launcher (`mpirun`, `srun`).
//!
//! dtsim ships no launcher: on a multi-node cluster the user starts one
//! dtsim process per GPU with the launcher they already use, and the ranks
//! find each other through MPI (as nccl-tests does).

use crate::{BackendError, CollectiveTiming};

/// Whether this process was started by an MPI launcher with more than one
/// rank (Open MPI, PMI/PMIx, or a Slurm job step's task count). Slurm's
/// `SLURM_NTASKS` is not read: an `sbatch` allocation of several tasks
/// sets it in the batch script itself, where one process runs without
/// `srun`; `SLURM_STEP_NUM_TASKS` is the step's.
pub fn launched_by_mpi() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "MPI_LOCALNRANKS",
        "SLURM_STEP_NUM_TASKS",
    ]
    .iter()
    .filter_map(|k| std::env::var(k).ok())
    .filter_map(|v| v.trim().parse::<u32>().ok())
    .any(|n| n > 1)
}

/// NCCL collectives across the ranks of the launcher, one GPU per rank:
/// rank 0 creates the NCCL id and broadcasts it over MPI. Returns this
/// process's rank and, on rank 0, the timings.
///
/// # Errors
/// [`BackendError::NotEnabled`] unless built with both `cuda` and `mpi`;
/// otherwise the CUDA backend's errors.
pub fn nccl_across_ranks(
    ops: &[&str],
    sizes: &[u64],
    repeats: u32,
) -> Result<(u32, Vec<CollectiveTiming>), BackendError> {
    #[cfg(all(feature = "cuda", feature = "mpi"))]
    {
        use ::mpi::traits::Communicator;
        let universe = ::mpi::initialize().ok_or_else(|| {
            BackendError::Failed("MPI was already initialised in this process".into())
        })?;
        let world = universe.world();
        let rank = world.rank() as u32;
        let t = crate::cuda::time_collectives_mpi(&world, ops, sizes, repeats)?;
        Ok((rank, t))
    }
    #[cfg(not(all(feature = "cuda", feature = "mpi")))]
    {
        let _ = (ops, sizes, repeats);
        Err(BackendError::NotEnabled {
            feature: "cuda,mpi",
        })
    }
}
