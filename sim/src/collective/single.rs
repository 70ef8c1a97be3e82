//! One collective on one cluster, as `dtsim collective` asks for it: the
//! operation and algorithm by name, the buffer, the density of a sparse
//! operation, the cluster as users describe it ([`Description`]). [`time`]
//! checks the request, builds the cluster, decides what the collective
//! moves (the Top-k payload rule below) and runs the chosen network model.
//!
//! Sizes have nccl-tests' meaning: AllGather's is the whole output,
//! AlltoAll's one GPU's send buffer; for `topk` and `gtopk` it is the dense
//! gradient that is sparsified, of which each GPU sends k = ρ·size/e
//! values, each with a 4-byte index (gTop-k §III: messages of 2k elements),
//! e being the bytes of one element in the gradient's precision (4 for
//! fp32, the default; 2 for bf16 and fp16).

use super::exec::run_flow;
use super::{Algo, Collective, Op};
use crate::cluster::ClusterSpec;
use crate::cluster::build::Description;
use crate::limits;
use crate::names::Named;
use crate::net::NetModel;
use crate::workload::Precision;

/// Bytes of a selected element's index on the wire, in every precision.
pub const INDEX_BYTES: u64 = 4;

/// What to time.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The operation's name ([`Op::ALL`]).
    pub op: String,
    /// An algorithm of the operation by name; its first if `None`.
    pub algo: Option<String>,
    /// Buffer bytes (at most [`limits::MAX_BYTES`]).
    pub size: u64,
    /// `topk`, `gtopk`: the fraction ρ of elements each GPU sends, in (0, 1].
    pub density: Option<f64>,
    /// `topk`, `gtopk`: the gradient's number format (fp32 if `None`).
    pub precision: Option<Precision>,
    /// PS servers (0 = one per node; `None`: not given, one per node).
    /// Refused for every other operation.
    pub servers: Option<u32>,
    /// PS: machines dedicated to the servers (`None` or 0: the servers
    /// run on the GPU machines).
    pub ps_machines: Option<u32>,
    /// PS: aggregate a node's GPUs before pushing (refused for every
    /// other operation).
    pub local_aggregation: bool,
    /// Broadcast by `ompi-binomial`: Open MPI's segment size in bytes
    /// (`None`: unsegmented, its default when the algorithm is forced).
    pub segment_size: Option<u64>,
    /// Broadcast by `chain`: Open MPI's number of chains; by `knomial` or
    /// `ompi`: its k-nomial tree's radix (`None`: its default, 4;
    /// [`Collective::fanout`]).
    pub fanout: Option<u32>,
    /// The cluster; its node count is `gpus / gpus_per_node`.
    pub gpus: u32,
    /// The cluster but for its node count (`nodes` is ignored).
    pub cluster: Description,
    /// The network model.
    pub model: NetModel,
}

/// A request's field, as errors name it; the command line's flag is
/// `--` and the name with `-` for `_`.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The field ("op", "density", "gpus_per_node", …).
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// The GPUs a node of the description's node preset has, if it names one.
fn presets_gpn(d: &crate::cluster::build::Description) -> Option<u32> {
    d.node
        .as_deref()
        .and_then(crate::cluster::presets::node)
        .map(|p| p.gpus_per_node)
}

fn invalid(field: &'static str, message: impl Into<String>) -> Invalid {
    Invalid {
        field,
        message: message.into(),
    }
}

/// The timing of one collective.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// The operation.
    pub op: Op,
    /// The algorithm.
    pub algo: Algo,
    /// The cluster it ran on.
    pub cluster: ClusterSpec,
    /// Seconds.
    pub time_s: f64,
    /// Bytes each GPU sent (all participants' bytes over the GPUs).
    pub bytes_sent_per_gpu: f64,
    /// The buffer over the time, GB/s (for the sparse operations, the rate
    /// at which the dense gradient is synchronised); 0 for a zero time.
    pub algbw_gbps: f64,
    /// What the operation moves over the time, times nccl-tests' factor
    /// ([`Op::busbw_factor`]), GB/s.
    pub busbw_gbps: f64,
    /// `topk`, `gtopk`: the density, k and each GPU's payload (values and
    /// indices), bytes.
    pub sparse: Option<Sparse>,
}

/// What a sparse operation sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sparse {
    /// ρ, the fraction of elements sent.
    pub density: f64,
    /// The values' format.
    pub precision: Precision,
    /// Elements sent per GPU: round(ρ · size / e), at least 1, e the bytes
    /// of an element.
    pub k: u64,
    /// Bytes sent per GPU: k · (e + 4).
    pub payload_bytes: u64,
}

/// The most level-steps `dtsim collective` lets a segmented broadcast's
/// windows take to price (its depth times the lesser of its segments and
/// its depth), and the most messages it lets the segmented ring send in
/// the flow model (its segments times the GPUs): 2^25, seconds at most.
const MAX_SEGMENTED_WORK: u64 = 1 << 25;

/// The payload of a sparse operation on a dense buffer of `size` bytes of
/// `precision` elements at density `density`; `None` when the buffer
/// holds no element.
pub fn sparse_payload(size: u64, density: f64, precision: Precision) -> Option<Sparse> {
    let elements = size / precision.bytes();
    if elements == 0 {
        return None;
    }
    let k = crate::train::planner::compressed::selected(elements, density);
    Some(Sparse {
        density,
        precision,
        k,
        payload_bytes: sparse_bytes(k, precision),
    })
}

/// Bytes of k selected elements on the wire: k values in `precision` and
/// k 4-byte indices (Top-k's, gTop-k's and DCT's encoding).
pub fn sparse_bytes(k: u64, precision: Precision) -> u64 {
    k * (precision.bytes() + INDEX_BYTES)
}

/// Checks the request and times the collective.
pub fn time(req: &Request) -> Result<Timing, Invalid> {
    let op = Op::parse(&req.op).map_err(|m| invalid("op", m))?;
    match (op.is_sparse(), req.density) {
        (true, None) => {
            return Err(invalid(
                "density",
                format!(
                    "required for {} (the fraction of gradient elements each GPU sends, e.g. 0.001)",
                    op.name()
                ),
            ));
        }
        (true, Some(d)) if !(d > 0.0 && d <= 1.0) => {
            return Err(invalid("density", format!("{d} is not in (0, 1]")));
        }
        (false, Some(_)) => {
            return Err(invalid(
                "density",
                format!("applies to topk and gtopk, not to {}", op.name()),
            ));
        }
        _ => {}
    }
    if let (false, Some(p)) = (op.is_sparse(), req.precision) {
        return Err(invalid(
            "precision",
            format!(
                "applies to topk and gtopk, whose size is counted in gradient elements; {} moves --size bytes whatever their format (give {} in bytes)",
                op.name(),
                p.name()
            ),
        ));
    }
    let precision = req.precision.unwrap_or_default();
    let mut coll = Collective::new(op);
    if let Some(name) = &req.algo {
        coll = Algo::from_name(name)
            .and_then(|a| coll.with_algo(a))
            .ok_or_else(|| {
                let known: Vec<_> = op.algorithms().iter().map(|x| x.name()).collect();
                invalid(
                    "algo",
                    format!(
                        "`{name}` is not an algorithm of {}; expected one of {}",
                        op.name(),
                        known.join(", ")
                    ),
                )
            })?;
    }
    if op != Op::Ps {
        if req.servers.is_some() {
            return Err(invalid(
                "servers",
                format!("applies to ps, not to {}", op.name()),
            ));
        }
        if req.ps_machines.is_some() {
            return Err(invalid(
                "ps_machines",
                format!("applies to ps, not to {}", op.name()),
            ));
        }
        if req.local_aggregation {
            return Err(invalid(
                "local_aggregation",
                format!("applies to ps, not to {}", op.name()),
            ));
        }
    }
    coll.ps_servers = req.servers.unwrap_or(0);
    coll.local_aggregation = req.local_aggregation;
    if let Some(seg) = req.segment_size {
        if !coll.algo.takes_segments(op) {
            return Err(invalid(
                "segment_size",
                format!(
                    "applies to broadcast down Open MPI's trees (ompi-binomial, chain, pipeline, binary-tree, knomial, split-binary-tree) and to allreduce by its segmented-ring, not to {} by {}",
                    op.name(),
                    coll.algo.name()
                ),
            ));
        }
        if seg == 0 {
            return Err(invalid(
                "segment_size",
                "must be at least 1 byte (leave it out for no segments)",
            ));
        }
        if op == Op::AllReduce && seg < 4 {
            return Err(invalid(
                "segment_size",
                "the segmented ring's segment must hold one 4-byte element at least (Open MPI runs the plain ring on less)",
            ));
        }
        let segments = req.size.div_ceil(seg);
        if segments > limits::MAX_PIECES_PER_TENSOR {
            return Err(invalid(
                "segment_size",
                format!(
                    "{seg} bytes cuts {} bytes into {segments} segments; at most {}",
                    req.size,
                    limits::MAX_PIECES_PER_TENSOR
                ),
            ));
        }
        coll.segment = seg;
    }
    if let Some(f) = req.fanout {
        if !coll.algo.takes_fanout(op) {
            return Err(invalid(
                "fanout",
                format!(
                    "applies to {}, not to {} by {}",
                    Algo::FANOUT_USES,
                    op.name(),
                    coll.algo.name()
                ),
            ));
        }
        if let Some(why) = coll.algo.fanout_error(op, f) {
            return Err(invalid("fanout", why));
        }
        coll.fanout = f;
    }
    if req.gpus == 0 {
        return Err(invalid("gpus", "must be at least 1"));
    }
    if req.gpus as u64 > limits::MAX_GPUS {
        return Err(invalid(
            "gpus",
            format!("at most {} GPUs", limits::MAX_GPUS),
        ));
    }
    // a segmented broadcast's windows of levels, priced level-step by
    // level-step: a deep tree in many segments would take hours
    if let (Some(seg), Some(tree)) = (req.segment_size, coll.bcast_tree(coll.algo)) {
        let depth = tree.height(req.gpus) as u64;
        let segments = req.size.div_ceil(seg);
        let work = depth.saturating_mul(segments.min(depth));
        if work > MAX_SEGMENTED_WORK {
            return Err(invalid(
                "segment_size",
                format!(
                    "{} over {} GPUs is {depth} levels deep, and {segments} segments of it take {work} level-steps to price; at most {MAX_SEGMENTED_WORK} (larger segments, or fewer GPUs)",
                    coll.algo.name(),
                    req.gpus
                ),
            ));
        }
    }
    // the segmented ring in the flow model: about a send per segment of
    // the buffer per GPU
    if let (Some(seg), Algo::SegmentedRing, NetModel::Flow) =
        (req.segment_size, coll.algo, req.model)
    {
        let work = req.size.div_ceil(seg).saturating_mul(req.gpus as u64);
        if work > MAX_SEGMENTED_WORK {
            return Err(invalid(
                "segment_size",
                format!(
                    "the segmented ring over {} GPUs in segments of {seg} bytes sends about {work} messages in the flow model; at most {MAX_SEGMENTED_WORK} (larger segments, fewer GPUs, or --model analytical)",
                    req.gpus
                ),
            ));
        }
    }
    let gpn = req.cluster.gpus_per_node;
    if gpn == 0 || !req.gpus.is_multiple_of(gpn) {
        // a node preset's count, where none was given (a review: the
        // message named a flag the user never gave)
        let whose = match (&req.cluster.node, presets_gpn(&req.cluster)) {
            (Some(n), Some(p)) if p == gpn => format!(" (node `{n}`'s GPUs a node)"),
            _ => String::new(),
        };
        return Err(invalid(
            "gpus_per_node",
            format!("{gpn}{whose} must be ≥ 1 and divide the {} GPUs", req.gpus),
        ));
    }
    if req.size > limits::MAX_BYTES {
        return Err(invalid(
            "size",
            format!("at most {} bytes", limits::MAX_BYTES),
        ));
    }
    let machines = req.ps_machines.unwrap_or(0);
    if machines > limits::MAX_PS_MACHINES {
        return Err(invalid(
            "ps_machines",
            format!("at most {}, got {machines}", limits::MAX_PS_MACHINES),
        ));
    }
    let cluster = Description {
        nodes: req.gpus / gpn,
        ps_machines: machines,
        ..req.cluster.clone()
    }
    .build()
    .map_err(|e| invalid(e.field.key(), e.message))?;
    if let Some(why) = coll.hardware_refusal(&cluster) {
        return Err(invalid("algo", why));
    }
    // (the servers other operations have are none)
    let servers = if op == Op::Ps {
        coll.servers(&cluster)
    } else {
        0
    };
    limits::check_ps(cluster.nodes, machines, servers).map_err(|(bound, m)| {
        let field = match bound {
            limits::PsBound::Machines => "ps_machines",
            limits::PsBound::Servers => "servers",
        };
        invalid(field, m)
    })?;
    let sparse = match req.density {
        Some(d) => Some(sparse_payload(req.size, d, precision).ok_or_else(|| {
            invalid(
                "size",
                format!(
                    "{} bytes hold no {} element; {} needs at least {}",
                    req.size,
                    precision.name(),
                    op.name(),
                    precision.bytes()
                ),
            )
        })?),
        None => None,
    };
    let moved = sparse.map_or(req.size, |s| s.payload_bytes) as f64;
    let (time_s, sent) = match req.model {
        NetModel::Analytical => {
            let m = coll.analytical(&cluster);
            (m.time(moved), m.bytes_sent_per_gpu(moved))
        }
        NetModel::Flow => {
            let o = run_flow(&coll, &cluster, moved).map_err(|e| invalid("size", e.to_string()))?;
            (o.time.as_secs(), o.bytes_sent_per_gpu(cluster.gpus()))
        }
    };
    let per_s = |bytes: f64| {
        if time_s > 0.0 {
            bytes / time_s / 1e9
        } else {
            0.0
        }
    };
    Ok(Timing {
        op,
        algo: coll.algo,
        time_s,
        bytes_sent_per_gpu: sent,
        algbw_gbps: per_s(req.size as f64),
        busbw_gbps: per_s(moved) * op.busbw_factor(req.gpus),
        sparse,
        cluster,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(op: &str) -> Request {
        Request {
            op: op.into(),
            algo: None,
            size: 1 << 20,
            density: None,
            precision: None,
            servers: None,
            ps_machines: None,
            local_aggregation: false,
            segment_size: None,
            fanout: None,
            gpus: 8,
            cluster: Description::new(0, 4, "ib-edr-100g"),
            model: NetModel::Analytical,
        }
    }

    /// The Top-k rule: k = round(ρ·m/e), at least 1, e + 4 bytes each.
    #[test]
    fn sparse_payload_is_values_and_indices() {
        let s = sparse_payload(4000, 0.01, Precision::Fp32).unwrap();
        assert_eq!((s.k, s.payload_bytes), (10, 80));
        assert_eq!(sparse_payload(4000, 1e-9, Precision::Fp32).unwrap().k, 1);
        assert!(sparse_payload(3, 0.5, Precision::Fp32).is_none());
        // 16-bit values: twice the elements in the buffer, each 2 + 4 bytes
        let h = sparse_payload(4000, 0.01, Precision::Bf16).unwrap();
        assert_eq!((h.k, h.payload_bytes), (20, 120));
        assert_eq!(sparse_payload(3, 0.5, Precision::Fp16).unwrap().k, 1);
    }

    /// The nodes come from the GPUs; the timing is the analytical model's.
    #[test]
    fn a_ring_allreduce_on_two_nodes() {
        let t = time(&request("allreduce")).unwrap();
        assert_eq!((t.cluster.nodes, t.cluster.gpus_per_node), (2, 4));
        let want = Collective::new(Op::AllReduce)
            .analytical(&t.cluster)
            .time((1u64 << 20) as f64);
        assert_eq!(t.time_s, want);
        assert_eq!(t.algbw_gbps, (1u64 << 20) as f64 / want / 1e9);
        assert_eq!(t.busbw_gbps, t.algbw_gbps * 2.0 * 7.0 / 8.0);
    }

    /// A bf16 gradient of the same bytes holds twice the elements: at one
    /// density, k doubles and each GPU's payload grows by 3/2 (6 bytes an
    /// element against 8), and so does the bandwidth term of the time.
    #[test]
    fn sparse_precision_changes_k_and_the_payload() {
        let at = |p: Option<Precision>| {
            time(&Request {
                density: Some(0.01),
                precision: p,
                size: 1 << 24,
                ..request("topk")
            })
            .unwrap()
        };
        let (fp32, bf16) = (at(None), at(Some(Precision::Bf16)));
        let (a, b) = (fp32.sparse.unwrap(), bf16.sparse.unwrap());
        assert_eq!(b.k, 2 * a.k);
        assert_eq!(2 * b.payload_bytes, 3 * a.payload_bytes);
        assert_eq!(at(Some(Precision::Fp32)), fp32);
        let model = Collective::new(Op::TopK).analytical(&fp32.cluster);
        assert_eq!(bf16.time_s, model.time(b.payload_bytes as f64));
    }

    #[test]
    fn each_bad_field_is_named() {
        let cases: Vec<(Request, &str, &str)> = vec![
            (request("scatter"), "op", "unknown operation `scatter`"),
            (request("topk"), "density", "required for topk"),
            (
                Request {
                    density: Some(0.01),
                    ..request("allreduce")
                },
                "density",
                "not to allreduce",
            ),
            (
                Request {
                    algo: Some("ring".into()),
                    density: Some(0.01),
                    ..request("gtopk")
                },
                "algo",
                "`ring` is not an algorithm of gtopk",
            ),
            (
                Request {
                    gpus: 6,
                    ..request("allreduce")
                },
                "gpus_per_node",
                "divide",
            ),
            (
                Request {
                    size: 3,
                    density: Some(0.5),
                    ..request("topk")
                },
                "size",
                "no fp32 element",
            ),
            (
                Request {
                    size: 1,
                    density: Some(0.5),
                    precision: Some(Precision::Bf16),
                    ..request("gtopk")
                },
                "size",
                "1 bytes hold no bf16 element; gtopk needs at least 2",
            ),
            (
                Request {
                    precision: Some(Precision::Fp16),
                    ..request("allreduce")
                },
                "precision",
                "applies to topk and gtopk",
            ),
            (
                Request {
                    cluster: Description::new(0, 4, "ib-xyz"),
                    ..request("allreduce")
                },
                "network",
                "unknown network `ib-xyz`",
            ),
        ];
        for (r, field, says) in cases {
            let e = time(&r).unwrap_err();
            assert_eq!(e.field, field, "{e:?}");
            assert!(e.message.contains(says), "{field}: {}", e.message);
        }
    }
}
