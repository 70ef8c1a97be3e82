//! `dtsim collective`: the time of one collective on a cluster.

use crate::error::{CliError, print_line};
use clap::Args;
use serde::Serialize;
use sim::cluster::Placement;
use sim::cluster::build::{Description, NodeKeys};

/// The network of `dtsim collective` when neither --network nor --node
/// names one.
const DEFAULT_NETWORK: &str = "ib-edr-100g";
use sim::collective::Op;
use sim::collective::single::{self, Request};
use sim::names::Named;
use sim::net::NetModel;
use sim::units::{Count, HumanBytes, HumanRate, parse_bytes};
use sim::workload::Precision;

/// Arguments of `dtsim collective`.
#[derive(Debug, Clone, Args)]
pub struct CollectiveArgs {
    /// allreduce, allgather, reducescatter, broadcast, alltoall, ps, topk
    /// (Top-k AllGather) or gtopk (gTop-k tree).
    #[arg(long)]
    op: String,
    /// Total GPUs.
    #[arg(long)]
    gpus: u32,
    /// Buffer size in bytes, or with a unit ("64MiB"); nccl-tests' meaning
    /// (allgather: the whole output; alltoall: one GPU's send buffer;
    /// topk, gtopk: the dense gradient that is sparsified). Several sizes:
    /// a comma-separated list ("1KiB,4KiB"), a range doubling from MIN to
    /// MAX ("8:1GiB", as nccl-tests' -b -e -f 2) or with another factor
    /// ("1KiB:1MiB:4"); a line (or JSON object) per size.
    #[arg(long, allow_hyphen_values = true)]
    size: String,
    /// topk, gtopk: the fraction ρ of gradient elements each GPU sends,
    /// in (0, 1]; k = ρ·size/e values of e bytes (4 in fp32, 2 in bf16 or
    /// fp16), each sent with a 4-byte index.
    #[arg(long, allow_negative_numbers = true)]
    density: Option<f64>,
    /// topk, gtopk: the gradient's number format [default: fp32].
    #[arg(long, value_parser = crate::named::<Precision>())]
    precision: Option<Precision>,
    /// Algorithm: allreduce
    /// ring|tree|hierarchical|binomial|nvls|nvls-tree|sharp|recursive-doubling|rabenseifner|segmented-ring|mpich|ompi
    /// (segmented-ring: Open MPI's, with --segment-size);
    /// allgather
    /// ring|recursive-doubling|bruck|neighbor-exchange|mpich|ompi (mpich,
    /// ompi: MPICH's and Open MPI's default selections among them by
    /// size);
    /// broadcast ring|binomial|ompi-binomial|linear|chain|pipeline|binary-tree|split-binary-tree|knomial|scatter-allgather|scatter-allgather-ring|ompi|mpich
    /// (ompi-binomial to scatter-allgather-ring: Open MPI's algorithms,
    /// its trees sending to every child at once; ompi, mpich: Open MPI's
    /// and MPICH's default selections among them by size); alltoall pairwise|linear|linear-sync|scattered|bruck|mpich|mpich-nb|ompi
    /// (Open MPI's linear exchanges, basic and with a request limit, and
    /// modified Bruck; MPICH's scattered exchange, linear in batches of
    /// 32; mpich, ompi: MPICH's and Open MPI's default selections among
    /// them; mpich-nb: MPICH's with ALLTOALL_INTRA_ALGORITHM=nb, Bruck's
    /// to 2 KiB a block);
    /// ps
    /// overlapped|sequential; topk recursive-doubling|ring; gtopk tree.
    #[arg(long)]
    algo: Option<String>,
    /// Broadcast down one of Open MPI's trees (ompi-binomial, chain,
    /// pipeline, binary-tree, knomial, split-binary-tree): its segment
    /// size (coll_tuned_bcast_algorithm_segmentsize, "64KiB"); each
    /// segment goes down the tree behind the last (the split tree's
    /// halves so, and where a segment is larger than a half Open MPI's
    /// pipeline instead) [default: unsegmented]. Allreduce by
    /// segmented-ring: its segment size
    /// (coll_tuned_allreduce_algorithm_segmentsize), each GPU's block cut
    /// into segments reduced ring by ring [default: the plain ring].
    #[arg(long, allow_hyphen_values = true)]
    segment_size: Option<String>,
    /// Broadcast by chain: the number of chains
    /// (coll_tuned_bcast_algorithm_chain_fanout; Open MPI uses at most 32
    /// and one fewer than the GPUs); by knomial, or by ompi where it picks
    /// the k-nomial tree: the tree's radix, at least 2
    /// (coll_tuned_bcast_algorithm_knomial_radix) [default: 4, Open MPI's].
    /// Alltoall by scattered, or by mpich or mpich-nb where they run it: the
    /// destinations a batch (MPIR_CVAR_ALLTOALL_THROTTLE; the GPUs or
    /// more: all at once) [default: 32, MPICH's]. Alltoall by
    /// linear-sync, or by ompi where it picks it: the sends, and the
    /// receives, a GPU keeps outstanding
    /// (coll_tuned_alltoall_algorithm_max_requests; 0, or the GPUs less
    /// one or more: all at once) [default: 0, Open MPI's].
    #[arg(long)]
    fanout: Option<u32>,
    /// A node preset (dgx-a100, dgx-h100, ...): GPUs and NICs per node,
    /// network, intra-node link and NIC link as that machine is built;
    /// each flag given overrides its part.
    #[arg(long)]
    node: Option<String>,
    /// GPUs per node (must divide --gpus) [default: 1, or the node's].
    #[arg(long)]
    gpus_per_node: Option<u32>,
    /// Inter-node network preset or calibration profile [default:
    /// ib-edr-100g, or the node's].
    #[arg(long)]
    network: Option<String>,
    /// Intra-node link preset or calibration profile [default: pcie3-x16,
    /// or the node's].
    #[arg(long)]
    intra: Option<String>,
    /// Per-NIC bandwidth, overriding the preset ("100Gbps", "12.5GB/s").
    #[arg(long, allow_hyphen_values = true)]
    bandwidth: Option<String>,
    /// Inter-node latency, overriding the preset ("1.5us").
    #[arg(long, allow_hyphen_values = true)]
    latency: Option<String>,
    /// NICs per node [default: 1, or the node's].
    #[arg(long)]
    nics_per_node: Option<u32>,
    /// The GPU's PCIe link to its NICs, on NVLink nodes (a PCIe preset)
    /// [default: the PCIe generation of the network's NICs].
    #[arg(long)]
    nic_link: Option<String>,
    /// GPUs under each shared PCIe switch, whose uplink to the CPU carries
    /// their host traffic; 0 for none [default: none, or the node's].
    #[arg(long)]
    gpus_per_pcie_switch: Option<u32>,
    /// The shared PCIe switches' uplink (a PCIe preset) [default: the
    /// GPU's own PCIe link, or the node's].
    #[arg(long)]
    pcie_uplink: Option<String>,
    /// GPUDirect RDMA: NICs read and write GPU memory (true) or transfers
    /// are staged through host memory (false) [default: true on RDMA
    /// networks, false on TCP ones; refused with a calibration profile's
    /// network, measured end to end].
    #[arg(long)]
    gpudirect: Option<bool>,
    /// Core oversubscription ratio (1 = non-blocking).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    oversubscription: f64,
    /// Rank placement.
    #[arg(long, default_value = Named::name(Placement::default()), value_parser = crate::named::<Placement>())]
    placement: Placement,
    /// Network model.
    #[arg(long, default_value = Named::name(NetModel::default()), value_parser = crate::named::<NetModel>())]
    model: NetModel,
    /// ps: servers (0 = one per node) [default: 0].
    #[arg(long)]
    servers: Option<u32>,
    /// ps: machines dedicated to the servers, each with one NIC of the
    /// network (0 = the servers run on the GPU machines) [default: 0].
    #[arg(long)]
    ps_machines: Option<u32>,
    /// ps: aggregate the GPUs of a node before pushing.
    #[arg(long)]
    local_aggregation: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    op: &'static str,
    algo: &'static str,
    model: &'static str,
    gpus: u32,
    size_bytes: u64,
    time_s: f64,
    #[serde(rename = "algbw_GBps")]
    algbw_gbps: f64,
    #[serde(rename = "busbw_GBps")]
    busbw_gbps: f64,
    nodes: u32,
    gpus_per_node: u32,
    network: &'a str,
    bytes_sent_per_gpu: f64,
    /// topk, gtopk: the density, k and each GPU's payload (values and
    /// indices), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    density: Option<f64>,
    /// A selection (`mpich`, `ompi`): the algorithm it runs at this size;
    /// the split binary tree in segments over a half: Open MPI's pipeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    precision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    k: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_bytes: Option<u64>,
    /// broadcast down Open MPI's trees: the segment size asked for, and the
    /// segments the buffer is cut into; allreduce by segmented-ring: the
    /// segment size, and the segments each GPU's block is cut into (its
    /// phases; 1 where it runs the plain ring).
    #[serde(skip_serializing_if = "Option::is_none")]
    segment_size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    segments: Option<u64>,
    /// broadcast by chain: the chains asked for; by knomial or ompi: the
    /// k-nomial radix.
    #[serde(skip_serializing_if = "Option::is_none")]
    fanout: Option<u32>,
    /// ps: the machines dedicated to the servers, where there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    ps_machines: Option<u32>,
}

/// The most sizes one call takes.
const MAX_SIZES: usize = 4096;

/// The sizes `--size` names: a list of sizes or ranges ([`CollectiveArgs`]).
fn sizes(text: &str) -> Result<Vec<u64>, CliError> {
    let bad = |m: String| CliError::Input(format!("--size: {m}"));
    let one = |t: &str| parse_bytes(t.trim()).map_err(|e| bad(e.to_string()));
    let mut out = Vec::new();
    for part in text.split(',') {
        let fields: Vec<&str> = part.split(':').collect();
        match fields[..] {
            [s] => out.push(one(s)?),
            [lo, hi] | [lo, hi, _] => {
                let (lo, hi) = (one(lo)?, one(hi)?);
                let factor: u64 = match fields.get(2) {
                    Some(f) => f.trim().parse().ok().filter(|f| *f >= 2).ok_or_else(|| {
                        bad(format!(
                            "the factor of `{part}` must be a whole number of 2 or more"
                        ))
                    })?,
                    None => 2,
                };
                if lo == 0 || lo > hi {
                    return Err(bad(format!(
                        "the range `{part}` must go from a positive size up to a larger one"
                    )));
                }
                let mut s = lo;
                while s <= hi && out.len() <= MAX_SIZES {
                    out.push(s);
                    s = match s.checked_mul(factor) {
                        Some(n) => n,
                        None => break,
                    };
                }
            }
            _ => {
                return Err(bad(format!(
                    "`{part}` is neither a size nor MIN:MAX[:FACTOR]"
                )));
            }
        }
        if out.len() > MAX_SIZES {
            return Err(bad(format!("more than {MAX_SIZES} sizes")));
        }
    }
    Ok(out)
}

pub fn run(a: CollectiveArgs) -> Result<(), CliError> {
    for size in sizes(&a.size)? {
        one(&a, size)?;
    }
    Ok(())
}

/// One size of [`run`].
fn one(a: &CollectiveArgs, size: u64) -> Result<(), CliError> {
    let a = a.clone();
    let segment_size = a
        .segment_size
        .as_deref()
        .map(|t| parse_bytes(t.trim()))
        .transpose()
        .map_err(|e| CliError::Input(format!("--segment-size: {e}")))?;
    let req = Request {
        op: a.op,
        algo: a.algo,
        size,
        density: a.density,
        precision: a.precision,
        servers: a.servers,
        ps_machines: a.ps_machines,
        local_aggregation: a.local_aggregation,
        segment_size,
        fanout: a.fanout,
        gpus: a.gpus,
        cluster: Description {
            bandwidth: a.bandwidth,
            latency: a.latency,
            gpudirect: a.gpudirect,
            oversubscription: a.oversubscription,
            placement: a.placement,
            ..Description::from_keys(
                0,
                NodeKeys {
                    network: a
                        .network
                        .or_else(|| a.node.is_none().then(|| DEFAULT_NETWORK.to_string())),
                    node: a.node,
                    gpus_per_node: a.gpus_per_node,
                    nics_per_node: a.nics_per_node,
                    intra: a.intra,
                    nic_link: a.nic_link,
                    gpus_per_pcie_switch: a.gpus_per_pcie_switch,
                    pcie_uplink: a.pcie_uplink,
                },
            )
            .map_err(|e| CliError::Input(format!("{}: {}", e.field.flag(), e.message)))?
        },
        model: a.model,
    };
    let t = single::time(&req)
        .map_err(|e| CliError::Input(format!("--{}: {}", e.field.replace('_', "-"), e.message)))?;
    let c = &t.cluster;
    // the collective timed, with its segment size and fanout (Open MPI's
    // decision picks by the request limit too)
    let coll = sim::collective::Collective::new(t.op)
        .with_algo(t.algo)
        .map(|k| sim::collective::Collective {
            segment: req.segment_size.unwrap_or(0),
            fanout: req.fanout.unwrap_or(0),
            ..k
        });
    // the segments the buffer goes in (the split tree's halves each so)
    let segments = req
        .segment_size
        .map(|_| coll.map_or(1, |k| k.segments(c.gpus(), size)));
    let out = Output {
        op: t.op.name(),
        algo: t.algo.name(),
        model: req.model.name(),
        gpus: c.gpus(),
        size_bytes: size,
        time_s: t.time_s,
        algbw_gbps: t.algbw_gbps,
        busbw_gbps: t.busbw_gbps,
        nodes: c.nodes,
        gpus_per_node: c.gpus_per_node,
        network: &c.network,
        bytes_sent_per_gpu: t.bytes_sent_per_gpu,
        density: t.sparse.map(|s| s.density),
        runs: match coll {
            // Open MPI's split binary tree runs its pipeline where a
            // segment is larger than a half
            Some(k) if k.split_runs_pipeline(size as f64) => {
                Some(sim::collective::Algo::Pipeline.name())
            }
            _ => coll
                .map(|k| k.selected(c.gpus(), size as f64))
                .filter(|&r| r != t.algo)
                .map(|r| r.name()),
        },
        precision: t.sparse.map(|s| s.precision.name()),
        k: t.sparse.map(|s| s.k),
        payload_bytes: t.sparse.map(|s| s.payload_bytes),
        segment_size_bytes: req.segment_size,
        segments,
        fanout: req.fanout,
        ps_machines: (c.ps_machines > 0).then_some(c.ps_machines),
    };
    if a.json {
        let line = serde_json::to_string(&out).map_err(|e| CliError::Other(e.to_string()))?;
        return print_line(line);
    }
    let what = match t.sparse {
        Some(s) => format!(
            "{} of {} at density {} (k = {}, {} per GPU)",
            HumanBytes(size as f64),
            s.precision.name(),
            s.density,
            s.k,
            HumanBytes(s.payload_bytes as f64)
        ),
        None => match (req.segment_size, segments) {
            // where it runs the plain ring, the buffer alone
            (Some(_), Some(_)) if t.op == Op::AllReduce && out.runs.is_some() => {
                HumanBytes(size as f64).to_string()
            }
            (Some(_), Some(n)) if t.op == Op::AllReduce => format!(
                "{}, each GPU's block in {} of {}",
                HumanBytes(size as f64),
                Count(n, "segment"),
                HumanBytes(size as f64 / c.gpus() as f64 / n as f64)
            ),
            (Some(seg), Some(n)) => format!(
                "{} in {} of {}",
                HumanBytes(size as f64),
                Count(n, "segment"),
                HumanBytes(seg as f64)
            ),
            _ => HumanBytes(size as f64).to_string(),
        },
    };
    print_line(format_args!(
        "{} ({}, {} model) of {what} on {} ({} x {}, {}{}): {:.6} ms, algbw {}, busbw {}, {} sent per GPU",
        out.op,
        {
            let runs = match out.runs {
                Some(r) => format!("{}: {r}", out.algo),
                None => out.algo.to_string(),
            };
            // the fanout where the tree run takes it
            match (req.fanout, out.runs.unwrap_or(out.algo)) {
                (Some(f), "chain") => {
                    let made = sim::collective::bcast::chains(c.gpus(), f);
                    if made == 0 {
                        // one GPU: nothing to send
                        runs
                    } else if made == f {
                        format!("{runs} of {}", Count(f as u64, "chain"))
                    } else {
                        // Open MPI's builder caps them
                        format!(
                            "{runs} of {} ({f} asked: at most 32, and one fewer than the GPUs)",
                            Count(made as u64, "chain")
                        )
                    }
                }
                (Some(k), "knomial") => format!("{runs} of radix {k}"),
                (Some(b), "scattered") => format!("{runs} in batches of {b}"),
                // one GPU: nothing to send
                (Some(_), "linear-sync") if out.gpus < 2 => runs,
                (Some(0), "linear-sync") => format!("{runs} without a request limit"),
                // Open MPI posts them all where the limit is the others or more
                (Some(k), "linear-sync") if coll.is_some_and(|c| c.requests(out.gpus) == 0) => {
                    format!(
                        "{runs} of {} outstanding (all at once)",
                        Count(k as u64, "request")
                    )
                }
                (Some(k), "linear-sync") => {
                    format!("{runs} of {} outstanding", Count(k as u64, "request"))
                }
                _ => runs,
            }
        },
        out.model,
        Count(out.gpus as u64, "GPU"),
        Count(c.nodes as u64, "node"),
        c.gpus_per_node,
        out.network,
        match c.ps_machines {
            0 => String::new(),
            m => format!(", servers on {}", Count(m as u64, "dedicated machine")),
        },
        t.time_s * 1e3 + 0.0,
        HumanRate(out.algbw_gbps * 1e9),
        HumanRate(out.busbw_gbps * 1e9),
        HumanBytes(t.bytes_sent_per_gpu)
    ))
}
