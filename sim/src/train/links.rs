//! What the links carry in a run: the result's bytes per link.
//!
//! Every message that starts inside the measured window (the messages
//! `bytes_sent_per_gpu` counts) crosses the links its collective's step
//! program routes it over; [`crate::collective::links::link_bytes`] gives
//! the bytes each link carries for one message, from the program and the
//! topology alone, so both network models move the same bytes over the
//! same links. Summed over the window's messages and divided by the
//! iterations, that is each link's load an iteration; over the link's
//! capacity and the iteration time, its utilisation: the share of an
//! iteration the link would be busy at its full modelled capacity (a NIC's
//! after `cluster.nic_efficiency`).
//!
//! The result groups the links by [`Topology::link_kind`] (every NIC's
//! uplink, every GPU's fabric link, …) and reports each kind that carries
//! anything: its busiest link (the first, by link number, of those
//! carrying the most), that link's bytes and utilisation, and the mean
//! over the kind's links, which tells a hot spot (one server's NIC) from
//! an even load (a ring). Kinds come busiest first, so the first names
//! the link that bounds the communication, when a link does.
//!
//! In the flow model a utilisation stays at or below 1 (the max-min rates
//! on a link never sum above its capacity), but for messages that start
//! near the window's end and run past it. In the analytical model messages
//! of different channels do not see each other, so a link two channels
//! load at once can show more than 1: the load the analytical model lets
//! through unshared.
//!
//! A collective's loads are proportional to its size between two of its
//! switches of algorithm ([`Collective::link_bytes`]), so the messages of
//! one collective in one such stretch of sizes are walked once
//! ([`crate::collective::links`] makes each walk cheap on large clusters)
//! and scaled to their total; a payload that differs per rank is walked
//! per message.

use super::TrainConfig;
use super::result::Sent;
use super::task::{Plan, Work};
use crate::cluster::{LINK_KINDS, Topology};
use crate::collective::{Collective, links};
use serde::{Deserialize, Serialize};

/// The load of one kind of link over the measured iterations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkLoad {
    /// The kind ([`Topology::link_kind`]: `"nic-up"`, `"intra-down"`, …).
    pub kind: String,
    /// Links of this kind in the cluster.
    pub links: u32,
    /// The busiest of them, named by its owner, kind and direction
    /// (`"node0-nic0-up"`, `"gpu3-intra-down"`, `"server1-nic-up"`).
    pub busiest: String,
    /// Bytes the busiest carries an iteration.
    pub bytes_per_iteration: f64,
    /// The busiest's bytes an iteration over its capacity times the
    /// iteration time.
    pub utilisation: f64,
    /// Mean bytes an iteration over every link of the kind.
    pub mean_bytes_per_iteration: f64,
}

/// The loads of `sent`'s messages (those starting in the measured
/// window) over `iterations` iterations of `iteration_s` seconds each:
/// every kind of link that carries bytes, busiest (by utilisation) first.
pub(super) fn loads<'a>(
    cfg: &TrainConfig,
    plan: &Plan,
    sent: impl Iterator<Item = &'a Sent>,
    iterations: f64,
    iteration_s: f64,
) -> Vec<LinkLoad> {
    let cluster = &cfg.cluster;
    let topo = Topology::new(cluster);
    let mut total = vec![0.0f64; topo.capacities().len()];
    let mut add = |bytes: &[f64], times: f64| {
        for (t, b) in total.iter_mut().zip(bytes) {
            *t += b * times;
        }
    };
    // uniform messages: a collective's loads are proportional to its
    // size between two of its switches (`Collective::link_bytes`), so each
    // (collective, stretch between switches) is walked once, at the size
    // of its first message, and scaled to the stretch's total bytes; in
    // the order first met (a fixed order of float sums)
    // (few distinct collectives: a linear search beats hashing them)
    let mut switches: Vec<(Collective, Vec<f64>)> = Vec::new();
    // (collective, stretch, first size, total bytes)
    let mut uniform: Vec<(Collective, usize, u64, f64)> = Vec::new();
    for m in sent {
        let Work::Comm { collective: c, .. } = plan.tasks[m.task as usize].work else {
            unreachable!("a message of a communication task")
        };
        if !m.uniform {
            let p = plan.payload(m.task, m.iter);
            add(&links::link_bytes(&c.program_for(cluster, p), &topo), 1.0);
        } else if m.bytes > 0 {
            let i = match switches.iter().position(|s| s.0 == c) {
                Some(i) => i,
                None => {
                    switches.push((c, c.switches(c.group_size(cluster))));
                    switches.len() - 1
                }
            };
            let stretch = switches[i]
                .1
                .iter()
                .filter(|&&s| s <= m.bytes as f64)
                .count();
            match uniform.iter_mut().find(|u| u.0 == c && u.1 == stretch) {
                Some(u) => u.3 += m.bytes as f64,
                None => uniform.push((c, stretch, m.bytes, m.bytes as f64)),
            }
        }
    }
    for &(c, _, first, bytes) in &uniform {
        let first = first as f64;
        add(
            &links::link_bytes(&c.program(cluster, first), &topo),
            bytes / first,
        );
    }
    // by kind: (links, busiest, its bytes, sum)
    let mut kinds = [(0u32, 0u32, 0.0f64, 0.0f64); LINK_KINDS.len()];
    for (l, &b) in total.iter().enumerate() {
        let l = l as u32;
        let k = &mut kinds[topo.link_kind_index(l)];
        if k.0 == 0 {
            k.1 = l;
        }
        k.0 += 1;
        k.3 += b;
        if b > k.2 {
            (k.1, k.2) = (l, b);
        }
    }
    let mut out: Vec<LinkLoad> = LINK_KINDS
        .into_iter()
        .zip(kinds)
        .filter(|k| k.1.2 > 0.0)
        .map(|(kind, (count, busiest, bytes, sum))| {
            let per_iter = bytes / iterations;
            let capacity = topo.capacities()[busiest as usize];
            let busy = capacity * iteration_s;
            LinkLoad {
                kind: kind.into(),
                links: count,
                busiest: topo.link_name(busiest),
                bytes_per_iteration: per_iter,
                utilisation: if busy > 0.0 { per_iter / busy } else { 0.0 },
                // (the mean of equal loads can round above their max)
                mean_bytes_per_iteration: (sum / count as f64 / iterations).min(per_iter),
            }
        })
        .collect();
    // busiest first; equal utilisations keep the kinds' order
    out.sort_by(|a, b| b.utilisation.total_cmp(&a.utilisation));
    out
}
