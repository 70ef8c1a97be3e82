//! A cluster as users describe it (counts, a network preset or calibration
//! profile, an intra-node preset, overrides as text with units) checked
//! and turned into a [`ClusterSpec`]. Scenario files (`[cluster]`) and
//! `dtsim collective`'s flags describe clusters the same way, so both go
//! through [`Description::build`]; an error names the field, which each
//! caller spells its own way (`cluster.nics_per_node`, `--nics-per-node`).

use super::presets::{self, LinkPreset};
use super::{ClusterSpec, LinkParams, Placement};
use crate::limits;
use crate::names::unknown;
use crate::profile::Profile;
use crate::units::{parse_bandwidth, parse_seconds};
use std::path::{Path, PathBuf};

/// The intra-node preset when none is named.
pub const DEFAULT_INTRA: &str = "pcie3-x16";

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
    /// NICs per machine (1 to max(GPUs per node, 64)).
    pub nics_per_node: u32,
    /// An inter-node preset's name, or the path of a calibration profile
    /// (`.toml`), relative to `dir`.
    pub network: String,
    /// The directory relative profile paths are read from (a scenario's).
    pub dir: Option<PathBuf>,
    /// An intra-node preset's name ([`DEFAULT_INTRA`] if `None`).
    pub intra: Option<String>,
    /// Per-NIC bandwidth overriding the network's ("100Gbps").
    pub bandwidth: Option<String>,
    /// Inter-node latency overriding the network's ("1.5us").
    pub latency: Option<String>,
    /// Per-GPU intra-node bandwidth overriding the preset's.
    pub intra_bandwidth: Option<String>,
    /// Intra-node latency overriding the preset's.
    pub intra_latency: Option<String>,
    /// Core oversubscription (1 = non-blocking, at most
    /// [`limits::MAX_OVERSUBSCRIPTION`]).
    pub oversubscription: f64,
    /// Rank placement of collectives.
    pub placement: Placement,
}

impl Description {
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
            oversubscription: 1.0,
            placement: Placement::Contiguous,
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
        if nics == 0 || nics > self.gpus_per_node.max(64) {
            return Err(invalid(
                Field::NicsPerNode,
                format!("{nics} NICs per node: must be from 1 to max(GPUs per node, 64)"),
            ));
        }
        let inter = self.network_preset()?;
        let intra_name = self.intra.as_deref().unwrap_or(DEFAULT_INTRA);
        let intra = presets::intra_node(intra_name).ok_or_else(|| {
            let known: Vec<_> = presets::INTRA_NODE.iter().map(|p| p.name).collect();
            invalid(Field::Intra, unknown("intra-node link", intra_name, &known))
        })?;
        limits::check_oversubscription(self.oversubscription)
            .map_err(|m| invalid(Field::Oversubscription, m))?;
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
            inter: link(
                &inter,
                (Field::Bandwidth, &self.bandwidth),
                (Field::Latency, &self.latency),
            )?,
            intra_name: named(intra_name, &self.intra_bandwidth, &self.intra_latency),
            intra: link(
                intra,
                (Field::IntraBandwidth, &self.intra_bandwidth),
                (Field::IntraLatency, &self.intra_latency),
            )?,
            nics_per_node: nics,
            oversubscription: self.oversubscription,
            placement: self.placement,
        })
    }

    /// The inter-node preset named, or one made of a calibration profile's
    /// `[network]` table.
    fn network_preset(&self) -> Result<LinkPreset, Invalid> {
        let network = &self.network;
        if network.ends_with(".toml") {
            let path = match &self.dir {
                Some(d) if Path::new(network).is_relative() => d.join(network),
                _ => PathBuf::from(network),
            };
            let (latency_s, bandwidth) =
                profile_network(&path).map_err(|m| invalid(Field::Network, m))?;
            return Ok(LinkPreset {
                name: "profile",
                bandwidth_bytes_per_s: bandwidth,
                latency_s,
                source: "calibration profile",
            });
        }
        presets::inter_node(network).copied().ok_or_else(|| {
            let known: Vec<_> = presets::INTER_NODE.iter().map(|p| p.name).collect();
            invalid(
                Field::Network,
                format!(
                    "{}, or the path of a calibration profile (.toml)",
                    unknown("network", network, &known)
                ),
            )
        })
    }
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
}
