//! A cluster as users describe it (counts, a network preset or calibration
//! profile, an intra-node preset, overrides as text with units) checked
//! and turned into a [`ClusterSpec`]. Scenario files (`[cluster]`) and
//! `dtsim collective`'s flags describe clusters the same way, so both go
//! through [`Description::build`]; an error names the field, which each
//! caller spells its own way (`cluster.nics_per_node`, `--nics-per-node`).

use super::presets::{self, Kind, LinkPreset};
use super::{ClusterSpec, LinkParams, NicLink, PcieSwitches, Placement};
use crate::limits;
use crate::names::unknown;
use crate::profile::Profile;
use crate::units::{parse_bandwidth, parse_seconds};
use std::path::{Path, PathBuf};

/// The intra-node preset when none is named.
pub const DEFAULT_INTRA: &str = "pcie3-x16";

/// Most NICs a node may have. Rings across nodes run a channel per NIC,
/// so the work of a step grows with GPUs × NICs; 64 is twice the most of
/// any machine we know (AWS p5: 32).
pub const MAX_NICS_PER_NODE: u32 = 64;

/// The name of the link a calibration profile's `[network]` makes.
const PROFILE: &str = "profile";

/// A field of a [`Description`], as errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `nodes`.
    Nodes,
    /// `gpus_per_node`.
    GpusPerNode,
    /// `nics_per_node`.
    NicsPerNode,
    /// `network`.
    Network,
    /// `intra`.
    Intra,
    /// `bandwidth`.
    Bandwidth,
    /// `latency`.
    Latency,
    /// `intra_bandwidth`.
    IntraBandwidth,
    /// `intra_latency`.
    IntraLatency,
    /// `oversubscription`.
    Oversubscription,
    /// `nic_link`.
    NicLink,
    /// `gpudirect`.
    Gpudirect,
    /// `node`.
    Node,
    /// `nic_efficiency`.
    NicEfficiency,
    /// `gpus_per_pcie_switch`.
    GpusPerPcieSwitch,
    /// `pcie_uplink`.
    PcieUplink,
}

impl Field {
    /// The name in a scenario's `[cluster]` table; a flag is this with
    /// `-` for `_`.
    pub fn key(self) -> &'static str {
        match self {
            Field::Nodes => "nodes",
            Field::GpusPerNode => "gpus_per_node",
            Field::NicsPerNode => "nics_per_node",
            Field::Network => "network",
            Field::Intra => "intra",
            Field::Bandwidth => "bandwidth",
            Field::Latency => "latency",
            Field::IntraBandwidth => "intra_bandwidth",
            Field::IntraLatency => "intra_latency",
            Field::Oversubscription => "oversubscription",
            Field::NicLink => "nic_link",
            Field::Gpudirect => "gpudirect",
            Field::Node => "node",
            Field::NicEfficiency => "nic_efficiency",
            Field::GpusPerPcieSwitch => "gpus_per_pcie_switch",
            Field::PcieUplink => "pcie_uplink",
        }
    }

    /// The command-line flag: `--gpus-per-node`.
    pub fn flag(self) -> String {
        format!("--{}", self.key().replace('_', "-"))
    }
}

/// What is wrong with a [`Description`], by field.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The field at fault.
    pub field: Field,
    /// What is wrong.
    pub message: String,
}

fn invalid(field: Field, message: impl Into<String>) -> Invalid {
    Invalid {
        field,
        message: message.into(),
    }
}

/// A cluster as a user describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// Machines (at least 1).
    pub nodes: u32,
    /// GPUs per machine (at least 1).
    pub gpus_per_node: u32,
    /// NICs per machine (1 to [`MAX_NICS_PER_NODE`]).
    pub nics_per_node: u32,
    /// An inter-node preset's name, or the path of a calibration profile
    /// (`.toml`), relative to `dir`.
    pub network: String,
    /// The directory relative profile paths are read from (a scenario's).
    pub dir: Option<PathBuf>,
    /// An intra-node preset's name ([`DEFAULT_INTRA`] if `None`), or the
    /// path of a calibration profile (`.toml`), relative to `dir`, whose
    /// `[network]` link becomes the GPUs' fabric inside a node.
    pub intra: Option<String>,
    /// Per-NIC bandwidth overriding the network's ("100Gbps").
    pub bandwidth: Option<String>,
    /// Inter-node latency overriding the network's ("1.5us").
    pub latency: Option<String>,
    /// Per-GPU intra-node bandwidth overriding the preset's.
    pub intra_bandwidth: Option<String>,
    /// Intra-node latency overriding the preset's.
    pub intra_latency: Option<String>,
    /// A PCIe preset for the GPU's link to its NICs and host, on nodes
    /// whose GPU fabric is NVLink (default: the PCIe generation of the
    /// network's NICs, `LinkPreset::nic_pcie`). On a PCIe node the GPU
    /// reaches its NIC over its intra link, so only that preset may be named.
    pub nic_link: Option<String>,
    /// GPUs under each shared PCIe switch (`None` or 0: every GPU's PCIe
    /// link reaches the CPU directly, as a node preset's switches are
    /// turned off); must divide `gpus_per_node`, and the switches must
    /// share the NICs equally (NICs a multiple of the switches, or
    /// dividing them).
    pub gpus_per_pcie_switch: Option<u32>,
    /// A PCIe preset for each shared switch's uplink to the CPU (default:
    /// the GPU's own PCIe link); only with `gpus_per_pcie_switch`.
    pub pcie_uplink: Option<String>,
    /// GPUDirect RDMA (default: on for RDMA networks, off for TCP and
    /// calibration profiles; on is refused for TCP networks).
    pub gpudirect: Option<bool>,
    /// Core oversubscription (1 = non-blocking, at most
    /// [`limits::MAX_OVERSUBSCRIPTION`]).
    pub oversubscription: f64,
    /// Rank placement of collectives.
    pub placement: Placement,
    /// Host CPU cores per machine ([`super::DEFAULT_CPU_CORES`] unless
    /// given).
    pub cpu_cores: u32,
    /// The fraction of the network's per-NIC bandwidth collectives reach,
    /// in (0, 1] (`sim::losses`); the inter-node bandwidth is multiplied
    /// by it.
    pub nic_efficiency: f64,
    /// Machines dedicated to parameter servers
    /// ([`ClusterSpec::ps_machines`]; 0: the servers share the GPU
    /// machines' hosts).
    pub ps_machines: u32,
    /// The node preset the description came from, if any (errors name it
    /// where its bundle, not the user, supplied the faulty value).
    pub node: Option<String>,
}

/// The keys a node preset bundles, each as the user gave it (`None`: not
/// given), and the preset's name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeKeys {
    /// A node preset's name (`presets::NODES`).
    pub node: Option<String>,
    /// GPUs per machine.
    pub gpus_per_node: Option<u32>,
    /// NICs per machine.
    pub nics_per_node: Option<u32>,
    /// An inter-node preset or calibration profile.
    pub network: Option<String>,
    /// An intra-node preset or calibration profile.
    pub intra: Option<String>,
    /// The GPU's PCIe link to its NICs.
    pub nic_link: Option<String>,
    /// GPUs per shared PCIe switch.
    pub gpus_per_pcie_switch: Option<u32>,
    /// The shared PCIe switches' uplink.
    pub pcie_uplink: Option<String>,
}

impl Description {
    /// `nodes` machines as `keys` describe them: each key given wins; a
    /// named node preset supplies the rest of its bundle; elsewhere the
    /// defaults of [`Description::new`] (1 GPU, 1 NIC, [`DEFAULT_INTRA`]).
    /// Without a node preset `network` is required. A node's `nic_link`
    /// is dropped where a given `intra` makes the node a PCIe one (whose
    /// GPUs reach their NICs over that fabric).
    pub fn from_keys(nodes: u32, keys: NodeKeys) -> Result<Description, Invalid> {
        let node = match &keys.node {
            Some(n) => Some(presets::node(n).ok_or_else(|| {
                let known: Vec<_> = presets::NODES.iter().map(|p| p.name).collect();
                invalid(Field::Node, unknown("node", n, &known))
            })?),
            None => None,
        };
        let network = match (keys.network, node) {
            (Some(n), _) => n,
            (None, Some(p)) => p.network.to_string(),
            (None, None) => {
                return Err(invalid(
                    Field::Network,
                    "is required: a network preset or a calibration profile (.toml), or a node preset in `node`",
                ));
            }
        };
        let intra = keys.intra.clone().or(node.map(|p| p.intra.to_string()));
        let pcie_node = intra
            .as_deref()
            .and_then(presets::intra_node)
            .is_some_and(|p| p.kind == Kind::Pcie);
        let nic_link = match (keys.nic_link, node) {
            (Some(l), _) => Some(l),
            (None, Some(p)) if !pcie_node => Some(p.nic_link.to_string()),
            _ => None,
        };
        let switches = node.filter(|p| p.gpus_per_pcie_switch > 0);
        Ok(Description {
            nics_per_node: keys
                .nics_per_node
                .or(node.map(|p| p.nics_per_node))
                .unwrap_or(1),
            intra,
            nic_link,
            gpus_per_pcie_switch: keys
                .gpus_per_pcie_switch
                .or(switches.map(|p| p.gpus_per_pcie_switch)),
            pcie_uplink: keys
                .pcie_uplink
                .or(switches
                    .and_then(|p| (!p.pcie_uplink.is_empty()).then(|| p.pcie_uplink.into()))),
            node: keys.node,
            ..Description::new(
                nodes,
                keys.gpus_per_node
                    .or(node.map(|p| p.gpus_per_node))
                    .unwrap_or(1),
                &network,
            )
        })
    }

    /// A description of `nodes × gpus_per_node` GPUs on `network` with
    /// every other field at its default.
    pub fn new(nodes: u32, gpus_per_node: u32, network: &str) -> Description {
        Description {
            nodes,
            gpus_per_node,
            nics_per_node: 1,
            network: network.into(),
            dir: None,
            intra: None,
            bandwidth: None,
            latency: None,
            intra_bandwidth: None,
            intra_latency: None,
            nic_link: None,
            gpus_per_pcie_switch: None,
            pcie_uplink: None,
            node: None,
            gpudirect: None,
            oversubscription: 1.0,
            placement: Placement::Contiguous,
            cpu_cores: super::DEFAULT_CPU_CORES,
            nic_efficiency: 1.0,
            ps_machines: 0,
        }
    }

    /// Checks every field and builds the cluster. A preset whose
    /// bandwidth or latency is overridden is named with a `*` (`eth-10g*`),
    /// so tables never show a preset's name beside figures it lacks.
    pub fn build(&self) -> Result<ClusterSpec, Invalid> {
        if self.nodes == 0 {
            return Err(invalid(Field::Nodes, "must be at least 1"));
        }
        if self.gpus_per_node == 0 {
            return Err(invalid(Field::GpusPerNode, "must be at least 1"));
        }
        limits::check_gpus(self.nodes as u64, self.gpus_per_node as u64)
            .map_err(|m| invalid(Field::GpusPerNode, m))?;
        let nics = self.nics_per_node;
        if nics == 0 || nics > MAX_NICS_PER_NODE {
            return Err(invalid(
                Field::NicsPerNode,
                format!("{nics} NICs per node: must be from 1 to {MAX_NICS_PER_NODE}"),
            ));
        }
        let inter = self.network_preset()?;
        let intra_name = self.intra.as_deref().unwrap_or(DEFAULT_INTRA);
        let intra = &self.intra_preset(intra_name)?;
        limits::check_oversubscription(self.oversubscription)
            .map_err(|m| invalid(Field::Oversubscription, m))?;
        let e = self.nic_efficiency;
        if !(e.is_finite() && e > 0.0 && e <= 1.0) {
            return Err(invalid(
                Field::NicEfficiency,
                format!("must be a fraction of the NIC's bandwidth in (0, 1], got {e}"),
            ));
        }
        let nic_link = self.nic_link(&inter, intra)?;
        let intra_link = link(
            intra,
            (Field::IntraBandwidth, &self.intra_bandwidth),
            (Field::IntraLatency, &self.intra_latency),
        )?;
        let starred = if self.intra_bandwidth.is_some() || self.intra_latency.is_some() {
            format!("{intra_name}*")
        } else {
            intra_name.to_string()
        };
        let pcie_switches = self.pcie_switches(&starred, intra_link, &nic_link)?;
        let gpudirect = match (self.gpudirect, inter.kind) {
            (Some(true), Kind::Tcp) => {
                return Err(invalid(
                    Field::Gpudirect,
                    format!(
                        "`{}` is a TCP network: its NICs cannot read GPU memory (GPUDirect RDMA needs InfiniBand or RoCE, e.g. eth-100g or ib-*)",
                        self.network
                    ),
                ));
            }
            (Some(_), _) if inter.name == PROFILE => {
                return Err(invalid(
                    Field::Gpudirect,
                    format!(
                        "means nothing with a calibration profile's network (`{}`): its latency and bandwidth were measured end to end, the GPU's way to its NIC included, so dtsim adds neither GPUDirect's latency nor a host-staged copy (leave gpudirect out)",
                        self.network
                    ),
                ));
            }
            (Some(g), _) => g,
            (None, kind) => kind == Kind::Rdma && inter.name != PROFILE,
        };
        let named = |name: &str, a: &Option<String>, b: &Option<String>| {
            if a.is_some() || b.is_some() {
                format!("{name}*")
            } else {
                name.to_string()
            }
        };
        Ok(ClusterSpec {
            nodes: self.nodes,
            gpus_per_node: self.gpus_per_node,
            network: named(&self.network, &self.bandwidth, &self.latency),
            inter: {
                let l = link(
                    &inter,
                    (Field::Bandwidth, &self.bandwidth),
                    (Field::Latency, &self.latency),
                )?;
                LinkParams {
                    bandwidth: l.bandwidth * e,
                    ..l
                }
            },
            intra_name: named(intra_name, &self.intra_bandwidth, &self.intra_latency),
            intra: intra_link,
            nic_link,
            pcie_switches,
            gpudirect,
            measured_end_to_end: inter.name == PROFILE,
            nics_per_node: nics,
            oversubscription: self.oversubscription,
            placement: self.placement,
            cpu_cores: self.cpu_cores,
            nic_efficiency: self.nic_efficiency,
            ps_machines: self.ps_machines,
        })
    }

    /// The GPU's own PCIe link, on nodes whose fabric is not PCIe.
    fn nic_link(&self, inter: &LinkPreset, intra: &LinkPreset) -> Result<Option<NicLink>, Invalid> {
        if intra.kind == Kind::Pcie {
            return match &self.nic_link {
                Some(n) if n != intra.name => Err(invalid(
                    Field::NicLink,
                    format!(
                        "`{n}` differs from intra = `{}`: on a node whose GPUs talk over PCIe, a GPU reaches its NIC over that same link (leave nic_link out, or set intra)",
                        intra.name
                    ),
                )),
                _ => Ok(None),
            };
        }
        let name = self.nic_link.as_deref().unwrap_or(inter.nic_pcie);
        pcie_link(Field::NicLink, name).map(Some)
    }

    /// The shared PCIe switches, checked against the node's GPUs and NICs;
    /// the uplink defaults to the GPU's own PCIe link (`intra` on a PCIe
    /// node, with its overrides).
    fn pcie_switches(
        &self,
        intra_name: &str,
        intra: LinkParams,
        nic_link: &Option<NicLink>,
    ) -> Result<Option<PcieSwitches>, Invalid> {
        let Some(k) = self.gpus_per_pcie_switch.filter(|&k| k > 0) else {
            return match &self.pcie_uplink {
                Some(_) => Err(invalid(
                    Field::PcieUplink,
                    "means nothing without gpus_per_pcie_switch: a GPU's PCIe link reaches the CPU directly unless GPUs share a PCIe switch",
                )),
                None => Ok(None),
            };
        };
        let from = match &self.node {
            Some(n) => format!(" (node `{n}`'s)"),
            None => String::new(),
        };
        let g = self.gpus_per_node;
        if !g.is_multiple_of(k) {
            return Err(invalid(
                Field::GpusPerPcieSwitch,
                format!("{k} GPUs per PCIe switch{from} must divide the {g} GPUs of a node"),
            ));
        }
        let (switches, nics) = (g / k, self.nics_per_node);
        if !(nics.is_multiple_of(switches) || switches.is_multiple_of(nics)) {
            return Err(invalid(
                Field::GpusPerPcieSwitch,
                format!(
                    "{k} GPUs per PCIe switch{from} make {switches} switches, which cannot share the {nics} NICs of a node equally: NICs per node must be a multiple of the switches, or divide them"
                ),
            ));
        }
        let uplink = match &self.pcie_uplink {
            Some(name) => pcie_link(Field::PcieUplink, name)?,
            None => nic_link.clone().unwrap_or(NicLink {
                name: intra_name.to_string(),
                link: intra,
            }),
        };
        Ok(Some(PcieSwitches { gpus: k, uplink }))
    }

    /// A profile's path as named: relative to the scenario's directory.
    fn profile_path(&self, named: &str) -> PathBuf {
        match &self.dir {
            Some(d) if Path::new(named).is_relative() => d.join(named),
            _ => PathBuf::from(named),
        }
    }

    /// The intra-node preset named, or one made of a calibration
    /// profile's `[network]` table: a GPU-to-GPU latency and a GPU's
    /// bandwidth, as a fit of one node's collectives or ping-pong gives
    /// them. The profile does not say what the fabric is; dtsim takes it
    /// for one of its own, as NVLink is, so that a GPU reaches its NICs
    /// and host over `nic_link` (by default the NICs' PCIe generation).
    fn intra_preset(&self, name: &str) -> Result<LinkPreset, Invalid> {
        self.preset_or_profile(
            name,
            Field::Intra,
            "intra-node link",
            presets::INTRA_NODE,
            Kind::NvLink,
        )
    }

    /// The inter-node preset named, or one made of a calibration profile's
    /// `[network]` table (what the profile's network is, it does not say:
    /// taken for RDMA).
    fn network_preset(&self) -> Result<LinkPreset, Invalid> {
        self.preset_or_profile(
            &self.network,
            Field::Network,
            "network",
            presets::INTER_NODE,
            Kind::Rdma,
        )
    }

    /// The preset of `table` named `name` (a `what`, for the message), or,
    /// for a `.toml` path, one made of that calibration profile's
    /// `[network]` table as a link of `profile_kind`; refused on `field`.
    fn preset_or_profile(
        &self,
        name: &str,
        field: Field,
        what: &str,
        table: &'static [LinkPreset],
        profile_kind: Kind,
    ) -> Result<LinkPreset, Invalid> {
        if name.ends_with(".toml") {
            let (latency_s, bandwidth) =
                profile_network(&self.profile_path(name)).map_err(|m| invalid(field, m))?;
            return Ok(LinkPreset {
                name: PROFILE,
                kind: profile_kind,
                nic_pcie: DEFAULT_INTRA,
                bandwidth_bytes_per_s: bandwidth,
                latency_s,
                source: "calibration profile",
            });
        }
        table
            .iter()
            .find(|p| p.name == name)
            .copied()
            .ok_or_else(|| {
                let known: Vec<_> = table.iter().map(|p| p.name).collect();
                invalid(
                    field,
                    format!(
                        "{}, or the path of a calibration profile (.toml)",
                        unknown(what, name, &known)
                    ),
                )
            })
    }
}

/// The PCIe preset `name` as a link, for `field` (`nic_link`,
/// `pcie_uplink`); an unknown name is refused with the known ones.
fn pcie_link(field: Field, name: &str) -> Result<NicLink, Invalid> {
    let p = presets::intra_node(name)
        .filter(|p| p.kind == Kind::Pcie)
        .ok_or_else(|| {
            let known: Vec<_> = presets::INTRA_NODE
                .iter()
                .filter(|p| p.kind == Kind::Pcie)
                .map(|p| p.name)
                .collect();
            invalid(field, unknown("PCIe link", name, &known))
        })?;
    Ok(NicLink {
        name: p.name.to_string(),
        link: LinkParams {
            bandwidth: p.bandwidth_bytes_per_s,
            latency: p.latency_s,
        },
    })
}

/// A preset's link with its bandwidth and latency overridden where given;
/// every figure checked against the simulator's limits.
fn link(
    preset: &LinkPreset,
    bandwidth: (Field, &Option<String>),
    latency: (Field, &Option<String>),
) -> Result<LinkParams, Invalid> {
    let bandwidth = match bandwidth {
        (_, None) => preset.bandwidth_bytes_per_s,
        (f, Some(t)) => {
            let b = parse_bandwidth(t).map_err(|e| invalid(f, e.to_string()))?;
            limits::check_bandwidth(b).map_err(|m| invalid(f, m))?;
            b
        }
    };
    let latency = match latency {
        (_, None) => preset.latency_s,
        (f, Some(t)) => {
            let l = parse_seconds(t).map_err(|e| invalid(f, e.to_string()))?;
            limits::check_latency(l).map_err(|m| invalid(f, m))?;
            l
        }
    };
    Ok(LinkParams { bandwidth, latency })
}

/// Link parameters from a calibration profile's `[network]` table
/// (written by `dtsim calibrate`): (latency s, bandwidth B/s).
fn profile_network(path: &Path) -> Result<(f64, f64), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read calibration profile {}: {e}", path.display()))?;
    Profile::from_toml(&text)
        .and_then(|p| p.network_link().map(|n| (n.latency_s, n.bandwidth_bps)))
        .map_err(|e| format!("calibration profile {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_overrides() {
        let c = Description::new(2, 4, "eth-10g").build().unwrap();
        let eth = presets::inter_node("eth-10g").unwrap();
        assert_eq!(c.network, "eth-10g");
        assert_eq!(c.inter.bandwidth, eth.bandwidth_bytes_per_s);
        assert_eq!(c.intra_name, DEFAULT_INTRA);
        let d = Description {
            bandwidth: Some("25Gbps".into()),
            intra_latency: Some("2us".into()),
            ..Description::new(2, 4, "eth-10g")
        };
        let c = d.build().unwrap();
        assert_eq!(
            (c.network.as_str(), c.inter.bandwidth),
            ("eth-10g*", 3.125e9)
        );
        assert_eq!(c.inter.latency, eth.latency_s);
        assert_eq!(c.intra_name, "pcie3-x16*");
        assert_eq!(c.intra.latency, 2e-6);
    }

    /// GPU-to-NIC paths: a PCIe node has none of its own; an NVLink node
    /// takes the PCIe generation of its NICs unless told; GPUDirect RDMA is
    /// on for RDMA networks, off for TCP ones and profiles, and may be
    /// turned off.
    #[test]
    fn nic_links_and_gpudirect_follow_the_hardware() {
        let build = |network: &str, intra: &str| {
            Description {
                intra: Some(intra.into()),
                ..Description::new(2, 8, network)
            }
            .build()
            .unwrap()
        };
        let c = build("ib-edr-100g", "pcie4-x16");
        assert_eq!((c.nic_link.is_none(), c.gpudirect), (true, true));
        assert_eq!(c.gpu_pcie(), c.intra);
        assert_eq!(c.gpu_nic_latency(), presets::GPUDIRECT_RDMA_LATENCY_S);
        for (network, pcie) in [
            ("ib-edr-100g", "pcie3-x16"),
            ("ib-hdr-200g", "pcie4-x16"),
            ("ib-ndr-400g", "pcie5-x16"),
        ] {
            let c = build(network, "nvlink3");
            let n = c.nic_link.clone().unwrap();
            let p = presets::intra_node(pcie).unwrap();
            assert_eq!(n.name, pcie);
            assert_eq!(n.link.bandwidth, p.bandwidth_bytes_per_s);
            // every NIC fits in its PCIe link
            assert!(c.inter.bandwidth <= n.link.bandwidth, "{network}");
        }
        let tcp = build("eth-10g", "nvlink3");
        assert!(!tcp.gpudirect);
        assert_eq!(tcp.gpu_nic_latency(), tcp.gpu_pcie().latency);
        let d = Description {
            intra: Some("nvlink4".into()),
            nic_link: Some("pcie4-x16".into()),
            gpudirect: Some(false),
            ..Description::new(2, 8, "ib-ndr-400g")
        };
        let c = d.build().unwrap();
        assert_eq!(c.nic_link.unwrap().name, "pcie4-x16");
        assert!(!c.gpudirect);
        // naming the intra link itself on a PCIe node is allowed
        let d = Description {
            nic_link: Some(DEFAULT_INTRA.into()),
            ..Description::new(2, 8, "ib-ndr-400g")
        };
        assert!(d.build().unwrap().nic_link.is_none());
    }

    #[test]
    fn each_bad_field_is_named() {
        let base = Description::new(2, 4, "eth-10g");
        let cases: Vec<(Description, Field, &str)> = vec![
            (
                Description {
                    nodes: 0,
                    ..base.clone()
                },
                Field::Nodes,
                "must be at least 1",
            ),
            (
                Description {
                    nics_per_node: 65,
                    ..base.clone()
                },
                Field::NicsPerNode,
                "65 NICs per node",
            ),
            (
                Description {
                    network: "eth-3g".into(),
                    ..base.clone()
                },
                Field::Network,
                "unknown network `eth-3g` (did you mean `eth-1g`?); known: ",
            ),
            (
                Description {
                    intra: Some("pcie9".into()),
                    ..base.clone()
                },
                Field::Intra,
                "unknown intra-node link `pcie9`",
            ),
            (
                Description {
                    bandwidth: Some("fast".into()),
                    ..base.clone()
                },
                Field::Bandwidth,
                "`fast` does not start with a number",
            ),
            (
                Description {
                    latency: Some("20s".into()),
                    ..base.clone()
                },
                Field::Latency,
                "outside [0, 10] s",
            ),
            (
                Description {
                    oversubscription: 0.5,
                    ..base.clone()
                },
                Field::Oversubscription,
                "must be in [1, ",
            ),
            (
                Description {
                    gpudirect: Some(true),
                    ..base.clone()
                },
                Field::Gpudirect,
                "`eth-10g` is a TCP network",
            ),
            (
                Description {
                    nic_link: Some("pcie4-x16".into()),
                    ..base.clone()
                },
                Field::NicLink,
                "`pcie4-x16` differs from intra = `pcie3-x16`",
            ),
            (
                Description {
                    intra: Some("nvlink3".into()),
                    nic_link: Some("nvlink4".into()),
                    ..base.clone()
                },
                Field::NicLink,
                "unknown PCIe link `nvlink4`; known: pcie3-x16, pcie4-x16, pcie5-x16",
            ),
            (
                Description {
                    gpus_per_pcie_switch: Some(3),
                    ..base.clone()
                },
                Field::GpusPerPcieSwitch,
                "3 GPUs per PCIe switch must divide the 4 GPUs of a node",
            ),
            (
                Description {
                    gpus_per_pcie_switch: Some(1),
                    nics_per_node: 3,
                    ..base.clone()
                },
                Field::GpusPerPcieSwitch,
                "make 4 switches, which cannot share the 3 NICs of a node equally",
            ),
            (
                Description {
                    pcie_uplink: Some("pcie4-x16".into()),
                    ..base.clone()
                },
                Field::PcieUplink,
                "means nothing without gpus_per_pcie_switch",
            ),
            (
                Description {
                    gpus_per_pcie_switch: Some(2),
                    pcie_uplink: Some("nvlink4".into()),
                    ..base.clone()
                },
                Field::PcieUplink,
                "unknown PCIe link `nvlink4`",
            ),
            (
                Description {
                    network: "missing.toml".into(),
                    ..base
                },
                Field::Network,
                "cannot read calibration profile missing.toml",
            ),
        ];
        for (d, field, says) in cases {
            let e = d.build().unwrap_err();
            assert_eq!(e.field, field, "{e:?}");
            assert!(e.message.contains(says), "{field:?}: {}", e.message);
        }
        assert_eq!(Field::NicsPerNode.flag(), "--nics-per-node");
    }

    /// A node preset fills the keys not given and no more; a given key
    /// wins; an unknown node is named with the known ones; without a node
    /// or a network there is nothing to build.
    #[test]
    fn node_presets_bundle_keys_that_each_override() {
        let keys = |node: &str| NodeKeys {
            node: Some(node.into()),
            ..NodeKeys::default()
        };
        let c = Description::from_keys(4, keys("dgx-h100"))
            .unwrap()
            .build()
            .unwrap();
        assert_eq!((c.nodes, c.gpus_per_node, c.nics_per_node), (4, 8, 8));
        assert_eq!(
            (c.network.as_str(), c.intra_name.as_str()),
            ("ib-ndr-400g", "nvlink4")
        );
        assert_eq!(c.nic_link.as_ref().unwrap().name, "pcie5-x16");
        assert!(c.gpudirect);
        // every preset builds, and names presets that exist
        for p in presets::NODES {
            let c = Description::from_keys(2, keys(p.name))
                .unwrap()
                .build()
                .unwrap();
            assert_eq!(c.gpus(), 2 * p.gpus_per_node, "{}", p.name);
        }
        // overrides, one at a time
        let d = Description::from_keys(
            2,
            NodeKeys {
                gpus_per_node: Some(4),
                nics_per_node: Some(2),
                network: Some("ib-hdr-200g".into()),
                ..keys("dgx-h100")
            },
        )
        .unwrap();
        assert_eq!(
            (d.gpus_per_node, d.nics_per_node, d.network.as_str()),
            (4, 2, "ib-hdr-200g")
        );
        assert_eq!(d.nic_link.as_deref(), Some("pcie5-x16"));
        // a PCIe fabric given over an NVLink node drops the node's NIC link
        let d = Description::from_keys(
            2,
            NodeKeys {
                intra: Some("pcie4-x16".into()),
                ..keys("dgx-a100")
            },
        )
        .unwrap();
        assert_eq!(d.nic_link, None);
        assert_eq!(d.build().unwrap().intra_name, "pcie4-x16");
        // a bundle's switches that no longer fit the counts given say whose
        // they are
        let e = Description::from_keys(
            2,
            NodeKeys {
                gpus_per_node: Some(6),
                ..keys("aws-p4d")
            },
        )
        .unwrap()
        .build()
        .unwrap_err();
        assert_eq!(e.field, Field::GpusPerPcieSwitch);
        assert!(
            e.message
                .contains("2 GPUs per PCIe switch (node `aws-p4d`'s) make 3 switches"),
            "{}",
            e.message
        );
        // switches and their uplink: the bundle's, the GPU's PCIe link by
        // default, or as given
        let c = Description::from_keys(2, keys("dgx-a100"))
            .unwrap()
            .build()
            .unwrap();
        let sw = c.pcie_switches.clone().unwrap();
        assert_eq!((sw.gpus, sw.uplink.name.as_str()), (2, "pcie4-x16"));
        assert_eq!(c.pcie_switch_count(), 4);
        let c = Description::from_keys(
            2,
            NodeKeys {
                gpus_per_pcie_switch: Some(4),
                pcie_uplink: Some("pcie3-x16".into()),
                ..keys("dgx-a100")
            },
        )
        .unwrap()
        .build()
        .unwrap();
        let sw = c.pcie_switches.unwrap();
        assert_eq!((sw.gpus, sw.uplink.name.as_str()), (4, "pcie3-x16"));
        // 0 turns a node's switches off
        let c = Description::from_keys(
            2,
            NodeKeys {
                gpus_per_pcie_switch: Some(0),
                ..keys("aws-p4d")
            },
        )
        .unwrap()
        .build()
        .unwrap();
        assert_eq!(
            (c.pcie_switches.is_none(), c.pcie_switch_count()),
            (true, 0)
        );
        // on a PCIe node the uplink defaults to the intra link, overrides
        // and all
        let c = Description {
            gpus_per_pcie_switch: Some(2),
            intra_bandwidth: Some("10GB/s".into()),
            ..Description::new(1, 4, "eth-10g")
        }
        .build()
        .unwrap();
        let sw = c.pcie_switches.unwrap();
        assert_eq!(
            (sw.uplink.name.as_str(), sw.uplink.link.bandwidth),
            ("pcie3-x16*", 10e9)
        );
        let e = Description::from_keys(1, keys("dgx-a10")).unwrap_err();
        assert_eq!(e.field, Field::Node);
        assert!(
            e.message.contains("dgx-a100") && e.message.contains("dgx-h100"),
            "{}",
            e.message
        );
        let e = Description::from_keys(1, NodeKeys::default()).unwrap_err();
        assert_eq!(e.field, Field::Network);
        assert!(e.message.contains("node"), "{}", e.message);
    }
}
