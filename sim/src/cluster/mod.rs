//! The cluster: nodes of GPUs, their links, and the paths transfers take.
//!
//! ```text
//!   node 0                                              node 1
//!   GPU0 ══╗ fabric (NVLink/NVSwitch, or PCIe)      ╔══ GPU0
//!   GPU1 ══╝                                        ╚══ GPU1
//!    │ PCIe (nic_link)                                   │
//!   NIC0 ───────── switch fabric (core, optional ──── NIC0
//!   NIC1 ─────────  oversubscription)          ────── NIC1
//!   host (PS servers) on PCIe too
//! ```
//!
//! Every link is full duplex: it has an independent `up` (out of the GPU or
//! node) and `down` (into it) direction, each with the link's bandwidth.
//! A GPU has two links: into the node's GPU fabric (`intra`: NVLink to an
//! NVSwitch or to its peers, or PCIe) and its PCIe link to NICs and host
//! memory (`nic_link`). When the fabric is itself PCIe the two are one link
//! ([`ClusterSpec::nic_link`] is `None`): peer traffic and network traffic
//! share the GPU's x16 lanes. A transfer's path is the list of directed
//! links it crosses:
//!
//! * GPU to GPU on one node: the sender's fabric `up`, the receiver's
//!   fabric `down`; latency: the intra-node preset's (a GPU-to-GPU figure).
//! * across nodes: the sender's PCIe `up`, its node's NIC `up`, the core
//!   `up`/`down` of both nodes when the fabric is oversubscribed, the
//!   receiver node's NIC `down`, the receiver's PCIe `down`. Latency: the
//!   network's (host to host, as ping-pong measures it) plus the GPU side's
//!   ([`ClusterSpec::gpu_nic_latency`]: GPUDirect RDMA's extra latency
//!   when the NIC reads and writes GPU memory, or the PCIe preset's
//!   host-staged copy when it does not), counted once per transfer as the
//!   measured figures are.
//! * a sender whose NIC is not one of its own (a channel's rail, see below)
//!   on a node whose fabric is not PCIe first moves the data over the
//!   fabric to the GPU next to that NIC, which posts it (NCCL's PXN, "PCI
//!   × NVLink"): the sender's fabric `up`, that GPU's fabric `down` and
//!   PCIe `up`, and one more intra-node latency.
//! * a host endpoint (a parameter server process) has no link of its own:
//!   its traffic crosses the GPU's PCIe link (local peers) or the NIC
//!   (remote peers).
//!
//! NICs and GPUs pair up by index: with `nics ≤ gpus_per_node` GPU `i`
//! uses NIC `i mod nics`; with more NICs than GPUs, NIC `n` belongs to GPU
//! `n mod gpus_per_node`, and a GPU spreads its transfers over its NICs by
//! the peer's node. NIC `n`'s own GPU is GPU `n mod gpus_per_node`. A
//! collective that runs in channels ([`crate::collective::program`]) pins
//! each channel to one NIC on every node, as NCCL builds one ring per rail.

pub mod build;
pub mod presets;

/// Bandwidth (bytes/s, per direction) and latency (s) of one link kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkParams {
    /// Bytes per second, per direction.
    pub bandwidth: f64,
    /// One-way latency, seconds.
    pub latency: f64,
}

/// How ranks of a collective are laid out over the GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Rank r is GPU r: a node's GPUs are adjacent in every ring
    /// (the ordering the Baidu ring description recommends).
    #[default]
    Contiguous,
    /// Rank r is GPU `(r mod nodes) * gpus_per_node + r / nodes`: every ring
    /// hop crosses nodes (the worst case of BaiduRing BR-B1).
    Scattered,
}

impl crate::names::Named for Placement {
    const ALL: &'static [Placement] = &[Placement::Contiguous, Placement::Scattered];
    const WHAT: &'static str = "placement";
    fn name(self) -> &'static str {
        match self {
            Placement::Contiguous => "contiguous",
            Placement::Scattered => "scattered",
        }
    }
}

/// The GPU's PCIe link to its NICs and host memory, on nodes whose GPU
/// fabric is not PCIe.
#[derive(Debug, Clone, PartialEq)]
pub struct NicLink {
    /// Preset name ("pcie5-x16").
    pub name: String,
    /// Per-GPU bandwidth per direction, and the host-staged latency.
    pub link: LinkParams,
}

/// A validated cluster description.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSpec {
    /// Number of machines.
    pub nodes: u32,
    /// GPUs per machine.
    pub gpus_per_node: u32,
    /// Inter-node network name (preset or "custom").
    pub network: String,
    /// Per-NIC inter-node link.
    pub inter: LinkParams,
    /// Intra-node link name (preset or "custom").
    pub intra_name: String,
    /// Per-GPU intra-node link.
    pub intra: LinkParams,
    /// The GPU's PCIe link to its NICs and host; `None` when the intra-node
    /// fabric is PCIe and the intra link is that same link.
    pub nic_link: Option<NicLink>,
    /// Whether NICs read and write GPU memory directly (GPUDirect RDMA);
    /// otherwise transfers across nodes are staged through host memory.
    pub gpudirect: bool,
    /// Whether the network's latency was measured GPU to GPU (a
    /// calibration profile fitted on collectives): then a cross-node
    /// transfer adds no GPU-side latency of its own, which the profile's
    /// latency already holds.
    pub latency_end_to_end: bool,
    /// NICs per node.
    pub nics_per_node: u32,
    /// Core oversubscription ratio (1 = non-blocking).
    pub oversubscription: f64,
    /// Rank layout of collectives.
    pub placement: Placement,
    /// CPU cores of each machine's host, for the work parameter servers
    /// do there (`cluster.cpu_cores`).
    pub cpu_cores: u32,
    /// The fraction of the network's per-NIC bandwidth collectives reach
    /// (`cluster.nic_efficiency`, `sim::losses`): already applied to
    /// `inter.bandwidth`, kept to say so.
    pub nic_efficiency: f64,
}

/// Host CPU cores per machine when a scenario does not say: Parallax's
/// machines (two 18-core Xeon E5-2695, Parallax §6.1), the cluster the
/// parameter-server model was built for.
pub const DEFAULT_CPU_CORES: u32 = 36;

impl ClusterSpec {
    /// A flat cluster for formula checks: `n` single-GPU nodes, every pair
    /// connected at `bandwidth` bytes/s and `latency` s; intra-node links add
    /// no latency and are never the bottleneck. The intra link is also the
    /// GPU's way to its NIC (a PCIe node, no GPUDirect), so a test that
    /// changes `intra` changes both, as on such a machine.
    pub fn flat(n: u32, bandwidth: f64, latency: f64) -> ClusterSpec {
        ClusterSpec {
            nodes: n,
            gpus_per_node: 1,
            network: "custom".into(),
            inter: LinkParams { bandwidth, latency },
            intra_name: "custom".into(),
            intra: LinkParams {
                bandwidth: bandwidth * 1e3,
                latency: 0.0,
            },
            nic_link: None,
            gpudirect: false,
            latency_end_to_end: false,
            nics_per_node: 1,
            oversubscription: 1.0,
            placement: Placement::Contiguous,
            cpu_cores: DEFAULT_CPU_CORES,
            nic_efficiency: 1.0,
        }
    }

    /// Total GPUs.
    pub fn gpus(&self) -> u32 {
        self.nodes * self.gpus_per_node
    }

    /// Per-node core capacity in bytes/s (infinite when non-blocking).
    pub fn core_bandwidth(&self) -> f64 {
        if self.oversubscription > 1.0 {
            self.nics_per_node as f64 * self.inter.bandwidth / self.oversubscription
        } else {
            f64::INFINITY
        }
    }

    /// The GPU that rank `r` of a collective over all GPUs runs on.
    pub fn gpu_of_rank(&self, r: u32) -> u32 {
        match self.placement {
            Placement::Contiguous => r,
            Placement::Scattered => (r % self.nodes) * self.gpus_per_node + r / self.nodes,
        }
    }

    /// The rank (placement order) of GPU `g`: the inverse of
    /// [`ClusterSpec::gpu_of_rank`].
    pub fn rank_of_gpu(&self, g: u32) -> u32 {
        match self.placement {
            Placement::Contiguous => g,
            Placement::Scattered => (g % self.gpus_per_node) * self.nodes + g / self.gpus_per_node,
        }
    }

    /// Node of a GPU.
    pub fn node_of_gpu(&self, g: u32) -> u32 {
        g / self.gpus_per_node
    }

    /// The NIC (0-based within its node) that a GPU uses to reach node
    /// `peer_node`: its own NIC (`i mod nics`) when NICs are no more than
    /// GPUs; with more NICs, one of its NICs (`i`, `i + G`, `i + 2G`, …)
    /// chosen by how many nodes ahead the peer is, so a GPU's traffic to
    /// many nodes spreads over all of them, and every node chooses alike.
    pub fn nic_of_gpu(&self, g: u32, peer_node: u32) -> u32 {
        let (local, gp, nics) = (
            g % self.gpus_per_node,
            self.gpus_per_node,
            self.nics_per_node,
        );
        if nics <= gp {
            local % nics
        } else {
            let own = (nics - local).div_ceil(gp);
            let ahead = (peer_node + self.nodes - self.node_of_gpu(g)) % self.nodes;
            local + gp * (ahead % own)
        }
    }

    /// The GPU (index within the node) that NIC `nic` sits next to.
    pub fn gpu_of_nic(&self, nic: u32) -> u32 {
        nic % self.gpus_per_node
    }

    /// Whether NIC `nic` is one of GPU `g`'s own.
    pub fn is_own_nic(&self, g: u32, nic: u32) -> bool {
        let local = g % self.gpus_per_node;
        if self.nics_per_node <= self.gpus_per_node {
            local % self.nics_per_node == nic
        } else {
            self.gpu_of_nic(nic) == local
        }
    }

    /// Whether the node's NVSwitch reduces in-switch (NVLink SHARP): the
    /// third-generation NVSwitch of H100/H200 HGX nodes, `intra =
    /// "nvlink4"` (its bandwidth or latency overridden or not).
    pub fn in_switch_reduction(&self) -> bool {
        self.intra_name.trim_end_matches('*') == "nvlink4"
    }

    /// The GPU's PCIe link (the intra link on a PCIe node).
    pub fn gpu_pcie(&self) -> LinkParams {
        self.nic_link.as_ref().map_or(self.intra, |n| n.link)
    }

    /// Latency the GPU side adds to a transfer across nodes, once per
    /// transfer: GPUDirect RDMA's ([`presets::GPUDIRECT_RDMA_LATENCY_S`])
    /// or, staged through host memory, the PCIe link's.
    pub fn gpu_nic_latency(&self) -> f64 {
        if self.latency_end_to_end {
            0.0
        } else if self.gpudirect {
            presets::GPUDIRECT_RDMA_LATENCY_S
        } else {
            self.gpu_pcie().latency
        }
    }
}

/// An endpoint of a transfer: a GPU, or the host CPU of a node (where a
/// parameter server runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    /// A GPU, by global index.
    Gpu(u32),
    /// A node's host, by node index; `nic` is the NIC its traffic uses.
    Host {
        /// Node index.
        node: u32,
        /// NIC index within the node.
        nic: u32,
    },
    /// A node's NVSwitch as a reducing and multicasting party (NVLink
    /// SHARP): reached from its own node's GPUs only, over their fabric
    /// links, and with no capacity of its own.
    Switch {
        /// Node index.
        node: u32,
    },
    /// The InfiniBand switches of rail `nic` as one reducing party (SHARP):
    /// reached from every node's GPUs through that NIC, with no capacity of
    /// its own beyond the NICs' (and the core's, when oversubscribed).
    NetSwitch {
        /// The NIC index (within a node) of the rail.
        nic: u32,
    },
}

/// Index of a directed link in a [`Topology`].
pub type LinkId = u32;

/// The directed links of a cluster and the paths between endpoints.
///
/// Links are numbered by kind: every GPU's fabric link (up, down), every
/// GPU's PCIe link when it is a link of its own, every NIC's, and each
/// node's core link when the fabric is oversubscribed.
#[derive(Debug, Clone)]
pub struct Topology {
    spec: ClusterSpec,
    /// Capacity of each directed link, bytes/s.
    capacity: Vec<f64>,
    /// First PCIe link; 0 (the fabric links) when they are one.
    pcie_base: u32,
    nic_base: u32,
    core_base: u32,
}

/// Most links a path crosses: a PXN hop (2), the proxy's PCIe, the NIC,
/// two core links, the NIC and the receiver's PCIe.
const MAX_PATH_LINKS: usize = 8;

/// The links and latency of one transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Path {
    links: [LinkId; MAX_PATH_LINKS],
    len: u8,
    /// One-way latency, seconds.
    pub latency: f64,
}

impl Path {
    pub(crate) fn new(latency: f64) -> Path {
        Path {
            links: [0; MAX_PATH_LINKS],
            len: 0,
            latency,
        }
    }
    pub(crate) fn push(&mut self, l: LinkId) {
        self.links[self.len as usize] = l;
        self.len += 1;
    }
    /// The directed links, in order.
    pub fn links(&self) -> &[LinkId] {
        &self.links[..self.len as usize]
    }

    /// Replaces every link by `f(link)`.
    pub fn map_links(&mut self, f: impl Fn(LinkId) -> LinkId) {
        for l in &mut self.links[..self.len as usize] {
            *l = f(*l);
        }
    }
}

impl Topology {
    /// Builds the links of a cluster.
    pub fn new(spec: &ClusterSpec) -> Topology {
        let gpus = spec.gpus() as usize;
        let nics = (spec.nodes * spec.nics_per_node) as usize;
        let mut capacity = Vec::with_capacity(4 * gpus + 2 * nics + 2 * spec.nodes as usize);
        capacity.resize(2 * gpus, spec.intra.bandwidth);
        let pcie_base = match &spec.nic_link {
            Some(n) => {
                let base = capacity.len() as u32;
                capacity.resize(capacity.len() + 2 * gpus, n.link.bandwidth);
                base
            }
            None => 0,
        };
        let nic_base = capacity.len() as u32;
        capacity.resize(capacity.len() + 2 * nics, spec.inter.bandwidth);
        let core_base = capacity.len() as u32;
        if spec.oversubscription > 1.0 {
            capacity.resize(
                capacity.len() + 2 * spec.nodes as usize,
                spec.core_bandwidth(),
            );
        }
        Topology {
            spec: spec.clone(),
            capacity,
            pcie_base,
            nic_base,
            core_base,
        }
    }

    /// The cluster this topology was built from.
    pub fn spec(&self) -> &ClusterSpec {
        &self.spec
    }

    /// Capacity of every directed link, bytes/s, indexed by [`LinkId`].
    pub fn capacities(&self) -> &[f64] {
        &self.capacity
    }

    /// The fabric link out of GPU `g`.
    pub fn gpu_up(&self, g: u32) -> LinkId {
        2 * g
    }
    /// The fabric link into GPU `g`.
    pub fn gpu_down(&self, g: u32) -> LinkId {
        2 * g + 1
    }
    /// The PCIe link out of GPU `g` (its fabric link on a PCIe node).
    pub fn pcie_up(&self, g: u32) -> LinkId {
        self.pcie_base + 2 * g
    }
    /// The PCIe link into GPU `g`.
    pub fn pcie_down(&self, g: u32) -> LinkId {
        self.pcie_up(g) + 1
    }
    /// The link out of a node's NIC.
    pub fn nic_up(&self, node: u32, nic: u32) -> LinkId {
        self.nic_base + 2 * (node * self.spec.nics_per_node + nic)
    }
    /// The link into a node's NIC.
    pub fn nic_down(&self, node: u32, nic: u32) -> LinkId {
        self.nic_up(node, nic) + 1
    }
    fn core_up(&self, node: u32) -> LinkId {
        self.core_base + 2 * node
    }
    /// The core links (up, down) of a node, when the fabric is
    /// oversubscribed (`None` when it is non-blocking and has none).
    pub fn core_links(&self, node: u32) -> Option<(LinkId, LinkId)> {
        (self.spec.oversubscription > 1.0).then(|| (self.core_up(node), self.core_up(node) + 1))
    }

    /// The node of an endpoint.
    fn node_of(&self, e: Endpoint) -> u32 {
        match e {
            Endpoint::Gpu(g) => self.spec.node_of_gpu(g),
            Endpoint::Host { node, .. } | Endpoint::Switch { node } => node,
            Endpoint::NetSwitch { .. } => unreachable!("a rail's switches span the nodes"),
        }
    }

    /// The NIC an endpoint uses towards `peer_node`.
    fn nic_of(&self, e: Endpoint, peer_node: u32) -> u32 {
        match e {
            Endpoint::Gpu(g) => self.spec.nic_of_gpu(g, peer_node),
            Endpoint::Host { nic, .. } => nic,
            Endpoint::Switch { .. } | Endpoint::NetSwitch { .. } => {
                unreachable!("a switch has no NIC")
            }
        }
    }

    /// The path from `a` to `b` over the NICs each side uses by default
    /// ([`ClusterSpec::nic_of_gpu`]). A transfer from an endpoint to itself
    /// has an empty path and zero latency.
    pub fn path(&self, a: Endpoint, b: Endpoint) -> Path {
        self.route(a, b, None)
    }

    /// The path from `a` to `b`; across nodes through NIC `nic` of both
    /// nodes when given (a channel's rail), else each side's own.
    pub fn route(&self, a: Endpoint, b: Endpoint, nic: Option<u32>) -> Path {
        if a == b {
            return Path::new(0.0);
        }
        let s = &self.spec;
        match (a, b) {
            (Endpoint::Gpu(x), Endpoint::NetSwitch { nic }) => {
                // half a network message's latency each way
                let n = s.node_of_gpu(x);
                let mut p = Path::new((s.inter.latency + s.gpu_nic_latency()) / 2.0);
                self.to_nic(&mut p, x, n, nic);
                p.push(self.nic_up(n, nic));
                if s.oversubscription > 1.0 {
                    p.push(self.core_up(n));
                }
                return p;
            }
            (Endpoint::NetSwitch { nic }, Endpoint::Gpu(y)) => {
                let n = s.node_of_gpu(y);
                let mut p = Path::new((s.inter.latency + s.gpu_nic_latency()) / 2.0);
                if s.oversubscription > 1.0 {
                    p.push(self.core_up(n) + 1);
                }
                p.push(self.nic_down(n, nic));
                p.push(self.pcie_down(y));
                return p;
            }
            (Endpoint::NetSwitch { .. }, _) | (_, Endpoint::NetSwitch { .. }) => {
                unreachable!("a rail's switches talk to GPUs only")
            }
            _ => {}
        }
        let (na, nb) = (self.node_of(a), self.node_of(b));
        if na == nb {
            return match (a, b) {
                (Endpoint::Gpu(x), Endpoint::Gpu(y)) => {
                    let mut p = Path::new(s.intra.latency);
                    p.push(self.gpu_up(x));
                    p.push(self.gpu_down(y));
                    p
                }
                (Endpoint::Gpu(x), Endpoint::Host { .. }) => {
                    let mut p = Path::new(s.gpu_pcie().latency);
                    p.push(self.pcie_up(x));
                    p
                }
                (Endpoint::Host { .. }, Endpoint::Gpu(y)) => {
                    let mut p = Path::new(s.gpu_pcie().latency);
                    p.push(self.pcie_down(y));
                    p
                }
                (Endpoint::Host { .. }, Endpoint::Host { .. }) => Path::new(0.0),
                // a GPU to its switch and back is one fabric hop: half its
                // latency each way
                (Endpoint::Gpu(x), Endpoint::Switch { .. }) => {
                    let mut p = Path::new(s.intra.latency / 2.0);
                    p.push(self.gpu_up(x));
                    p
                }
                (Endpoint::Switch { .. }, Endpoint::Gpu(y)) => {
                    let mut p = Path::new(s.intra.latency / 2.0);
                    p.push(self.gpu_down(y));
                    p
                }
                (Endpoint::Switch { .. }, _)
                | (_, Endpoint::Switch { .. })
                | (Endpoint::NetSwitch { .. }, _)
                | (_, Endpoint::NetSwitch { .. }) => {
                    unreachable!("an NVSwitch talks to its own node's GPUs only")
                }
            };
        }
        assert!(
            !matches!(a, Endpoint::Switch { .. }) && !matches!(b, Endpoint::Switch { .. }),
            "an NVSwitch talks to its own node's GPUs only"
        );
        let nic_a = nic.unwrap_or_else(|| self.nic_of(a, nb));
        let nic_b = nic.unwrap_or_else(|| self.nic_of(b, na));
        let gpu_side = matches!(a, Endpoint::Gpu(_)) || matches!(b, Endpoint::Gpu(_));
        let mut p = Path::new(s.inter.latency + if gpu_side { s.gpu_nic_latency() } else { 0.0 });
        if let Endpoint::Gpu(x) = a {
            self.to_nic(&mut p, x, na, nic_a);
        }
        p.push(self.nic_up(na, nic_a));
        if s.oversubscription > 1.0 {
            p.push(self.core_up(na));
            p.push(self.core_up(nb) + 1);
        }
        p.push(self.nic_down(nb, nic_b));
        if let Endpoint::Gpu(y) = b {
            p.push(self.pcie_down(y));
        }
        p
    }

    /// Appends GPU `x`'s way to NIC `nic` of its node `n`: its PCIe link,
    /// or on an NVLink node whose NIC is another GPU's, over the fabric to
    /// that GPU first (NCCL's PXN), which adds a fabric hop's latency.
    fn to_nic(&self, p: &mut Path, x: u32, n: u32, nic: u32) {
        let s = &self.spec;
        if s.nic_link.is_some() && !s.is_own_nic(x, nic) {
            let proxy = n * s.gpus_per_node + s.gpu_of_nic(nic);
            p.latency += s.intra.latency;
            p.push(self.gpu_up(x));
            p.push(self.gpu_down(proxy));
            p.push(self.pcie_up(proxy));
        } else {
            p.push(self.pcie_up(x));
        }
    }

    /// Bottleneck bandwidth of a path when nothing else shares it
    /// (infinite for an empty path).
    pub fn path_bandwidth(&self, p: &Path) -> f64 {
        p.links()
            .iter()
            .map(|&l| self.capacity[l as usize])
            .fold(f64::INFINITY, f64::min)
    }

    /// The link that plays the same role in node 0 as `l` does in its own
    /// node (the image of `l` under the node shift that moves its node to
    /// node 0). Nodes are identical, so this is how a symmetric collective
    /// is simulated on one node's links (`crate::collective::exec`).
    pub fn link_in_node0(&self, l: LinkId) -> LinkId {
        let s = &self.spec;
        let per_node = 2 * s.gpus_per_node;
        if l < self.nic_base {
            let base = if l < self.pcie_base {
                0
            } else {
                self.pcie_base
            };
            base + (l - base) % per_node
        } else if l < self.core_base {
            self.nic_base + (l - self.nic_base) % (2 * s.nics_per_node)
        } else {
            self.core_base + (l - self.core_base) % 2
        }
    }

    /// Human name of a link, for traces and errors.
    pub fn link_name(&self, l: LinkId) -> String {
        let dir = if l.is_multiple_of(2) { "up" } else { "down" };
        if l < self.nic_base {
            if self.pcie_base > 0 && l >= self.pcie_base {
                format!("gpu{}-pcie-{dir}", (l - self.pcie_base) / 2)
            } else {
                format!("gpu{}-intra-{dir}", l / 2)
            }
        } else if l < self.core_base {
            let i = (l - self.nic_base) / 2;
            format!(
                "node{}-nic{}-{dir}",
                i / self.spec.nics_per_node,
                i % self.spec.nics_per_node
            )
        } else {
            format!("node{}-core-{dir}", (l - self.core_base) / 2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(nodes: u32, g: u32, nics: u32, over: f64) -> ClusterSpec {
        ClusterSpec {
            nodes,
            gpus_per_node: g,
            network: "x".into(),
            inter: LinkParams {
                bandwidth: 12.5e9,
                latency: 1e-6,
            },
            intra_name: "y".into(),
            intra: LinkParams {
                bandwidth: 10e9,
                latency: 2e-6,
            },
            nic_link: None,
            gpudirect: false,
            latency_end_to_end: false,
            nics_per_node: nics,
            oversubscription: over,
            placement: Placement::Contiguous,
            cpu_cores: DEFAULT_CPU_CORES,
            nic_efficiency: 1.0,
        }
    }

    #[test]
    fn paths_cross_the_right_links() {
        let t = Topology::new(&spec(2, 4, 2, 2.0));
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(2));
        assert_eq!(p.links().len(), 2);
        assert_eq!(p.latency, 2e-6);
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(6));
        let names: Vec<_> = p.links().iter().map(|&l| t.link_name(l)).collect();
        assert_eq!(
            names,
            [
                "gpu1-intra-up",
                "node0-nic1-up",
                "node0-core-up",
                "node1-core-down",
                "node1-nic0-down",
                "gpu6-intra-down"
            ]
        );
        assert_eq!(p.latency, 1e-6 + 2e-6);
        // core capacity = 2 NICs x 12.5 GB/s / 2
        assert_eq!(t.path_bandwidth(&p), 10e9);
        let h = t.path(Endpoint::Gpu(0), Endpoint::Host { node: 0, nic: 0 });
        assert_eq!(h.links().len(), 1);
        assert!(
            t.path(Endpoint::Gpu(3), Endpoint::Gpu(3))
                .links()
                .is_empty()
        );
    }

    /// An NVLink node: peers over the fabric, NICs and host over each
    /// GPU's own PCIe link; across nodes the GPU side costs GPUDirect's
    /// latency, or the PCIe copy's when staged; a NIC that is not the
    /// GPU's own is reached over the fabric first (PXN).
    #[test]
    fn nvlink_nodes_reach_their_nics_over_pcie() {
        let mut s = spec(2, 4, 2, 1.0);
        s.intra = LinkParams {
            bandwidth: 300e9,
            latency: 3e-6,
        };
        s.nic_link = Some(NicLink {
            name: "p".into(),
            link: LinkParams {
                bandwidth: 25e9,
                latency: 12e-6,
            },
        });
        s.gpudirect = true;
        let t = Topology::new(&s);
        let names =
            |p: &Path| -> Vec<String> { p.links().iter().map(|&l| t.link_name(l)).collect() };
        // peers: fabric only
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(2));
        assert_eq!(names(&p), ["gpu1-intra-up", "gpu2-intra-down"]);
        assert_eq!(p.latency, 3e-6);
        // across nodes on the GPUs' own NICs (GPU i on NIC i mod 2)
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(6));
        assert_eq!(
            names(&p),
            [
                "gpu1-pcie-up",
                "node0-nic1-up",
                "node1-nic0-down",
                "gpu6-pcie-down"
            ]
        );
        assert_eq!(p.latency, 1e-6 + presets::GPUDIRECT_RDMA_LATENCY_S);
        assert_eq!(t.path_bandwidth(&p), 12.5e9);
        // a channel pinned to NIC 0: GPU 1 hands its data to GPU 0 (PXN)
        let p = t.route(Endpoint::Gpu(1), Endpoint::Gpu(4), Some(0));
        assert_eq!(
            names(&p),
            [
                "gpu1-intra-up",
                "gpu0-intra-down",
                "gpu0-pcie-up",
                "node0-nic0-up",
                "node1-nic0-down",
                "gpu4-pcie-down"
            ]
        );
        assert_eq!(p.latency, 1e-6 + presets::GPUDIRECT_RDMA_LATENCY_S + 3e-6);
        // staged through host memory: the PCIe copy's latency instead
        s.gpudirect = false;
        let t = Topology::new(&s);
        assert_eq!(
            t.path(Endpoint::Gpu(1), Endpoint::Gpu(6)).latency,
            1e-6 + 12e-6
        );
        // a PS server's host: the GPU's PCIe link, at its latency
        let h = t.path(Endpoint::Gpu(2), Endpoint::Host { node: 0, nic: 0 });
        assert_eq!(h.links(), [t.pcie_up(2)]);
        assert_eq!(h.latency, 12e-6);
        // node 1's PCIe links map onto node 0's
        assert_eq!(t.link_in_node0(t.pcie_up(6)), t.pcie_up(2));
        assert_eq!(t.link_in_node0(t.gpu_down(5)), t.gpu_down(1));
    }

    /// More NICs than GPUs: NIC n belongs to GPU n mod G, and a GPU picks
    /// among its own by how many nodes ahead the peer is.
    #[test]
    fn extra_nics_spread_a_gpus_traffic() {
        let s = spec(4, 2, 6, 1.0);
        // GPU 0 owns NICs 0, 2, 4; GPU 1 owns 1, 3, 5
        assert_eq!(
            (0..4).map(|k| s.nic_of_gpu(0, k)).collect::<Vec<_>>(),
            [0, 2, 4, 0]
        );
        assert_eq!(
            (0..4).map(|k| s.nic_of_gpu(3, k)).collect::<Vec<_>>(),
            [1, 1, 3, 5]
        );
        assert!(s.is_own_nic(1, 5) && !s.is_own_nic(1, 4));
        assert_eq!(s.gpu_of_nic(5), 1);
        let few = spec(1, 8, 2, 1.0);
        assert_eq!(few.nic_of_gpu(5, 0), 1);
        assert!(few.is_own_nic(4, 0) && !few.is_own_nic(4, 1));
    }

    #[test]
    fn scattered_placement_visits_every_node_in_turn() {
        let mut s = spec(3, 2, 1, 1.0);
        s.placement = Placement::Scattered;
        let gpus: Vec<u32> = (0..6).map(|r| s.gpu_of_rank(r)).collect();
        assert_eq!(gpus, [0, 2, 4, 1, 3, 5]);
    }
}
