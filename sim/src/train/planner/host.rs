//! Embedding tables in host memory (`placement = "host"`): what the CPU
//! of each GPU's process spends looking rows up and applying gradients,
//! and what crosses the GPU's PCIe link.
//!
//! EmbRace §5.3 had to put the LM's two 1.5 GB tables in host memory on
//! its 8 GB RTX 2080s. How each method then runs is read from the
//! frameworks' code in docs/research/host-tables.md; per GPU, table and
//! iteration, with T rows looked up (a row per token under the token
//! model, the distinct rows under the density model), `d` values a row,
//! N GPUs and `V` rows in the table:
//!
//! * every method but `ps` looks the rows up on the host (T·d elements,
//!   [`HOST_GATHER_S`] each) and copies them to the GPU (T·d values over
//!   the PCIe link) before the next layer's forward pass, and copies the
//!   rows' gradient back to the host (T·d values) after the layer's
//!   backward pass;
//! * `allgather`: Horovod gathers a CPU tensor on the CPU, over MPI or
//!   Gloo rather than NCCL (`GPUAllreduce::Enabled` checks the tensor's
//!   device), and each process adds the N gathered gradients into its
//!   table: N·T·d elements scatter-added ([`HOST_SCATTER_S`] each);
//! * `allreduce`: the table's dense gradient is built on the host (its
//!   V·d values written, [`HOST_STREAM_BPS`]), AllReduced, and applied by
//!   dense SGD (the gradient read, the table read and written);
//! * `alltoall` (EmbRace's column split; its code is not public, so the
//!   host side is inferred): each GPU's process looks up every GPU's rows
//!   in its own columns (N·T rows × ⌈d/N⌉ values), the AlltoAll moves the
//!   results from host memory, the GPU's own rows are copied up; the
//!   gradients are copied down, exchanged, and scatter-added into the
//!   owner's columns (the same count);
//! * `ps`: nothing changes. Parallax's sparse variables always live on its
//!   servers' CPUs (parallax `parse_resource_info` gives the PS tasks no
//!   GPU), so its RTX 2080 runs pay what its RTX 3090 runs do.
//!
//! The gathers and exchanges from host memory are timed as the GPUs'
//! collectives are, on the same NICs and intra-node links: an
//! approximation (an MPI transfer from host memory skips the GPU's PCIe
//! link and crosses the host's memory instead).
//!
//! Each of these is a host task of the node (`Work::Cpu`) standing for
//! every one of its GPUs' processes doing the same work at once, each on
//! a core of its own and a copy on its own PCIe link: the task takes one
//! of the host's `cpu_cores` where the processes take G (EmbRace's hosts
//! have 24 cores for 4 GPUs); a plan with such tables runs its host
//! tasks on the host's `cpu_cores`. The rows go up as the table's fp32
//! values ([`TABLE_VALUE_BYTES`]), their gradients come down in the
//! gradient precision. The CPU figures were measured on other CPUs than
//! EmbRace's Xeon 4214R, the lookup's on one thread, the others' threads
//! not stated; whether PyTorch spreads these operators over threads is
//! not modelled.

use crate::cluster::ClusterSpec;
use crate::train::result::HostTask;

/// CPU seconds per element of a lookup in a host table: 0.72 ns, PyTorch's
/// CPU `EmbeddingBag` forward on one thread (`taskset -c 0`, MKL and OpenMP
/// at one thread), 10,000 runs of 2,000 indices into a 10,000 × 1,000
/// table in 14.371 s (pytorch/pytorch PR #5433, 2018, the code before the
/// PR): 14.371 / (10⁴ × 2,000 × 1,000) s.
pub const HOST_GATHER_S: f64 = 0.72e-9;

/// CPU seconds per element scatter-added into a host table: 2.23 ns,
/// PyTorch's CPU embedding backward (`index_add` into a 100,000 × 1,000
/// table), 400 and 8,000 indices in 7.6628 and 9.3580 s per 100 calls
/// (pytorch/pytorch PR #9078, 2018; threads not stated): (9.3580 −
/// 7.6628) / 100 / (7,600 × 1,000) s = 2.2305 ns.
pub const HOST_SCATTER_S: f64 = 2.23e-9;

/// Bytes per second a host streams through a dense table's gradient or
/// update: 5.2 GB/s, the same measurement's cost at 400 indices, where
/// creating the 400 MB dense gradient dominates: 400 MB / 76.6 ms.
pub const HOST_STREAM_BPS: f64 = 5.2e9;

/// What the host tasks of a table in host memory are called, after the
/// table's layer name: the lookup, the copies each way, the AllReduce's
/// dense gradient, and the updates (whole, or EmbRace's prior and
/// delayed rows). [`tasks`] reports the tasks so named.
pub const LOOKUP: &str = "lookup on host";
/// The looked-up rows' copy to the GPU, where it is a task of its own.
pub const TO_GPU: &str = "rows to GPU";
/// The rows' gradient's copy to the host.
pub const TO_HOST: &str = "gradient to host";
/// The dense gradient built on the host (`allreduce`).
pub const DENSE: &str = "dense gradient on host";
/// The update (`prior update on host`, `delayed update on host` under
/// vertical scheduling).
pub const UPDATE: &str = "update on host";

/// Bytes of a host table's value: 4 (fp32). The looked-up rows cross to
/// the GPU at this size; their gradients cross back in the gradient
/// precision.
pub const TABLE_VALUE_BYTES: u64 = 4;

/// Seconds of one GPU's lookup of `elements` values in a host table
/// followed by the copy of `bytes` of them to the GPU.
pub fn lookup_s(cluster: &ClusterSpec, elements: f64, bytes: f64) -> f64 {
    elements * HOST_GATHER_S + super::sparse::host_copy_s(cluster, bytes)
}

/// Seconds of scatter-adding `elements` gradient values into a host table.
pub fn scatter_s(elements: f64) -> f64 {
    elements * HOST_SCATTER_S
}

/// Seconds of streaming `bytes` through host memory.
pub fn stream_s(bytes: f64) -> f64 {
    bytes / HOST_STREAM_BPS
}

/// The host tasks `plan` runs for `cfg`'s tables in host memory, each
/// with its mean seconds an iteration over the measured iterations, in
/// plan order: the tasks of the tables' layers named as above (none for a
/// sparse PS on several GPUs, whose host tasks are its servers' and
/// workers' whichever the placement).
pub fn tasks(cfg: &crate::train::TrainConfig, plan: &super::super::task::Plan) -> Vec<HostTask> {
    use super::super::task::{Label, Work};

    let on_host = |l: u32| {
        cfg.model.layers[l as usize]
            .embedding
            .as_ref()
            .is_some_and(|e| e.placement == crate::workload::TablePlacement::Host)
    };
    let (w, n) = (cfg.warmup_iterations, cfg.iterations);
    plan.tasks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match (&t.work, &t.label) {
            (Work::Cpu { .. }, Label::Named(name))
                if t.layer.is_some_and(on_host)
                    && [LOOKUP, TO_GPU, TO_HOST, DENSE, UPDATE]
                        .iter()
                        .any(|s| name.ends_with(s)) =>
            {
                Some((i, name))
            }
            _ => None,
        })
        .map(|(i, name)| HostTask {
            task: name.clone(),
            seconds: (w..w + n)
                .map(|it| plan.host_duration(i as u32, it, 0).as_secs())
                .sum::<f64>()
                / n as f64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constants are the sources' arithmetic.
    #[test]
    fn the_constants_are_their_measurements() {
        let gather = 14.371 / (1e4 * 2000.0 * 1000.0);
        assert!((HOST_GATHER_S - gather).abs() / gather < 0.01, "{gather}");
        let scatter = (9.3580 - 7.6628) / 100.0 / (7600.0 * 1000.0);
        assert!(
            (HOST_SCATTER_S - scatter).abs() / scatter < 0.02,
            "{scatter}"
        );
        let stream = 100_000.0 * 1000.0 * 4.0 / (7.6628 / 100.0);
        assert!((HOST_STREAM_BPS - stream).abs() / stream < 0.01, "{stream}");
    }
}
