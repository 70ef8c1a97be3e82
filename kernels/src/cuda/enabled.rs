//! The `cuda` feature's implementation, over cudarc (driver API, NVRTC and
//! NCCL, all loaded at run time). The [module docs](super) say what is
//! measured; this file says how.
//!
//! Conventions used throughout:
//! * Each GPU gets one context and one stream, and every buffer of that
//!   context is used only on that stream, so stream order alone orders all
//!   accesses. cudarc's per-buffer event tracking is therefore switched off
//!   ([`Gpu::open`]): it would add event records inside the timed regions.
//! * A timed region is bracketed by two CUDA events created with timing
//!   enabled (`CU_EVENT_DEFAULT`) and recorded on the stream; its time is
//!   `cuEventElapsedTime`, resolution about 0.5 µs.
//! * Inputs are uploaded, and results downloaded and checked, outside the
//!   timed regions.

use std::ffi::{CStr, CString, c_char};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DeviceRepr, DriverError,
    LaunchConfig, PushKernelArg, ValidAsZeroBits, result as driver, sys as driver_sys,
};
use cudarc::nccl::{self, Comm, ReduceOp, result::NcclError};
use cudarc::nvrtc;

use super::{COLLECTIVES, DeviceInfo};
use crate::timing::{KernelTiming, Timing, WARMUP, random_gradient};
use crate::{BackendError, CollectiveTiming, cpu};

/// The message when `libcuda` cannot be loaded.
const NO_DRIVER: &str =
    "no CUDA driver found; run with --backend cpu, or install the NVIDIA driver";

/// The message when the driver loads but sees no device.
const NO_DEVICE: &str = "the NVIDIA driver found no CUDA device; run with --backend cpu, or check \
                         the GPUs with nvidia-smi (and CUDA_VISIBLE_DEVICES)";

/// The message when `libnvrtc` cannot be loaded. cudarc opens it by the
/// names `libnvrtc.so`, `libnvrtc.so.12`, `.11`, `.10`, `.9` and `.1`: a
/// CUDA toolkit's `lib64` has `libnvrtc.so`, but pip's CUDA 13 wheel has
/// only `libnvrtc.so.13` (seen on 2026-11-26), which needs a link.
const NO_NVRTC: &str = "no NVRTC library found (dtsim opens libnvrtc.so, or libnvrtc.so.12): \
                        dtsim compiles its GPU kernels at run time with the CUDA toolkit's \
                        NVRTC; install it (the cuda-nvrtc package, or pip's \
                        nvidia-cuda-nvrtc-cu12) and add its directory to LD_LIBRARY_PATH; \
                        where only libnvrtc.so.13 exists (pip's CUDA 13 wheels), link \
                        libnvrtc.so to it in a directory on LD_LIBRARY_PATH. Or run with \
                        --backend cpu";

/// The message when `libnccl` cannot be loaded. cudarc opens it by the
/// names `libnccl.so`, `libnccl.so.12`, … and `libnccl.so.1`, not
/// `libnccl.so.2`, the only name that the `libnccl2` package (without
/// `libnccl-dev`) and pip's `nvidia-nccl-cu12`/`-cu13` install.
const NO_NCCL: &str = "no NCCL library found (dtsim opens libnccl.so): install NCCL (the \
                       libnccl2 and libnccl-dev packages) and add its directory to \
                       LD_LIBRARY_PATH; where only libnccl.so.2 exists (libnccl2 alone, or \
                       pip's nvidia-nccl-cu12/-cu13), link libnccl.so to it in a directory on \
                       LD_LIBRARY_PATH. Or measure with --backend mpi";

/// Threads per block of the tile kernels (`BLOCK` in `kernels.cu`).
const BLOCK: u32 = 256;
/// Elements per tile, one block per tile (`TILE` in `kernels.cu`).
const TILE: usize = 4096;
/// Threads of the single-block scan kernels (`SCAN_THREADS` in `kernels.cu`).
const SCAN_THREADS: u32 = 1024;
/// Counts one block of the multi-block scan takes (`SPAN` in `kernels.cu`).
const SPAN: u32 = SCAN_THREADS * 16;

/// The CUDA source of all kernels, compiled by NVRTC at run time.
const SOURCE: &str = include_str!("kernels.cu");

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/// The CUDA devices the driver sees, in ordinal order; empty if the driver
/// is installed but finds no device.
///
/// # Errors
/// [`BackendError::Unavailable`] if there is no CUDA driver (`libcuda`) or
/// it cannot be initialised; [`BackendError::Failed`] if a device query
/// fails.
pub fn devices() -> Result<Vec<DeviceInfo>, BackendError> {
    guarded(|| {
        let count = device_count()?;
        (0..count)
            .map(|ordinal| {
                let index = u32::try_from(ordinal).unwrap_or(u32::MAX);
                let dev = driver::device::get(ordinal as i32)
                    .map_err(failed(format_args!("opening CUDA device {ordinal}")))?;
                let name = driver::device::get_name(dev)
                    .map_err(failed(format_args!("naming CUDA device {ordinal}")))?;
                // SAFETY: `dev` is a valid device handle from cuDeviceGet.
                let memory = unsafe { driver::device::total_mem(dev) }
                    .map_err(failed(format_args!("sizing CUDA device {ordinal}")))?;
                let attribute = |a| {
                    // SAFETY: as above.
                    unsafe { driver::device::get_attribute(dev, a) }
                        .map(|v| u32::try_from(v).unwrap_or(0))
                        .map_err(failed(format_args!("querying CUDA device {ordinal}")))
                };
                use driver_sys::CUdevice_attribute as A;
                Ok(DeviceInfo {
                    index,
                    name,
                    memory_bytes: memory as u64,
                    compute_capability: (
                        attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                        attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
                    ),
                })
            })
            .collect()
    })
}

/// The versions of the CUDA libraries that load here, as text for a
/// profile's provenance: the CUDA version the driver supports, NVRTC's and
/// NCCL's (e.g. `["CUDA driver 13.0", "NVRTC 13.0", "NCCL 2.28.3"]`). A
/// library that is missing, or fails the query, is left out: this never
/// fails.
pub fn library_versions() -> Vec<String> {
    guarded(|| {
        let mut out = Vec::new();
        if require_driver().is_ok() {
            let mut v = 0;
            // SAFETY: `v` is a valid out-pointer; the library is present.
            if unsafe { driver_sys::cuDriverGetVersion(&mut v) }
                .result()
                .is_ok()
            {
                out.push(format!("CUDA driver {}.{}", v / 1000, v % 1000 / 10));
            }
        }
        if require_nvrtc().is_ok() {
            let (mut major, mut minor) = (0, 0);
            // SAFETY: valid out-pointers; the library is present.
            if unsafe { nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
                .result()
                .is_ok()
            {
                out.push(format!("NVRTC {major}.{minor}"));
            }
        }
        if require_nccl().is_ok() {
            // NCCL ≥ 2.9 encodes major·10000 + minor·100 + patch
            if let Ok(v) = nccl::result::get_nccl_version() {
                out.push(format!(
                    "NCCL {}.{}.{}",
                    v / 10000,
                    v % 10000 / 100,
                    v % 100
                ));
            }
        }
        Ok(out)
    })
    .unwrap_or_default()
}

/// Times the GPU compression kernels on device 0 at every size and density,
/// checking every run against the CPU references.
///
/// For each `m` in `sizes`, first one row:
/// * "membw": a device-to-device copy of `m` `f32` (`k_or_kept = m`,
///   `density = 1`); bandwidth is `8·m / time` (bytes read plus written).
///   Checked bit for bit.
///
/// then, for each density `d` (η = 1 − d, `kept = m − ⌊m·η⌋` as in
/// [`cpu::threshold_rank`]), five rows:
/// * "topk": exact Top-k with k = kept, indices ascending, ties in |v| to
///   the lower index, NaN largest: the same result as [`cpu::topk`] (no
///   difference in tie rule). Radix select over the bits of |v| (four
///   8-bit histogram passes, each followed by a one-thread digit choice),
///   then an order-preserving compaction (per-tile counts, one-block scan,
///   per-tile scatter): 12 launches, all timed. Checked with
///   [`cpu::check_topk_selected`] (against the CPU's selection, whose
///   answer is the reference's; the reference's full sort made a 16 Mi
///   calibration run for minutes on the host).
/// * "threshold_select": the DCT-DP threshold, i.e. the first half of the
///   same runs (up to the k-th largest magnitude), timed with an event
///   between the halves. This is a selection, not the sort DCT-DP
///   describes; it returns the same element as [`cpu::threshold_by_sort`]
///   and is checked with [`cpu::check_threshold`].
/// * "mask": threshold masking at that input's threshold (computed untimed
///   on the CPU by [`cpu::threshold_reference`]), writing (index, value) pairs in index order: per-tile
///   counts, one-block scan, per-tile scatter. Checked with
///   [`cpu::check_mask`].
/// * "threshold_radix_sort": DCT-DP's threshold by sorting, as DCT
///   describes it (copy and sort), on the GPU: the magnitudes' bits sorted
///   ascending by a stable LSD radix sort (four 8-bit passes of histogram,
///   a scan over blocks and scatter: 22 launches), the key at rank ⌊m·η⌋ picked. A radix
///   sort is linear in m, so its fitted form is a + b·m, not the
///   comparison sort's m·log m. Checked with [`cpu::check_threshold`].
/// * "merge": gTop-k's merge of two Top-k sets of `kept` drawn from two
///   fresh gradients of m (row `m` = the 2·kept candidates, as the CPU
///   backend writes it): both sets placed in merge order by binary search,
///   the duplicates' values summed and their second copies dropped (a
///   compaction), the union's size read back to the host, then the radix
///   Top-k over the union's values and a gather. Checked with
///   [`cpu::check_merge`].
///
/// Each kernel gets [`WARMUP`] untimed runs and `repeats` timed runs, each
/// on a fresh [`random_gradient`] (seeds 0, 1, 2, … over the call, as in
/// [`crate::timing::time_kernels`]) uploaded before the start event. The
/// references are full sorts on the CPU, so a call takes much longer than
/// the timings it reports.
///
/// # Errors
/// * [`BackendError::Unavailable`]: no CUDA driver, no NVRTC, or no device.
/// * [`BackendError::Failed`]: invalid arguments (a size of 0 or above
///   `u32::MAX`, a density outside `(0, 1]`, zero repeats), a CUDA error
///   (out of memory, say), NVRTC failing to compile for this GPU, or a
///   result that disagrees with the CPU reference.
pub fn time_kernels(
    sizes: &[usize],
    densities: &[f64],
    repeats: u32,
) -> Result<Vec<KernelTiming>, BackendError> {
    check_kernel_args(sizes, densities, repeats)?;
    guarded(|| {
        require_driver()?;
        require_nvrtc()?;
        require_devices()?;
        let gpu = Gpu::open(0)?;
        let kernels = Kernels::compile(&gpu)?;
        let mut seeds = 0u64..;
        let mut rows = Vec::with_capacity(sizes.len() * (1 + 5 * densities.len()));
        for &m in sizes {
            let mut buf = Buffers::new(&gpu, m)?;
            let copy = time_copy(&gpu, &kernels, &mut buf, repeats, &mut seeds)?;
            rows.push(KernelTiming {
                kernel: "membw",
                m,
                k_or_kept: m,
                density: 1.0,
                timing: copy,
            });
            for &density in densities {
                let sparsity = 1.0 - density;
                let kept = m - cpu::threshold_rank(m, sparsity);
                let row = |kernel, timing| KernelTiming {
                    kernel,
                    m,
                    k_or_kept: kept,
                    density,
                    timing,
                };
                let (select, topk) = time_topk(
                    &gpu, &kernels, &mut buf, kept, sparsity, repeats, &mut seeds,
                )?;
                rows.push(row("topk", topk));
                rows.push(row("threshold_select", select));
                let mask = time_mask(&gpu, &kernels, &mut buf, sparsity, repeats, &mut seeds)?;
                rows.push(row("mask", mask));
                let sort =
                    time_threshold_sort(&gpu, &kernels, &mut buf, sparsity, repeats, &mut seeds)?;
                rows.push(row("threshold_radix_sort", sort));
                let merge = time_merge(&gpu, &kernels, m, kept, repeats, &mut seeds)?;
                rows.push(KernelTiming {
                    kernel: "merge",
                    m: 2 * kept,
                    k_or_kept: kept,
                    density,
                    timing: merge,
                });
            }
        }
        Ok(rows)
    })
}

/// Device-to-device copy bandwidth of device 0 in bytes per second
/// (bytes read plus bytes written, as STREAM's "copy" counts them): the
/// median of 10 timed copies of 256 MiB (less on a device with under 2 GiB
/// of memory) after [`WARMUP`] untimed ones.
///
/// # Errors
/// As [`time_kernels`].
pub fn memory_bandwidth() -> Result<f64, BackendError> {
    guarded(|| {
        require_driver()?;
        require_nvrtc()?;
        require_devices()?;
        let gpu = Gpu::open(0)?;
        let kernels = Kernels::compile(&gpu)?;
        let total = gpu
            .ctx
            .total_mem()
            .map_err(failed("sizing CUDA device 0"))?;
        // Two buffers of m floats, at most 1/8 of the memory each.
        let m = ((256 << 20) / 4).min(total / 32).max(TILE);
        let mut buf = Buffers::copy_only(&gpu, m)?;
        let timing = time_copy(&gpu, &kernels, &mut buf, 10, &mut (0u64..))?;
        Ok(8.0 * m as f64 / timing.median_s)
    })
}

/// Times NCCL collectives across all GPUs of this machine from one process
/// (one communicator per GPU, from `ncclCommInitAll`; every call of a
/// collective issued on all communicators inside one NCCL group).
///
/// `ops` are names from [`COLLECTIVES`]; `sizes` are bytes with
/// nccl-tests' meaning (see [`COLLECTIVES`]), of `float32` data, reduction
/// `sum`, Broadcast from rank 0, out of place, AlltoAll as grouped
/// `ncclSend`/`ncclRecv` to every peer (as nccl-tests' `alltoall_perf`).
/// One row per op and size, ops outer, with the size rounded down as
/// nccl-tests does.
///
/// Each run records a start and a stop event on every GPU's stream around
/// the group; its time is the largest of the per-GPU elapsed times (so it
/// includes the skew with which one host thread launches on the GPUs), and
/// the row's time is the median over `repeats` runs after [`WARMUP`]
/// untimed ones (the first builds NCCL's connections). Unlike nccl-tests,
/// which times a loop of back-to-back launches and divides, each run times
/// one collective, launch latency included, as a training step sees it.
/// After the runs, every GPU's receive buffer is checked against the known
/// result (each rank sends the value `rank + 1`).
///
/// # Errors
/// * [`BackendError::Unavailable`]: no CUDA driver, no NCCL, or no device.
/// * [`BackendError::Failed`]: an unknown op, zero repeats, a size below
///   one `float32` per GPU, a CUDA or NCCL error, or a wrong result.
pub fn time_collectives(
    ops: &[&str],
    sizes: &[u64],
    repeats: u32,
) -> Result<Vec<CollectiveTiming>, BackendError> {
    let ops = parse_ops(ops)?;
    check_repeats(repeats)?;
    guarded(|| {
        require_driver()?;
        require_nccl()?;
        let n = require_devices()?;
        let gpus = (0..n).map(Gpu::open).collect::<Result<Vec<_>, _>>()?;
        let streams = gpus.iter().map(|g| g.stream.clone()).collect();
        let comms = Comm::from_devices(streams).map_err(failed("ncclCommInitAll"))?;
        let mut rows = Vec::with_capacity(ops.len() * sizes.len());
        for &op in &ops {
            for &size in sizes {
                let shape = Shape::new(op, size, n)?;
                let mut bufs = gpus
                    .iter()
                    .enumerate()
                    .map(|(rank, gpu)| CollectiveBuffers::new(gpu, shape, rank))
                    .collect::<Result<Vec<_>, _>>()?;
                let events = gpus
                    .iter()
                    .map(|g| Ok((g.timing_event()?, g.timing_event()?)))
                    .collect::<Result<Vec<_>, BackendError>>()?;
                let mut samples = Vec::with_capacity(repeats as usize);
                for run in 0..WARMUP + repeats {
                    for (gpu, (start, _)) in gpus.iter().zip(&events) {
                        start
                            .record(&gpu.stream)
                            .map_err(failed("recording an event"))?;
                    }
                    grouped(|| {
                        comms
                            .iter()
                            .zip(&mut bufs)
                            .try_for_each(|(comm, b)| issue(op, comm, b, shape))
                    })?;
                    for (gpu, (_, stop)) in gpus.iter().zip(&events) {
                        stop.record(&gpu.stream)
                            .map_err(failed("recording an event"))?;
                    }
                    let mut slowest = 0.0f64;
                    for (start, stop) in &events {
                        slowest = slowest.max(elapsed_s(start, stop)?);
                    }
                    if run >= WARMUP {
                        samples.push(slowest);
                    }
                }
                for (rank, (gpu, b)) in gpus.iter().zip(&bufs).enumerate() {
                    check_collective(gpu, b, op, shape, n, rank)?;
                }
                rows.push(CollectiveTiming {
                    op: op.name().to_owned(),
                    size_bytes: shape.size_bytes,
                    time_s: Timing::from_samples(&samples).median_s,
                    ranks: n as u32,
                });
            }
        }
        Ok(rows)
    })
}

/// Times NCCL collectives across the ranks of an MPI job (started by
/// `mpirun` or `srun`), one GPU per rank, and returns the same rows on
/// every rank.
///
/// Call it on every rank with the same arguments; `world` is the
/// communicator of the ranks that take part (usually
/// `universe.world()`; the caller owns MPI initialisation). As in
/// nccl-tests, rank 0 creates the NCCL unique id and broadcasts it with
/// `MPI_Bcast`; every rank then joins with `ncclCommInitRank`. A rank uses
/// GPU `local_rank % gpus_on_its_node`, where the local rank is its rank
/// among the ranks of its node (`MPI_Comm_split_type` shared); start one
/// rank per GPU.
///
/// Ops, sizes (with `n` = the number of ranks) and result checks are as in
/// [`time_collectives`]. Each run starts with an `MPI_Barrier`, times the
/// collective with CUDA events on each rank, and takes the maximum over
/// ranks (`MPI_Allreduce` max); a row's time is the median over `repeats`
/// runs after [`WARMUP`] untimed ones.
///
/// Failures during setup (no driver, no NCCL, no GPU on some rank) are
/// agreed on through MPI, so every rank returns an error instead of some
/// waiting forever. A failure inside an NCCL call on one rank can still
/// leave the others waiting in NCCL; the launcher's timeout ends them.
///
/// # Errors
/// As [`time_collectives`], on every rank.
#[cfg(feature = "mpi")]
pub fn time_collectives_mpi(
    world: &::mpi::topology::SimpleCommunicator,
    ops: &[&str],
    sizes: &[u64],
    repeats: u32,
) -> Result<Vec<CollectiveTiming>, BackendError> {
    mpi_collectives::run(world, ops, sizes, repeats)
}

// ---------------------------------------------------------------------------
// Library presence, errors and panics
// ---------------------------------------------------------------------------

/// Runs `f`, turning a panic inside it (cudarc panics on a missing library
/// or symbol) into [`BackendError::Failed`].
fn guarded<T>(f: impl FnOnce() -> Result<T, BackendError>) -> Result<T, BackendError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        Err(BackendError::Failed(format!(
            "the CUDA bindings (cudarc) panicked: {message}"
        )))
    })
}

/// `Ok` if `libcuda` can be loaded; to be called before any driver call.
fn require_driver() -> Result<(), BackendError> {
    // SAFETY: only tries to open the library under its usual names, and
    // closes it again; calls nothing in it.
    if unsafe { driver_sys::is_culib_present() } {
        Ok(())
    } else {
        Err(BackendError::Unavailable(NO_DRIVER.to_owned()))
    }
}

/// `Ok` if `libnvrtc` can be loaded; to be called before any NVRTC call.
fn require_nvrtc() -> Result<(), BackendError> {
    // SAFETY: as in `require_driver`.
    if unsafe { nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(BackendError::Unavailable(NO_NVRTC.to_owned()))
    }
}

/// `Ok` if `libnccl` can be loaded; to be called before any NCCL call.
fn require_nccl() -> Result<(), BackendError> {
    // SAFETY: as in `require_driver`.
    if unsafe { nccl::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(BackendError::Unavailable(NO_NCCL.to_owned()))
    }
}

/// Number of CUDA devices (initialising the driver); 0 if the driver is
/// installed but finds none.
fn device_count() -> Result<usize, BackendError> {
    require_driver()?;
    match CudaContext::device_count() {
        Ok(n) => Ok(usize::try_from(n).unwrap_or(0)),
        Err(DriverError(driver_sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Ok(0),
        Err(e) => Err(BackendError::Unavailable(format!(
            "the NVIDIA driver could not be initialised: {}; check it with nvidia-smi, \
             or run with --backend cpu",
            e.describe()
        ))),
    }
}

/// Number of CUDA devices, at least one.
fn require_devices() -> Result<usize, BackendError> {
    match device_count()? {
        0 => Err(BackendError::Unavailable(NO_DEVICE.to_owned())),
        n => Ok(n),
    }
}

/// An error of one of the CUDA libraries, as text for a message.
trait LibraryError {
    /// The error's name and, where the library has one, its description.
    fn describe(&self) -> String;
}

impl LibraryError for DriverError {
    fn describe(&self) -> String {
        match self.error_string() {
            Ok(text) => format!("{:?} ({})", self.0, text.to_string_lossy()),
            Err(_) => format!("{:?}", self.0),
        }
    }
}

impl LibraryError for nvrtc::result::NvrtcError {
    fn describe(&self) -> String {
        format!("{:?}", self.0)
    }
}

impl LibraryError for NcclError {
    fn describe(&self) -> String {
        // SAFETY: ncclGetErrorString returns a pointer to a static string
        // (or null), for any result code.
        let text = unsafe {
            let p = nccl::sys::ncclGetErrorString(self.0);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        format!("{:?} ({text})", self.0)
    }
}

/// Maps an error of a CUDA, NVRTC or NCCL call to [`BackendError::Failed`]
/// saying what was being done.
fn failed<E: LibraryError>(what: impl fmt::Display) -> impl FnOnce(E) -> BackendError {
    move |e| BackendError::Failed(format!("{what}: {}", e.describe()))
}

/// A kernel result that disagrees with the CPU reference.
fn mismatch(e: cpu::KernelMismatch) -> BackendError {
    BackendError::Failed(format!("GPU {e}"))
}

// ---------------------------------------------------------------------------
// Argument checks
// ---------------------------------------------------------------------------

/// Rejects zero repeats.
fn check_repeats(repeats: u32) -> Result<(), BackendError> {
    if repeats == 0 {
        return Err(BackendError::Failed(
            "at least one timed repeat is needed".to_owned(),
        ));
    }
    Ok(())
}

/// Rejects arguments [`time_kernels`] cannot run with.
fn check_kernel_args(sizes: &[usize], densities: &[f64], repeats: u32) -> Result<(), BackendError> {
    check_repeats(repeats)?;
    for &m in sizes {
        if m == 0 || m > u32::MAX as usize {
            return Err(BackendError::Failed(format!(
                "GPU kernel size must be in 1..=2^32-1 elements (u32 indices), got {m}"
            )));
        }
    }
    for &d in densities {
        // 1 - d must be a sparsity in [0, 1) (cpu::threshold_rank).
        if !(d > 0.0 && d <= 1.0 && 1.0 - d < 1.0) {
            return Err(BackendError::Failed(format!(
                "density must be in (0, 1], and not so small that 1 − density rounds to 1; \
                 got {d}"
            )));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// GPUs and kernels
// ---------------------------------------------------------------------------

/// One GPU: its primary context and the one stream all work goes to.
struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Gpu {
    /// Opens device `ordinal` (the driver must be present).
    fn open(ordinal: usize) -> Result<Gpu, BackendError> {
        let ctx = CudaContext::new(ordinal)
            .map_err(failed(format_args!("opening CUDA device {ordinal}")))?;
        // SAFETY: every buffer of this context is allocated on, used on and
        // freed on `stream` only (see the module docs), so stream order
        // alone orders every access.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(failed(format_args!(
            "creating a stream on CUDA device {ordinal}"
        )))?;
        Ok(Gpu { ctx, stream })
    }

    /// An event with timing enabled.
    fn timing_event(&self) -> Result<CudaEvent, BackendError> {
        self.ctx
            .new_event(Some(driver_sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(failed("creating a CUDA event"))
    }

    /// `n` zeroed elements on this GPU.
    fn zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        n: usize,
    ) -> Result<CudaSlice<T>, BackendError> {
        self.stream.alloc_zeros(n).map_err(failed(format_args!(
            "allocating {n} elements of {} bytes on the GPU",
            size_of::<T>()
        )))
    }

    /// Copies `src[..len]` to the host (synchronously).
    fn download<T: DeviceRepr>(
        &self,
        src: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>, BackendError> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let v = self
            .stream
            .clone_dtoh(&src.slice(..len))
            .map_err(failed("copying a result from the GPU"))?;
        self.stream
            .synchronize()
            .map_err(failed("waiting for the GPU"))?;
        Ok(v)
    }
}

/// Seconds between two recorded events (waits for both).
fn elapsed_s(start: &CudaEvent, stop: &CudaEvent) -> Result<f64, BackendError> {
    start
        .elapsed_ms(stop)
        .map(|ms| f64::from(ms) * 1e-3)
        .map_err(failed("reading CUDA event times"))
}

/// A launch configuration of `blocks` blocks of `threads` threads.
fn grid(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The kernels of `kernels.cu`, loaded on one GPU.
struct Kernels {
    topk_init: CudaFunction,
    topk_histogram: CudaFunction,
    topk_select_digit: CudaFunction,
    topk_count: CudaFunction,
    topk_scan: CudaFunction,
    topk_scatter: CudaFunction,
    mask_count: CudaFunction,
    scan_counts: CudaFunction,
    scan_span_sums: CudaFunction,
    scan_span_apply: CudaFunction,
    mask_scatter: CudaFunction,
    copy_f32: CudaFunction,
    magnitudes: CudaFunction,
    radix_histogram: CudaFunction,
    radix_scatter: CudaFunction,
    pick_rank: CudaFunction,
    merge_place: CudaFunction,
    flag_count: CudaFunction,
    flag_scatter: CudaFunction,
    gather_pairs: CudaFunction,
    /// Blocks for the grid-stride copy: 8 per multiprocessor.
    copy_blocks: u32,
}

impl Kernels {
    /// Compiles `kernels.cu` with NVRTC for the GPU's architecture
    /// (`sm_XY`, a cubin: no PTX JIT, so an NVRTC newer than the driver
    /// still works within a CUDA major version) and loads it.
    fn compile(gpu: &Gpu) -> Result<Kernels, BackendError> {
        let (major, minor) = gpu
            .ctx
            .compute_capability()
            .map_err(failed("reading the compute capability"))?;
        let arch = format!("sm_{major}{minor}");
        let cubin = compile_cubin(SOURCE, &arch)?;
        let module = gpu
            .ctx
            .load_module(nvrtc::Ptx::from_binary(cubin))
            .map_err(failed(format_args!("loading the {arch} kernels")))?;
        let load = |name: &str| {
            module
                .load_function(name)
                .map_err(failed(format_args!("finding kernel {name}")))
        };
        let sms = gpu
            .ctx
            .attribute(driver_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(failed("reading the multiprocessor count"))?;
        Ok(Kernels {
            topk_init: load("topk_init")?,
            topk_histogram: load("topk_histogram")?,
            topk_select_digit: load("topk_select_digit")?,
            topk_count: load("topk_count")?,
            topk_scan: load("topk_scan")?,
            topk_scatter: load("topk_scatter")?,
            mask_count: load("mask_count")?,
            scan_counts: load("scan_counts")?,
            scan_span_sums: load("scan_span_sums")?,
            scan_span_apply: load("scan_span_apply")?,
            mask_scatter: load("mask_scatter")?,
            copy_f32: load("copy_f32")?,
            magnitudes: load("magnitudes")?,
            radix_histogram: load("radix_histogram")?,
            radix_scatter: load("radix_scatter")?,
            pick_rank: load("pick_rank")?,
            merge_place: load("merge_place")?,
            flag_count: load("flag_count")?,
            flag_scatter: load("flag_scatter")?,
            gather_pairs: load("gather_pairs")?,
            copy_blocks: u32::try_from(sms.max(1)).unwrap_or(1).saturating_mul(8),
        })
    }

    /// Enqueues the radix select for the `k`-th largest magnitude
    /// (`1 ≤ k ≤ m`); afterwards `state = [T, !0, r, 0]` (see `kernels.cu`).
    fn enqueue_select(&self, s: &CudaStream, b: &mut Buffers, k: u32) -> Result<(), DriverError> {
        // SAFETY (all launches here and below): each argument list matches
        // the kernel's signature in kernels.cu in order and type; the
        // buffers have the lengths the kernels index (x, out, idx, vals,
        // copy: m; hist: 4·256; state: 4; per-tile arrays: tiles; total:
        // 1); tile kernels get one block of BLOCK threads per tile and scan
        // kernels one block of SCAN_THREADS threads, as they require.
        unsafe {
            s.launch_builder(&self.topk_init)
                .arg(&mut b.state)
                .arg(&mut b.hist)
                .arg(&k)
                .launch(grid(1, BLOCK))?;
            for pass in 0u32..4 {
                s.launch_builder(&self.topk_histogram)
                    .arg(&b.x)
                    .arg(&b.m)
                    .arg(&b.state)
                    .arg(&mut b.hist)
                    .arg(&pass)
                    .launch(grid(b.tiles, BLOCK))?;
                s.launch_builder(&self.topk_select_digit)
                    .arg(&mut b.state)
                    .arg(&b.hist)
                    .arg(&pass)
                    .launch(grid(1, 1))?;
            }
        }
        Ok(())
    }

    /// Enqueues the compaction of the winners of [`Self::enqueue_select`]
    /// into `out[..k]`, ascending.
    fn enqueue_compact(&self, s: &CudaStream, b: &mut Buffers) -> Result<(), DriverError> {
        // SAFETY: see `enqueue_select`.
        unsafe {
            s.launch_builder(&self.topk_count)
                .arg(&b.x)
                .arg(&b.m)
                .arg(&b.state)
                .arg(&mut b.counts)
                .arg(&mut b.eq_counts)
                .launch(grid(b.tiles, BLOCK))?;
            s.launch_builder(&self.topk_scan)
                .arg(&b.counts)
                .arg(&b.eq_counts)
                .arg(&b.tiles)
                .arg(&b.state)
                .arg(&mut b.eq_base)
                .arg(&mut b.base)
                .launch(grid(1, SCAN_THREADS))?;
            s.launch_builder(&self.topk_scatter)
                .arg(&b.x)
                .arg(&b.m)
                .arg(&b.state)
                .arg(&b.eq_base)
                .arg(&b.base)
                .arg(&mut b.out)
                .launch(grid(b.tiles, BLOCK))?;
        }
        Ok(())
    }

    /// Enqueues threshold masking at `tau`: `total` kept, pairs in
    /// `idx[..total]`, `vals[..total]`.
    fn enqueue_mask(&self, s: &CudaStream, b: &mut Buffers, tau: f32) -> Result<(), DriverError> {
        // SAFETY: see `enqueue_select`.
        unsafe {
            s.launch_builder(&self.mask_count)
                .arg(&b.x)
                .arg(&b.m)
                .arg(&tau)
                .arg(&mut b.counts)
                .launch(grid(b.tiles, BLOCK))?;
            s.launch_builder(&self.scan_counts)
                .arg(&b.counts)
                .arg(&b.tiles)
                .arg(&mut b.base)
                .arg(&mut b.total)
                .launch(grid(1, SCAN_THREADS))?;
            s.launch_builder(&self.mask_scatter)
                .arg(&b.x)
                .arg(&b.m)
                .arg(&tau)
                .arg(&b.base)
                .arg(&mut b.idx)
                .arg(&mut b.vals)
                .launch(grid(b.tiles, BLOCK))?;
        }
        Ok(())
    }

    /// Enqueues DCT-DP's threshold by sorting: the magnitudes of `b.x` as
    /// keys, sorted ascending by four stable 8-bit radix passes (ping-pong
    /// between `s.keys` and `s.tmp`, ending in `s.keys`), then the key at
    /// `rank` into `s.picked`.
    fn enqueue_sort_threshold(
        &self,
        st: &CudaStream,
        b: &Buffers,
        s: &mut SortBuffers,
        rank: u32,
    ) -> Result<(), DriverError> {
        let blocks = b.m.div_ceil(BLOCK).clamp(1, self.copy_blocks);
        let digits = 256 * b.tiles;
        let spans = digits.div_ceil(SPAN);
        // SAFETY: see `enqueue_select`; `keys` and `tmp` hold m keys,
        // `counts` and `base` 256 per tile, `sums` and `starts` one per
        // span of SPAN counts, `picked` one; magnitudes and gather loops
        // take any grid, radix kernels one block of BLOCK (= 256, a thread
        // a digit) per tile, the span kernels one block of SCAN_THREADS
        // per span.
        unsafe {
            st.launch_builder(&self.magnitudes)
                .arg(&b.x)
                .arg(&b.m)
                .arg(&mut s.keys)
                .launch(grid(blocks, BLOCK))?;
            for pass in 0u32..4 {
                let shift = 8 * pass;
                let (from, to) = if pass % 2 == 0 {
                    (&s.keys, &mut s.tmp)
                } else {
                    (&s.tmp, &mut s.keys)
                };
                st.launch_builder(&self.radix_histogram)
                    .arg(from)
                    .arg(&b.m)
                    .arg(&shift)
                    .arg(&b.tiles)
                    .arg(&mut s.counts)
                    .launch(grid(b.tiles, BLOCK))?;
                // the counts' scan, over blocks (scan_counts alone read
                // them one block wide: 2 ms a pass at 16 Mi on an H200)
                st.launch_builder(&self.scan_span_sums)
                    .arg(&s.counts)
                    .arg(&digits)
                    .arg(&mut s.sums)
                    .launch(grid(spans, SCAN_THREADS))?;
                st.launch_builder(&self.scan_counts)
                    .arg(&s.sums)
                    .arg(&spans)
                    .arg(&mut s.starts)
                    .arg(&mut s.total)
                    .launch(grid(1, SCAN_THREADS))?;
                st.launch_builder(&self.scan_span_apply)
                    .arg(&s.counts)
                    .arg(&digits)
                    .arg(&s.starts)
                    .arg(&mut s.base)
                    .launch(grid(spans, SCAN_THREADS))?;
                st.launch_builder(&self.radix_scatter)
                    .arg(from)
                    .arg(&b.m)
                    .arg(&shift)
                    .arg(&b.tiles)
                    .arg(&s.base)
                    .arg(to)
                    .launch(grid(b.tiles, BLOCK))?;
            }
            st.launch_builder(&self.pick_rank)
                .arg(&s.keys)
                .arg(&rank)
                .arg(&mut s.picked)
                .launch(grid(1, 32))?;
        }
        Ok(())
    }

    /// Enqueues the first half of gTop-k's merge: the union of the two
    /// sets of `mb` into `mb.u_idx`, `mb.u_val` (its size into
    /// `mb.total`).
    fn enqueue_union(&self, st: &CudaStream, mb: &mut MergeBuffers) -> Result<(), DriverError> {
        let n = 2 * mb.k;
        let tiles = n.div_ceil(TILE as u32);
        // SAFETY: see `enqueue_select`; the sets hold k pairs each, the
        // merge and union arrays 2k, the per-tile arrays ⌈2k / TILE⌉.
        unsafe {
            st.launch_builder(&self.merge_place)
                .arg(&mb.a_idx)
                .arg(&mb.a_val)
                .arg(&mb.k)
                .arg(&mb.b_idx)
                .arg(&mb.b_val)
                .arg(&mb.k)
                .arg(&mut mb.m_idx)
                .arg(&mut mb.m_val)
                .arg(&mut mb.keep)
                .launch(grid(n.div_ceil(BLOCK), BLOCK))?;
            st.launch_builder(&self.flag_count)
                .arg(&mb.keep)
                .arg(&n)
                .arg(&mut mb.counts)
                .launch(grid(tiles, BLOCK))?;
            st.launch_builder(&self.scan_counts)
                .arg(&mb.counts)
                .arg(&tiles)
                .arg(&mut mb.base)
                .arg(&mut mb.total)
                .launch(grid(1, SCAN_THREADS))?;
            st.launch_builder(&self.flag_scatter)
                .arg(&mb.keep)
                .arg(&mb.m_idx)
                .arg(&mb.m_val)
                .arg(&n)
                .arg(&mb.base)
                .arg(&mut mb.u_idx)
                .arg(&mut mb.union.x)
                .launch(grid(tiles, BLOCK))?;
        }
        Ok(())
    }

    /// Enqueues the gather of the `k` winners at union places
    /// `mb.union.out` into `mb.out_idx`, `mb.out_val`.
    fn enqueue_gather(&self, st: &CudaStream, mb: &mut MergeBuffers) -> Result<(), DriverError> {
        let blocks = mb.k.div_ceil(BLOCK).clamp(1, self.copy_blocks);
        // SAFETY: see `enqueue_select`; gather_pairs is a grid-stride loop.
        unsafe {
            st.launch_builder(&self.gather_pairs)
                .arg(&mb.union.out)
                .arg(&mb.k)
                .arg(&mb.u_idx)
                .arg(&mb.union.x)
                .arg(&mut mb.out_idx)
                .arg(&mut mb.out_val)
                .launch(grid(blocks, BLOCK))?;
        }
        Ok(())
    }

    /// Enqueues the copy of `x` into `copy`.
    fn enqueue_copy(&self, s: &CudaStream, b: &mut Buffers) -> Result<(), DriverError> {
        let m = u64::from(b.m);
        let blocks = u32::try_from(m.div_ceil(4 * u64::from(BLOCK)))
            .unwrap_or(u32::MAX)
            .clamp(1, self.copy_blocks);
        // SAFETY: see `enqueue_select`; copy_f32 is a grid-stride loop and
        // takes any grid.
        unsafe {
            s.launch_builder(&self.copy_f32)
                .arg(&b.x)
                .arg(&mut b.copy)
                .arg(&m)
                .launch(grid(blocks, BLOCK))?;
        }
        Ok(())
    }
}

/// Compiles CUDA source to a cubin for `arch` (`sm_XY`) with NVRTC (which
/// must be present).
fn compile_cubin(source: &str, arch: &str) -> Result<Vec<u8>, BackendError> {
    let src = CString::new(source)
        .map_err(|_| BackendError::Failed("kernel source contains a NUL byte".to_owned()))?;
    let prog = nvrtc::result::create_program(&src, Some(c"dtsim_kernels.cu"))
        .map_err(failed("creating the NVRTC program"))?;
    // SAFETY: `prog` was just created, `src` outlives it, and it is
    // destroyed exactly once, below, after its last use.
    unsafe {
        let cubin = compiled_cubin(prog, arch);
        // A failure to free the program leaks it; nothing else to do.
        let _ = nvrtc::result::destroy_program(prog);
        cubin
    }
}

/// Compiles `prog` for `arch` and returns the cubin.
///
/// # Safety
/// `prog` must be a live NVRTC program.
unsafe fn compiled_cubin(
    prog: nvrtc::sys::nvrtcProgram,
    arch: &str,
) -> Result<Vec<u8>, BackendError> {
    let options = [format!("--gpu-architecture={arch}")];
    // SAFETY: `prog` is live (the caller's contract).
    if let Err(e) = unsafe { nvrtc::result::compile_program(prog, &options) } {
        // SAFETY: as above.
        let log = unsafe { nvrtc::result::get_program_log(prog) }
            .map(|log| c_string(&log))
            .unwrap_or_default();
        return Err(BackendError::Failed(format!(
            "NVRTC could not compile the dtsim kernels for {arch} ({}); an NVRTC older than \
             the GPU does not know its architecture, and a newer CUDA toolkit fixes that. \
             Compiler log:\n{log}",
            e.describe()
        )));
    }
    let mut size = 0usize;
    // SAFETY: `prog` is live and compiled; `size` is a valid out-pointer.
    unsafe { nvrtc::sys::nvrtcGetCUBINSize(prog, &mut size) }
        .result()
        .map_err(failed("reading the cubin size from NVRTC"))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the `size` bytes NVRTC writes.
    unsafe { nvrtc::sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(failed("reading the cubin from NVRTC"))?;
    Ok(cubin)
}

/// A NUL-terminated C string held as `c_char`s, as text.
fn c_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c.to_ne_bytes()[0]).collect();
    CStr::from_bytes_until_nul(&bytes)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned())
}

// ---------------------------------------------------------------------------
// Kernel timing
// ---------------------------------------------------------------------------

/// Device buffers for the kernels at one size `m`.
struct Buffers {
    /// Elements, as the kernels take it.
    m: u32,
    /// Tiles of [`TILE`] elements: `⌈m / TILE⌉`.
    tiles: u32,
    /// Input.
    x: CudaSlice<f32>,
    /// Top-k output indices.
    out: CudaSlice<u32>,
    /// Four 256-bin histograms, one per radix pass.
    hist: CudaSlice<u32>,
    /// Radix select state `[prefix, mask, remaining k, error flag]`.
    state: CudaSlice<u32>,
    /// Per tile: elements > T (Top-k) or kept (mask).
    counts: CudaSlice<u32>,
    /// Per tile: elements == T.
    eq_counts: CudaSlice<u32>,
    /// Per tile: "== T" elements before the tile.
    eq_base: CudaSlice<u32>,
    /// Per tile: output position of the tile's first winner or kept pair.
    base: CudaSlice<u32>,
    /// Mask output indices.
    idx: CudaSlice<u32>,
    /// Mask output values.
    vals: CudaSlice<f32>,
    /// Number of kept pairs.
    total: CudaSlice<u32>,
    /// Destination of the bandwidth copy.
    copy: CudaSlice<f32>,
}

impl Buffers {
    /// Allocates everything for `m` elements (`1 ≤ m ≤ u32::MAX`), about
    /// 24·m bytes.
    fn new(gpu: &Gpu, m: usize) -> Result<Buffers, BackendError> {
        let tiles = m.div_ceil(TILE);
        Ok(Buffers {
            m: u32::try_from(m).map_err(|_| BackendError::Failed(format!("size {m} too large")))?,
            tiles: tiles as u32,
            x: gpu.zeros(m)?,
            out: gpu.zeros(m)?,
            hist: gpu.zeros(4 * 256)?,
            state: gpu.zeros(4)?,
            counts: gpu.zeros(tiles)?,
            eq_counts: gpu.zeros(tiles)?,
            eq_base: gpu.zeros(tiles)?,
            base: gpu.zeros(tiles)?,
            idx: gpu.zeros(m)?,
            vals: gpu.zeros(m)?,
            total: gpu.zeros(1)?,
            copy: gpu.zeros(m)?,
        })
    }

    /// Allocates only what [`time_copy`] uses, `x` and `copy` (8·m bytes);
    /// every other buffer has one element, so no other kernel may run on
    /// these.
    fn copy_only(gpu: &Gpu, m: usize) -> Result<Buffers, BackendError> {
        Ok(Buffers {
            m: u32::try_from(m).map_err(|_| BackendError::Failed(format!("size {m} too large")))?,
            tiles: 1,
            x: gpu.zeros(m)?,
            out: gpu.zeros(1)?,
            hist: gpu.zeros(1)?,
            state: gpu.zeros(1)?,
            counts: gpu.zeros(1)?,
            eq_counts: gpu.zeros(1)?,
            eq_base: gpu.zeros(1)?,
            base: gpu.zeros(1)?,
            idx: gpu.zeros(1)?,
            vals: gpu.zeros(1)?,
            total: gpu.zeros(1)?,
            copy: gpu.zeros(m)?,
        })
    }
}

/// Device buffers of the sort-based threshold at one size (beside a
/// [`Buffers`] whose `x` is the input).
struct SortBuffers {
    /// Keys, sorted in place by the end.
    keys: CudaSlice<u32>,
    /// The other half of the ping-pong.
    tmp: CudaSlice<u32>,
    /// Per (digit, tile), digit-major: the tile's keys of the digit.
    counts: CudaSlice<u32>,
    /// Per (digit, tile): where they go.
    base: CudaSlice<u32>,
    /// Per span of SPAN counts: their sum, and where the span starts.
    sums: CudaSlice<u32>,
    starts: CudaSlice<u32>,
    /// All keys (the scan's total; unused).
    total: CudaSlice<u32>,
    /// The key at the threshold's rank.
    picked: CudaSlice<u32>,
}

impl SortBuffers {
    /// For `b`'s size: about 8·m bytes.
    fn new(gpu: &Gpu, b: &Buffers) -> Result<SortBuffers, BackendError> {
        let m = b.m as usize;
        let digits = 256 * b.tiles as usize;
        Ok(SortBuffers {
            keys: gpu.zeros(m)?,
            tmp: gpu.zeros(m)?,
            counts: gpu.zeros(digits)?,
            base: gpu.zeros(digits)?,
            sums: gpu.zeros(digits.div_ceil(SPAN as usize))?,
            starts: gpu.zeros(digits.div_ceil(SPAN as usize))?,
            total: gpu.zeros(1)?,
            picked: gpu.zeros(1)?,
        })
    }
}

/// Device buffers of gTop-k's merge of two sets of `k` pairs.
struct MergeBuffers {
    /// Pairs a set.
    k: u32,
    a_idx: CudaSlice<u32>,
    a_val: CudaSlice<f32>,
    b_idx: CudaSlice<u32>,
    b_val: CudaSlice<f32>,
    /// The 2k pairs in merge order, and which are kept.
    m_idx: CudaSlice<u32>,
    m_val: CudaSlice<f32>,
    keep: CudaSlice<u32>,
    /// Per tile of the 2k: kept pairs, and where they start.
    counts: CudaSlice<u32>,
    base: CudaSlice<u32>,
    /// The union's size.
    total: CudaSlice<u32>,
    /// The union's indices; its values are `union.x`.
    u_idx: CudaSlice<u32>,
    /// The Top-k buffers over the union's values (`m` set to the union's
    /// size before the selection).
    union: Buffers,
    /// The merge's result.
    out_idx: CudaSlice<u32>,
    out_val: CudaSlice<f32>,
}

impl MergeBuffers {
    /// For two sets of `k` (`1 ≤ 2k ≤ u32::MAX`): about 60·k bytes.
    fn new(gpu: &Gpu, k: usize) -> Result<MergeBuffers, BackendError> {
        let n = 2 * k;
        let tiles = n.div_ceil(TILE);
        Ok(MergeBuffers {
            k: u32::try_from(k)
                .ok()
                .filter(|k| k.checked_mul(2).is_some())
                .ok_or_else(|| BackendError::Failed(format!("merge of {k} too large")))?,
            a_idx: gpu.zeros(k)?,
            a_val: gpu.zeros(k)?,
            b_idx: gpu.zeros(k)?,
            b_val: gpu.zeros(k)?,
            m_idx: gpu.zeros(n)?,
            m_val: gpu.zeros(n)?,
            keep: gpu.zeros(n)?,
            counts: gpu.zeros(tiles)?,
            base: gpu.zeros(tiles)?,
            total: gpu.zeros(1)?,
            u_idx: gpu.zeros(n)?,
            union: Buffers::new(gpu, n)?,
            out_idx: gpu.zeros(k)?,
            out_val: gpu.zeros(k)?,
        })
    }
}

/// Uploads a fresh gradient (seed from `seeds`) into `b.x`; returns it.
fn upload_fresh(
    gpu: &Gpu,
    b: &mut Buffers,
    seeds: &mut impl Iterator<Item = u64>,
) -> Result<Vec<f32>, BackendError> {
    let seed = seeds.next().unwrap_or(0);
    let values = random_gradient(b.m as usize, seed);
    gpu.stream
        .memcpy_htod(&values, &mut b.x)
        .map_err(failed("copying the input to the GPU"))?;
    Ok(values)
}

/// Times [`Kernels::enqueue_copy`]; see [`time_kernels`].
fn time_copy(
    gpu: &Gpu,
    k: &Kernels,
    b: &mut Buffers,
    repeats: u32,
    seeds: &mut impl Iterator<Item = u64>,
) -> Result<Timing, BackendError> {
    let (start, stop) = (gpu.timing_event()?, gpu.timing_event()?);
    let mut samples = Vec::with_capacity(repeats as usize);
    for run in 0..WARMUP + repeats {
        let values = upload_fresh(gpu, b, seeds)?;
        start
            .record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        k.enqueue_copy(&gpu.stream, b)
            .map_err(failed("launching the copy kernel"))?;
        stop.record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        let t = elapsed_s(&start, &stop)?;
        let copied = gpu.download(&b.copy, values.len())?;
        if let Some(i) = (0..values.len()).find(|&i| copied[i].to_bits() != values[i].to_bits()) {
            return Err(BackendError::Failed(format!(
                "GPU kernel `membw` copied m = {} elements wrongly: first difference at {i} \
                 (got {:e}, want {:e})",
                values.len(),
                copied[i],
                values[i]
            )));
        }
        if run >= WARMUP {
            samples.push(t);
        }
    }
    Ok(Timing::from_samples(&samples))
}

/// Times the radix select and the whole Top-k on the same runs; returns
/// (threshold_select, topk). See [`time_kernels`].
fn time_topk(
    gpu: &Gpu,
    k: &Kernels,
    b: &mut Buffers,
    kept: usize,
    sparsity: f64,
    repeats: u32,
    seeds: &mut impl Iterator<Item = u64>,
) -> Result<(Timing, Timing), BackendError> {
    let (start, mid, stop) = (
        gpu.timing_event()?,
        gpu.timing_event()?,
        gpu.timing_event()?,
    );
    // 1 ≤ kept ≤ m ≤ u32::MAX (threshold_rank ≤ m − 1 for m ≥ 1).
    let kept32 = kept as u32;
    let mut select_s = Vec::with_capacity(repeats as usize);
    let mut topk_s = Vec::with_capacity(repeats as usize);
    for run in 0..WARMUP + repeats {
        let values = upload_fresh(gpu, b, seeds)?;
        start
            .record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        k.enqueue_select(&gpu.stream, b, kept32)
            .map_err(failed("launching the Top-k kernels"))?;
        mid.record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        k.enqueue_compact(&gpu.stream, b)
            .map_err(failed("launching the Top-k kernels"))?;
        stop.record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        let (t_select, t_topk) = (elapsed_s(&start, &mid)?, elapsed_s(&start, &stop)?);

        let state = gpu.download(&b.state, 4)?;
        if state[3] != 0 {
            return Err(BackendError::Failed(format!(
                "GPU radix select found no digit (m = {}, k = {kept}): a bug in kernels.cu",
                b.m
            )));
        }
        cpu::check_threshold(&values, sparsity, f32::from_bits(state[0])).map_err(mismatch)?;
        let out = gpu.download(&b.out, kept)?;
        cpu::check_topk_selected(&values, kept, &out).map_err(mismatch)?;
        if run >= WARMUP {
            select_s.push(t_select);
            topk_s.push(t_topk);
        }
    }
    Ok((
        Timing::from_samples(&select_s),
        Timing::from_samples(&topk_s),
    ))
}

/// Times threshold masking at each input's DCT-DP threshold. See
/// [`time_kernels`].
fn time_mask(
    gpu: &Gpu,
    k: &Kernels,
    b: &mut Buffers,
    sparsity: f64,
    repeats: u32,
    seeds: &mut impl Iterator<Item = u64>,
) -> Result<Timing, BackendError> {
    let (start, stop) = (gpu.timing_event()?, gpu.timing_event()?);
    let mut samples = Vec::with_capacity(repeats as usize);
    for run in 0..WARMUP + repeats {
        let values = upload_fresh(gpu, b, seeds)?;
        // the element threshold_by_sort returns, found by selection
        let tau = cpu::threshold_reference(&values, sparsity);
        start
            .record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        k.enqueue_mask(&gpu.stream, b, tau)
            .map_err(failed("launching the mask kernels"))?;
        stop.record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        let t = elapsed_s(&start, &stop)?;

        let total = gpu.download(&b.total, 1)?[0] as usize;
        if total > values.len() {
            return Err(BackendError::Failed(format!(
                "GPU kernel `mask` kept {total} of {} elements",
                values.len()
            )));
        }
        let idx = gpu.download(&b.idx, total)?;
        let vals = gpu.download(&b.vals, total)?;
        cpu::check_mask(&values, tau, &idx, &vals).map_err(mismatch)?;
        if run >= WARMUP {
            samples.push(t);
        }
    }
    Ok(Timing::from_samples(&samples))
}

/// Times DCT-DP's threshold by sorting (the magnitudes radix-sorted on the
/// GPU, the key at the threshold's rank picked) at each input's sparsity,
/// checked against [`cpu::check_threshold`]. See [`time_kernels`].
fn time_threshold_sort(
    gpu: &Gpu,
    k: &Kernels,
    b: &mut Buffers,
    sparsity: f64,
    repeats: u32,
    seeds: &mut impl Iterator<Item = u64>,
) -> Result<Timing, BackendError> {
    let mut s = SortBuffers::new(gpu, b)?;
    let (start, stop) = (gpu.timing_event()?, gpu.timing_event()?);
    // ≤ m − 1 for m ≥ 1, so it fits the u32 size
    let rank = cpu::threshold_rank(b.m as usize, sparsity) as u32;
    let mut samples = Vec::with_capacity(repeats as usize);
    for run in 0..WARMUP + repeats {
        let values = upload_fresh(gpu, b, seeds)?;
        start
            .record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        k.enqueue_sort_threshold(&gpu.stream, b, &mut s, rank)
            .map_err(failed("launching the radix sort kernels"))?;
        stop.record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        let t = elapsed_s(&start, &stop)?;
        let picked = gpu.download(&s.picked, 1)?[0];
        cpu::check_threshold(&values, sparsity, f32::from_bits(picked)).map_err(mismatch)?;
        if run >= WARMUP {
            samples.push(t);
        }
    }
    Ok(Timing::from_samples(&samples))
}

/// Times gTop-k's merge of two Top-k sets of `kept` out of gradients of
/// `m` (fresh each run, as [`crate::timing::time_kernels`] draws them),
/// checked against [`cpu::check_merge`]. The union's size is read back to
/// the host between the union and the selection (inside the timed span,
/// as an implementation that sizes the selection by it must).
fn time_merge(
    gpu: &Gpu,
    k: &Kernels,
    m: usize,
    kept: usize,
    repeats: u32,
    seeds: &mut impl Iterator<Item = u64>,
) -> Result<Timing, BackendError> {
    let mut mb = MergeBuffers::new(gpu, kept)?;
    let (start, stop) = (gpu.timing_event()?, gpu.timing_event()?);
    let mut set = || {
        let g = random_gradient(m, seeds.next().unwrap_or(0));
        let mut idx = Vec::new();
        cpu::topk(&g, kept, &mut idx);
        let val: Vec<f32> = idx.iter().map(|&i| g[i as usize]).collect();
        (idx, val)
    };
    let mut samples = Vec::with_capacity(repeats as usize);
    for run in 0..WARMUP + repeats {
        let (a, b) = (set(), set());
        let up = |gpu: &Gpu, v: &[u32], d: &mut CudaSlice<u32>| {
            gpu.stream
                .memcpy_htod(v, d)
                .map_err(failed("copying the sets to the GPU"))
        };
        up(gpu, &a.0, &mut mb.a_idx)?;
        up(gpu, &b.0, &mut mb.b_idx)?;
        gpu.stream
            .memcpy_htod(&a.1, &mut mb.a_val)
            .map_err(failed("copying the sets to the GPU"))?;
        gpu.stream
            .memcpy_htod(&b.1, &mut mb.b_val)
            .map_err(failed("copying the sets to the GPU"))?;
        start
            .record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        k.enqueue_union(&gpu.stream, &mut mb)
            .map_err(failed("launching the merge kernels"))?;
        let union = gpu.download(&mb.total, 1)?[0];
        if union as usize > 2 * kept || (union as usize) < kept {
            return Err(BackendError::Failed(format!(
                "GPU kernel `merge` found a union of {union} pairs from two sets of {kept}"
            )));
        }
        let keep = (union as usize).min(kept);
        if union as usize > kept {
            mb.union.m = union;
            mb.union.tiles = (union as usize).div_ceil(TILE) as u32;
            k.enqueue_select(&gpu.stream, &mut mb.union, kept as u32)
                .map_err(failed("launching the merge's selection"))?;
            k.enqueue_compact(&gpu.stream, &mut mb.union)
                .map_err(failed("launching the merge's selection"))?;
            k.enqueue_gather(&gpu.stream, &mut mb)
                .map_err(failed("launching the merge's gather"))?;
        }
        stop.record(&gpu.stream)
            .map_err(failed("recording an event"))?;
        let t = elapsed_s(&start, &stop)?;
        let (idx, val) = if union as usize > kept {
            (
                gpu.download(&mb.out_idx, keep)?,
                gpu.download(&mb.out_val, keep)?,
            )
        } else {
            (
                gpu.download(&mb.u_idx, keep)?,
                gpu.download(&mb.union.x, keep)?,
            )
        };
        cpu::check_merge((&a.0, &a.1), (&b.0, &b.1), kept, &idx, &val).map_err(mismatch)?;
        if run >= WARMUP {
            samples.push(t);
        }
    }
    Ok(Timing::from_samples(&samples))
}

// ---------------------------------------------------------------------------
// Collectives
// ---------------------------------------------------------------------------

/// A collective operation of [`COLLECTIVES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    AlltoAll,
}

impl Op {
    /// All ops, in the order of [`COLLECTIVES`].
    const ALL: [Op; 5] = [
        Op::AllReduce,
        Op::AllGather,
        Op::ReduceScatter,
        Op::Broadcast,
        Op::AlltoAll,
    ];

    /// The name in [`COLLECTIVES`].
    fn name(self) -> &'static str {
        COLLECTIVES[self as usize]
    }
}

/// Parses op names; an unknown name is an error listing the known ones.
fn parse_ops(ops: &[&str]) -> Result<Vec<Op>, BackendError> {
    ops.iter()
        .map(|&name| {
            Op::ALL
                .into_iter()
                .find(|op| op.name() == name)
                .ok_or_else(|| {
                    BackendError::Failed(format!(
                        "unknown collective {name:?}; known: {}",
                        COLLECTIVES.join(", ")
                    ))
                })
        })
        .collect()
}

/// Buffer lengths (in `f32`) of one collective at one size, nccl-tests'
/// meaning (see [`COLLECTIVES`]).
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// Send buffer length per rank.
    send: usize,
    /// Receive buffer length per rank.
    recv: usize,
    /// Block length per peer (AllGather, ReduceScatter, AlltoAll), else
    /// the whole buffer.
    block: usize,
    /// The size reported: nccl-tests' size after rounding down.
    size_bytes: u64,
}

impl Shape {
    /// The shape of `op` at `size_bytes` across `n` ranks.
    fn new(op: Op, size_bytes: u64, n: usize) -> Result<Shape, BackendError> {
        let count = usize::try_from(size_bytes / 4).unwrap_or(usize::MAX);
        let block = match op {
            Op::AllReduce | Op::Broadcast => count,
            Op::AllGather | Op::ReduceScatter | Op::AlltoAll => count / n,
        };
        if block == 0 {
            return Err(BackendError::Failed(format!(
                "{} of {size_bytes} bytes across {n} ranks is less than one float32 per rank",
                op.name()
            )));
        }
        let whole = match op {
            Op::AllReduce | Op::Broadcast => block,
            _ => block * n,
        };
        let (send, recv) = match op {
            Op::AllReduce | Op::Broadcast | Op::AlltoAll => (whole, whole),
            Op::AllGather => (block, whole),
            Op::ReduceScatter => (whole, block),
        };
        Ok(Shape {
            send,
            recv,
            block,
            size_bytes: whole as u64 * 4,
        })
    }
}

/// One rank's send and receive buffers.
struct CollectiveBuffers {
    send: CudaSlice<f32>,
    recv: CudaSlice<f32>,
}

impl CollectiveBuffers {
    /// Send buffer filled with `rank + 1`, receive buffer zeroed.
    fn new(gpu: &Gpu, shape: Shape, rank: usize) -> Result<CollectiveBuffers, BackendError> {
        let fill = vec![(rank + 1) as f32; shape.send];
        let send = gpu
            .stream
            .clone_htod(&fill)
            .map_err(failed("copying a send buffer to the GPU"))?;
        Ok(CollectiveBuffers {
            send,
            recv: gpu.zeros(shape.recv)?,
        })
    }
}

/// Runs `f` between `ncclGroupStart` and `ncclGroupEnd` (ending the group
/// even if `f` fails).
fn grouped(f: impl FnOnce() -> Result<(), NcclError>) -> Result<(), BackendError> {
    nccl::group_start().map_err(failed("ncclGroupStart"))?;
    let issued = f();
    let ended = nccl::group_end();
    issued.map_err(failed("issuing the collective"))?;
    ended.map_err(failed("ncclGroupEnd"))?;
    Ok(())
}

/// Enqueues `op` on one rank's communicator (inside a group).
fn issue(op: Op, comm: &Comm, b: &mut CollectiveBuffers, shape: Shape) -> Result<(), NcclError> {
    let (send, recv) = (&b.send, &mut b.recv);
    match op {
        Op::AllReduce => comm.all_reduce(send, recv, &ReduceOp::Sum).map(drop),
        Op::AllGather => comm.all_gather(send, recv).map(drop),
        Op::ReduceScatter => comm.reduce_scatter(send, recv, &ReduceOp::Sum).map(drop),
        Op::Broadcast => comm.broadcast(Some(send), recv, 0).map(drop),
        Op::AlltoAll => {
            for peer in 0..comm.world_size() {
                let blocks = peer * shape.block..(peer + 1) * shape.block;
                comm.send(&send.slice(blocks.clone()), peer as i32)?;
                comm.recv(&mut recv.slice_mut(blocks), peer as i32)?;
            }
            Ok(())
        }
    }
}

/// Checks one rank's receive buffer: rank `r` sent `r + 1` everywhere.
fn check_collective(
    gpu: &Gpu,
    b: &CollectiveBuffers,
    op: Op,
    shape: Shape,
    n: usize,
    rank: usize,
) -> Result<(), BackendError> {
    let got = gpu.download(&b.recv, shape.recv)?;
    let sum = (n * (n + 1) / 2) as f32;
    let want = |i: usize| match op {
        Op::AllReduce | Op::ReduceScatter => sum,
        Op::Broadcast => 1.0,
        Op::AllGather | Op::AlltoAll => (i / shape.block + 1) as f32,
    };
    match (0..got.len()).find(|&i| got[i] != want(i)) {
        None => Ok(()),
        Some(i) => Err(BackendError::Failed(format!(
            "NCCL {} of {} bytes gave a wrong result on rank {rank}: element {i} is {}, want {}",
            op.name(),
            shape.size_bytes,
            got[i],
            want(i)
        ))),
    }
}

/// Multi-node NCCL through MPI (features `cuda` and `mpi`).
#[cfg(feature = "mpi")]
mod mpi_collectives {
    use ::mpi::collective::SystemOperation;
    use ::mpi::topology::SimpleCommunicator;
    use ::mpi::traits::{Communicator, CommunicatorCollectives, Root};

    use super::*;

    /// Length of an NCCL unique id in bytes (`NCCL_UNIQUE_ID_BYTES`).
    const ID_BYTES: usize = 128;

    /// `true` on every rank if `ok` on every rank (`MPI_Allreduce` min).
    fn all_ok(world: &SimpleCommunicator, ok: bool) -> bool {
        let mut all = 0i32;
        world.all_reduce_into(&i32::from(ok), &mut all, SystemOperation::min());
        all == 1
    }

    /// The error of this rank, or, if this rank did not fail, a note that
    /// another one failed while `doing` something.
    fn agreed_error<T>(local: Result<T, BackendError>, doing: &str) -> BackendError {
        local.err().unwrap_or_else(|| {
            BackendError::Failed(format!(
                "another MPI rank failed while {doing}; see its error"
            ))
        })
    }

    /// See [`super::time_collectives_mpi`].
    pub(super) fn run(
        world: &SimpleCommunicator,
        ops: &[&str],
        sizes: &[u64],
        repeats: u32,
    ) -> Result<Vec<CollectiveTiming>, BackendError> {
        // Argument errors are the same on every rank: no agreement needed.
        let ops = parse_ops(ops)?;
        check_repeats(repeats)?;
        let rank = usize::try_from(world.rank()).unwrap_or(0);
        let n = usize::try_from(world.size()).unwrap_or(1);
        let local_rank = usize::try_from(world.split_shared(0).rank()).unwrap_or(0);

        // 1. Every rank opens its GPU; all agree that all did.
        let gpu = guarded(|| {
            require_driver()?;
            require_nccl()?;
            let gpus = require_devices()?;
            Gpu::open(local_rank % gpus)
        });
        if !all_ok(world, gpu.is_ok()) {
            return Err(agreed_error(gpu, "setting up CUDA and NCCL"));
        }
        let gpu = gpu?;

        // 2. Rank 0 creates the NCCL id and broadcasts it with a status
        //    byte in front.
        let mut message = [0u8; 1 + ID_BYTES];
        let created =
            (rank == 0).then(|| guarded(|| nccl::Id::new().map_err(failed("ncclGetUniqueId"))));
        if let Some(Ok(id)) = &created {
            message[0] = 1;
            for (byte, c) in message[1..].iter_mut().zip(id.internal()) {
                *byte = c.to_ne_bytes()[0];
            }
        }
        world.process_at_rank(0).broadcast_into(&mut message[..]);
        if message[0] != 1 {
            return Err(match created {
                Some(Err(e)) => e,
                _ => BackendError::Failed("rank 0 could not create an NCCL unique id".to_owned()),
            });
        }
        let mut internal = [0 as c_char; ID_BYTES];
        for (c, &byte) in internal.iter_mut().zip(&message[1..]) {
            *c = c_char::from_ne_bytes([byte]);
        }

        // 3. Every rank joins the communicator.
        let comm = guarded(|| {
            // NCCL creates the communicator on the thread's current device
            gpu.ctx
                .bind_to_thread()
                .map_err(failed("making the GPU current"))?;
            Comm::from_rank(gpu.stream.clone(), rank, n, nccl::Id::uninit(internal))
                .map_err(failed("ncclCommInitRank"))
        });
        if !all_ok(world, comm.is_ok()) {
            return Err(agreed_error(comm, "joining the NCCL communicator"));
        }
        let comm = comm?;

        // 4. Measure.
        let mut rows = Vec::with_capacity(ops.len() * sizes.len());
        for &op in &ops {
            for &size in sizes {
                let shape = Shape::new(op, size, n)?;
                let setup = guarded(|| {
                    let bufs = CollectiveBuffers::new(&gpu, shape, rank)?;
                    Ok((bufs, gpu.timing_event()?, gpu.timing_event()?))
                });
                if !all_ok(world, setup.is_ok()) {
                    return Err(agreed_error(setup, "allocating buffers"));
                }
                let (mut bufs, start, stop) = setup?;
                let mut samples = Vec::with_capacity(repeats as usize);
                for run in 0..WARMUP + repeats {
                    world.barrier();
                    let local = guarded(|| {
                        start
                            .record(&gpu.stream)
                            .map_err(failed("recording an event"))?;
                        grouped(|| issue(op, &comm, &mut bufs, shape))?;
                        stop.record(&gpu.stream)
                            .map_err(failed("recording an event"))?;
                        elapsed_s(&start, &stop)
                    });
                    // [time, failed]: the maximum of both over ranks.
                    let mine = match &local {
                        Ok(t) => [*t, 0.0],
                        Err(_) => [0.0, 1.0],
                    };
                    let mut worst = [0.0f64; 2];
                    world.all_reduce_into(&mine[..], &mut worst[..], SystemOperation::max());
                    if worst[1] != 0.0 {
                        return Err(agreed_error(local, "timing the collective"));
                    }
                    if run >= WARMUP {
                        samples.push(worst[0]);
                    }
                }
                let checked = guarded(|| check_collective(&gpu, &bufs, op, shape, n, rank));
                if !all_ok(world, checked.is_ok()) {
                    return Err(agreed_error(checked, "checking results"));
                }
                rows.push(CollectiveTiming {
                    op: op.name().to_owned(),
                    size_bytes: shape.size_bytes,
                    time_s: Timing::from_samples(&samples).median_s,
                    ranks: n as u32,
                });
            }
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The architectures this NVRTC compiles for, as `XY` of `sm_XY`.
    fn supported_archs() -> Vec<i32> {
        let mut n = 0;
        // SAFETY: `n` is a valid out-pointer.
        unsafe { nvrtc::sys::nvrtcGetNumSupportedArchs(&mut n) }
            .result()
            .expect("nvrtcGetNumSupportedArchs");
        let mut archs = vec![0; usize::try_from(n).expect("a count")];
        // SAFETY: `archs` has room for the `n` entries NVRTC writes.
        unsafe { nvrtc::sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            .result()
            .expect("nvrtcGetSupportedArchs");
        archs
    }

    /// Compiles `kernels.cu` with the real NVRTC for every architecture
    /// from Volta to Blackwell that it supports (NVRTC needs no GPU or
    /// driver; CUDA 13's NVRTC dropped sm_70, seen on 2026-11-26). Skipped
    /// where NVRTC is not installed, as in CI; e.g. `pip install
    /// nvidia-cuda-nvrtc-cu12` and `LD_LIBRARY_PATH=.../nvidia/cuda_nvrtc/lib`
    /// make it run.
    #[test]
    fn kernels_compile_with_nvrtc() {
        if require_nvrtc().is_err() {
            eprintln!("skipped: no NVRTC on this machine");
            return;
        }
        let supported = supported_archs();
        let mut compiled = 0;
        for arch in [70, 75, 80, 86, 89, 90, 100, 120] {
            if !supported.contains(&arch) {
                eprintln!("sm_{arch}: not supported by this NVRTC ({supported:?})");
                continue;
            }
            let arch = format!("sm_{arch}");
            let cubin = compile_cubin(SOURCE, &arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
            assert_eq!(&cubin[..4], b"\x7fELF", "{arch}: a cubin is an ELF file");
            compiled += 1;
        }
        assert!(
            compiled >= 3,
            "compiled for {compiled} architectures of {supported:?}"
        );
    }

    #[test]
    fn compile_errors_carry_the_compiler_log() {
        if require_nvrtc().is_err() {
            eprintln!("skipped: no NVRTC on this machine");
            return;
        }
        match compile_cubin(
            "extern \"C\" __global__ void k() { undeclared(); }",
            "sm_80",
        ) {
            Err(BackendError::Failed(msg)) => {
                assert!(msg.contains("sm_80") && msg.contains("undeclared"), "{msg}")
            }
            other => panic!("expected a compile error, got {other:?}"),
        }
    }

    #[test]
    fn shapes_follow_nccl_tests() {
        let s = Shape::new(Op::AllReduce, 1 << 20, 4).unwrap();
        assert_eq!((s.send, s.recv, s.size_bytes), (1 << 18, 1 << 18, 1 << 20));
        let s = Shape::new(Op::AllGather, 1 << 20, 4).unwrap();
        assert_eq!((s.send, s.recv, s.block), (1 << 16, 1 << 18, 1 << 16));
        let s = Shape::new(Op::ReduceScatter, 1 << 20, 4).unwrap();
        assert_eq!((s.send, s.recv, s.block), (1 << 18, 1 << 16, 1 << 16));
        let s = Shape::new(Op::AlltoAll, 1 << 20, 4).unwrap();
        assert_eq!((s.send, s.recv, s.block), (1 << 18, 1 << 18, 1 << 16));
        let s = Shape::new(Op::Broadcast, 6, 4).unwrap();
        assert_eq!((s.send, s.recv, s.size_bytes), (1, 1, 4));
        // Rounded down to whole float32 per rank: 100 bytes, 3 ranks.
        let s = Shape::new(Op::AllGather, 100, 3).unwrap();
        assert_eq!((s.block, s.recv, s.size_bytes), (8, 24, 96));
        assert!(Shape::new(Op::AlltoAll, 12, 4).is_err());
        assert!(Shape::new(Op::AllReduce, 3, 1).is_err());
    }

    #[test]
    fn op_names_round_trip() {
        let ops = parse_ops(&COLLECTIVES).unwrap();
        assert_eq!(ops, Op::ALL);
        assert!(parse_ops(&["AllReduce"]).is_err());
    }
}
