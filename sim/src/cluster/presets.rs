//! Link presets: bandwidth and latency of common inter-node networks and intra-node GPU links. Every figure's source is in docs/network-presets.md.
//!
//! Bandwidths are per direction (links are full duplex) and are what a bulk
//! transfer reaches, not the signalling rate; latencies are one-way
//! small-message figures (half a ping-pong round trip). The arithmetic that
//! turns a source's number into bytes per second is written out in each
//! constant, so the literal can be checked against the document. Where a
//! figure is a spec rate or an assumption rather than a measurement, the
//! `source` string says so.

/// What kind of link a preset is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A NIC that software drives through the kernel's TCP stack: no
    /// GPUDirect RDMA, every transfer staged through host memory.
    Tcp,
    /// An RDMA NIC (InfiniBand, RoCE): GPUDirect RDMA possible.
    Rdma,
    /// PCIe: a GPU's link to its host, its NICs and, on nodes without
    /// NVLink, its peers.
    Pcie,
    /// NVLink, to peers or to an NVSwitch.
    NvLink,
}

/// A named link preset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkPreset {
    /// Name used in scenario files, e.g. "ib-edr-100g".
    pub name: &'static str,
    /// The kind of link.
    pub kind: Kind,
    /// A NIC's: the PCIe link a card of this speed sits on (the default
    /// `cluster.nic_link` of a node whose GPU fabric is NVLink); `""` for
    /// intra-node presets.
    pub nic_pcie: &'static str,
    /// Achievable bandwidth per direction, bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// One-way small-message latency, seconds.
    pub latency_s: f64,
    /// Short citation; the full one is in docs/network-presets.md.
    pub source: &'static str,
}

/// TCP payload bytes per full-size frame at MTU 1500 with TCP timestamps
/// (1500 - 20 IPv4 - 20 TCP - 12 timestamp option).
const TCP_PAYLOAD_PER_FRAME: f64 = 1448.0;
/// Bytes a 1500-byte-MTU frame occupies on the wire: 1500 + 14 header + 4 FCS
/// + 8 preamble/SFD + 12 inter-frame gap.
const ETH_WIRE_BYTES_PER_FRAME: f64 = 1538.0;

/// Inter-node (NIC) presets.
pub const INTER_NODE: &[LinkPreset] = &[
    LinkPreset {
        name: "eth-1g",
        kind: Kind::Tcp,
        nic_pcie: "pcie3-x16",
        // beta = 3.6e-5 ms = 3.6e-8 s per 4-byte fp32 element.
        bandwidth_bytes_per_s: 4.0 / 3.6e-8,
        // alpha = 0.436 ms.
        latency_s: 0.436e-3,
        source: "measured, TCP (OpenMPI): Shi et al., gTop-k S-SGD, ICDCS 2019, Sec. IV-C, Fig. 8 (OSU 5.5 alpha-beta fit)",
    },
    LinkPreset {
        name: "eth-10g",
        kind: Kind::Tcp,
        nic_pcie: "pcie3-x16",
        bandwidth_bytes_per_s: 10.0e9 * TCP_PAYLOAD_PER_FRAME / ETH_WIRE_BYTES_PER_FRAME / 8.0,
        latency_s: 17.8e-6,
        source: "bw spec (TCP goodput, MTU 1500); latency measured, kernel TCP sockperf: F-Stack/f-stack issue #540",
    },
    LinkPreset {
        name: "eth-25g",
        kind: Kind::Tcp,
        nic_pcie: "pcie3-x16",
        bandwidth_bytes_per_s: 25.0e9 * TCP_PAYLOAD_PER_FRAME / ETH_WIRE_BYTES_PER_FRAME / 8.0,
        latency_s: 17.8e-6,
        source: "bw spec (TCP goodput, MTU 1500); latency assumed = eth-10g kernel TCP measurement (F-Stack issue #540)",
    },
    LinkPreset {
        name: "eth-100g",
        kind: Kind::Rdma,
        nic_pcie: "pcie3-x16",
        // ib_write_bw average 98.04 Gb/s per ~100 Gb/s RoCEv2 link, MTU 4096.
        bandwidth_bytes_per_s: 98.04e9 / 8.0,
        latency_s: 0.99e-6,
        source: "RoCEv2: bw measured ib_write_bw (validation log dgx_spark_2node_2xGB10_roce200g); latency ib_write_lat 8 B, morrismeyer/warpforge CONNECTX5.md",
    },
    LinkPreset {
        name: "ib-edr-100g",
        kind: Kind::Rdma,
        nic_pcie: "pcie3-x16",
        bandwidth_bytes_per_s: 99.1e9 / 8.0,
        latency_s: 1.27e-6,
        source: "measured OSU osu_bw/osu_latency: Microsoft Azure docs, HB-series VM size performance",
    },
    LinkPreset {
        name: "ib-hdr-200g",
        kind: Kind::Rdma,
        nic_pcie: "pcie4-x16",
        bandwidth_bytes_per_s: 190.0e9 / 8.0,
        latency_s: 1.2e-6,
        source: "measured OSU osu_bw/osu_latency: Microsoft Azure docs, HBv2-series VM size performance",
    },
    LinkPreset {
        name: "ib-ndr-400g",
        kind: Kind::Rdma,
        nic_pcie: "pcie5-x16",
        // NVIDIA NCCL maintainer: "46-48GB/s per NIC"; midpoint.
        bandwidth_bytes_per_s: 47.0e9,
        // No published NDR small-message measurement was found; Azure's HBv4
        // page bounds it ("< 2 microseconds (1 byte)"). The HDR measurement
        // is assumed: a newer generation is not slower to start a message.
        latency_s: 1.2e-6,
        source: "bw vendor-reported 46-48 GB/s (NVIDIA/nccl-tests issue #290); latency assumed = ib-hdr-200g measurement, within Azure HBv4's bound < 2 us",
    },
    LinkPreset {
        name: "efa-100g",
        kind: Kind::Rdma,
        nic_pcie: "pcie3-x16",
        // AWS ParallelCluster's osu_mbw_mr expectation for p4d/p4de, four
        // 100 Gb/s EFA together: "~330Gbps = 41250MB/s"; a quarter each.
        bandwidth_bytes_per_s: 330.0e9 / 4.0 / 8.0,
        // osu_latency, 8 B, Open MPI over libfabric, 2 x p5.48xlarge, one
        // rank per node (AWS ParallelCluster CI baseline). c5n.18xlarge
        // measures 17.2-21.1 us the same way.
        latency_s: 21.85e-6,
        source: "AWS Elastic Fabric Adapter, one 100 Gb/s interface: bw measured osu_mbw_mr (aws-parallelcluster test_osu.py, p4d); latency measured osu_latency 8 B, Open MPI, 2 x p5.48xlarge (aws-parallelcluster CI baseline)",
    },
];

/// Intra-node (GPU to node fabric) presets.
pub const INTRA_NODE: &[LinkPreset] = &[
    LinkPreset {
        name: "pcie3-x16",
        kind: Kind::Pcie,
        nic_pcie: "",
        bandwidth_bytes_per_s: 12.4e9,
        // Mean of the two off-diagonal P2P=Disabled entries, 12.84 and 11.44 us.
        latency_s: (12.84e-6 + 11.44e-6) / 2.0,
        source: "bw measured bandwidthTest H2D pinned (jdh4/della-gpu-A100, TIGER); latency assumed = pcie4-x16 measurement",
    },
    LinkPreset {
        name: "pcie4-x16",
        kind: Kind::Pcie,
        nic_pcie: "",
        bandwidth_bytes_per_s: 25.8e9,
        latency_s: (12.84e-6 + 11.44e-6) / 2.0,
        source: "bw measured bandwidthTest H2D pinned, A100-PCIE-40GB (jdh4/della-gpu-A100); latency p2pBandwidthLatencyTest, 2x RTX 4090",
    },
    LinkPreset {
        name: "pcie5-x16",
        kind: Kind::Pcie,
        nic_pcie: "",
        // Median of the three host-to-device copies of a 4x H100 VM that
        // ran at full speed (57.06, 56.68, 57.07 GB/s; device 0 ran at 14.2).
        bandwidth_bytes_per_s: 57.06e9,
        latency_s: (12.84e-6 + 11.44e-6) / 2.0,
        source: "bw measured nvbandwidth host_to_device_memcpy_ce, 4x H100 VM (NVIDIA/nvbandwidth issue #6); latency assumed = pcie4-x16 measurement",
    },
    LinkPreset {
        name: "nvlink2",
        kind: Kind::NvLink,
        nic_pcie: "",
        // 3 peers x ~47.9 GB/s, 2 NVLink2 links each, V100-SXM2.
        bandwidth_bytes_per_s: (47.88 + 47.9 + 47.93) * 1e9,
        latency_s: 2.855e-6,
        source: "bw measured p2pBandwidthLatencyTest sum, V100-SXM2 (Dell EMC Ready Solutions for AI ref. guide v1.0, Table 3); latency assumed = nvlink3",
    },
    LinkPreset {
        name: "nvlink3",
        kind: Kind::NvLink,
        nic_pcie: "",
        // Median of the 56 off-diagonal P2P-write entries, 8x A100-SXM4 (NVSwitch).
        bandwidth_bytes_per_s: 274.035e9,
        latency_s: 2.855e-6,
        source: "measured p2pBandwidthLatencyTest P2P writes, 8x A100-SXM4-80GB: YanBC/nvmlc README.md",
    },
    LinkPreset {
        name: "nvlink4",
        kind: Kind::NvLink,
        nic_pcie: "",
        // Median of the six complete row-0 P2P-write entries, 8x H100 SXM (NVSwitch).
        bandwidth_bytes_per_s: 376.27e9,
        latency_s: 2.855e-6,
        source: "bw measured p2pBandwidthLatencyTest P2P writes, HGX H100 (NVIDIA/nccl issue #1264); latency assumed = nvlink3",
    },
];

/// What GPUDirect RDMA adds to a network message's one-way latency: the
/// NIC reads or writes GPU memory across PCIe (through the GPU's BAR) instead
/// of host memory. An assumption, not a measurement: no stored source gives
/// a GPU-memory and a host-memory small-message latency from one system.
/// NVIDIA's post "Benchmarking GPUDirect RDMA on Modern Server Platforms"
/// (D. Rossetti, 2014) is summarised as GPU-to-GPU latencies consistently
/// below 2 us over InfiniBand; the host-to-host InfiniBand presets here
/// measure 1.2-1.27 us, which would leave GDR about 0.8 us, a comparison
/// across a decade of hardware; 1 us, a round value above it, is taken.
/// Without
/// GPUDirect the message is staged through host memory and pays the
/// `nic_link` PCIe preset's latency instead. See docs/network-presets.md.
pub const GPUDIRECT_RDMA_LATENCY_S: f64 = 1.0e-6;

/// A machine as built and sold: a bundle of `[cluster]` keys. Any key a
/// scenario gives overrides the bundle's. Sources: docs/network-presets.md.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodePreset {
    /// Name used in scenario files (`cluster.node`), e.g. "dgx-h100".
    pub name: &'static str,
    /// The GPU, for documentation (`model.gpu` is chosen separately).
    pub gpu: &'static str,
    /// The `model.gpu` compute tables of that GPU: another known one
    /// beside this node is warned about (`sim::scenario::advice`).
    pub gpu_tables: &'static [&'static str],
    /// `cluster.gpus_per_node`.
    pub gpus_per_node: u32,
    /// `cluster.intra`: the GPUs' fabric.
    pub intra: &'static str,
    /// `cluster.network`: one compute NIC's preset.
    pub network: &'static str,
    /// `cluster.nics_per_node`: compute NICs (storage and management NICs
    /// excluded).
    pub nics_per_node: u32,
    /// `cluster.nic_link`: the PCIe link between a GPU and its NICs.
    pub nic_link: &'static str,
    /// `cluster.gpus_per_pcie_switch` (0: none given).
    pub gpus_per_pcie_switch: u32,
    /// `cluster.pcie_uplink` (`""`: the default, the GPU's PCIe link).
    pub pcie_uplink: &'static str,
    /// Short citation; the full one is in docs/network-presets.md.
    pub source: &'static str,
}

/// Node presets.
pub const NODES: &[NodePreset] = &[
    NodePreset {
        name: "dgx-a100",
        gpu: "8x A100-SXM4 (40 or 80 GB)",
        gpu_tables: &["a100"],
        gpus_per_node: 8,
        intra: "nvlink3",
        network: "ib-hdr-200g",
        nics_per_node: 8,
        nic_link: "pcie4-x16",
        gpus_per_pcie_switch: 2,
        pcie_uplink: "",
        source: "NVIDIA DGX A100 datasheet (copy): 8x single-port ConnectX-6 HDR 200 Gb/s, 6 NVSwitches; 2 GPUs and 2 NICs per PCIe Gen4 switch (nvidia-smi topo, NVIDIA/DCGM #149, NVIDIA/nccl #1505)",
    },
    NodePreset {
        name: "dgx-h100",
        gpu: "8x H100-SXM5 80 GB",
        gpu_tables: &["h100", "h200"],
        gpus_per_node: 8,
        intra: "nvlink4",
        network: "ib-ndr-400g",
        nics_per_node: 8,
        nic_link: "pcie5-x16",
        gpus_per_pcie_switch: 1,
        pcie_uplink: "",
        source: "NVIDIA DGX H100/H200 user guide, component table: 8x single-port ConnectX-7 up to 400 Gb/s IB, 4th-gen NVLink, PCIe Gen5 CPUs; each GPU and its ConnectX-7 behind one Gen5 switch (user guide 1.2.3; HGX dumps NVIDIA/nccl #1264, nccl-tests #256)",
    },
    NodePreset {
        name: "aws-p4d",
        gpu: "8x A100-SXM4 40 GB (p4de: 80 GB)",
        gpu_tables: &["a100"],
        gpus_per_node: 8,
        intra: "nvlink3",
        network: "efa-100g",
        nics_per_node: 4,
        // the PCIe links AWS's topology file declares: 8 GT/s x16
        nic_link: "pcie3-x16",
        gpus_per_pcie_switch: 2,
        pcie_uplink: "",
        source: "AWS p4d.24xlarge: 8x A100, NVSwitch, 4x 100 Gb/s EFA; 2 GPUs and 1 EFA per PCIe switch, every link 8 GT/s x16 (aws-ofi-nccl topology/p4d-24xl-topo.xml)",
    },
    NodePreset {
        name: "aws-p5",
        gpu: "8x H100-SXM5 80 GB",
        gpu_tables: &["h100"],
        gpus_per_node: 8,
        intra: "nvlink4",
        network: "efa-100g",
        nics_per_node: 32,
        nic_link: "pcie5-x16",
        gpus_per_pcie_switch: 1,
        // AWS's file gives no uplink; the GPU's Gen5 x16 is assumed
        pcie_uplink: "",
        source: "AWS p5.48xlarge: 8x H100, NVSwitch, 32x 100 Gb/s EFA (3200 Gb/s); 1 GPU and 4 EFA per PCIe switch, NICs at 32 GT/s x16 (aws-ofi-nccl topology/p5.48xl-topo.xml, 2023); switch uplink not given (assumed Gen5 x16)",
    },
];

/// Looks up a node preset by name.
pub fn node(name: &str) -> Option<&'static NodePreset> {
    NODES.iter().find(|p| p.name == name)
}

/// Looks up an inter-node preset by name.
pub fn inter_node(name: &str) -> Option<&'static LinkPreset> {
    INTER_NODE.iter().find(|p| p.name == name)
}

/// Looks up an intra-node preset by name.
pub fn intra_node(name: &str) -> Option<&'static LinkPreset> {
    INTRA_NODE.iter().find(|p| p.name == name)
}

/// Checks on the tables themselves; the numbers are checked against their
/// sources in docs/network-presets.md, not here.
#[cfg(test)]
mod tests {
    use super::*;

    /// Both tables, inter-node first.
    fn all() -> impl Iterator<Item = &'static LinkPreset> {
        INTER_NODE.iter().chain(INTRA_NODE.iter())
    }

    /// A name must pick one preset, whichever table a scenario key reads.
    #[test]
    fn names_are_unique_across_both_tables() {
        let mut names: Vec<&str> = all().map(|p| p.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate preset name");
    }

    /// Every figure is usable as a rate or a delay, and every preset is cited.
    #[test]
    fn values_are_positive_and_finite() {
        for p in all() {
            assert!(
                p.bandwidth_bytes_per_s.is_finite() && p.bandwidth_bytes_per_s > 0.0,
                "{}: bandwidth {}",
                p.name,
                p.bandwidth_bytes_per_s
            );
            assert!(
                p.latency_s.is_finite() && p.latency_s > 0.0,
                "{}: latency {}",
                p.name,
                p.latency_s
            );
            assert!(!p.source.is_empty(), "{}: no source", p.name);
        }
    }

    /// The names DESIGN.md promises exist, each in the table for its kind of link.
    #[test]
    fn every_required_name_resolves_in_its_own_table_only() {
        for n in [
            "eth-1g",
            "eth-10g",
            "eth-25g",
            "eth-100g",
            "ib-edr-100g",
            "ib-hdr-200g",
            "ib-ndr-400g",
        ] {
            assert_eq!(inter_node(n).map(|p| p.name), Some(n));
            assert!(intra_node(n).is_none());
        }
        for n in [
            "pcie3-x16",
            "pcie4-x16",
            "pcie5-x16",
            "nvlink2",
            "nvlink3",
            "nvlink4",
        ] {
            assert_eq!(intra_node(n).map(|p| p.name), Some(n));
            assert!(inter_node(n).is_none());
        }
        assert!(inter_node("eth-40g").is_none());
    }

    /// A newer generation of the same link is never slower (catches a swapped literal).
    #[test]
    fn bandwidth_grows_within_each_family() {
        let bw = |n: &str| {
            inter_node(n)
                .or_else(|| intra_node(n))
                .map(|p| p.bandwidth_bytes_per_s)
                .unwrap()
        };
        for family in [
            &["eth-1g", "eth-10g", "eth-25g", "eth-100g"][..],
            &["ib-edr-100g", "ib-hdr-200g", "ib-ndr-400g"][..],
            &["pcie3-x16", "pcie4-x16", "pcie5-x16"][..],
            &["nvlink2", "nvlink3", "nvlink4"][..],
        ] {
            for w in family.windows(2) {
                assert!(bw(w[0]) < bw(w[1]), "{} !< {}", w[0], w[1]);
            }
        }
    }

    /// An achievable rate stays below the data rate after line encoding (catches a Gb/s vs GB/s slip).
    #[test]
    fn no_preset_exceeds_its_signalling_rate() {
        // Data rates per direction after line encoding, bytes/s.
        let limits = [
            ("eth-1g", 1e9 / 8.0),
            ("eth-10g", 10e9 / 8.0),
            ("eth-25g", 25e9 / 8.0),
            ("eth-100g", 100e9 / 8.0),
            ("ib-edr-100g", 100e9 / 8.0),
            ("ib-hdr-200g", 200e9 / 8.0),
            ("ib-ndr-400g", 400e9 / 8.0),
            ("efa-100g", 100e9 / 8.0),
            ("pcie3-x16", 8e9 * 16.0 * 128.0 / 130.0 / 8.0),
            ("pcie4-x16", 16e9 * 16.0 * 128.0 / 130.0 / 8.0),
            ("pcie5-x16", 32e9 * 16.0 * 128.0 / 130.0 / 8.0),
            ("nvlink2", 6.0 * 25e9),
            ("nvlink3", 12.0 * 25e9),
            ("nvlink4", 18.0 * 25e9),
        ];
        for (n, limit) in limits {
            let p = inter_node(n).or_else(|| intra_node(n)).unwrap();
            assert!(p.bandwidth_bytes_per_s < limit, "{n} above its spec rate");
        }
    }
}
