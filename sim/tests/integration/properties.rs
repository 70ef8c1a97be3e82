//! Properties over random clusters and sizes.

use super::*;
use proptest::prelude::*;
use sim::cluster::Placement;

fn cluster(nodes: u32, g: u32, bw: f64, lat: f64, intra_bw: f64, intra_lat: f64) -> ClusterSpec {
    let mut c = ClusterSpec::flat(nodes, bw, lat);
    c.gpus_per_node = g;
    c.intra.bandwidth = intra_bw;
    c.intra.latency = intra_lat;
    c
}

fn collectives(n: u32) -> Vec<Collective> {
    let mut v = vec![
        coll(Op::AllReduce, Algo::Ring),
        coll(Op::AllReduce, Algo::Hierarchical),
        coll(Op::AllGather, Algo::Ring),
        coll(Op::ReduceScatter, Algo::Ring),
        coll(Op::Broadcast, Algo::Binomial),
        coll(Op::Ps, Algo::Overlapped),
        coll(Op::Ps, Algo::Sequential),
    ];
    // A binomial reduce over a non-power-of-two group lets childless ranks
    // send early, into a receiver that is still busy: real contention
    // inside the collective, which only the flow model sees.
    if n.is_power_of_two() {
        v.push(coll(Op::AllReduce, Algo::Tree));
    }
    v
}

fn all_collectives(n: u32) -> Vec<Collective> {
    let mut v = collectives(n);
    v.push(coll(Op::AllToAll, Algo::Pairwise));
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Without contention from outside the collective, flow = analytical
    /// within 1%, for every collective.
    #[test]
    fn flow_matches_analytical(
        nodes in 1u32..9,
        g in prop::sample::select(vec![1u32, 2, 4]),
        size in 1e3f64..1e9,
        bw in 1e8f64..5e10,
        lat in 0.0f64..1e-4,
        intra_ratio in 1.0f64..20.0,
    ) {
        let n = nodes * g;
        prop_assume!(n >= 2);
        let c = cluster(nodes, g, bw, lat, bw * intra_ratio, lat / 4.0);
        for col in collectives(n) {
            let (a, f, _) = both(&col, &c, size);
            prop_assert!(rel(f, a) <= 0.01, "{:?} {}/{} n={} g={}: analytical {} flow {}",
                col.op, col.op.name(), col.algo.name(), n, g, a, f);
        }
        // Pairwise AlltoAll has no data dependency between steps: where
        // intra- and inter-node hops differ, ranks on fast hops run ahead
        // and steps overlap in the flow model, so the step-by-step
        // analytical sum is an upper bound there, and exact on uniform links.
        let a2a = coll(Op::AllToAll, Algo::Pairwise);
        let (a, f, _) = both(&a2a, &c, size);
        prop_assert!(f <= a * 1.01, "alltoall flow {} above analytical {}", f, a);
        let uniform = cluster(nodes, g, bw, lat, bw, lat);
        let (a, f, _) = both(&a2a, &uniform, size);
        prop_assert!(rel(f, a) <= 0.01, "alltoall on uniform links: analytical {} flow {}", a, f);
    }

    /// What is sent is received, per collective and per link direction.
    #[test]
    fn bytes_are_conserved(
        nodes in 1u32..7,
        g in 1u32..4,
        size in 1.0f64..1e8,
        scattered in any::<bool>(),
    ) {
        let mut c = cluster(nodes, g, 1e9, 1e-6, 5e9, 1e-7);
        if scattered { c.placement = Placement::Scattered; }
        prop_assume!(c.gpus() >= 2);
        for col in all_collectives(c.gpus()) {
            let o = run_flow(&col, &c, size);
            let sent: f64 = o.sent.iter().sum();
            let recv: f64 = o.received.iter().sum();
            prop_assert!(rel(recv, sent) < 1e-12 || sent == 0.0);
            let predicted = col.analytical(&c).bytes_sent_total(size);
            prop_assert!(rel(sent, predicted) < 1e-9, "{} sent {} predicted {}", col.op.name(), sent, predicted);
        }
    }

    /// Running twice gives identical results, to the bit.
    #[test]
    fn deterministic(nodes in 2u32..6, g in 1u32..4, size in 1.0f64..1e7) {
        let mut c = cluster(nodes, g, 1e9, 1e-6, 5e9, 1e-7);
        c.oversubscription = 2.0;
        for col in all_collectives(c.gpus()) {
            prop_assert_eq!(run_flow(&col, &c, size), run_flow(&col, &c, size));
        }
    }
}

/// Oversubscription slows cross-node traffic in the flow model.
#[test]
fn oversubscription_shows_in_flow() {
    let mut c = cluster(4, 4, 12.5e9, 1e-6, 100e9, 1e-7);
    let col = coll(Op::AllToAll, Algo::Pairwise);
    let base = run_flow(&col, &c, 64e6).time.as_secs();
    c.oversubscription = 4.0;
    let over = run_flow(&col, &c, 64e6).time.as_secs();
    assert!(over > 1.5 * base, "oversubscribed {over} vs {base}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The node-symmetry shortcut gives the full simulation's results.
    #[test]
    fn symmetry_shortcut_is_exact(
        nodes in 2u32..7,
        g in 1u32..5,
        nics in 1u32..3,
        size in 1.0f64..1e8,
        over in prop::sample::select(vec![1.0f64, 2.0, 3.0]),
        servers_per_node in 1u32..3,
        local_aggregation in any::<bool>(),
    ) {
        let mut c = cluster(nodes, g, 1e9, 2e-6, 3e9, 5e-7);
        c.nics_per_node = nics;
        c.oversubscription = over;
        let mut ps = coll(Op::Ps, Algo::Overlapped);
        ps.ps_servers = servers_per_node * nodes;
        ps.local_aggregation = local_aggregation && g == 1;
        let mut cols = all_collectives(c.gpus());
        cols.push(ps);
        for col in cols {
            let prog = col.program(&c, size);
            if !prog.node_symmetric() {
                continue;
            }
            let s = sim::collective::exec::run_program(&prog, &c);
            let f = sim::collective::exec::run_program_full(&prog, &c);
            prop_assert!(s.symmetric && !f.symmetric);
            prop_assert!(rel(s.time.as_secs(), f.time.as_secs()) < 1e-9,
                "{} {}: symmetric {} full {}", col.op.name(), col.algo.name(), s.time.as_secs(), f.time.as_secs());
            prop_assert_eq!(s.messages, f.messages);
            for (a, b) in s.sent.iter().zip(&f.sent) {
                prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0));
            }
            for (a, b) in s.link_bytes.iter().zip(&f.link_bytes) {
                prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0));
            }
        }
    }
}
