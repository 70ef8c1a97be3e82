//! Bytes per link in a run's result (`RunResult::links`): the loads the
//! closed forms give, a parameter server's hot spot, the same bytes in
//! both network models, and the grouping of messages by collective
//! against a walk of every message.

use crate::{ideal, one_layer, rel};
use sim::cluster::{LINK_KINDS, Topology};
use sim::net::NetModel;
use sim::scenario::load_str;
use sim::train::{RunResult, TrainConfig, simulate};

fn config(text: &str) -> TrainConfig {
    load_str(&ideal(text), "t.toml", "t").unwrap()[0]
        .config
        .clone()
}

fn kind<'a>(r: &'a RunResult, k: &str) -> &'a sim::train::LinkLoad {
    r.links
        .iter()
        .find(|l| l.kind == k)
        .unwrap_or_else(|| panic!("no {k} in {:?}", r.links))
}

/// A ring AllReduce of m bytes over N single-GPU nodes puts 2(N − 1)/N · m
/// on every NIC in each direction (BaiduRing); the iteration is compute
/// plus the ring's m·2(N − 1)/(N·B) (no latency), so the NICs are busy
/// 0.12 s of 0.15: 80%, the busiest kind, evenly loaded. Relative 1e-9:
/// the sums of a few float products.
#[test]
fn a_ring_loads_every_nic_with_the_closed_form() {
    let r = simulate(&config(&one_layer(""))).unwrap();
    let m = 100e6;
    let per_nic = 2.0 * 3.0 / 4.0 * m;
    let iter = 0.030 + per_nic / 1.25e9;
    assert!(rel(r.iteration_time_s, iter) < 1e-9);
    // equal utilisations keep the kinds' order: up before down
    assert_eq!(r.links[0].kind, "nic-up");
    assert_eq!(r.links[1].kind, "nic-down");
    for k in ["nic-up", "nic-down"] {
        let l = kind(&r, k);
        assert_eq!(l.links, 4);
        assert!(l.busiest.starts_with("node0-nic0-"), "{}", l.busiest);
        assert!(rel(l.bytes_per_iteration, per_nic) < 1e-9, "{l:?}");
        assert!(rel(l.mean_bytes_per_iteration, per_nic) < 1e-9, "{l:?}");
        assert!(
            rel(l.utilisation, per_nic / (1.25e9 * iter)) < 1e-9,
            "{l:?}"
        );
        assert!(rel(l.utilisation, 0.8) < 1e-9, "{l:?}");
    }
    // what each GPU sends crosses its own link to the node too
    assert!(rel(kind(&r, "intra-up").bytes_per_iteration, per_nic) < 1e-9);
    assert!(rel(r.bytes_sent_per_gpu, per_nic) < 1e-9);
}

/// One parameter server (on node 0's host) for four single-GPU nodes:
/// the three remote workers push m each into node 0's NIC and pull m
/// each out of it, so node 0's NIC carries 3m each way, the other NICs m
/// (their worker's push up, its pull down): a hot spot of 3m against a
/// mean of (3m + 3·m)/4 = 1.5m, named by the busiest link.
#[test]
fn a_single_server_is_a_hot_spot_on_its_nic() {
    let r = simulate(&config(&one_layer("dense = \"ps\"\nps_servers = 1"))).unwrap();
    let m = 100e6;
    for (k, name) in [("nic-up", "node0-nic0-up"), ("nic-down", "node0-nic0-down")] {
        let l = kind(&r, k);
        assert_eq!(l.busiest, name);
        assert!(rel(l.bytes_per_iteration, 3.0 * m) < 1e-9, "{l:?}");
        assert!(rel(l.mean_bytes_per_iteration, 1.5 * m) < 1e-9, "{l:?}");
    }
    assert!(r.links[0].kind.starts_with("nic-"), "{:?}", r.links);
}

/// A model of 16 layers over 4 × 2 GPUs, each layer its own message
/// (fusion off, FIFO): the analytical and the flow model put the same
/// bytes on the same links (the loads come from the messages, not their
/// timing), and in the flow model no link is busier than its capacity
/// allows over the iteration.
#[test]
fn both_network_models_move_the_same_bytes() {
    let text = r#"
iterations = 4
[cluster]
nodes = 4
gpus_per_node = 2
network = "eth-25g"
intra = "pcie3-x16"
model = "flow"
[model]
preset = "vgg16"
gpu = "titan-xp"
batch_per_gpu = 16
[strategy]
fusion = 0
"#;
    let flow_cfg = config(text);
    let mut analytical_cfg = flow_cfg.clone();
    analytical_cfg.net_model = NetModel::Analytical;
    let flow = simulate(&flow_cfg).unwrap();
    let analytical = simulate(&analytical_cfg).unwrap();
    assert!(!flow.links.is_empty());
    assert_eq!(flow.links.len(), analytical.links.len());
    for f in &flow.links {
        let a = kind(&analytical, &f.kind);
        assert_eq!(f.busiest, a.busiest);
        assert!(rel(f.bytes_per_iteration, a.bytes_per_iteration) < 1e-12);
        assert!(rel(f.mean_bytes_per_iteration, a.mean_bytes_per_iteration) < 1e-12);
        assert!(f.utilisation <= 1.0, "{f:?}");
    }
}

/// The result walks each (collective, stretch of sizes between its
/// switches of algorithm) once and scales it; walking every message of
/// an iteration instead (each layer its own message, fusion off, FIFO)
/// gives the same loads, for MPICH's and Open MPI's selections, whose
/// algorithms change with the size, over layers from 4 kB to 40 MB, and
/// the ring. Relative 1e-9: the walks' float sums in another order.
#[test]
fn grouped_loads_equal_a_walk_of_every_message() {
    for algo in ["ring", "mpich", "ompi"] {
        let mut text = String::from(
            r#"
iterations = 2
[cluster]
nodes = 3
gpus_per_node = 2
network = "eth-10g"
intra = "pcie3-x16"
model = "analytical"
[model]
batch_per_gpu = 8
"#,
        );
        for (i, params) in [1_000u64, 30_000, 1_000_000, 10_000_000, 7]
            .iter()
            .enumerate()
        {
            text += &format!(
                "[[model.layers]]\nname = \"l{i}\"\nparams = {params}\nforward = \"1ms\"\nbackward = \"2ms\"\n"
            );
        }
        text += &format!("[strategy]\nfusion = 0\nallreduce = \"{algo}\"\n");
        let cfg = config(&text);
        let r = simulate(&cfg).unwrap();
        let coll = cfg.strategy.dense_collective();
        let topo = Topology::new(&cfg.cluster);
        let mut want = vec![0.0f64; topo.capacities().len()];
        for layer in &cfg.model.layers {
            let bytes = cfg.model.grad_bytes(layer) as f64;
            for (w, b) in want.iter_mut().zip(coll.link_bytes(&cfg.cluster, bytes)) {
                *w += b;
            }
        }
        let mut seen = 0;
        for (k, name) in LINK_KINDS.iter().enumerate() {
            let of_kind: Vec<f64> = (0..want.len() as u32)
                .filter(|&l| topo.link_kind_index(l) == k)
                .map(|l| want[l as usize])
                .collect();
            let max = of_kind.iter().copied().fold(0.0, f64::max);
            if max == 0.0 {
                assert!(r.links.iter().all(|l| l.kind != *name), "{algo} {name}");
                continue;
            }
            seen += 1;
            let got = kind(&r, name);
            let mean = of_kind.iter().sum::<f64>() / of_kind.len() as f64;
            assert_eq!(got.links as usize, of_kind.len());
            assert!(
                rel(got.bytes_per_iteration, max) < 1e-9,
                "{algo} {got:?} {max}"
            );
            assert!(
                rel(got.mean_bytes_per_iteration, mean) < 1e-9,
                "{algo} {got:?} {mean}"
            );
        }
        assert_eq!(seen, r.links.len(), "{algo}");
    }
}

/// One GPU sends nothing: no links in the result, none in its JSON.
#[test]
fn one_gpu_has_no_link_loads() {
    let r = simulate(&config(
        "[cluster]\nnodes = 1\ngpus_per_node = 1\nnetwork = \"eth-10g\"\n[model]\npreset = \"resnet50\"\ngpu = \"titan-xp\"\nbatch_per_gpu = 8\n",
    ))
    .unwrap();
    assert!(r.links.is_empty());
    assert!(!serde_json::to_string(&r).unwrap().contains("\"links\""));
}

/// A parameter server on a dedicated machine (`ps_machines = 1`) for the
/// four single-GPU nodes of [`one_layer`]: every worker's push of m
/// crosses the server machine's NIC (4m each way), where a server on node
/// 0 takes only the three remote ones (3m). The overlapped PS pushes and
/// pulls at once, so the iteration is compute plus 4m/B (no latency):
/// 0.030 + 0.32 s, against 0.030 + 0.24 s on node 0, in both network
/// models. The workers' NICs carry m each way either way.
#[test]
fn a_dedicated_server_machine_takes_every_push() {
    let m = 100e6;
    let cfg = config(&one_layer(
        "dense = \"ps\"\nps_servers = 1\nps_machines = 1",
    ));
    assert_eq!(cfg.cluster.ps_machines, 1);
    let r = simulate(&cfg).unwrap();
    assert!(
        rel(r.iteration_time_s, 0.030 + 4.0 * m / 1.25e9) < 1e-9,
        "{}",
        r.iteration_time_s
    );
    // the flow model agrees: each direction of the server's NIC alone
    let flow = simulate(&TrainConfig {
        net_model: NetModel::Flow,
        ..cfg.clone()
    })
    .unwrap();
    assert!(rel(flow.iteration_time_s, r.iteration_time_s) < 1e-9);
    for (k, name) in [
        ("server-nic-up", "server0-nic-up"),
        ("server-nic-down", "server0-nic-down"),
    ] {
        let l = kind(&r, k);
        assert_eq!((l.busiest.as_str(), l.links), (name, 1));
        assert!(rel(l.bytes_per_iteration, 4.0 * m) < 1e-9, "{l:?}");
        assert!(rel(l.utilisation, 4.0 * m / (1.25e9 * r.iteration_time_s)) < 1e-9);
    }
    assert_eq!(r.links[0].kind, "server-nic-up");
    for k in ["nic-up", "nic-down"] {
        let l = kind(&r, k);
        assert!(rel(l.bytes_per_iteration, m) < 1e-9, "{l:?}");
        assert!(rel(l.mean_bytes_per_iteration, m) < 1e-9, "{l:?}");
    }
    assert_eq!(
        r.ps_servers,
        Some(sim::train::PsServers {
            servers: 1,
            dedicated_machines: 1,
            // the GPU machines' cores by default
            machine_cores: sim::cluster::DEFAULT_CPU_CORES,
        })
    );
    let colocated = simulate(&config(&one_layer("dense = \"ps\"\nps_servers = 1"))).unwrap();
    assert_eq!(
        colocated.ps_servers.as_ref().map(|p| p.dedicated_machines),
        Some(0)
    );
    assert!(
        simulate(&config(&one_layer("")))
            .unwrap()
            .ps_servers
            .is_none()
    );
    assert!(rel(colocated.iteration_time_s, 0.030 + 3.0 * m / 1.25e9) < 1e-9);
}

/// More NICs than GPUs: a GPU's traffic to dedicated server machine m
/// leaves by its own NIC m mod its own NICs, so six machines load a node's
/// four NICs alike (two GPUs, two NICs each), and the PS takes what two
/// NICs of twice the rate give it: the same time, analytical and flow.
/// (Before the fix every machine was "0 nodes ahead" of a lone node and
/// took each GPU's first NIC: twice the time.)
#[test]
fn traffic_to_server_machines_spreads_over_a_gpus_nics() {
    use sim::cluster::ClusterSpec;
    use sim::collective::{Algo, Collective, Op, links::link_bytes};
    let spec = |nics: u32, bandwidth: f64| {
        let mut c = ClusterSpec::flat(1, bandwidth, 0.0);
        c.gpus_per_node = 2;
        c.nics_per_node = nics;
        c.ps_machines = 6;
        c
    };
    let ps = Collective {
        local_aggregation: false,
        ..Collective::new(Op::Ps).with_algo(Algo::Sequential).unwrap()
    };
    let (four, two) = (spec(4, 1.25e9), spec(2, 2.5e9));
    let topo = Topology::new(&four);
    let loads = link_bytes(&ps.program(&four, 1e8), &topo);
    let nic_up: Vec<f64> = (0..4).map(|n| loads[topo.nic_up(0, n) as usize]).collect();
    // each GPU's m, a sixth to each machine, half out of each of its NICs
    for &b in &nic_up {
        assert!(rel(b, 0.5e8) < 1e-12, "{nic_up:?}");
    }
    let (a4, f4, _) = crate::both(&ps, &four, 1e8);
    let (a2, f2, _) = crate::both(&ps, &two, 1e8);
    assert!(
        rel(a4, a2) < 1e-9 && rel(f4, f2) < 1e-9,
        "{a4} {a2} {f4} {f2}"
    );
    // push, then pull: m/2 a NIC each way at 1.25 GB/s
    assert!(rel(a4, 2.0 * 0.5e8 / 1.25e9) < 1e-9, "{a4}");
}
