//! `dtsim advise FILE`: every way dtsim can synchronise a scenario's model
//! on its cluster, simulated and ranked.
//!
//! The scenario names one model, one cluster and (usually) one strategy.
//! The advice replaces the strategy's method keys with each candidate in
//! turn, as a one-point sweep would (`sim::scenario::Grid::point_with`:
//! keys of the file that mean nothing beside a candidate's method are
//! dropped for it, as in a sweep over `strategy.dense`), validates it,
//! simulates it, and ranks the ones that apply by iteration time. The
//! candidates:
//!
//! * `strategy.dense`: `allreduce` with each algorithm of
//!   `strategy.allreduce` (ring, tree, hierarchical, binomial, nvls,
//!   nvls-tree, sharp), then `ps`, `topk`, `gtopk` and `dct`;
//! * `strategy.schedule`: `fifo` and `priority`;
//! * `strategy.sparse`, when the model has embedding tables: `ps`,
//!   `allgather`, `allreduce` and `alltoall`.
//!
//! Everything else (fusion, partitions, servers, densities, the network
//! model, losses, seed) is the file's. A candidate the validation refuses
//! (NVLink SHARP off NVLink4 nodes, say) is listed with the reason, not
//! ranked. Top-k, gTop-k and DCT-DP are lossy: they change what the
//! optimiser sees, and how that slows convergence is not modelled, so
//! every lossy candidate is marked and the best exact one is named beside
//! the best overall.

use crate::run::RunError;
use sim::names::Named;
use sim::scenario::{Grid, ScenarioError};
use sim::strategy::{DenseMethod, Schedule, SparseMethod};
use sim::train::{RunResult, TrainConfig, simulate};
use std::collections::BTreeMap;
use std::path::Path;

/// The AllReduce algorithms the advice tries, in order: those of
/// `strategy.allreduce` (the simulator's, `Op::AllReduce.algorithms()`)
/// that GPU training's collective libraries run or that the advice has
/// always weighed (NCCL's ring, tree, NVLS and SHARP, the hierarchical
/// ring, the binomial tree). The MPI libraries' host algorithms
/// (recursive doubling, Rabenseifner's, Open MPI's segmented ring, and
/// MPICH's and Open MPI's selections of them) are left to scenarios that
/// name them (the segmented ring to `dtsim collective`): no GPU
/// training library runs them, and on the α-β model Rabenseifner's
/// would look as good as the ring with fewer latencies, an advice no
/// NCCL user could follow.
pub fn allreduce_algorithms() -> Vec<&'static str> {
    use sim::collective::Algo;
    sim::collective::Op::AllReduce
        .algorithms()
        .iter()
        .filter(|a| {
            !matches!(
                a,
                Algo::RecursiveDoubling
                    | Algo::Rabenseifner
                    | Algo::SegmentedRing
                    | Algo::Mpich
                    | Algo::Ompi
            )
        })
        .map(|a| a.name())
        .collect()
}

/// The strategy keys the advice sets: a file may sweep these (the advice
/// tries every value anyway), and no other key.
pub const ADVISED_KEYS: [&str; 4] = [
    "strategy.dense",
    "strategy.allreduce",
    "strategy.sparse",
    "strategy.schedule",
];

/// The dense methods other than AllReduce, in the order the advice tries
/// them.
pub const OTHER_DENSE: [&str; 4] = ["ps", "topk", "gtopk", "dct"];

/// The dense methods that send less than the gradient and change what
/// the optimiser sees.
pub const LOSSY_DENSE: [&str; 3] = ["topk", "gtopk", "dct"];

/// One way to synchronise: the strategy keys the advice sets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Candidate {
    /// `strategy.dense`.
    pub dense: String,
    /// `strategy.allreduce`, with `dense = "allreduce"` (in JSON `algo`,
    /// as a run's result names it; null for the other methods).
    #[serde(rename = "algo")]
    pub allreduce: Option<String>,
    /// `strategy.sparse`, when the model has embedding tables (in JSON
    /// `"none"` otherwise, as a run's result says).
    #[serde(serialize_with = "none_if_absent")]
    pub sparse: Option<String>,
    /// `strategy.schedule`.
    pub schedule: String,
}

/// A sparse method as a run's result names it: `"none"` without one.
fn none_if_absent<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.as_deref().unwrap_or("none"))
}

impl Candidate {
    /// The keys it sets, as a sweep point sets them.
    fn keys(&self) -> BTreeMap<String, toml::Value> {
        let mut m = BTreeMap::new();
        let s = |v: &str| toml::Value::String(v.to_string());
        m.insert("strategy.dense".to_string(), s(&self.dense));
        if let Some(a) = &self.allreduce {
            m.insert("strategy.allreduce".to_string(), s(a));
        }
        if let Some(sp) = &self.sparse {
            m.insert("strategy.sparse".to_string(), s(sp));
        }
        // Top-k and gTop-k have no schedule to set (one message an
        // iteration): the file's own is dropped for them, as in a sweep
        // over `strategy.dense`
        if !matches!(self.dense.as_str(), "topk" | "gtopk") {
            m.insert("strategy.schedule".to_string(), s(&self.schedule));
        }
        m
    }

    /// How the tables name it: `allreduce (ring)`, `topk`, with the
    /// sparse method after a `+`.
    pub fn method(&self) -> String {
        let dense = match &self.allreduce {
            Some(a) => format!("{} ({a})", self.dense),
            None => self.dense.clone(),
        };
        match &self.sparse {
            Some(s) => format!("{dense} + {s}"),
            None => dense,
        }
    }

    /// Whether it compresses the gradient (Top-k, gTop-k, DCT-DP).
    pub fn lossy(&self) -> bool {
        LOSSY_DENSE.contains(&self.dense.as_str())
    }

    /// The candidate a validated configuration runs.
    fn of(cfg: &TrainConfig, embeddings: bool) -> Candidate {
        let s = &cfg.strategy;
        let allreduce = match s.dense {
            DenseMethod::AllReduce(a) => Some(a.name().to_string()),
            _ => None,
        };
        Candidate {
            dense: s.dense_name().to_string(),
            allreduce,
            sparse: if embeddings {
                s.sparse.map(|m| m.name().to_string())
            } else {
                None
            },
            schedule: s.schedule.name().to_string(),
        }
    }
}

/// A candidate that applies, simulated.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ranked {
    /// 1 for the fastest.
    pub rank: usize,
    /// The method (in JSON, the result's `dense`, `algo`, `sparse` and
    /// `schedule` say it).
    #[serde(skip)]
    pub candidate: Candidate,
    /// Whether it compresses the gradient.
    pub lossy: bool,
    /// The other schedules that give this method the same result, to the
    /// bit (ranked once, under the first schedule tried).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub same_with: Vec<String>,
    /// Whether it is the scenario file's own strategy (under any of its
    /// schedules).
    pub this_file: bool,
    /// Its throughput over the best's, minus 1 (0 for the best, negative
    /// for the others).
    pub vs_best: f64,
    /// The simulation's result.
    #[serde(flatten)]
    pub result: RunResult,
}

/// A candidate that does not apply to this model and cluster.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Refused {
    /// The method.
    #[serde(flatten)]
    pub candidate: Candidate,
    /// Why (the validation's or the simulator's message).
    pub refused: String,
}

/// The advice for one scenario.
#[derive(Debug, Clone)]
pub struct Advice {
    /// The scenario file.
    pub file: String,
    /// How many candidates were tried.
    pub tried: usize,
    /// The file's own strategy, when the file sweeps none of the method
    /// keys.
    pub own: Option<Candidate>,
    /// The candidates that apply, fastest first (ties: in the order
    /// tried).
    pub ranked: Vec<Ranked>,
    /// The candidates that do not apply, in the order tried.
    pub refused: Vec<Refused>,
    /// Warnings of the scenario as written and of the ways tried
    /// (settings that are probably a mistake for some method), each once.
    pub warnings: Vec<String>,
}

impl Advice {
    /// The fastest candidate that does not compress, if any applies.
    pub fn best_exact(&self) -> Option<&Ranked> {
        self.ranked.iter().find(|r| !r.lossy)
    }

    /// The scenario file's own strategy, if it is among the ranked.
    pub fn this_file(&self) -> Option<&Ranked> {
        self.ranked.iter().find(|r| r.this_file)
    }

    /// The refused ways grouped by why, each reason once, in the order
    /// tried.
    pub fn refusals(&self) -> Vec<Refusal> {
        let mut groups: Vec<Refusal> = Vec::new();
        for r in &self.refused {
            let i = match groups.iter().position(|g| g.reason == r.refused) {
                Some(i) => i,
                None => {
                    groups.push(Refusal {
                        reason: r.refused.clone(),
                        methods: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let methods = &mut groups[i].methods;
            let method = r.candidate.method();
            match methods.iter_mut().find(|(m, _)| *m == method) {
                Some((_, schedules)) => schedules.push(r.candidate.schedule.clone()),
                None => methods.push((method, vec![r.candidate.schedule.clone()])),
            }
        }
        groups
    }
}

/// The ways one reason refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// Why.
    pub reason: String,
    /// Each method it refuses ([`Candidate::method`]) with the schedules
    /// refused.
    pub methods: Vec<(String, Vec<String>)>,
}

/// The candidates for a model with (`embeddings`) or without embedding
/// tables, in the order tried.
pub fn candidates(embeddings: bool) -> Vec<Candidate> {
    let dense: Vec<(String, Option<String>)> = allreduce_algorithms()
        .into_iter()
        .map(|a| ("allreduce".to_string(), Some(a.to_string())))
        .chain(OTHER_DENSE.iter().map(|d| (d.to_string(), None)))
        .collect();
    let sparse: Vec<Option<String>> = if embeddings {
        SparseMethod::ALL
            .iter()
            .map(|m| Some(m.name().to_string()))
            .collect()
    } else {
        vec![None]
    };
    let mut out = Vec::new();
    for (d, a) in &dense {
        for s in &sparse {
            // Top-k and gTop-k send one message an iteration: no
            // schedule to choose (the scenario refuses one)
            let one_message = matches!(d.as_str(), "topk" | "gtopk");
            for sched in Schedule::ALL {
                if one_message && *sched != Schedule::Fifo {
                    continue;
                }
                out.push(Candidate {
                    dense: d.clone(),
                    allreduce: a.clone(),
                    sparse: s.clone(),
                    schedule: sched.name().to_string(),
                });
            }
        }
    }
    out
}

/// Simulates every candidate for the scenario in `path` and ranks them.
///
/// # Errors
/// [`RunError::Scenario`] if the file cannot be read or is invalid as
/// written; [`RunError::Request`] if it sweeps a key other than the
/// method keys the advice sets ([`ADVISED_KEYS`]: the advice is for one
/// model on one cluster).
pub fn advise(path: &Path) -> Result<Advice, RunError> {
    let grid = sim::scenario::open_file(path)?;
    let file = path.display().to_string();
    if let Some(k) = grid
        .keys()
        .iter()
        .find(|k| !ADVISED_KEYS.contains(&k.as_str()))
    {
        return Err(grid
            .sweep_error(
                k,
                "the advice is for one model on one cluster, and this file sweeps it: \
                 remove it from the [sweep] (or compare the points with `dtsim sweep`)",
            )
            .into());
    }
    // the file as written (its first point, if it sweeps the method keys):
    // invalid is an error; without a sweep its own strategy is marked
    // the file has one strategy (whether or not it applies here)
    let one_strategy = grid.keys().is_empty();
    let (embeddings, own, mut warnings) = match grid.point(0) {
        Ok(first) => {
            let embeddings = first
                .config
                .model
                .layers
                .iter()
                .any(|l| l.embedding.is_some());
            let own = grid
                .keys()
                .is_empty()
                .then(|| Candidate::of(&first.config, embeddings));
            let warnings = first
                .warnings
                .iter()
                .map(ScenarioError::to_string)
                .collect();
            (embeddings, own, warnings)
        }
        // a strategy that does not apply here (SHARP on Ethernet, say) is
        // what the advice is for; anything else wrong with the file is an
        // error
        Err(e) if e.key.as_deref().is_some_and(|k| ADVISED_KEYS.contains(&k)) => {
            let valid = |c: &Candidate| grid.point_with(c.keys()).is_ok();
            let embeddings = candidates(true).iter().any(valid);
            if !embeddings && !candidates(false).iter().any(valid) {
                return Err(e.into());
            }
            (
                embeddings,
                None,
                vec![format!("{e} (the file's own strategy does not apply here)")],
            )
        }
        Err(e) => return Err(e.into()),
    };
    // the ways the file itself runs: its one strategy, or each point of
    // its sweep over the methods
    let owns: Vec<Candidate> = if one_strategy {
        own.iter().cloned().collect()
    } else {
        (0..grid.len())
            .filter_map(|i| grid.point(i).ok())
            .map(|p| Candidate::of(&p.config, embeddings))
            .collect()
    };
    let tried = candidates(embeddings);
    let count = tried.len();
    // every candidate validated and simulated on its own, on every core
    // (each simulation is deterministic, and the order is kept)
    use rayon::prelude::*;
    let outcomes: Vec<Result<(RunResult, Vec<ScenarioError>), NotRun>> =
        tried.par_iter().map(|c| outcome(&grid, c)).collect();
    let mut ranked: Vec<Ranked> = Vec::new();
    let mut refused = Vec::new();
    for (c, o) in tried.into_iter().zip(outcomes) {
        match o {
            Ok((result, said)) => {
                let this_file = own.as_ref() == Some(&c);
                // a candidate's own warnings (DCT-DP's measured window
                // against its life-span, say), each once; one of a way the
                // file does not run (every one, where its strategy does not
                // apply here) is said to be of the ways tried, so that it
                // is not taken for advice on the file
                for w in said {
                    let mut w = w.to_string();
                    if !this_file && !owns.contains(&c) && !warnings.contains(&w) {
                        w = format!("{w} (of ways the advice tried, not the file's own)");
                    }
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                // a schedule that changes nothing for this method is said
                // beside the first, not ranked again: the same result but
                // for the schedule, the events, and the picoseconds that
                // rounding in another order of sends can give (under a
                // nanosecond an iteration)
                let same = ranked.iter_mut().find(|r| {
                    Candidate {
                        schedule: c.schedule.clone(),
                        ..r.candidate.clone()
                    } == c
                        && same_but_rounding(&r.result, &result)
                });
                match same {
                    Some(r) => {
                        r.same_with.push(c.schedule);
                        r.this_file |= this_file;
                    }
                    None => ranked.push(Ranked {
                        rank: 0,
                        lossy: c.lossy(),
                        same_with: Vec::new(),
                        this_file,
                        vs_best: 0.0,
                        candidate: c,
                        result,
                    }),
                }
            }
            Err(NotRun::NotHere(reason)) => refused.push(Refused {
                candidate: c,
                refused: reason,
            }),
            Err(NotRun::File(e)) => return Err((*e).into()),
        }
    }
    // fastest first; a stable sort keeps the order tried among ties
    ranked.sort_by(|a, b| {
        a.result
            .iteration_time_s
            .total_cmp(&b.result.iteration_time_s)
    });
    let best = ranked.first().map_or(0.0, |r| r.result.throughput);
    for (i, r) in ranked.iter_mut().enumerate() {
        r.rank = i + 1;
        r.vs_best = if best > 0.0 {
            r.result.throughput / best - 1.0
        } else {
            0.0
        };
    }
    Ok(Advice {
        file,
        tried: count,
        own,
        ranked,
        refused,
        warnings,
    })
}

/// Whether two results of one method under two schedules are the same
/// but for the schedule, the events simulated, and time figures apart by
/// less than a nanosecond (the same messages, rounded to the picosecond
/// in another order: an iteration of a binomial tree's AllReduce under
/// FIFO and priority differed by 3 ps until its broadcast sent to the
/// farthest child first, 2026-11-29; a recursive-doubling AllReduce's
/// still does). Throughput and scaling follow from the iteration time,
/// so they are compared through it.
fn same_but_rounding(a: &RunResult, b: &RunResult) -> bool {
    const NS: f64 = 1e-9;
    let near = |x: f64, y: f64| (x - y).abs() < NS;
    let channels = a.comm_by_channel.len() == b.comm_by_channel.len()
        && a.comm_by_channel
            .iter()
            .zip(&b.comm_by_channel)
            .all(|((ka, va), (kb, vb))| ka == kb && near(*va, *vb));
    // the same bytes on the same links, their utilisation over the
    // iteration time compared as it is
    let links = a.links.len() == b.links.len()
        && a.links.iter().zip(&b.links).all(|(x, y)| {
            sim::train::LinkLoad {
                utilisation: x.utilisation,
                ..y.clone()
            } == *x
                && (x.utilisation - y.utilisation).abs() <= 1e-9 * x.utilisation.max(y.utilisation)
        });
    let times = near(a.iteration_time_s, b.iteration_time_s)
        && (a.busiest_link_utilisation - b.busiest_link_utilisation).abs()
            <= 1e-9 * a.busiest_link_utilisation.max(b.busiest_link_utilisation)
        && near(a.compute_s, b.compute_s)
        && near(a.comm_s, b.comm_s)
        && near(a.exposed_comm_s, b.exposed_comm_s)
        && near(a.compression_s, b.compression_s);
    // every other field exactly, with the compared ones taken from `a`
    let rest = RunResult {
        schedule: a.schedule.clone(),
        events: a.events,
        iteration_time_s: a.iteration_time_s,
        throughput: a.throughput,
        scaling_efficiency: a.scaling_efficiency,
        compute_s: a.compute_s,
        comm_s: a.comm_s,
        exposed_comm_s: a.exposed_comm_s,
        compression_s: a.compression_s,
        comm_by_channel: a.comm_by_channel.clone(),
        links: a.links.clone(),
        busiest_link_utilisation: a.busiest_link_utilisation,
        ..b.clone()
    } == *a;
    channels && links && times && rest
}

/// A candidate's result, or why it does not apply: the validation's
/// message without the file's name (the table names the file once).
fn outcome(grid: &Grid, c: &Candidate) -> Result<(RunResult, Vec<ScenarioError>), NotRun> {
    let p = grid.point_with(c.keys()).map_err(|e| {
        if e.key
            .as_deref()
            .is_some_and(|k| !k.starts_with("strategy."))
        {
            NotRun::File(Box::new(e))
        } else {
            NotRun::NotHere(match &e.key {
                Some(k) => format!("`{k}`: {}", e.message),
                None => e.message.clone(),
            })
        }
    })?;
    let r = simulate(&p.config).map_err(|e| NotRun::NotHere(e.to_string()))?;
    Ok((r, p.warnings))
}

/// Why a candidate did not run.
enum NotRun {
    /// The method does not apply to this model or cluster (a strategy key
    /// refused, or the simulation refused it): listed as not applicable.
    NotHere(String),
    /// The file is wrong beyond its strategy at this method (a kernel
    /// profile it names cannot be read, or lacks a kernel the method
    /// needs): an error of the file, as for `dtsim sweep`.
    File(Box<ScenarioError>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 7 AllReduce algorithms, PS and DCT-DP under 2 schedules, Top-k and
    /// gTop-k (one message an iteration) under FIFO; with embedding
    /// tables, each of them with 4 sparse methods. Every candidate's keys
    /// are the ones a file may sweep.
    #[test]
    fn the_candidates_are_every_method_under_every_schedule() {
        let dense = candidates(false);
        assert_eq!(dense.len(), (7 + 2) * 2 + 2);
        assert_eq!(candidates(true).len(), ((7 + 2) * 2 + 2) * 4);
        for c in dense.iter().chain(&candidates(true)) {
            assert!(c.keys().keys().all(|k| ADVISED_KEYS.contains(&k.as_str())));
            assert_eq!(c.allreduce.is_some(), c.dense == "allreduce");
        }
        let lossy: Vec<String> = dense
            .iter()
            .filter(|c| c.lossy())
            .map(Candidate::method)
            .collect();
        assert_eq!(lossy, ["topk", "gtopk", "dct", "dct"]);
        let c = &candidates(true)[0];
        assert_eq!(c.method(), "allreduce (ring) + ps");
        assert_eq!(c.schedule, "fifo");
    }

    /// A run and the same run with its times a few picoseconds apart are
    /// one result; a nanosecond apart, or another byte on a link, two.
    #[test]
    fn results_apart_by_rounding_are_the_same() {
        let text = "[cluster]\nnodes = 2\ngpus_per_node = 2\nnetwork = \"eth-10g\"\n\
                    [model]\npreset = \"resnet50\"\ngpu = \"titan-xp\"\nbatch_per_gpu = 32\n";
        let points = sim::scenario::load_str_in(text, "t.toml", "t", None).unwrap();
        let a = simulate(&points[0].config).unwrap();
        let shifted = |dt: f64| RunResult {
            schedule: "priority".into(),
            events: a.events + 1,
            iteration_time_s: a.iteration_time_s + dt,
            exposed_comm_s: a.exposed_comm_s + dt,
            comm_s: a.comm_s - dt,
            ..a.clone()
        };
        assert!(same_but_rounding(&a, &shifted(3e-12)));
        assert!(!same_but_rounding(&a, &shifted(2e-9)));
        let mut more = shifted(0.0);
        more.bytes_sent_per_gpu += 1.0;
        assert!(!same_but_rounding(&a, &more));
    }
}
