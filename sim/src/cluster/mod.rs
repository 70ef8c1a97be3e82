//! The cluster: nodes of GPUs, their links, and the paths transfers take.
//!
//! ```text
//!   node 0                                   node 1
//!   GPU0 ─┐ intra                      intra ┌─ GPU2
//!   GPU1 ─┴─ node fabric ── NIC ══╗ ╔══ NIC ── node fabric ─┴─ GPU3
//!   host ───┘  (PCIe/NVLink)      ║ ║                      └── host
//!                              switch fabric (core, optional oversubscription)
//! ```
//!
//! Every link is full duplex: it has an independent `up` (out of the GPU or
//! node) and `down` (into it) direction, each with the link's bandwidth.
//! A transfer's path is the list of directed links it crosses:
//!
//! * GPU to GPU on one node: the sender's intra `up`, the receiver's intra
//!   `down`; latency: the intra-node preset's (a GPU-to-GPU figure).
//! * across nodes: sender's intra `up`, the sender node's NIC `up`, the core
//!   `up`/`down` of both nodes when the fabric is oversubscribed, the
//!   receiver node's NIC `down`, the receiver's intra `down`; latency: the
//!   inter-node preset's (host to host, as ping-pong measures it) plus the
//!   intra-node one (the two hops between GPU and NIC), so a hop across
//!   nodes never costs less than a hop inside one.
//! * a host endpoint (a parameter server process) has no intra link of its
//!   own: its traffic crosses only the NIC (remote peers) or the GPU's intra
//!   link (local peers).
//!
//! GPU `i` of a node uses NIC `i mod nics_per_node` (rail-aligned, as NCCL
//! places GPUs next to their nearest NIC).

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
    /// NICs per node.
    pub nics_per_node: u32,
    /// Core oversubscription ratio (1 = non-blocking).
    pub oversubscription: f64,
    /// Rank layout of collectives.
    pub placement: Placement,
}

impl ClusterSpec {
    /// A flat cluster for formula checks: `n` single-GPU nodes, every pair
    /// connected at `bandwidth` bytes/s and `latency` s; intra-node links add
    /// no latency and are never the bottleneck.
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
            nics_per_node: 1,
            oversubscription: 1.0,
            placement: Placement::Contiguous,
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

    /// Node of a GPU.
    pub fn node_of_gpu(&self, g: u32) -> u32 {
        g / self.gpus_per_node
    }

    /// The NIC (0-based within its node) that a GPU uses.
    pub fn nic_of_gpu(&self, g: u32) -> u32 {
        (g % self.gpus_per_node) % self.nics_per_node
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
}

/// Index of a directed link in a [`Topology`].
pub type LinkId = u32;

/// The directed links of a cluster and the paths between endpoints.
#[derive(Debug, Clone)]
pub struct Topology {
    spec: ClusterSpec,
    /// Capacity of each directed link, bytes/s.
    capacity: Vec<f64>,
    nic_base: u32,
    core_base: u32,
}

/// The links and latency of one transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Path {
    links: [LinkId; 6],
    len: u8,
    /// One-way latency, seconds.
    pub latency: f64,
}

impl Path {
    pub(crate) fn new(latency: f64) -> Path {
        Path {
            links: [0; 6],
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
        let gpus = spec.gpus();
        let nics = spec.nodes * spec.nics_per_node;
        let mut capacity = Vec::with_capacity(2 * (gpus + nics + spec.nodes) as usize);
        capacity.resize(2 * gpus as usize, spec.intra.bandwidth);
        let nic_base = capacity.len() as u32;
        capacity.resize(capacity.len() + 2 * nics as usize, spec.inter.bandwidth);
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

    /// The intra-node link out of GPU `g`.
    pub fn gpu_up(&self, g: u32) -> LinkId {
        2 * g
    }
    /// The intra-node link into GPU `g`.
    pub fn gpu_down(&self, g: u32) -> LinkId {
        2 * g + 1
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

    fn locate(&self, e: Endpoint) -> (u32, u32) {
        match e {
            Endpoint::Gpu(g) => (self.spec.node_of_gpu(g), self.spec.nic_of_gpu(g)),
            Endpoint::Host { node, nic } => (node, nic),
        }
    }

    /// The path from `a` to `b`. A transfer from an endpoint to itself has
    /// an empty path and zero latency.
    pub fn path(&self, a: Endpoint, b: Endpoint) -> Path {
        if a == b {
            return Path::new(0.0);
        }
        let (na, nica) = self.locate(a);
        let (nb, nicb) = self.locate(b);
        let same_node = na == nb;
        let mut p = Path::new(if same_node {
            self.spec.intra.latency
        } else {
            self.spec.inter.latency + self.spec.intra.latency
        });
        if let Endpoint::Gpu(g) = a {
            p.push(self.gpu_up(g));
        }
        if !same_node {
            p.push(self.nic_up(na, nica));
            if self.spec.oversubscription > 1.0 {
                p.push(self.core_up(na));
                p.push(self.core_up(nb) + 1);
            }
            p.push(self.nic_down(nb, nicb));
        }
        if let Endpoint::Gpu(g) = b {
            p.push(self.gpu_down(g));
        }
        p
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
        if l < self.nic_base {
            l % (2 * s.gpus_per_node)
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
            format!("gpu{}-intra-{dir}", l / 2)
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
            nics_per_node: nics,
            oversubscription: over,
            placement: Placement::Contiguous,
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

    #[test]
    fn scattered_placement_visits_every_node_in_turn() {
        let mut s = spec(3, 2, 1, 1.0);
        s.placement = Placement::Scattered;
        let gpus: Vec<u32> = (0..6).map(|r| s.gpu_of_rank(r)).collect();
        assert_eq!(gpus, [0, 2, 4, 1, 3, 5]);
    }
}
