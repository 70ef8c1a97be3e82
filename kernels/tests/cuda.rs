//! The CUDA backend's error paths, as CI sees them, and a smoke test for a
//! machine with a GPU.
//!
//! CI has no GPU and no NVIDIA driver. There, with the `cuda` feature,
//! every entry point must return [`BackendError::Unavailable`] with a
//! message that names the driver, and must not panic (cudarc panics when a
//! library is missing, so this checks that `kernels::cuda` looks before it
//! calls). Without the feature, every entry point must return
//! [`BackendError::NotEnabled`]. Argument errors are reported the same way
//! with or without a GPU.
//!
//! `gpu_smoke` runs the real kernels and collectives only where a driver is
//! present. It ran, and passed, on an H200 on 2026-11-26 (with one GPU,
//! NCCL's collectives are one-rank copies); never on several GPUs. Its
//! 1 Mi + 4097 size, added after that run, has not run on a GPU.

use kernels::BackendError;
use kernels::cuda;

#[cfg(feature = "cuda")]
mod with_feature {
    use super::*;

    /// Whether this machine has the NVIDIA driver library.
    fn has_driver() -> bool {
        // SAFETY: only tries to open libcuda and closes it again.
        unsafe { cudarc::driver::sys::is_culib_present() }
    }

    /// Asserts the no-driver error: `Unavailable`, naming the driver and
    /// the CPU fallback.
    fn assert_no_driver<T: std::fmt::Debug>(what: &str, result: Result<T, BackendError>) {
        match result {
            Err(BackendError::Unavailable(msg)) => {
                assert!(msg.contains("NVIDIA driver"), "{what}: {msg}");
                assert!(msg.contains("--backend cpu"), "{what}: {msg}");
                assert_eq!(
                    msg,
                    "no CUDA driver found; run with --backend cpu, or install the NVIDIA driver"
                );
            }
            other => panic!("{what}: expected Unavailable (no driver), got {other:?}"),
        }
    }

    #[test]
    fn without_a_driver_every_entry_point_is_unavailable() {
        if has_driver() {
            eprintln!("skipped: this machine has a CUDA driver (see gpu_smoke)");
            return;
        }
        assert_no_driver("devices", cuda::devices());
        assert_no_driver("time_kernels", cuda::time_kernels(&[1000], &[0.01, 1.0], 3));
        assert_no_driver("memory_bandwidth", cuda::memory_bandwidth());
        assert_no_driver(
            "time_collectives",
            cuda::time_collectives(&cuda::COLLECTIVES, &[1 << 20], 3),
        );
        // Asking twice gives the same answer (nothing half-initialised).
        assert_no_driver("devices again", cuda::devices());
    }

    #[test]
    fn bad_arguments_are_errors_not_panics() {
        let failed =
            |r: Result<Vec<kernels::timing::KernelTiming>, BackendError>, says: &str| match r {
                Err(BackendError::Failed(msg)) => assert!(msg.contains(says), "{msg}"),
                other => panic!("expected Failed({says:?}), got {other:?}"),
            };
        failed(cuda::time_kernels(&[0], &[0.5], 3), "size");
        failed(cuda::time_kernels(&[1 << 33], &[0.5], 3), "size");
        failed(cuda::time_kernels(&[100], &[0.0], 3), "density");
        failed(cuda::time_kernels(&[100], &[1.5], 3), "density");
        failed(cuda::time_kernels(&[100], &[f64::NAN], 3), "density");
        failed(cuda::time_kernels(&[100], &[1e-300], 3), "density");
        failed(cuda::time_kernels(&[100], &[0.5], 0), "repeat");
        match cuda::time_collectives(&["allreduce", "all_sum"], &[1024], 3) {
            Err(BackendError::Failed(msg)) => {
                assert!(
                    msg.contains("all_sum") && msg.contains("reducescatter"),
                    "{msg}"
                )
            }
            other => panic!("expected Failed, got {other:?}"),
        }
        assert!(matches!(
            cuda::time_collectives(&["allreduce"], &[1024], 0),
            Err(BackendError::Failed(_))
        ));
    }

    /// Runs everything on a machine with a GPU (first on an H200 on
    /// 2026-11-26: docs/calibration.md); a missing NVRTC or NCCL is
    /// accepted as `Unavailable`.
    #[test]
    fn gpu_smoke() {
        if !has_driver() {
            eprintln!("skipped: no CUDA driver on this machine");
            return;
        }
        let devices = cuda::devices().expect("devices() with a driver present");
        if devices.is_empty() {
            eprintln!("skipped: the driver sees no device");
            return;
        }
        // 1 Mi + 4097: 257 tiles, 65,792 radix counts, over four spans
        // of the multi-block scan, the last one partly filled
        let sizes = [1, 2, 4095, 4096, 4097, 100_003, 1_052_673];
        let densities = [0.001, 0.1, 1.0];
        match cuda::time_kernels(&sizes, &densities, 3) {
            Ok(rows) => {
                // per size: the copy, then per density topk,
                // threshold_select, mask, threshold_radix_sort and merge
                const PER_DENSITY: [&str; 5] = [
                    "topk",
                    "threshold_select",
                    "mask",
                    "threshold_radix_sort",
                    "merge",
                ];
                assert_eq!(
                    rows.len(),
                    sizes.len() * (1 + PER_DENSITY.len() * densities.len())
                );
                for row in &rows {
                    assert!(
                        row.kernel == "membw" || PER_DENSITY.contains(&row.kernel),
                        "{row:?}"
                    );
                }
                for row in &rows {
                    assert!(row.timing.median_s > 0.0, "{row:?}");
                }
            }
            Err(BackendError::Unavailable(msg)) => eprintln!("kernels unavailable: {msg}"),
            Err(e) => panic!("time_kernels on a GPU: {e}"),
        }
        match cuda::memory_bandwidth() {
            Ok(bw) => {
                eprintln!("device 0 copy bandwidth: {:.0} GB/s", bw / 1e9);
                assert!(bw > 1e9, "{bw} B/s");
            }
            Err(BackendError::Unavailable(msg)) => eprintln!("bandwidth unavailable: {msg}"),
            Err(e) => panic!("memory_bandwidth on a GPU: {e}"),
        }
        let n = devices.len() as u64;
        let sizes = [4 * n, 4096 * n, 1 << 22];
        match cuda::time_collectives(&cuda::COLLECTIVES, &sizes, 3) {
            Ok(rows) => {
                assert_eq!(rows.len(), cuda::COLLECTIVES.len() * sizes.len());
                for row in &rows {
                    assert_eq!(row.ranks as u64, n);
                    assert!(row.time_s > 0.0, "{row:?}");
                }
            }
            Err(BackendError::Unavailable(msg)) => eprintln!("collectives unavailable: {msg}"),
            Err(e) => panic!("time_collectives on a GPU: {e}"),
        }
    }
}

#[cfg(not(feature = "cuda"))]
mod without_feature {
    use super::*;

    /// Asserts `NotEnabled { feature: "cuda" }` and its message.
    fn assert_not_enabled<T: std::fmt::Debug>(what: &str, result: Result<T, BackendError>) {
        match result {
            Err(e @ BackendError::NotEnabled { feature: "cuda" }) => {
                let msg = e.to_string();
                assert!(msg.contains("not enabled in this build"), "{what}: {msg}");
                assert!(msg.contains("--features cuda"), "{what}: {msg}");
            }
            other => panic!("{what}: expected NotEnabled, got {other:?}"),
        }
    }

    #[test]
    fn every_entry_point_says_not_enabled() {
        assert_not_enabled("devices", cuda::devices());
        assert_not_enabled("time_kernels", cuda::time_kernels(&[1000], &[0.01], 3));
        assert_not_enabled("memory_bandwidth", cuda::memory_bandwidth());
        assert_not_enabled(
            "time_collectives",
            cuda::time_collectives(&cuda::COLLECTIVES, &[1 << 20], 3),
        );
    }
}
