//! CUDA kernels and NCCL collectives, measured on the GPUs of this machine
//! (feature `cuda`).
//!
//! dtsim's compression and collective cost models are only as good as the
//! timings they are fitted to, and on a GPU cluster the kernels that matter
//! run on the GPU. This module measures them there:
//!
//! * [`time_kernels`]: Top-k selection (a radix select), the DCT-DP
//!   threshold (the same radix select, stopped once the k-th largest
//!   magnitude is known), threshold masking, and device memory bandwidth,
//!   on device 0. Every result is checked against the CPU references of
//!   [`crate::cpu`], so a fast wrong kernel is an error, not a timing.
//! * [`memory_bandwidth`]: device-to-device copy bandwidth of device 0.
//! * [`time_collectives`]: NCCL AllReduce, AllGather, ReduceScatter,
//!   Broadcast and AlltoAll across all GPUs of this machine, one process,
//!   one communicator per GPU.
//! * `time_collectives_mpi` (features `cuda` and `mpi`): the same across the
//!   ranks of `mpirun` or `srun`, one GPU per rank, the NCCL id shared
//!   through MPI as nccl-tests does.
//! * [`devices`]: the GPUs the driver sees; [`library_versions`]: the
//!   versions of the CUDA libraries that load, for a profile's provenance.
//!
//! # What runs where
//!
//! ```text
//!   host (this crate)                       GPU
//!   ─────────────────                       ───
//!   random_gradient ── upload (untimed) ──▶ x
//!                        start event ─────▶ ┐ topk_init, 4 × (histogram,
//!                                           │ select digit)  → threshold
//!                        mid event   ─────▶ ┤ count, scan, scatter
//!                        stop event  ─────▶ ┘                → k indices
//!   cpu::check_topk ◀── download (untimed) ─ indices
//! ```
//!
//! The kernels (`kernels.cu` beside this file) are compiled at run time by
//! NVRTC into a cubin for the exact architecture of the device, so a build
//! needs no CUDA toolkit and a cubin made by any CUDA 12 NVRTC loads on any
//! CUDA 12 driver. Times come from CUDA events created with timing enabled,
//! recorded on the stream around the launches, so they measure GPU time
//! (launch gaps between kernels of one run included) and not the host.
//!
//! # Libraries are loaded at run time
//!
//! cudarc opens `libcuda`, `libnvrtc` and `libnccl` when first used and
//! panics if one is missing. Every entry point here first checks that the
//! libraries it needs are present (`libcuda` for all, `libnvrtc` for the
//! kernels, `libnccl` for the collectives) and otherwise returns
//! [`BackendError::Unavailable`] with a message saying what to install, for
//! the driver: "no CUDA driver found; run with --backend cpu, or install the
//! NVIDIA driver". As a second line of defence every entry point catches
//! a panic from the bindings (a missing symbol in an old library, say) and
//! returns it as [`BackendError::Failed`]; the panic message is still
//! printed on stderr by the default panic hook.
//!
//! A build without the `cuda` feature has the same functions, each of which
//! returns [`BackendError::NotEnabled`] (see `disabled.rs`).
//!
//! # Status: run on one H200 (2026-11-26); never on several GPUs
//!
//! On one NVIDIA H200 (driver 580.159.04, CUDA 13.0's NVRTC, NCCL 2.28.3;
//! docs/calibration.md, "The first GPU run"):
//! * the cubin for sm_90 loads and every kernel runs; every timed run's
//!   result agreed with the CPU reference (`dtsim calibrate kernels
//!   --backend cuda` from 64 Ki to 16 Mi elements, and `gpu_smoke` at
//!   sizes 1 to 100,003 around the tile boundaries);
//! * [`memory_bandwidth`] and [`time_collectives`] on one GPU (NCCL's
//!   one-rank collectives, local copies) ran and were checked;
//! * two things broke and were fixed: CUDA 13's NVRTC no longer compiles
//!   for sm_70 (`kernels_compile_with_nvrtc` now asks NVRTC which
//!   architectures it supports), and `gpu_smoke` counted three kernels per
//!   density where there are five;
//! * the radix sort's one-block scan of its counts took 2 ms a pass at
//!   16 Mi elements; its scan now runs over blocks (`scan_span_sums`,
//!   `scan_span_apply`), which made the sort 6.3 times faster there. It
//!   ran at 64 Ki to 16 Mi elements (one to 64 whole spans of counts),
//!   every run's threshold matching the CPU's; a last span only partly
//!   filled behind others (`gpu_smoke`'s 1 Mi + 4097, added after) has not
//!   run on a GPU, and no test compares the whole sorted order.
//!
//! Before that, without a GPU, we verified:
//! * this module builds, and passes clippy, with and without the feature;
//! * on a machine without the NVIDIA driver every entry point returns
//!   [`BackendError::Unavailable`] and does not panic (the tests in
//!   `kernels/tests/cuda.rs`), and so does `time_collectives_mpi` on every
//!   rank of `mpirun -np 2`; with stand-in libraries, a driver that finds no
//!   device, or fails to initialise, or lacks a symbol, gives a clear error
//!   too;
//! * `kernels.cu` compiles to cubins for sm_70, sm_80 and sm_90 with the real
//!   NVRTC 12.9 (which needs no GPU; the unit test
//!   `kernels_compile_with_nvrtc` does this wherever NVRTC is installed);
//! * its kernels, run under a CPU emulation of the CUDA thread model (one
//!   thread per CUDA thread, `__syncthreads` as a barrier), agree with the
//!   references on random, tied, signed-zero, NaN, infinite and subnormal
//!   inputs at sizes around the tile boundaries.
//!
//! What we have not verified: NCCL across several GPUs or hosts (the
//! collectives' sends, the group launch skew), and the MPI id exchange
//! (`time_collectives_mpi`) on real hardware; other GPU architectures.
//!
//! [`BackendError::Unavailable`]: crate::BackendError::Unavailable
//! [`BackendError::Failed`]: crate::BackendError::Failed
//! [`BackendError::NotEnabled`]: crate::BackendError::NotEnabled

#[cfg(not(feature = "cuda"))]
mod disabled;
#[cfg(feature = "cuda")]
mod enabled;

#[cfg(not(feature = "cuda"))]
pub use disabled::*;
#[cfg(feature = "cuda")]
pub use enabled::*;

/// One CUDA device, as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Device ordinal (the driver's numbering, as in `CUDA_VISIBLE_DEVICES`
    /// order).
    pub index: u32,
    /// Marketing name, e.g. "NVIDIA A100-SXM4-80GB".
    pub name: String,
    /// Total device memory in bytes.
    pub memory_bytes: u64,
    /// Compute capability (major, minor): (9, 0) for an H100 or H200.
    pub compute_capability: (u32, u32),
}

impl std::fmt::Display for DeviceInfo {
    /// `GPU 0: NVIDIA H200 (sm_90, 140.4 GiB)`, as profiles record it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor) = self.compute_capability;
        write!(
            f,
            "GPU {}: {} (sm_{major}{minor}, {:.1} GiB)",
            self.index,
            self.name,
            self.memory_bytes as f64 / f64::from(1u32 << 30)
        )
    }
}

/// The collective operations [`time_collectives`] measures, by the names it
/// accepts and reports in [`CollectiveTiming::op`](crate::CollectiveTiming::op).
///
/// Sizes have nccl-tests' meaning (the `size` column of `all_reduce_perf`
/// and friends), in bytes of `float32`, with `n` ranks:
///
/// | op              | send buffer per rank | receive buffer per rank |
/// |-----------------|----------------------|-------------------------|
/// | "allreduce"     | size                 | size                    |
/// | "allgather"     | size / n             | size                    |
/// | "reducescatter" | size                 | size / n                |
/// | "broadcast"     | size (root 0)        | size                    |
/// | "alltoall"      | size (n blocks)      | size (n blocks)         |
///
/// As in nccl-tests, a size is rounded down to a whole number of `float32`
/// per rank, and the rounded size is what is reported.
pub const COLLECTIVES: [&str; 5] = [
    "allreduce",
    "allgather",
    "reducescatter",
    "broadcast",
    "alltoall",
];
