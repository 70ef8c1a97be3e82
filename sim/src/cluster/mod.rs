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
//! NICs and GPUs pair up by index ([`Pairing`]): with `nics ≤
//! gpus_per_node` GPU `i` uses NIC `i mod nics`; with more NICs than GPUs,
//! NIC `n` belongs to GPU `n mod gpus_per_node`, and a GPU spreads its
//! transfers over its NICs by the peer's node. NIC `n`'s own GPU is GPU
//! `n mod gpus_per_node`. A collective that runs in channels
//! ([`crate::collective::program`]) pins each channel to one NIC on every
//! node, as NCCL builds one ring per rail.
//!
//! **Shared PCIe switches** (`cluster.gpus_per_pcie_switch`, absent by
//! default): a node's GPUs sit in blocks of k under PCIe switches
//! (GPUs 0..k under switch 0, and so on), each switch holding an equal
//! share of the node's NICs, with one uplink (up, down) to the CPU
//! (`cluster.pcie_uplink`). GPUs and NICs then pair up inside their switch
//! by the rule above (with fewer NICs than switches, inside a group of
//! switches that shares one NIC, under the group's first switch). Traffic
//! that stays under a switch (a GPU and a NIC of its switch with GPUDirect,
//! or two GPUs of a PCIe node under one switch) never touches the uplink;
//! traffic to or from host memory crosses it: a parameter server's, a
//! transfer staged through host memory without GPUDirect (the sender's
//! uplink up into host memory and the NIC's switch's uplink down out of
//! it; the mirror on the receiving node), and peer or NIC traffic between
//! two switches (through the CPU's root complex). Without the key every
//! GPU's PCIe link reaches the CPU directly and nothing else is shared.

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

/// PCIe switches shared by a node's GPUs and NICs.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieSwitches {
    /// GPUs under each switch (at least 1, dividing `gpus_per_node`).
    pub gpus: u32,
    /// The switch's uplink to the CPU, per direction, and its latency
    /// (a PCIe preset's; the latency is not added to paths, which already
    /// pay their PCIe latency once).
    pub uplink: NicLink,
}

/// How a node's GPUs and NICs pair up: in `units` equal groups (the
/// node's PCIe switches, or groups of switches sharing one NIC; one group
/// without shared switches), each of `gpus / units` GPUs and
/// `nics / units` NICs, paired inside their group by index (see the
/// module documentation). Indices are within the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pairing {
    gpus: u32,
    nics: u32,
    units: u32,
    /// GPUs per PCIe switch (`gpus` when the node has no shared switch).
    per_switch: u32,
}

impl Pairing {
    /// The pairing of `gpus` GPUs and `nics` NICs under switches of
    /// `per_switch` GPUs (`None`: no shared switch). Switches must hold
    /// equal shares of the NICs, or groups of switches one NIC each
    /// ([`ClusterSpec`]'s builder checks it).
    pub fn new(gpus: u32, nics: u32, per_switch: Option<u32>) -> Pairing {
        let per_switch = per_switch.unwrap_or(gpus);
        let switches = gpus / per_switch;
        debug_assert!(
            per_switch >= 1
                && gpus.is_multiple_of(per_switch)
                && (nics.is_multiple_of(switches) || switches.is_multiple_of(nics)),
            "{gpus} GPUs in switches of {per_switch} cannot share {nics} NICs equally"
        );
        Pairing {
            gpus,
            nics,
            units: switches.min(nics),
            per_switch,
        }
    }

    fn unit_gpus(self) -> u32 {
        self.gpus / self.units
    }

    fn unit_nics(self) -> u32 {
        self.nics / self.units
    }

    /// The NIC GPU `local` uses towards a node `ahead` nodes further on:
    /// its own (with NICs no more than GPUs in its group), or one of its
    /// own chosen by `ahead`.
    pub fn nic_of_gpu(self, local: u32, ahead: u32) -> u32 {
        let (k, m) = (self.unit_gpus(), self.unit_nics());
        let (u, j) = (local / k, local % k);
        if m <= k {
            u * m + j % m
        } else {
            let own = (m - j).div_ceil(k);
            u * m + j + k * (ahead % own)
        }
    }

    /// GPU `local`'s `i`-th NIC of its own (`i` below
    /// [`Pairing::own_nics`]).
    pub fn own_nic(self, local: u32, i: u32) -> u32 {
        let (k, m) = (self.unit_gpus(), self.unit_nics());
        if m <= k {
            self.nic_of_gpu(local, 0)
        } else {
            (local / k) * m + local % k + k * i
        }
    }

    /// How many NICs GPU `local` has of its own.
    pub fn own_nics(self, local: u32) -> u32 {
        let (k, m) = (self.unit_gpus(), self.unit_nics());
        if m <= k {
            1
        } else {
            (m - local % k).div_ceil(k)
        }
    }

    /// The GPU that NIC `nic` sits next to (it posts the NIC's sends for
    /// GPUs whose NIC it is not: NCCL's PXN).
    pub fn gpu_of_nic(self, nic: u32) -> u32 {
        let (k, m) = (self.unit_gpus(), self.unit_nics());
        (nic / m) * k + (nic % m) % k
    }

    /// Whether NIC `nic` is one of GPU `local`'s own.
    pub fn is_own_nic(self, local: u32, nic: u32) -> bool {
        let (k, m) = (self.unit_gpus(), self.unit_nics());
        if nic / m != local / k {
            return false;
        }
        if m <= k {
            (local % k) % m == nic % m
        } else {
            (nic % m) % k == local % k
        }
    }

    /// The PCIe switch (within the node) of GPU `local`.
    pub fn switch_of_gpu(self, local: u32) -> u32 {
        local / self.per_switch
    }

    /// The PCIe switch (within the node) NIC `nic` sits under.
    pub fn switch_of_nic(self, nic: u32) -> u32 {
        self.switch_of_gpu(self.gpu_of_nic(nic))
    }

    /// Whether GPU `local` and NIC `nic` sit under one PCIe switch (always
    /// without shared switches).
    pub fn near(self, local: u32, nic: u32) -> bool {
        self.switch_of_gpu(local) == self.switch_of_nic(nic)
    }
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
    /// PCIe switches shared by GPUs and NICs (`cluster.gpus_per_pcie_switch`);
    /// `None`: every GPU's PCIe link reaches the CPU directly.
    pub pcie_switches: Option<PcieSwitches>,
    /// Whether NICs read and write GPU memory directly (GPUDirect RDMA);
    /// otherwise transfers across nodes are staged through host memory.
    pub gpudirect: bool,
    /// Whether the network's figures were measured end to end (a
    /// calibration profile, fitted on collectives or ping-pongs between
    /// the ranks): then a cross-node transfer adds no GPU-side latency of
    /// its own and crosses no GPU-side link (the GPU's PCIe link, shared
    /// switches' uplinks), which the profile's latency and bandwidth
    /// already hold; only the NICs (and an oversubscribed core) bound it.
    pub measured_end_to_end: bool,
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
    /// Machines dedicated to parameter servers (`strategy.ps_machines`),
    /// beside the GPU machines: each has one NIC of the network (`inter`)
    /// and no GPU, reaches every node at the network's latency, and
    /// meets the core at its NIC's full rate (an oversubscribed core
    /// throttles the GPU machines only). 0: the servers run on the GPU
    /// machines' hosts.
    pub ps_machines: u32,
}

/// Host CPU cores per machine when a scenario does not say: Parallax's
/// machines (two 18-core Xeon E5-2695, Parallax §6.1), the cluster the
/// parameter-server model was built for.
pub const DEFAULT_CPU_CORES: u32 = 36;

impl ClusterSpec {
    /// The machines the parameter servers run on, server j on machine
    /// j mod these: the dedicated ones (`ps_machines`), else the GPU
    /// machines.
    pub fn server_machines(&self) -> u32 {
        if self.ps_machines > 0 {
            self.ps_machines
        } else {
            self.nodes
        }
    }

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
            pcie_switches: None,
            gpudirect: false,
            measured_end_to_end: false,
            nics_per_node: 1,
            oversubscription: 1.0,
            placement: Placement::Contiguous,
            cpu_cores: DEFAULT_CPU_CORES,
            nic_efficiency: 1.0,
            ps_machines: 0,
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

    /// How the node's GPUs and NICs pair up.
    pub fn pairing(&self) -> Pairing {
        Pairing::new(
            self.gpus_per_node,
            self.nics_per_node,
            self.pcie_switches.as_ref().map(|p| p.gpus),
        )
    }

    /// PCIe switches per node with an uplink of their own (0 without
    /// shared switches).
    pub fn pcie_switch_count(&self) -> u32 {
        self.pcie_switches
            .as_ref()
            .map_or(0, |p| self.gpus_per_node / p.gpus)
    }

    /// The NIC (0-based within its node) that a GPU uses to reach node
    /// `peer_node` ([`Pairing::nic_of_gpu`]): its own NIC when NICs are no
    /// more than GPUs; with more, one of its own chosen by how many nodes
    /// ahead the peer is (towards dedicated server machine m, by m), so a
    /// GPU's traffic to many nodes spreads over all of them, and every node
    /// chooses alike.
    pub fn nic_of_gpu(&self, g: u32, peer_node: u32) -> u32 {
        self.pairing()
            .nic_of_gpu(g % self.gpus_per_node, self.ahead(g, peer_node))
    }

    /// How many nodes ahead of GPU `g`'s node `peer_node` is (modulo the
    /// nodes): what a GPU with several NICs chooses among them by.
    fn ahead(&self, g: u32, peer_node: u32) -> u32 {
        if peer_node >= self.nodes {
            // a dedicated server machine: by its index, so a GPU's
            // traffic to the machines spreads over all its own NICs
            return peer_node - self.nodes;
        }
        (peer_node + self.nodes - self.node_of_gpu(g)) % self.nodes
    }

    /// The GPU (index within the node) that NIC `nic` sits next to.
    pub fn gpu_of_nic(&self, nic: u32) -> u32 {
        self.pairing().gpu_of_nic(nic)
    }

    /// Whether NIC `nic` is one of GPU `g`'s own.
    pub fn is_own_nic(&self, g: u32, nic: u32) -> bool {
        self.pairing().is_own_nic(g % self.gpus_per_node, nic)
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
        if self.measured_end_to_end {
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
    /// Indices from [`ClusterSpec::nodes`] on are the parameter servers'
    /// dedicated machines ([`ClusterSpec::ps_machines`]), in order, each
    /// with its one NIC, 0.
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

/// The kinds of link, [`Topology::link_kind`]'s names, in the order of
/// their numbers in a [`Topology`].
pub const LINK_KINDS: [&str; 12] = [
    "intra-up",
    "intra-down",
    "pcie-up",
    "pcie-down",
    "pcie-switch-up",
    "pcie-switch-down",
    "nic-up",
    "nic-down",
    "core-up",
    "core-down",
    "server-nic-up",
    "server-nic-down",
];

/// Index of a directed link in a [`Topology`].
pub type LinkId = u32;

/// The directed links of a cluster and the paths between endpoints.
///
/// Links are numbered by kind: every GPU's fabric link (up, down), every
/// GPU's PCIe link when it is a link of its own, every shared PCIe
/// switch's uplink, every NIC's, and each node's core link when the fabric
/// is oversubscribed.
#[derive(Debug, Clone)]
pub struct Topology {
    spec: ClusterSpec,
    /// `spec.pairing()`, kept at hand for routing.
    pairing: Pairing,
    /// Capacity of each directed link, bytes/s.
    capacity: Vec<f64>,
    /// First PCIe link; 0 (the fabric links) when they are one.
    pcie_base: u32,
    /// First PCIe switch uplink (= `nic_base` when there are none).
    uplink_base: u32,
    nic_base: u32,
    core_base: u32,
    /// First NIC link of the parameter servers' dedicated machines.
    server_base: u32,
}

/// Most links a path crosses: a PXN hop (2), the proxy's PCIe, two
/// switch uplinks (staged through host memory), the NIC, two core links,
/// the NIC, two uplinks and the receiver's PCIe.
pub(crate) const MAX_PATH_LINKS: usize = 12;

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
        let uplink_base = capacity.len() as u32;
        if let Some(sw) = &spec.pcie_switches {
            capacity.resize(
                capacity.len() + 2 * (spec.nodes * spec.pcie_switch_count()) as usize,
                sw.uplink.link.bandwidth,
            );
        }
        let nic_base = capacity.len() as u32;
        capacity.resize(capacity.len() + 2 * nics, spec.inter.bandwidth);
        let core_base = capacity.len() as u32;
        if spec.oversubscription > 1.0 {
            capacity.resize(
                capacity.len() + 2 * spec.nodes as usize,
                spec.core_bandwidth(),
            );
        }
        let server_base = capacity.len() as u32;
        capacity.resize(
            capacity.len() + 2 * spec.ps_machines as usize,
            spec.inter.bandwidth,
        );
        Topology {
            spec: spec.clone(),
            pairing: spec.pairing(),
            capacity,
            pcie_base,
            uplink_base,
            nic_base,
            core_base,
            server_base,
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
    /// The uplink (towards the CPU) of PCIe switch `switch` of `node`;
    /// its `down` direction is the next link. Only with shared switches.
    pub fn uplink_up(&self, node: u32, switch: u32) -> LinkId {
        debug_assert!(self.spec.pcie_switches.is_some());
        self.uplink_base + 2 * (node * self.spec.pcie_switch_count() + switch)
    }
    /// The link out of a node's NIC.
    pub fn nic_up(&self, node: u32, nic: u32) -> LinkId {
        self.nic_base + 2 * (node * self.spec.nics_per_node + nic)
    }
    /// The link into a node's NIC.
    pub fn nic_down(&self, node: u32, nic: u32) -> LinkId {
        self.nic_up(node, nic) + 1
    }
    /// The link out of dedicated server machine `m`'s NIC (the link in is
    /// the next).
    pub fn server_nic_up(&self, m: u32) -> LinkId {
        self.server_base + 2 * m
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
            Endpoint::Gpu(g) => self
                .pairing
                .nic_of_gpu(g % self.spec.gpus_per_node, self.spec.ahead(g, peer_node)),
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
                self.nic_to_gpu(&mut p, y, n, nic);
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
                    // PCIe peers under different switches meet at the CPU
                    if s.nic_link.is_none() {
                        let (sx, sy) = (self.switch_of(x), self.switch_of(y));
                        if sx != sy {
                            p.push(self.uplink_up(na, sx.unwrap()));
                            p.push(self.uplink_up(na, sy.unwrap()) + 1);
                        }
                    }
                    p.push(self.gpu_down(y));
                    p
                }
                (Endpoint::Gpu(x), Endpoint::Host { .. }) => {
                    let mut p = Path::new(s.gpu_pcie().latency);
                    p.push(self.pcie_up(x));
                    if let Some(sw) = self.switch_of(x) {
                        p.push(self.uplink_up(na, sw));
                    }
                    p
                }
                (Endpoint::Host { .. }, Endpoint::Gpu(y)) => {
                    let mut p = Path::new(s.gpu_pcie().latency);
                    if let Some(sw) = self.switch_of(y) {
                        p.push(self.uplink_up(na, sw) + 1);
                    }
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
        match a {
            Endpoint::Gpu(x) => self.to_nic(&mut p, x, na, nic_a),
            // a dedicated server machine's memory to its one NIC
            _ if na >= s.nodes => p.push(self.server_nic_up(na - s.nodes)),
            // host memory to the NIC, through its switch's uplink
            _ => {
                if s.pcie_switches.is_some() {
                    let sw = self.pairing.switch_of_nic(nic_a);
                    p.push(self.uplink_up(na, sw) + 1);
                }
                p.push(self.nic_up(na, nic_a));
            }
        }
        // (a dedicated server machine meets the core at its NIC's rate)
        if s.oversubscription > 1.0 && na < s.nodes {
            p.push(self.core_up(na));
        }
        if s.oversubscription > 1.0 && nb < s.nodes {
            p.push(self.core_up(nb) + 1);
        }
        match b {
            Endpoint::Gpu(y) => self.nic_to_gpu(&mut p, y, nb, nic_b),
            _ if nb >= s.nodes => p.push(self.server_nic_up(nb - s.nodes) + 1),
            _ => {
                p.push(self.nic_down(nb, nic_b));
                if s.pcie_switches.is_some() {
                    p.push(self.uplink_up(nb, self.pairing.switch_of_nic(nic_b)));
                }
            }
        }
        p
    }

    /// The PCIe switch of GPU `g` (within its node), when switches are
    /// shared.
    fn switch_of(&self, g: u32) -> Option<u32> {
        let s = &self.spec;
        s.pcie_switches
            .as_ref()
            .map(|_| self.pairing.switch_of_gpu(g % s.gpus_per_node))
    }

    /// Whether a transfer between GPU `g` and NIC `nic` of its node
    /// crosses the CPU: staged through host memory (no GPUDirect), or
    /// between two PCIe switches. Never without shared switches.
    fn via_cpu(&self, g: u32, nic: u32) -> bool {
        let s = &self.spec;
        s.pcie_switches.is_some() && (!s.gpudirect || !self.pairing.near(g % s.gpus_per_node, nic))
    }

    /// Appends GPU `x`'s way to NIC `nic` of its node `n` and the NIC's
    /// link out: its PCIe link, or on an NVLink node whose NIC is another
    /// GPU's or under another PCIe switch, over the fabric to the NIC's
    /// GPU first (NCCL's PXN), which adds a fabric hop's latency; then,
    /// when the way crosses the CPU ([`Topology::via_cpu`]), the sending
    /// switch's uplink up and the NIC's switch's uplink down.
    fn to_nic(&self, p: &mut Path, x: u32, n: u32, nic: u32) {
        let s = &self.spec;
        let pairing = self.pairing;
        let local = x % s.gpus_per_node;
        let sender = if s.nic_link.is_some()
            && !(pairing.is_own_nic(local, nic) && pairing.near(local, nic))
        {
            let proxy = n * s.gpus_per_node + pairing.gpu_of_nic(nic);
            p.latency += s.intra.latency;
            p.push(self.gpu_up(x));
            p.push(self.gpu_down(proxy));
            proxy
        } else {
            x
        };
        // a profile's bandwidth was measured through the GPU's way to its
        // NIC: only the NIC bounds it
        if s.measured_end_to_end {
            p.push(self.nic_up(n, nic));
            return;
        }
        p.push(self.pcie_up(sender));
        if self.via_cpu(sender, nic) {
            p.push(self.uplink_up(n, pairing.switch_of_gpu(sender % s.gpus_per_node)));
            p.push(self.uplink_up(n, pairing.switch_of_nic(nic)) + 1);
        }
        p.push(self.nic_up(n, nic));
    }

    /// Appends the way from NIC `nic` of node `n` into GPU `y`: the NIC's
    /// link in, then, when it crosses the CPU, the NIC's switch's uplink
    /// up and GPU `y`'s switch's uplink down; then `y`'s PCIe link.
    fn nic_to_gpu(&self, p: &mut Path, y: u32, n: u32, nic: u32) {
        let s = &self.spec;
        p.push(self.nic_down(n, nic));
        if s.measured_end_to_end {
            return;
        }
        if self.via_cpu(y, nic) {
            let pairing = self.pairing;
            p.push(self.uplink_up(n, pairing.switch_of_nic(nic)));
            p.push(self.uplink_up(n, pairing.switch_of_gpu(y % s.gpus_per_node)) + 1);
        }
        p.push(self.pcie_down(y));
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
        if l < self.uplink_base {
            let base = if l < self.pcie_base {
                0
            } else {
                self.pcie_base
            };
            base + (l - base) % per_node
        } else if l < self.nic_base {
            self.uplink_base + (l - self.uplink_base) % (2 * s.pcie_switch_count())
        } else if l < self.core_base {
            self.nic_base + (l - self.nic_base) % (2 * s.nics_per_node)
        } else if l < self.server_base {
            self.core_base + (l - self.core_base) % 2
        } else {
            // a dedicated server machine belongs to no node (no program
            // with one is node-symmetric)
            l
        }
    }

    /// The kind of a link: `intra` (a GPU's link to its node's fabric),
    /// `pcie` (a GPU's own PCIe link to the NICs, where the fabric is not
    /// PCIe), `pcie-switch` (a shared PCIe switch's uplink), `nic`, or
    /// `core` (a node's share of an oversubscribed core), `server-nic` (a
    /// parameter server's dedicated machine's NIC); with the direction,
    /// `-up` (out of the GPU or machine) or `-down`:
    /// `"nic-up"`. Every link of a kind has the same capacity.
    pub fn link_kind(&self, l: LinkId) -> &'static str {
        LINK_KINDS[self.link_kind_index(l)]
    }

    /// [`Topology::link_kind`] as its index in [`LINK_KINDS`].
    pub fn link_kind_index(&self, l: LinkId) -> usize {
        let down = (l % 2) as usize;
        let base = if l >= self.uplink_base && l < self.nic_base {
            4
        } else if l < self.nic_base && self.pcie_base > 0 && l >= self.pcie_base {
            2
        } else if l < self.nic_base {
            0
        } else if l < self.core_base {
            6
        } else if l < self.server_base {
            8
        } else {
            10
        };
        base + down
    }

    /// Human name of a link, for traces and errors: its owner and its
    /// [`Topology::link_kind`] (`"node3-nic0-up"`, `"gpu5-intra-down"`).
    pub fn link_name(&self, l: LinkId) -> String {
        let k = self.link_kind_index(l);
        let (kind, dir) = (
            LINK_KINDS[k],
            if k.is_multiple_of(2) { "up" } else { "down" },
        );
        // the owner's index among its kind's: two links (up, down) each
        let at = |base: u32| (l - base) / 2;
        match k / 2 {
            0 => format!("gpu{}-{kind}", at(0)),
            1 => format!("gpu{}-{kind}", at(self.pcie_base)),
            2 => {
                let (i, per) = (at(self.uplink_base), self.spec.pcie_switch_count());
                format!("node{}-pcie-switch{}-{dir}", i / per, i % per)
            }
            3 => {
                let (i, per) = (at(self.nic_base), self.spec.nics_per_node);
                format!("node{}-nic{}-{dir}", i / per, i % per)
            }
            4 => format!("node{}-{kind}", at(self.core_base)),
            _ => format!("server{}-nic-{dir}", at(self.server_base)),
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
            pcie_switches: None,
            gpudirect: false,
            measured_end_to_end: false,
            nics_per_node: nics,
            oversubscription: over,
            placement: Placement::Contiguous,
            cpu_cores: DEFAULT_CPU_CORES,
            nic_efficiency: 1.0,
            ps_machines: 0,
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

    /// Without shared switches the pairing is the index rule the module
    /// documents, for every count of GPUs and NICs.
    #[test]
    fn pairing_without_switches_is_the_index_rule() {
        for g in 1..=8u32 {
            for nics in 1..=20u32 {
                let p = Pairing::new(g, nics, None);
                for local in 0..g {
                    for ahead in 0..5 {
                        let want = if nics <= g {
                            local % nics
                        } else {
                            local + g * (ahead % (nics - local).div_ceil(g))
                        };
                        assert_eq!(p.nic_of_gpu(local, ahead), want, "{g} {nics} {local}");
                    }
                    for n in 0..nics {
                        let own = if nics <= g {
                            local % nics == n
                        } else {
                            n % g == local
                        };
                        assert_eq!(p.is_own_nic(local, n), own);
                        assert!(p.near(local, n));
                    }
                    for i in 0..p.own_nics(local) {
                        assert!(p.is_own_nic(local, p.own_nic(local, i)));
                    }
                }
                for n in 0..nics {
                    assert_eq!(p.gpu_of_nic(n), n % g);
                }
            }
        }
    }

    /// Shared switches: GPUs pair with NICs of their own switch, as the
    /// layouts of docs/research/efa.md have them.
    #[test]
    fn shared_switches_pair_inside_the_switch() {
        // p4d: 2 GPUs and 1 NIC per switch
        let p = Pairing::new(8, 4, Some(2));
        let nic: Vec<u32> = (0..8).map(|g| p.nic_of_gpu(g, 0)).collect();
        assert_eq!(nic, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(
            (0..4).map(|n| p.gpu_of_nic(n)).collect::<Vec<_>>(),
            [0, 2, 4, 6]
        );
        assert!(p.is_own_nic(5, 2) && !p.is_own_nic(5, 1));
        assert!(p.near(5, 2) && !p.near(5, 3));
        // DGX A100: 2 GPUs and 2 NICs per switch, GPU i on NIC i
        let p = Pairing::new(8, 8, Some(2));
        assert!((0..8).all(|g| p.nic_of_gpu(g, 0) == g && p.gpu_of_nic(g) == g));
        assert!(p.near(3, 2) && !p.near(3, 4));
        // p5: 1 GPU and 4 NICs per switch
        let p = Pairing::new(8, 32, Some(1));
        assert_eq!(p.own_nics(3), 4);
        let own: Vec<u32> = (0..4).map(|i| p.own_nic(3, i)).collect();
        assert_eq!(own, [12, 13, 14, 15]);
        assert_eq!((0..4).map(|a| p.nic_of_gpu(3, a)).collect::<Vec<_>>(), own);
        assert_eq!(p.gpu_of_nic(14), 3);
        assert!(p.near(3, 15) && !p.near(3, 16));
        // fewer NICs than switches: two switches of 4 GPUs share one NIC,
        // under the first
        let p = Pairing::new(8, 1, Some(4));
        assert!((0..8).all(|g| p.nic_of_gpu(g, 0) == 0 && p.is_own_nic(g, 0)));
        assert_eq!(p.switch_of_nic(0), 0);
        assert!(p.near(3, 0) && !p.near(4, 0));
    }

    /// Shared switches' uplinks carry what goes through the CPU: host
    /// memory (a PS server's traffic, staging without GPUDirect) and PCIe
    /// peers or a GPU and a NIC under different switches; what stays under
    /// one switch does not touch them.
    #[test]
    fn shared_switch_uplinks_carry_what_crosses_the_cpu() {
        let mut s = spec(2, 4, 2, 1.0);
        let uplink = NicLink {
            name: "u".into(),
            link: LinkParams {
                bandwidth: 16e9,
                latency: 1e-6,
            },
        };
        s.pcie_switches = Some(PcieSwitches { gpus: 2, uplink });
        s.gpudirect = true;
        let t = Topology::new(&s);
        let names =
            |p: &Path| -> Vec<String> { p.links().iter().map(|&l| t.link_name(l)).collect() };
        // PCIe peers: under one switch, as before; across, via the CPU
        let p = t.path(Endpoint::Gpu(0), Endpoint::Gpu(1));
        assert_eq!(names(&p), ["gpu0-intra-up", "gpu1-intra-down"]);
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(2));
        assert_eq!(
            names(&p),
            [
                "gpu1-intra-up",
                "node0-pcie-switch0-up",
                "node0-pcie-switch1-down",
                "gpu2-intra-down"
            ]
        );
        assert_eq!(p.latency, 2e-6);
        // GPUDirect to a NIC of its own switch: no uplink (GPU 5 is GPU 1
        // of node 1, under switch 0 with NIC 0)
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(5));
        assert_eq!(
            names(&p),
            [
                "gpu1-intra-up",
                "node0-nic0-up",
                "node1-nic0-down",
                "gpu5-intra-down"
            ]
        );
        // a channel pinned to the other switch's NIC crosses the CPU on
        // both nodes (a PCIe node has no PXN)
        let p = t.route(Endpoint::Gpu(1), Endpoint::Gpu(5), Some(1));
        assert_eq!(
            names(&p),
            [
                "gpu1-intra-up",
                "node0-pcie-switch0-up",
                "node0-pcie-switch1-down",
                "node0-nic1-up",
                "node1-nic1-down",
                "node1-pcie-switch1-up",
                "node1-pcie-switch0-down",
                "gpu5-intra-down"
            ]
        );
        // a PS server on the host: up or down its GPU's switch uplink
        let h = t.path(Endpoint::Gpu(3), Endpoint::Host { node: 0, nic: 0 });
        assert_eq!(names(&h), ["gpu3-intra-up", "node0-pcie-switch1-up"]);
        let h = t.path(Endpoint::Host { node: 1, nic: 1 }, Endpoint::Gpu(0));
        assert_eq!(
            names(&h),
            [
                "node1-pcie-switch1-down",
                "node1-nic1-up",
                "node0-nic0-down",
                "gpu0-intra-down"
            ]
        );
        // staged through host memory: into host memory and out to the NIC
        // over the uplinks, the mirror on the receiving side
        s.gpudirect = false;
        let t = Topology::new(&s);
        let p = t.path(Endpoint::Gpu(1), Endpoint::Gpu(5));
        assert_eq!(
            p.links()
                .iter()
                .map(|&l| t.link_name(l))
                .collect::<Vec<_>>(),
            [
                "gpu1-intra-up",
                "node0-pcie-switch0-up",
                "node0-pcie-switch0-down",
                "node0-nic0-up",
                "node1-nic0-down",
                "node1-pcie-switch0-up",
                "node1-pcie-switch0-down",
                "gpu5-intra-down"
            ]
        );
        assert_eq!(t.path_bandwidth(&p), 10e9);
        // node 1's uplinks map onto node 0's
        assert_eq!(t.link_in_node0(t.uplink_up(1, 1)), t.uplink_up(0, 1));
        assert_eq!(t.capacities()[t.uplink_up(1, 0) as usize + 1], 16e9);
    }

    #[test]
    fn scattered_placement_visits_every_node_in_turn() {
        let mut s = spec(3, 2, 1, 1.0);
        s.placement = Placement::Scattered;
        let gpus: Vec<u32> = (0..6).map(|r| s.gpu_of_rank(r)).collect();
        assert_eq!(gpus, [0, 2, 4, 1, 3, 5]);
    }
}
