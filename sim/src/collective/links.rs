//! Bytes each link carries during one collective.
//!
//! Every send of a collective's [`Program`] crosses the directed links of
//! its path ([`Topology::path`]), so the bytes a link carries are
//!
//! ```text
//! bytes(l) = Σ_steps Σ_participants Σ_{sends s of the step} size(s) · [l ∈ path(s)]
//! ```
//!
//! These depend only on the program and the topology, never on timing: the
//! analytical and the flow model move exactly the same bytes over the same
//! links (the flow model's [`super::exec::FlowOutcome::link_bytes`] is this
//! sum, accumulated as flows finish; tests check that both agree).
//!
//! Two shortcuts keep the walk cheap on large clusters, both exact:
//!
//! * every step of a [`Phase::Ring`] sends the same sizes between the same
//!   pairs (each member to its successor), so one step is walked and its
//!   loads multiplied by the phase's step count;
//! * a [`Program::node_symmetric`] program is walked for node 0's
//!   participants only, node k's links mapped onto node 0's
//!   ([`Topology::link_in_node0`]); node 0's links then carry the sum over
//!   every node's counterpart flows, which by symmetry is what each real
//!   link carries, and the loads are copied back to every node.
//!
//! A ring AllReduce over N GPUs thus costs O(1) steps × O(G) participants
//! (G GPUs per node) in contiguous placement and O(N) in scattered
//! placement; binomial trees cost O(N log N), a pairwise exchange in
//! scattered placement O(N²).
//!
//! **Linearity.** Every send of a program is a fixed fraction of the
//! buffer (m/N, m/G, m/S, m, or a zero-byte PS "ready" signal), so the
//! bytes on every link are proportional to the buffer size m: the loads of
//! a 1-byte program, multiplied by m, are those of an m-byte program (up to
//! float rounding, about 1e-16 relative).
//!
//! **Utilisation bound.** For each link l and each model, the time T of a
//! collective satisfies bytes(l) ≤ B_l · T (B_l the link's capacity): in
//! the analytical model each step costs at least the step's load on l over
//! B_l (`analytical`: T = Σ_steps max_f(α_f + max_{l ∈ path(f)} load_l/B_l)),
//! and in the flow model the max-min rates on l never sum above B_l (and
//! flow finish times are rounded up to the picosecond). So the average
//! utilisation bytes(l) / (T · B_l) is at most 1, up to the rounding of T
//! to the nearest picosecond in the analytical model.

use super::program::{Phase, Program};
use crate::cluster::Topology;

/// Bytes each directed link of `topo` carries during one run of `prog`,
/// indexed by [`crate::cluster::LinkId`] (see the module docs for the sum
/// and its shortcuts). `topo` must be the topology of the cluster `prog`
/// was built for.
///
/// ```
/// use sim::cluster::{ClusterSpec, Topology};
/// use sim::collective::{Collective, Op, links::link_bytes};
/// // ring AllReduce of 1 MB over 4 single-GPU nodes: every NIC uplink
/// // carries 2(N−1)/N · m = 1.5 MB (BaiduRing)
/// let cluster = ClusterSpec::flat(4, 1e9, 0.0);
/// let topo = Topology::new(&cluster);
/// let prog = Collective::new(Op::AllReduce).program(&cluster, 1e6);
/// let bytes = link_bytes(&prog, &topo);
/// for node in 0..4 {
///     assert!((bytes[topo.nic_up(node, 0) as usize] - 1.5e6).abs() < 1e-6);
/// }
/// ```
pub fn link_bytes(prog: &Program, topo: &Topology) -> Vec<f64> {
    walk(prog, topo, prog.node_symmetric())
}

/// [`link_bytes`] walking every participant, never using node symmetry.
pub fn link_bytes_full(prog: &Program, topo: &Topology) -> Vec<f64> {
    walk(prog, topo, false)
}

fn walk(prog: &Program, topo: &Topology, symmetric: bool) -> Vec<f64> {
    let links = topo.capacities().len();
    let mut load = vec![0.0f64; links];
    let parts: Vec<u32> = (0..prog.participants())
        .filter(|&p| !symmetric || prog.node_of(p) == 0)
        .collect();
    let mut out = Vec::new();
    for (i, phase) in prog.phases().iter().enumerate() {
        let range = prog.phase_range(i);
        // every step of a ring phase has the same sends
        let (steps, mult) = match phase {
            Phase::Ring { .. } if !range.is_empty() => (range.start..range.start + 1, range.len()),
            _ => (range, 1),
        };
        let mult = mult as f64;
        for step in steps {
            for &p in &parts {
                out.clear();
                prog.sends(p, step, &mut out);
                for send in &out {
                    let bytes = send.bytes;
                    if bytes == 0.0 {
                        continue;
                    }
                    let path = prog.path(topo, p, send);
                    for &l in path.links() {
                        let l = if symmetric { topo.link_in_node0(l) } else { l };
                        load[l as usize] += bytes * mult;
                    }
                }
            }
        }
    }
    if symmetric {
        // node k's links carry what node 0's carry; node-0 links map to
        // themselves, so read them before any is overwritten
        let node0 = load.clone();
        for (l, b) in load.iter_mut().enumerate() {
            *b = node0[topo.link_in_node0(l as u32) as usize];
        }
    }
    load
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClusterSpec, Placement};
    use crate::collective::exec::run_flow;
    use crate::collective::{Algo, Collective, Op};

    fn cluster(nodes: u32, g: u32, nics: u32) -> ClusterSpec {
        let mut c = ClusterSpec::flat(nodes, 1e9, 5e-6);
        c.gpus_per_node = g;
        c.nics_per_node = nics;
        c.intra.bandwidth = 4e9;
        c.intra.latency = 1e-6;
        c
    }

    fn coll(op: Op, algo: Algo) -> Collective {
        Collective::new(op).with_algo(algo).unwrap()
    }

    fn bytes_of(c: &Collective, spec: &ClusterSpec, m: f64) -> (Topology, Vec<f64>) {
        let topo = Topology::new(spec);
        let b = link_bytes(&c.program(spec, m), &topo);
        (topo, b)
    }

    /// Relative closeness: the sums add a few terms of m/N, so they are
    /// exact to a few ulps (1e-12 leaves room for thousands of additions).
    #[track_caller]
    fn close(got: f64, want: f64, what: &str) {
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{what}: got {got}, want {want}"
        );
    }

    /// BaiduRing: in a ring AllReduce over N single-GPU nodes every GPU
    /// sends 2(N−1) chunks of m/N, each crossing its intra link and its
    /// NIC, so every NIC uplink (and downlink) carries 2(N−1)/N · m.
    #[test]
    fn ring_one_gpu_per_node_loads_every_nic_with_2_n_minus_1_over_n() {
        let m = 123e6;
        for n in [2u32, 3, 5, 8, 33] {
            for placement in [Placement::Contiguous, Placement::Scattered] {
                let mut spec = cluster(n, 1, 1);
                spec.placement = placement;
                let (t, b) = bytes_of(&Collective::new(Op::AllReduce), &spec, m);
                let want = 2.0 * (n as f64 - 1.0) / n as f64 * m;
                for node in 0..n {
                    close(b[t.nic_up(node, 0) as usize], want, "nic up");
                    close(b[t.nic_down(node, 0) as usize], want, "nic down");
                    close(b[t.gpu_up(node) as usize], want, "intra up");
                    close(b[t.gpu_down(node) as usize], want, "intra down");
                }
            }
        }
    }

    /// 2 nodes × 4 GPUs, contiguous ring 0→1→…→7→0, 2(N−1) = 14 steps of
    /// m/8. Every GPU sends and receives one chunk per step: 14·m/8 = 7m/4
    /// on each intra link, each direction. With one NIC only the hops 3→4
    /// and 7→0 cross nodes: each node's NIC carries 14·m/8 = 7m/4 up and
    /// down. With 2 NICs the ring runs in 2 channels of m/16 a step, channel
    /// c entering each node at GPU c and leaving it through NIC c (rings
    /// 0→1→2→3→4…, and 1→2→3→0→5…): each NIC carries half, 7m/8, each
    /// way, and the intra links the same 7m/4 as before. The total is the
    /// same: 16 intra directions of 7m/4 plus 7m over the NICs.
    #[test]
    fn ring_two_nodes_of_four_by_hand() {
        let m = 8e6;
        for nics in [1u32, 2] {
            let spec = cluster(2, 4, nics);
            let (t, b) = bytes_of(&Collective::new(Op::AllReduce), &spec, m);
            for g in 0..8 {
                close(b[t.gpu_up(g) as usize], 7.0 * m / 4.0, "intra up");
                close(b[t.gpu_down(g) as usize], 7.0 * m / 4.0, "intra down");
            }
            let per_nic = 7.0 * m / 4.0 / nics as f64;
            for node in 0..2 {
                for nic in 0..nics {
                    close(b[t.nic_up(node, nic) as usize], per_nic, "nic up");
                    close(b[t.nic_down(node, nic) as usize], per_nic, "nic down");
                }
            }
            close(b.iter().sum(), 20.0 * 7.0 * m / 4.0, "total");
        }
    }

    /// Scattered placement (ranks 0,4,1,5,2,6,3,7 on 2 × 4 GPUs): every
    /// hop crosses nodes, so each node's NIC carries its 4 GPUs' 14 chunks
    /// of m/8, 7m, and so does its core link when the fabric is
    /// oversubscribed.
    #[test]
    fn scattered_ring_sends_everything_through_the_nic_and_core() {
        let m = 8e6;
        let mut spec = cluster(2, 4, 1);
        spec.placement = Placement::Scattered;
        spec.oversubscription = 2.0;
        let (t, b) = bytes_of(&Collective::new(Op::AllReduce), &spec, m);
        for node in 0..2 {
            close(b[t.nic_up(node, 0) as usize], 7.0 * m, "nic up");
            close(b[t.nic_down(node, 0) as usize], 7.0 * m, "nic down");
            let (up, down) = t.core_links(node).unwrap();
            close(b[up as usize], 7.0 * m, "core up");
            close(b[down as usize], 7.0 * m, "core down");
        }
    }

    /// Hierarchical AllReduce on n nodes × G GPUs: intra reduce-scatter
    /// and all-gather put (G−1)·m/G on each intra link each, the rail rings
    /// 2(n−1)·m/(G·n); each NIC carries G rails × 2(n−1) × m/(G·n) =
    /// 2(n−1)/n · m (2 × 4 GPUs: intra 7m/4, NIC m).
    #[test]
    fn hierarchical_two_nodes_of_four_by_hand() {
        let m = 8e6;
        let spec = cluster(2, 4, 1);
        let (t, b) = bytes_of(&coll(Op::AllReduce, Algo::Hierarchical), &spec, m);
        for g in 0..8 {
            close(
                b[t.gpu_up(g) as usize],
                3.0 * m / 4.0 + 2.0 * m / 8.0 + 3.0 * m / 4.0,
                "intra up",
            );
        }
        for node in 0..2 {
            close(b[t.nic_up(node, 0) as usize], m, "nic up");
        }
    }

    /// PS with one server per node (Parallax default), overlapped, no local
    /// aggregation, n nodes × G GPUs, shard m/n: a node's NIC uplink
    /// carries its G workers' pushes to the n−1 remote servers,
    /// G(n−1)·m/n, plus its server's pulls to the G(n−1) remote workers,
    /// G(n−1)·m/n: 2G(n−1)/n · m, the same down. Each GPU's intra link
    /// carries its n pushes (local server included) of m/n, m, up, and its
    /// n pulls, m, down. The zero-byte ready signals add nothing.
    #[test]
    fn ps_one_server_per_node() {
        let m = 12e6;
        for (n, g) in [(2u32, 1u32), (3, 4), (4, 2)] {
            for algo in [Algo::Overlapped, Algo::Sequential] {
                let spec = cluster(n, g, 1);
                let (t, b) = bytes_of(&coll(Op::Ps, algo), &spec, m);
                let nic = 2.0 * g as f64 * (n as f64 - 1.0) / n as f64 * m;
                for node in 0..n {
                    close(b[t.nic_up(node, 0) as usize], nic, "nic up");
                    close(b[t.nic_down(node, 0) as usize], nic, "nic down");
                }
                for gpu in 0..n * g {
                    close(b[t.gpu_up(gpu) as usize], m, "intra up");
                    close(b[t.gpu_down(gpu) as usize], m, "intra down");
                }
            }
        }
    }

    /// One PS server (on node 0's host) for n nodes × G GPUs: the hot spot.
    /// Node 0's NIC receives the whole variable from each of the G(n−1)
    /// remote workers and sends it back to each: G(n−1)·m each way; every
    /// other node's NIC carries its G workers' m each way.
    #[test]
    fn ps_single_server_is_a_hot_spot() {
        let m = 12e6;
        let (n, g) = (3u32, 2u32);
        let spec = cluster(n, g, 1);
        let c = Collective {
            ps_servers: 1,
            ..Collective::new(Op::Ps)
        };
        let (t, b) = bytes_of(&c, &spec, m);
        let hot = (g * (n - 1)) as f64 * m;
        close(b[t.nic_up(0, 0) as usize], hot, "server nic up");
        close(b[t.nic_down(0, 0) as usize], hot, "server nic down");
        for node in 1..n {
            close(b[t.nic_up(node, 0) as usize], g as f64 * m, "nic up");
            close(b[t.nic_down(node, 0) as usize], g as f64 * m, "nic down");
        }
    }

    /// PS with local aggregation on n nodes × 4 GPUs: only GPU 0 of each
    /// node pushes and pulls, so a NIC carries 2(n−1)/n · m each way. Intra
    /// links (binomial reduce 1→0, 3→2, 2→0; broadcast, its mirror, 0→2,
    /// 0→1, 2→3, each m; the leader's pushes m): GPU 0 up 3m, GPU 2 up 2m,
    /// GPUs 1, 3 up m.
    #[test]
    fn ps_with_local_aggregation() {
        let m = 12e6;
        let n = 3u32;
        let spec = cluster(n, 4, 1);
        let c = Collective {
            local_aggregation: true,
            ..Collective::new(Op::Ps)
        };
        let (t, b) = bytes_of(&c, &spec, m);
        for node in 0..n {
            let nic = 2.0 * (n as f64 - 1.0) / n as f64 * m;
            close(b[t.nic_up(node, 0) as usize], nic, "nic up");
            close(b[t.nic_down(node, 0) as usize], nic, "nic down");
            for (i, want) in [3.0 * m, m, 2.0 * m, m].into_iter().enumerate() {
                close(b[t.gpu_up(node * 4 + i as u32) as usize], want, "intra up");
            }
        }
    }

    /// Binomial trees over 2 nodes × 8 GPUs, contiguous: the broadcast
    /// sends to the farthest child first (0→8, then 0→4 and 8→12, …), the
    /// reduce's mirror, so one copy of m crosses to node 1 and none comes
    /// back; the binomial AllReduce crosses once each way (8→0, 0→8).
    /// (Sending to the nearest first, the broadcast's last step sent 0–7
    /// to 8–15: eight copies through node 0's NIC.)
    #[test]
    fn binomial_trees_cross_once_between_contiguous_nodes() {
        let m = 8e6;
        let spec = cluster(2, 8, 1);
        let (t, b) = bytes_of(&Collective::new(Op::Broadcast), &spec, m);
        close(b[t.nic_up(0, 0) as usize], m, "broadcast: node 0 nic up");
        close(
            b[t.nic_down(1, 0) as usize],
            m,
            "broadcast: node 1 nic down",
        );
        close(b[t.nic_up(1, 0) as usize], 0.0, "broadcast: node 1 nic up");
        let ar = Collective {
            algo: Algo::Binomial,
            ..Collective::new(Op::AllReduce)
        };
        let (t, b) = bytes_of(&ar, &spec, m);
        for node in 0..2 {
            close(b[t.nic_up(node, 0) as usize], m, "allreduce: nic up");
            close(b[t.nic_down(node, 0) as usize], m, "allreduce: nic down");
        }
    }

    fn variety() -> Vec<(Collective, ClusterSpec)> {
        let mut out = Vec::new();
        for (nodes, g, nics, over, placement) in [
            (4u32, 1u32, 1u32, 1.0, Placement::Contiguous),
            (3, 4, 2, 1.0, Placement::Contiguous),
            (3, 4, 1, 3.0, Placement::Scattered),
            (5, 2, 2, 2.0, Placement::Contiguous),
        ] {
            let mut spec = cluster(nodes, g, nics);
            spec.oversubscription = over;
            spec.placement = placement;
            for op in Op::ALL {
                for &algo in op.algorithms() {
                    for (servers, local) in [(0, false), (0, true), (2, false), (7, true)] {
                        if op != Op::Ps && (servers, local) != (0, false) {
                            continue;
                        }
                        let c = Collective {
                            ps_servers: servers,
                            local_aggregation: local,
                            ..coll(op, algo)
                        };
                        out.push((c, spec.clone()));
                    }
                }
            }
        }
        out
    }

    /// The symmetric shortcut and the full walk agree, the loads are
    /// linear in the buffer, and they are the bytes the flow model moves.
    #[test]
    fn shortcuts_linearity_and_flow_agree() {
        let m = 3e6;
        let mut symmetric = 0;
        for (c, spec) in variety() {
            let topo = Topology::new(&spec);
            let prog = c.program(&spec, m);
            symmetric += prog.node_symmetric() as u32;
            let fast = link_bytes(&prog, &topo);
            let full = link_bytes_full(&prog, &topo);
            // a selection's loads are linear within each algorithm it runs
            let at_m = Collective {
                algo: c.selected(c.group_size(&spec), m),
                ..c
            };
            let unit = link_bytes(&at_m.program(&spec, 1.0), &topo);
            let flow = run_flow(&c, &spec, m).unwrap().link_bytes;
            for l in 0..fast.len() {
                let what = format!("{c:?} {} on {spec:?}", topo.link_name(l as u32));
                close(fast[l], full[l], &what);
                close(unit[l] * m, full[l], &what);
                close(flow[l], full[l], &what);
            }
        }
        assert!(symmetric > 10, "the shortcut was exercised");
    }

    /// No link carries more than its capacity times the collective's
    /// analytical or flow time (the utilisation bound of the module docs).
    #[test]
    fn no_link_carries_more_than_capacity_times_duration() {
        let m = 3e6;
        for (c, spec) in variety() {
            let topo = Topology::new(&spec);
            let b = link_bytes(&c.program(&spec, m), &topo);
            let ta = c.analytical(&spec).time(m);
            let tf = run_flow(&c, &spec, m).unwrap().time.as_secs();
            for (l, (&bytes, &cap)) in b.iter().zip(topo.capacities()).enumerate() {
                for (model, t) in [("analytical", ta), ("flow", tf)] {
                    assert!(
                        bytes <= cap * t * (1.0 + 1e-12),
                        "{model} {c:?} {}: {bytes} B over {t} s at {cap} B/s",
                        topo.link_name(l as u32)
                    );
                }
            }
        }
    }
}
