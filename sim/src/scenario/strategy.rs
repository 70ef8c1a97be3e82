//! The `[strategy]` table: how gradients are synchronised.
//!
//! This file owns the meaning of every `[strategy]` key: the dense method
//! and its AllReduce algorithm, the schedule, fusion and partition sizes,
//! the parameter-server settings, and the keys of `shared/DESIGN.md`'s
//! public shape that no part of the engine reads yet (sparse methods,
//! compression, model parallelism). Those are refused, each with the issue
//! that brings it, rather than accepted and silently ignored: a scenario
//! that sets `density` must not look as if it had trained with Top-k.

use super::raw::IntOrText;
use super::raw::{RawScenario, RawStrategy};
use super::validate::{count, size};
use super::{Invalid, invalid};
use crate::collective::{Algo, Collective, Op};
use crate::limits::MAX_PARTITIONS;
use crate::names::{Named, unknown};
use crate::strategy::{DenseMethod, Partitions, Schedule, SparseMethod, Strategy};

/// The most micro-batches a trainer's batch may be cut into.
const MAX_MICROBATCHES: u32 = 4096;

/// The dense methods `strategy.dense` names.
const DENSE_METHODS: [&str; 5] = ["allreduce", "ps", "topk", "gtopk", "dct"];

/// Builds the strategy of a scenario on `nodes` machines, for a model
/// with sparse parts (`sparse`) or without.
///
/// `strategy.sparse` defaults, for a model with an embedding, to `ps`
/// when the dense method is `ps` (TensorFlow's parameter servers hold
/// every variable: Parallax's PS baseline) and to `allgather` otherwise
/// (Horovod's treatment of a sparse gradient beside its AllReduce of the
/// dense ones: Parallax's AR baseline, EmbRace's Horovod baseline).
pub(super) fn validate_strategy(
    raw: &RawScenario,
    nodes: u32,
    sparse: bool,
) -> Result<Strategy, Invalid> {
    let s = &raw.strategy;
    let d = Strategy::default();
    refuse_inert(s, sparse)?;
    let mut mp_stages = count(s.mp_stages, "strategy.mp_stages", Some(1), 1)?;
    if let Some(splits) = &s.mp_splits {
        // S − 1 splits make S stages; given both, they must agree
        let implied = splits.len() as u32 + 1;
        if splits.is_empty() {
            return Err(invalid(
                "strategy.mp_splits",
                "names no layer: list the layers after which a stage ends (or remove the key for stages balanced by compute)",
            ));
        }
        if s.mp_stages.is_some() && mp_stages != implied {
            return Err(invalid(
                "strategy.mp_splits",
                format!(
                    "{} splits make {implied} stages, and `mp_stages` is {mp_stages}",
                    splits.len()
                ),
            ));
        }
        mp_stages = implied;
    }
    let algo = match &s.allreduce {
        None => Algo::Ring,
        Some(name) => {
            let known: Vec<&str> = Op::AllReduce
                .algorithms()
                .iter()
                .filter(|&&a| a != Algo::SegmentedRing)
                .map(|a| a.name())
                .collect();
            let a = Algo::from_name(name)
                .filter(|a| Op::AllReduce.algorithms().contains(a))
                .ok_or_else(|| {
                    invalid(
                        "strategy.allreduce",
                        unknown("AllReduce algorithm", name, &known),
                    )
                })?;
            if a == Algo::SegmentedRing {
                return Err(invalid(
                    "strategy.allreduce",
                    "`segmented-ring` (Open MPI's) needs a segment size, which a scenario does not set, and without one it is the plain ring: use `ring` (or time it with `dtsim collective --algo segmented-ring --segment-size`)",
                ));
            }
            a
        }
    };
    let dense = match s.dense.as_deref().unwrap_or("allreduce") {
        "allreduce" => DenseMethod::AllReduce(algo),
        "ps" => DenseMethod::Ps,
        m @ ("topk" | "gtopk") if sparse => {
            return Err(invalid(
                "strategy.dense",
                format!(
                    "`{m}` sparsifies the dense gradients, and this model has embedding tables: Top-k and gTop-k beside a sparse method are not modelled (use `allreduce`, `ps` or `dct`, DCT-DP, for the dense part)"
                ),
            ));
        }
        "topk" => DenseMethod::TopK,
        "gtopk" => DenseMethod::GTopK,
        "dct" => DenseMethod::Dct,
        other => {
            return Err(invalid(
                "strategy.dense",
                unknown("dense method", other, &DENSE_METHODS),
            ));
        }
    };
    let schedule = match &s.schedule {
        Some(name) => Schedule::parse(name).map_err(|e| invalid("strategy.schedule", e))?,
        None => Schedule::default(),
    };
    let ps_servers = count(s.ps_servers, "strategy.ps_servers", Some(0), 0)?;
    let machines = ps_machines(raw)?;
    let ps_machine_cores = match s.ps_machine_cores {
        None => 0,
        Some(_) if machines == 0 => {
            return Err(invalid(
                "strategy.ps_machine_cores",
                "means nothing here: it is the cores of each dedicated server machine, and there are none (`ps_machines` is 0); set `ps_machines`, or remove the key",
            ));
        }
        Some(_) => super::validate::count_to(
            s.ps_machine_cores,
            "strategy.ps_machine_cores",
            None,
            1,
            crate::limits::MAX_CPU_CORES,
        )?,
    };
    crate::limits::check_ps(nodes, machines, ps_servers).map_err(|(bound, m)| {
        let key = match bound {
            crate::limits::PsBound::Machines => "strategy.ps_machines",
            crate::limits::PsBound::Servers => "strategy.ps_servers",
        };
        invalid(key, m)
    })?;
    // (`refuse_inert` refused a sparse method for a model without sparse
    // parts)
    let sparse = match (&s.sparse, sparse) {
        (Some(name), _) => {
            Some(SparseMethod::parse(name).map_err(|e| invalid("strategy.sparse", e))?)
        }
        (None, true) => Some(default_sparse(dense)),
        (None, false) => None,
    };
    let ps_partitions = match &s.ps_partitions {
        None => Partitions::PerServer,
        Some(_) if sparse != Some(SparseMethod::Ps) => {
            return Err(invalid(
                "strategy.ps_partitions",
                format!(
                    "means nothing here: Parallax partitions the sparse variables its parameter servers hold, and the sparse method is `{}` (set `sparse = \"ps\"`, or remove the key)",
                    sparse.map_or("none", |m| m.name())
                ),
            ));
        }
        Some(IntOrText::Text(t)) if t == "auto" => Partitions::Auto,
        Some(IntOrText::Int(n)) if (1..=MAX_PARTITIONS as i64).contains(n) => {
            Partitions::Fixed(*n as u32)
        }
        Some(v) => {
            let got = match v {
                IntOrText::Int(n) => n.to_string(),
                IntOrText::Text(t) => format!("\"{t}\""),
            };
            return Err(invalid(
                "strategy.ps_partitions",
                format!("must be \"auto\" or a whole number from 1 to {MAX_PARTITIONS}, got {got}"),
            ));
        }
    };
    only_beside(
        "strategy.vertical_scheduling",
        s.vertical_scheduling.is_some(),
        sparse,
        SparseMethod::AllToAll,
        "EmbRace's vertical scheduling splits the gradients of its AlltoAll into prior and delayed rows",
    )?;
    let host_staged_allgather = switch(
        "strategy.allgather_staging",
        s.allgather_staging.as_deref(),
        ("none", "host"),
    )?;
    only_beside(
        "strategy.allgather_staging",
        s.allgather_staging.is_some(),
        sparse,
        SparseMethod::AllGather,
        "it says where the sparse AllGather gathers (on the GPUs, or through host memory)",
    )?;
    let ps_whole_variables = switch(
        "strategy.ps_placement",
        s.ps_placement.as_deref(),
        ("sharded", "whole"),
    )?;
    // whole variables go as tensors of their own, on channels of their own
    // (`train::planner::ps`); without tables nothing else is fused or cut
    if ps_whole_variables && dense == DenseMethod::Ps && sparse.is_none() {
        for (key, given) in [
            ("strategy.fusion", s.fusion.is_some()),
            ("strategy.partition", s.partition.is_some()),
        ] {
            if given {
                return Err(invalid(
                    key,
                    "means nothing here: with `ps_placement = \"whole\"` each dense variable is pushed and pulled as a tensor of its own, never fused or cut, and the model has no embedding table whose transfers it would shape; remove the key",
                ));
            }
        }
    }
    if let Some((key, why)) = inert_for(dense, s) {
        return Err(invalid(
            key,
            format!("means nothing here: {why}; remove the key"),
        ));
    }
    if schedule == Schedule::Fifo && s.partition.is_some() {
        return Err(invalid(
            "strategy.partition",
            "means nothing here: it cuts tensors into pieces that priority scheduling can reorder, and the schedule is `fifo`, which sends each whole (fused) tensor in turn; set `schedule = \"priority\"`, or remove the key",
        ));
    }
    if let Some((key, _)) = server_keys(dense, sparse, s)
        .into_iter()
        .find(|(_, given)| *given)
    {
        return Err(invalid(
            key,
            format!(
                "means nothing here: no method uses parameter servers (`dense` is `allreduce`, and the sparse method is `{}`); set `dense = \"ps\"`{}, or remove the key",
                sparse.map_or("none", |m| m.name()),
                if sparse.is_some() {
                    " or `sparse = \"ps\"`"
                } else {
                    ""
                }
            ),
        ));
    }
    // dedicated server machines run the sharded dense PS's servers,
    // DCT-DP's, a sparse PS's (whose partitions' work their hosts take)
    // and whole variables' (each machine's own work, on a host the engine
    // stands beside a GPU machine's: at most one a GPU machine)
    if machines > 0 && ps_whole_variables && dense == DenseMethod::Ps && machines > nodes {
        return Err(invalid(
            "strategy.ps_machines",
            format!(
                "is not modelled here: with `ps_placement = \"whole\"` each server machine's host runs its own variables' work, and dtsim models at most one dedicated machine a GPU machine there ({machines} for {nodes}); use at most {nodes}, or `ps_placement = \"sharded\"`"
            ),
        ));
    }
    let compressed = matches!(dense, DenseMethod::TopK | DenseMethod::GTopK);
    let density = match s.density {
        None => d.density,
        Some(_) if !compressed => {
            return Err(invalid(
                "strategy.density",
                format!(
                    "means nothing here: it is the fraction of gradient elements Top-k and gTop-k send, and the dense method is `{}` (set `dense = \"topk\"` or `\"gtopk\"`, or remove the key)",
                    s.dense.as_deref().unwrap_or("allreduce")
                ),
            ));
        }
        Some(r) if r.is_finite() && r > 0.0 && r <= 1.0 => r,
        Some(r) => {
            return Err(invalid(
                "strategy.density",
                format!("must be a fraction of the gradient's elements in (0, 1], got {r}"),
            ));
        }
    };
    let method = s.dense.as_deref().unwrap_or("allreduce");
    let not_dct = |key: &str| {
        invalid(
            key,
            format!(
                "means nothing here: it sets DCT-DP's threshold, and the dense method is `{method}` (set `dense = \"dct\"`, or remove the key)"
            ),
        )
    };
    let dct_sparsity = match s.dct_sparsity {
        None => d.dct_sparsity,
        Some(_) if dense != DenseMethod::Dct => return Err(not_dct("strategy.dct_sparsity")),
        Some(e) if e.is_finite() && (0.0..1.0).contains(&e) => e,
        Some(e) => {
            return Err(invalid(
                "strategy.dct_sparsity",
                format!(
                    "must be the fraction of each layer's gradient left out, in [0, 1), got {e}"
                ),
            ));
        }
    };
    let dct_lifespan = match s.dct_lifespan {
        None => d.dct_lifespan,
        Some(_) if dense != DenseMethod::Dct => return Err(not_dct("strategy.dct_lifespan")),
        Some(l) if (1..=crate::limits::MAX_ITERATIONS as i64).contains(&l) => l as u32,
        Some(l) => {
            return Err(invalid(
                "strategy.dct_lifespan",
                format!(
                    "must be the iterations between two sorts of the threshold, from 1 to {}, got {l}",
                    crate::limits::MAX_ITERATIONS
                ),
            ));
        }
    };
    let mp_sparsity = match s.mp_sparsity {
        None => 0.0,
        Some(_) if mp_stages < 2 => {
            return Err(invalid(
                "strategy.mp_sparsity",
                "means nothing here: DCT-MP compresses what flows between model-parallel stages, and `mp_stages` is 1 (set `mp_stages` to 2 or more, or remove the key)",
            ));
        }
        Some(e) if e.is_finite() && (0.0..1.0).contains(&e) => e,
        Some(e) => {
            return Err(invalid(
                "strategy.mp_sparsity",
                format!("must be the fraction of each activation row left out, in [0, 1), got {e}"),
            ));
        }
    };
    let mp_microbatches = match s.mp_microbatches {
        None => 1,
        Some(_) if mp_stages < 2 => {
            return Err(invalid(
                "strategy.mp_microbatches",
                "means nothing here: micro-batches are pipelined through model-parallel stages, and `mp_stages` is 1 (set `mp_stages` to 2 or more, or remove the key)",
            ));
        }
        Some(_) => super::validate::count_to(
            s.mp_microbatches,
            "strategy.mp_microbatches",
            Some(1),
            1,
            MAX_MICROBATCHES,
        )?,
    };
    if mp_stages > 1 {
        mp_refusals(dense, s, sparse.is_some())?;
    }
    Ok(Strategy {
        mp_stages,
        mp_sparsity,
        mp_microbatches,
        // the names are resolved against the model (`validate::model_parallel`)
        mp_splits: Vec::new(),
        dct_sparsity,
        dct_lifespan,
        density,
        vertical_scheduling: s.vertical_scheduling.unwrap_or(false),
        host_staged_allgather,
        ps_whole_variables,
        ps_partitions,
        sparse,
        dense,
        schedule,
        fusion: size(&s.fusion, "strategy.fusion", d.fusion)?,
        partition: size(&s.partition, "strategy.partition", d.partition)?,
        local_aggregation: s.local_aggregation.unwrap_or(d.local_aggregation),
        ps_servers,
        ps_machine_cores,
        // resolved against `ideal` (`validate::validate`)
        message_overhead_s: 0.0,
    })
}

/// A key of two named values, `off` (the default, also when absent) or
/// `on`: whether it is `on`; anything else refused, naming both.
fn switch(key: &str, value: Option<&str>, (off, on): (&str, &str)) -> Result<bool, Invalid> {
    match value {
        None => Ok(false),
        Some(v) if v == off => Ok(false),
        Some(v) if v == on => Ok(true),
        Some(other) => Err(invalid(
            key,
            format!("must be \"{off}\" or \"{on}\", got \"{other}\""),
        )),
    }
}

/// Refuses `key`, when `given`, beside any sparse method but `needs`:
/// it means nothing there (`why` says what it does).
fn only_beside(
    key: &str,
    given: bool,
    sparse: Option<SparseMethod>,
    needs: SparseMethod,
    why: &str,
) -> Result<(), Invalid> {
    if !given || sparse == Some(needs) {
        return Ok(());
    }
    Err(invalid(
        key,
        format!(
            "means nothing here: {why}, and the sparse method is `{}` (set `sparse = \"{}\"`, or remove the key)",
            sparse.map_or("none", |m| m.name()),
            needs.name()
        ),
    ))
}

/// What model parallelism (`mp_stages` > 1) does not combine with: Top-k
/// and gTop-k (their whole-model selection assumes one GPU holds the whole
/// gradient), models with embedding tables, AllReduce algorithms built on
/// the whole cluster's structure (tree, hierarchical, NVLS, SHARP: a
/// stage's data-parallel group is a strided subset of it), local
/// aggregation (a stage's PS workers push on their own), and whole
/// variables on the servers (the stages' PS spreads them evenly).
fn mp_refusals(dense: DenseMethod, s: &RawStrategy, sparse: bool) -> Result<(), Invalid> {
    let key = "strategy.mp_stages";
    if sparse {
        return Err(invalid(
            key,
            "model parallelism with embedding tables is not modelled (the tables' sparse synchronisation assumes every GPU holds the whole model); use `mp_stages = 1`",
        ));
    }
    match dense {
        DenseMethod::TopK | DenseMethod::GTopK => Err(invalid(
            key,
            format!(
                "model parallelism with `dense = \"{}\"` is not modelled (its selection runs over the whole model's gradient on one GPU); use `allreduce`, `ps` or `dct` across the trainers",
                if dense == DenseMethod::TopK {
                    "topk"
                } else {
                    "gtopk"
                }
            ),
        )),
        DenseMethod::AllReduce(a)
            if Collective::new(Op::AllReduce)
                .with_algo(a)
                .is_none_or(|c| c.spans_the_cluster()) =>
        {
            Err(invalid(
                "strategy.allreduce",
                format!(
                    "`{}` is built on the whole cluster's structure, and with `mp_stages` > 1 each stage synchronises over its own GPUs: use `ring`, `binomial`, `recursive-doubling`, `rabenseifner`, `mpich` or `ompi`",
                    a.name()
                ),
            ))
        }
        DenseMethod::Ps | DenseMethod::Dct if s.local_aggregation == Some(true) => Err(invalid(
            "strategy.local_aggregation",
            "with `mp_stages` > 1 each stage's GPUs push to the servers on their own: local aggregation is not modelled (remove the key)",
        )),
        DenseMethod::Ps if s.ps_placement.as_deref() == Some("whole") => Err(invalid(
            "strategy.ps_placement",
            "with `mp_stages` > 1 the stages' servers are modelled with the variables spread evenly (\"sharded\"): whole variables and their servers' CPU are not modelled there (remove the key)",
        )),
        _ => Ok(()),
    }
}

/// The `[strategy]` keys that `dense` does not read, each with why, as
/// (key, whether given, why): Top-k and gTop-k send one message an
/// iteration with a collective of their own (no schedule to choose among
/// messages, no fusion, pieces, AllReduce algorithm or servers); DCT-DP's
/// trainers each push their own layers to the servers (no fusion,
/// AllReduce algorithm or local aggregation).
fn method_keys(dense: DenseMethod, s: &RawStrategy) -> Vec<(&'static str, bool, &'static str)> {
    const TOPK: &str = "Top-k and gTop-k send one message an iteration, the whole model's selected elements, by a collective of their own";
    const DCT: &str =
        "DCT-DP's trainers each push their own layers' kept elements to the parameter servers";
    const PLACED: &str = "it places dense variables on parameter servers, and `dense` is not `ps`";
    const PS: &str = "parameter servers synchronise the dense gradients (`dense = \"ps\"`), and nothing runs an AllReduce algorithm (a table sent dense by `sparse = \"allreduce\"` goes by the ring)";
    let placement = ("strategy.ps_placement", s.ps_placement.is_some(), PLACED);
    match dense {
        DenseMethod::TopK | DenseMethod::GTopK => vec![
            ("strategy.schedule", s.schedule.is_some(), TOPK),
            ("strategy.fusion", s.fusion.is_some(), TOPK),
            ("strategy.partition", s.partition.is_some(), TOPK),
            ("strategy.allreduce", s.allreduce.is_some(), TOPK),
            ("strategy.ps_servers", s.ps_servers.is_some(), TOPK),
            ("strategy.ps_machines", s.ps_machines.is_some(), TOPK),
            (
                "strategy.ps_machine_cores",
                s.ps_machine_cores.is_some(),
                TOPK,
            ),
            (
                "strategy.local_aggregation",
                s.local_aggregation.is_some(),
                TOPK,
            ),
            placement,
        ],
        DenseMethod::Dct => vec![
            ("strategy.fusion", s.fusion.is_some(), DCT),
            ("strategy.allreduce", s.allreduce.is_some(), DCT),
            (
                "strategy.local_aggregation",
                s.local_aggregation.is_some(),
                DCT,
            ),
            placement,
        ],
        DenseMethod::AllReduce(_) => vec![placement],
        DenseMethod::Ps => vec![("strategy.allreduce", s.allreduce.is_some(), PS)],
    }
}

/// The parameter servers' keys (`ps_servers`, `local_aggregation`) where
/// no method uses servers: the dense method is `allreduce` and the sparse
/// method, if any, is not `ps` (Top-k's, gTop-k's and DCT-DP's own
/// refusals are [`method_keys`]'), as (key, whether given).
fn server_keys(
    dense: DenseMethod,
    sparse: Option<SparseMethod>,
    s: &RawStrategy,
) -> Vec<(&'static str, bool)> {
    if !matches!(dense, DenseMethod::AllReduce(_)) || sparse == Some(SparseMethod::Ps) {
        return Vec::new();
    }
    vec![
        ("strategy.ps_servers", s.ps_servers.is_some()),
        ("strategy.local_aggregation", s.local_aggregation.is_some()),
        ("strategy.ps_machines", s.ps_machines.is_some()),
        ("strategy.ps_machine_cores", s.ps_machine_cores.is_some()),
    ]
}

/// `strategy.ps_machines`: the machines dedicated to the parameter
/// servers (0, the default: the servers run on the GPU machines' hosts),
/// which validation puts in the cluster ([`crate::cluster::ClusterSpec::ps_machines`]).
pub(super) fn ps_machines(raw: &RawScenario) -> Result<u32, Invalid> {
    let max = crate::limits::MAX_PS_MACHINES;
    match raw.strategy.ps_machines {
        None => Ok(0),
        Some(n) if (0..=max as i64).contains(&n) => Ok(n as u32),
        Some(n) => Err(invalid(
            "strategy.ps_machines",
            format!("must be a whole number from 0 to {max}, got {n}"),
        )),
    }
}

/// The first key given that `dense` does not read ([`method_keys`]).
fn inert_for(dense: DenseMethod, s: &RawStrategy) -> Option<(&'static str, &'static str)> {
    method_keys(dense, s)
        .into_iter()
        .find(|(_, given, _)| *given)
        .map(|(k, _, why)| (k, why))
}

/// The sparse method of a model with embedding tables when
/// `strategy.sparse` is not given: TensorFlow-style parameter servers hold
/// every variable, so PS's and DCT-DP's tables go to the servers too;
/// otherwise Horovod's AllGather.
fn default_sparse(dense: DenseMethod) -> SparseMethod {
    if matches!(dense, DenseMethod::Ps | DenseMethod::Dct) {
        SparseMethod::Ps
    } else {
        SparseMethod::AllGather
    }
}

/// At a point of a sweep over `strategy.dense`, `strategy.sparse` or
/// `strategy.schedule`, the keys that belong to the other methods (or
/// schedules: `partition` at a FIFO point) of the sweep are dropped rather
/// than refused (a `density` for the Top-k points means nothing at the
/// AllReduce point of the same sweep). Where the dense method is swept:
/// `density` unless Top-k or gTop-k, `dct_sparsity` and `dct_lifespan`
/// unless DCT-DP, `model.kernel_profile` unless a method with kernels, and
/// the keys [`method_keys`] lists for the point's method. Where the sparse
/// method varies (swept, or left to its default beside a swept dense
/// method): `ps_partitions` unless the sparse method is `ps`,
/// `vertical_scheduling` unless it is `alltoall`, and `allgather_staging`
/// unless it is `allgather`. Where the dense or the sparse method varies:
/// `ps_servers` and `local_aggregation` unless a method uses servers
/// ([`server_keys`]). Keys that are themselves swept (`swept`, dotted) are kept, and
/// refused where they mean nothing: dropped, their swept values would
/// label points that do not differ. An unknown method is left for
/// validation to name.
pub(super) fn drop_other_methods_keys(raw: &mut RawScenario, swept: &dyn Fn(&str) -> bool) {
    // priority's pieces at a FIFO point of a sweep over the schedule
    if swept("strategy.schedule")
        && !swept("strategy.partition")
        && raw.strategy.schedule.as_deref().unwrap_or("fifo") == "fifo"
    {
        raw.strategy.partition = None;
    }
    let dense = match raw.strategy.dense.as_deref().unwrap_or("allreduce") {
        "topk" => DenseMethod::TopK,
        "gtopk" => DenseMethod::GTopK,
        "dct" => DenseMethod::Dct,
        "ps" => DenseMethod::Ps,
        "allreduce" => DenseMethod::AllReduce(Algo::Ring),
        _ => return,
    };
    let drop = |key: &str| !swept(key);
    // a sparse method's keys where the sparse method varies: swept, or
    // left to its default, which follows the swept dense method
    let sparse_varies =
        swept("strategy.sparse") || (swept("strategy.dense") && raw.strategy.sparse.is_none());
    // (an unknown sparse method is left for validation to name)
    let sparse = match raw.strategy.sparse.as_deref() {
        Some(name) => SparseMethod::parse(name).ok(),
        None => Some(default_sparse(dense)),
    };
    if let Some(sparse) = sparse.filter(|_| sparse_varies) {
        if sparse != SparseMethod::Ps && drop("strategy.ps_partitions") {
            raw.strategy.ps_partitions = None;
        }
        if sparse != SparseMethod::AllToAll && drop("strategy.vertical_scheduling") {
            raw.strategy.vertical_scheduling = None;
        }
        if sparse != SparseMethod::AllGather && drop("strategy.allgather_staging") {
            raw.strategy.allgather_staging = None;
        }
    }
    // the servers' keys at a point where no method uses servers, where
    // the dense or the sparse method varies
    if swept("strategy.dense") || sparse_varies {
        for (key, _) in server_keys(dense, sparse, &raw.strategy) {
            if drop(key) {
                clear(&mut raw.strategy, key);
            }
        }
    }
    // the dense methods' keys only where the dense method is swept
    if !swept("strategy.dense") {
        return;
    }
    // whole variables on the servers send each variable whole: the
    // AllReduce points' fusion and pieces mean nothing at the PS point of
    // a model without tables (`validate_strategy` refuses them there)
    let has_tables = match raw.model.preset.as_deref() {
        Some(name) => crate::workload::preset_data::PRESETS
            .iter()
            .find(|p| p.name == name)
            .is_some_and(|p| p.layers.iter().any(|l| l.embedding.is_some())),
        None => raw.model.layers.iter().any(|l| l.embedding.is_some()),
    };
    if dense == DenseMethod::Ps
        && raw.strategy.ps_placement.as_deref() == Some("whole")
        && !has_tables
    {
        if drop("strategy.fusion") {
            raw.strategy.fusion = None;
        }
        if drop("strategy.partition") {
            raw.strategy.partition = None;
        }
    }
    if !matches!(dense, DenseMethod::TopK | DenseMethod::GTopK) && drop("strategy.density") {
        raw.strategy.density = None;
    }
    if dense != DenseMethod::Dct {
        if drop("strategy.dct_sparsity") {
            raw.strategy.dct_sparsity = None;
        }
        if drop("strategy.dct_lifespan") {
            raw.strategy.dct_lifespan = None;
        }
    }
    if !matches!(
        dense,
        DenseMethod::TopK | DenseMethod::GTopK | DenseMethod::Dct
    ) && raw.strategy.mp_sparsity.unwrap_or(0.0) == 0.0
        && drop("model.kernel_profile")
    {
        raw.model.kernel_profile = None;
    }
    for (key, _, _) in method_keys(dense, &raw.strategy) {
        if drop(key) {
            clear(&mut raw.strategy, key);
        }
    }
}

/// Removes `key`, one that [`method_keys`] or [`server_keys`] names, from
/// the strategy.
fn clear(s: &mut RawStrategy, key: &str) {
    match key {
        "strategy.schedule" => s.schedule = None,
        "strategy.fusion" => s.fusion = None,
        "strategy.partition" => s.partition = None,
        "strategy.allreduce" => s.allreduce = None,
        "strategy.ps_servers" => s.ps_servers = None,
        "strategy.ps_machines" => s.ps_machines = None,
        "strategy.ps_machine_cores" => s.ps_machine_cores = None,
        "strategy.local_aggregation" => s.local_aggregation = None,
        "strategy.ps_placement" => s.ps_placement = None,
        _ => unreachable!("method_keys and server_keys name these"),
    }
}

/// Refuses the keys the raw layer accepts (they are the public shape of
/// `shared/DESIGN.md`) but nothing simulates yet, naming the issue that
/// brings each, and the sparse keys in a scenario whose model has no
/// sparse part (`sparse`). `strategy.mp_stages = 1` is not among them: it
/// is the default and means what it says.
fn refuse_inert(s: &RawStrategy, sparse: bool) -> Result<(), Invalid> {
    // the keys about embeddings, for a model that has none
    let about_embeddings = [
        (
            "strategy.sparse",
            s.sparse.is_some(),
            "the model has no sparse part",
        ),
        (
            "strategy.vertical_scheduling",
            s.vertical_scheduling.is_some(),
            "EmbRace's prior and delayed rows are rows of an embedding, and the model has none",
        ),
        (
            "strategy.ps_partitions",
            s.ps_partitions.is_some(),
            "Parallax partitions sparse variables, and the model has none",
        ),
        (
            "strategy.allgather_staging",
            s.allgather_staging.is_some(),
            "it says where sparse gradients are gathered, and the model has none",
        ),
    ];
    if let Some((key, _, why)) = about_embeddings
        .into_iter()
        .find(|(_, given, _)| *given && !sparse)
    {
        return Err(invalid(
            key,
            format!(
                "means nothing here: {why} (give a layer an `[model.layers.embedding]`, or remove the key)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{GOOD, err};
    use crate::collective::Algo;
    use crate::strategy::DenseMethod;

    /// The strategy of the one point of `base` with `[strategy]` lines
    /// `extra`.
    fn strategy_of(base: &str, extra: &str) -> crate::strategy::Strategy {
        let text = format!("{base}[strategy]\n{extra}\n");
        super::super::load_str(&text, "f.toml", "f").unwrap()[0]
            .config
            .strategy
            .clone()
    }

    /// The 1-based line of the first line of `text` that starts with `start`.
    fn line(text: &str, start: &str) -> usize {
        text.lines().position(|l| l.starts_with(start)).unwrap() + 1
    }

    /// A scenario like GOOD whose model has an embedding layer.
    const SPARSE: &str = r#"
name = "t"
[cluster]
nodes = 2
gpus_per_node = 4
network = "ib-edr-100g"
[model]
batch_per_gpu = 64
[[model.layers]]
name = "emb"
params = 0
forward = "1ms"
backward = "2ms"
[model.layers.embedding]
vocab = 100000
dim = 512
density = 0.01
[[model.layers]]
name = "lstm"
params = 1000000
forward = "5ms"
backward = "10ms"
"#;

    /// DCT-DP beside embedding tables: the tables go to the same servers by
    /// default (`sparse = "ps"`), another sparse method may be asked for,
    /// and model parallelism beside tables is refused.
    #[test]
    fn dct_takes_tables_to_its_servers() {
        let s = strategy_of(SPARSE, "dense = \"dct\"");
        assert_eq!(s.sparse, Some(crate::strategy::SparseMethod::Ps));
        let s = strategy_of(SPARSE, "dense = \"dct\"\nsparse = \"allgather\"");
        assert_eq!(s.sparse, Some(crate::strategy::SparseMethod::AllGather));
        let text = format!("{SPARSE}[strategy]\ndense = \"dct\"\nmp_stages = 2\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.mp_stages"), "{e}");
        assert!(e.message.contains("embedding tables"), "{e}");
    }

    /// `mp_sparsity` is a fraction in [0, 1) and means something only with
    /// two stages or more; each refusal names the key and its line.
    #[test]
    fn mp_sparsity_needs_stages_and_a_fraction() {
        let text = format!("{GOOD}[strategy]\nschedule = \"fifo\"\nmp_sparsity = 0.5\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.mp_sparsity"), "{e}");
        assert_eq!(e.line, Some(line(&text, "mp_sparsity")), "{e}");
        assert!(e.message.contains("means nothing here"), "{e}");
        assert!(e.message.contains("mp_stages"), "{e}");
        for bad in ["1.0", "-0.1", "nan"] {
            let text = format!("{GOOD}[strategy]\nmp_stages = 2\nmp_sparsity = {bad}\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("strategy.mp_sparsity"), "{e}");
            assert!(e.message.contains("[0, 1)"), "{e}");
        }
        let s = strategy_of(GOOD, "mp_stages = 2\nmp_sparsity = 0.9");
        assert_eq!((s.mp_stages, s.mp_sparsity), (2, 0.9));
        assert_eq!(strategy_of(GOOD, "").mp_stages, 1);
    }

    /// The sparse keys mean nothing for a model without sparse parts: the
    /// message says so (not "not supported yet").
    #[test]
    fn sparse_keys_without_an_embedding_mean_nothing() {
        for (set, key) in [
            ("sparse = \"allgather\"", "strategy.sparse"),
            ("sparse = \"alltoall\"", "strategy.sparse"),
            ("vertical_scheduling = true", "strategy.vertical_scheduling"),
            ("ps_partitions = 8", "strategy.ps_partitions"),
            ("allgather_staging = \"host\"", "strategy.allgather_staging"),
        ] {
            let text = format!("{GOOD}[strategy]\n{set}\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert_eq!(e.line, Some(line(&text, set)), "{e}");
            assert!(e.message.contains("means nothing here"), "{e}");
            assert!(e.message.contains("[model.layers.embedding]"), "{e}");
        }
    }

    /// Vertical scheduling splits EmbRace's AlltoAll of gradients: with any
    /// other sparse method it means nothing, and says which is set.
    #[test]
    fn vertical_scheduling_needs_the_alltoall() {
        for (method, name) in [
            ("sparse = \"allgather\"\n", "allgather"),
            ("sparse = \"ps\"\n", "ps"),
            ("", "allgather"),
        ] {
            let text = format!("{SPARSE}[strategy]\n{method}vertical_scheduling = true\n");
            let e = err(&text);
            assert_eq!(
                e.key.as_deref(),
                Some("strategy.vertical_scheduling"),
                "{e}"
            );
            assert_eq!(e.line, Some(line(&text, "vertical_scheduling")), "{e}");
            assert!(e.message.contains("means nothing here"), "{e}");
            assert!(e.message.contains(&format!("`{name}`")), "{e}");
        }
        let p = super::super::load_str(
            &format!("{SPARSE}[strategy]\nsparse = \"alltoall\"\nvertical_scheduling = true\n"),
            "f.toml",
            "f",
        )
        .unwrap();
        assert!(p[0].config.strategy.vertical_scheduling);
        // its prior and delayed AlltoAllv hold a size a pair of GPUs: on
        // 80,000 GPUs 2 × 80,000² of them (51 GB) are refused, on the key's
        // line; 4,096 (2 × 4,096² = 2^25) are not
        let big = |nodes: u32| {
            format!("{SPARSE}[strategy]\nsparse = \"alltoall\"\nvertical_scheduling = true\n")
                .replacen("nodes = 2", &format!("nodes = {nodes}"), 1)
                .replacen("gpus_per_node = 4", "gpus_per_node = 8", 1)
                .replacen("dim = 512", "dim = 80000", 1)
        };
        let text = big(10_000);
        let e = err(&text);
        assert_eq!(
            e.key.as_deref(),
            Some("strategy.vertical_scheduling"),
            "{e}"
        );
        assert_eq!(e.line, Some(line(&text, "vertical_scheduling")), "{e}");
        assert!(e.message.contains("on 80000 GPUs"), "{e}");
        assert!(e.message.contains("12800000000 sizes"), "{e}");
        assert!(super::super::load_str(&big(512), "f.toml", "f").is_ok());
    }

    /// The servers' keys mean nothing where no method uses servers (the
    /// dense AllReduce beside no sparse PS), nor the AllReduce algorithm
    /// beside the dense PS: each is refused on its line; Parallax's hybrid
    /// (dense AllReduce, sparse PS) keeps them; a sweep over the dense
    /// method drops them at the points that do not read them, and refuses
    /// them swept there.
    #[test]
    fn servers_and_allreduce_keys_need_their_methods() {
        for (base, set, key, what) in [
            (GOOD, "ps_servers = 2", "strategy.ps_servers", "`none`"),
            (
                GOOD,
                "local_aggregation = false",
                "strategy.local_aggregation",
                "`none`",
            ),
            (
                SPARSE,
                "sparse = \"allgather\"\nlocal_aggregation = false",
                "strategy.local_aggregation",
                "`allgather`",
            ),
            (
                SPARSE,
                "sparse = \"alltoall\"\nps_servers = 4",
                "strategy.ps_servers",
                "or `sparse = \"ps\"`",
            ),
            (
                GOOD,
                "dense = \"ps\"\nallreduce = \"tree\"",
                "strategy.allreduce",
                "nothing runs an AllReduce algorithm",
            ),
            (
                SPARSE,
                "dense = \"ps\"\nsparse = \"allreduce\"\nallreduce = \"sharp\"",
                "strategy.allreduce",
                "goes by the ring",
            ),
        ] {
            let text = format!("{base}[strategy]\n{set}\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{set}: {e}");
            let leaf = key.rsplit('.').next().unwrap();
            assert_eq!(e.line, Some(line(&text, leaf)), "{set}: {e}");
            assert!(e.message.contains("means nothing here"), "{set}: {e}");
            assert!(e.message.contains(what), "{set}: {e}");
        }
        // Parallax's hybrid: servers for the tables
        let s = strategy_of(
            SPARSE,
            "sparse = \"ps\"\nps_servers = 4\nlocal_aggregation = false",
        );
        assert_eq!((s.ps_servers, s.local_aggregation), (4, false));
        // swept dense method: dropped where not read ...
        let sweep = format!(
            "{GOOD}[strategy]\ndense = \"ps\"\nps_servers = 2\nlocal_aggregation = false\nallreduce = \"tree\"\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n"
        )
        .replace("dense = \"ps\"\nps_servers", "ps_servers");
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        assert_eq!(
            p[0].config.strategy.dense,
            DenseMethod::AllReduce(Algo::Tree)
        );
        assert_eq!(p[1].config.strategy.dense, DenseMethod::Ps);
        assert_eq!(
            (
                p[1].config.strategy.ps_servers,
                p[1].config.strategy.local_aggregation
            ),
            (2, false)
        );
        // ... and refused swept there
        let swept = format!(
            "{GOOD}[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n\"strategy.local_aggregation\" = [false, true]\n"
        );
        let e = err(&swept);
        assert_eq!(e.key.as_deref(), Some("strategy.local_aggregation"), "{e}");
    }

    /// `ps_machines`: the servers' dedicated machines, put in the cluster
    /// for the sharded dense PS, DCT-DP, a sparse PS and whole variables
    /// (at most one machine a GPU machine); meaningless without servers
    /// (and with Top-k's), out of range
    /// refused; a sweep over the dense method drops it at the AllReduce
    /// point, whose cluster then has none.
    #[test]
    fn ps_machines_go_to_the_cluster_where_servers_use_them() {
        let cfg = |base: &str, set: &str| {
            super::super::load_str(&format!("{base}[strategy]\n{set}\n"), "f.toml", "f")
                .unwrap()
                .remove(0)
                .config
        };
        let c = cfg(GOOD, "dense = \"ps\"\nps_machines = 3");
        assert_eq!(c.cluster.ps_machines, 3);
        assert_eq!(c.strategy.dense_collective().servers(&c.cluster), 3);
        assert_eq!(
            cfg(GOOD, "dense = \"dct\"\nps_machines = 2")
                .cluster
                .ps_machines,
            2
        );
        assert_eq!(cfg(GOOD, "dense = \"ps\"").cluster.ps_machines, 0);
        for (base, set, what) in [
            (GOOD, "ps_machines = 2", "means nothing here"),
            (
                GOOD,
                "dense = \"topk\"\nps_machines = 2",
                "means nothing here",
            ),
            (
                GOOD,
                "dense = \"ps\"\nps_placement = \"whole\"\nps_machines = 3",
                "at most one dedicated machine a GPU machine there (3 for 2)",
            ),
            (
                GOOD,
                "dense = \"ps\"\nps_machines = -1",
                "from 0 to 65536, got -1",
            ),
            (
                GOOD,
                "dense = \"ps\"\nps_machines = 70000",
                "from 0 to 65536, got 70000",
            ),
            (
                GOOD,
                "dense = \"ps\"\nps_machines = 129",
                "129 dedicated machines for 2 GPU machines is more than 64 a GPU machine",
            ),
            (
                GOOD,
                "dense = \"ps\"\nps_machines = 1\nps_servers = 65",
                "65 servers on 1 dedicated machine is",
            ),
        ] {
            let text = format!("{base}[strategy]\n{set}\n");
            let e = err(&text);
            let key = if set.contains("ps_servers") {
                "strategy.ps_servers"
            } else {
                "strategy.ps_machines"
            };
            assert_eq!(e.key.as_deref(), Some(key), "{set}: {e}");
            let leaf = key.rsplit('.').next().unwrap();
            assert_eq!(e.line, Some(line(&text, leaf)), "{set}: {e}");
            assert!(e.message.contains(what), "{set}: {e}");
        }
        // a sparse PS's servers take the machines (since 2026-11-29,
        // twelfth session), so the message offers it
        let e = err(&format!(
            "{SPARSE}[strategy]\nsparse = \"alltoall\"\nps_machines = 2\n"
        ));
        assert!(e.message.contains("sparse = \"ps\""), "{e}");
        let c = cfg(SPARSE, "sparse = \"ps\"\nps_machines = 2");
        assert_eq!(c.cluster.ps_machines, 2);
        let c = cfg(SPARSE, "dense = \"dct\"\nps_machines = 2");
        assert_eq!(c.cluster.ps_machines, 2);
        // the machines' cores: with machines only, in range, dropped at a
        // swept point of none
        let c = cfg(
            SPARSE,
            "sparse = \"ps\"\nps_machines = 2\nps_machine_cores = 8",
        );
        assert_eq!(c.strategy.ps_machine_cores, 8);
        for (set, says) in [
            (
                "dense = \"ps\"\nps_machine_cores = 8",
                "there are none (`ps_machines` is 0)",
            ),
            (
                "dense = \"ps\"\nps_machines = 2\nps_machine_cores = 0",
                "from 1 to 4096, got 0",
            ),
            (
                "dense = \"topk\"\nps_machine_cores = 8",
                "means nothing here",
            ),
        ] {
            let e = err(&format!("{GOOD}[strategy]\n{set}\n"));
            assert_eq!(
                e.key.as_deref(),
                Some("strategy.ps_machine_cores"),
                "{set}: {e}"
            );
            assert!(e.message.contains(says), "{set}: {e}");
        }
        let sweep = format!(
            "{GOOD}[strategy]\ndense = \"ps\"\nps_machine_cores = 8\n[sweep]\n\"strategy.ps_machines\" = [0, 2]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        assert_eq!(p[0].config.strategy.ps_machine_cores, 0);
        assert_eq!(p[1].config.strategy.ps_machine_cores, 8);
        // whole variables' servers on up to a machine a GPU machine
        let c = cfg(
            GOOD,
            "dense = \"ps\"\nps_placement = \"whole\"\nps_machines = 2",
        );
        assert_eq!(c.cluster.ps_machines, 2);
        let sweep = format!(
            "{GOOD}[strategy]\nps_machines = 2\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        assert_eq!(p[0].config.cluster.ps_machines, 0);
        assert_eq!(p[1].config.cluster.ps_machines, 2);
    }

    /// `partition` cuts tensors for priority scheduling: beside FIFO it
    /// means nothing and is refused on its line; a sweep over the schedule
    /// drops it at the FIFO points and refuses it swept there.
    #[test]
    fn partition_needs_priority() {
        for set in ["partition = \"1MiB\"", "schedule = \"fifo\"\npartition = 0"] {
            let text = format!("{GOOD}[strategy]\n{set}\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("strategy.partition"), "{e}");
            assert_eq!(e.line, Some(line(&text, "partition")), "{e}");
            assert!(e.message.contains("the schedule is `fifo`"), "{e}");
        }
        let s = strategy_of(GOOD, "schedule = \"priority\"\npartition = \"1MiB\"");
        assert_eq!(s.partition, 1 << 20);
        let sweep = format!(
            "{GOOD}[strategy]\npartition = \"1MiB\"\n[sweep]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        assert_eq!(p[1].config.strategy.partition, 1 << 20);
        let swept = format!(
            "{GOOD}[sweep]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n\"strategy.partition\" = [\"1MiB\", \"4MiB\"]\n"
        );
        let e = err(&swept);
        assert_eq!(e.key.as_deref(), Some("strategy.partition"), "{e}");
    }

    /// `ps_placement` is "sharded" (the default) or "whole", and means
    /// something only with `dense = "ps"` in data parallelism; a sweep
    /// over the dense method keeps it at the PS point and drops it at the
    /// others.
    #[test]
    fn ps_placement_needs_the_dense_ps() {
        let ps = "dense = \"ps\"\n";
        assert!(!strategy_of(GOOD, ps).ps_whole_variables);
        assert!(!strategy_of(GOOD, &format!("{ps}ps_placement = \"sharded\"")).ps_whole_variables);
        assert!(strategy_of(GOOD, &format!("{ps}ps_placement = \"whole\"")).ps_whole_variables);
        for method in ["allreduce", "topk", "gtopk", "dct"] {
            let text =
                format!("{GOOD}[strategy]\ndense = \"{method}\"\nps_placement = \"whole\"\n");
            let e = err(&text);
            assert_eq!(
                e.key.as_deref(),
                Some("strategy.ps_placement"),
                "{method}: {e}"
            );
            assert_eq!(e.line, Some(line(&text, "ps_placement")), "{e}");
            assert!(e.message.contains("`dense` is not `ps`"), "{e}");
        }
        let text = format!("{GOOD}[strategy]\n{ps}ps_placement = \"even\"\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.ps_placement"), "{e}");
        assert_eq!(e.line, Some(line(&text, "ps_placement")), "{e}");
        assert!(e.message.contains("\"sharded\" or \"whole\""), "{e}");
        let text = format!("{GOOD}[strategy]\n{ps}mp_stages = 2\nps_placement = \"whole\"\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.ps_placement"), "{e}");
        assert!(e.message.contains("mp_stages"), "{e}");
        for key in ["fusion", "partition"] {
            let text =
                format!("{GOOD}[strategy]\n{ps}ps_placement = \"whole\"\n{key} = \"8MiB\"\n");
            let e = err(&text);
            assert_eq!(
                e.key.as_deref(),
                Some(format!("strategy.{key}").as_str()),
                "{e}"
            );
            assert_eq!(e.line, Some(line(&text, key)), "{e}");
            assert!(e.message.contains("never fused or cut"), "{e}");
            // beside an embedding they shape its tables' transfers (the
            // pieces, priority's)
            let text = format!(
                "{SPARSE}[strategy]\n{ps}ps_placement = \"whole\"\nschedule = \"priority\"\n{key} = \"8MiB\"\n"
            );
            assert!(
                super::super::load_str(&text, "f.toml", "f").is_ok(),
                "{key} with a table"
            );
        }
        let sweep = format!(
            "{GOOD}[strategy]\n{ps}ps_placement = \"whole\"\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        let whole: Vec<_> = p
            .iter()
            .map(|p| {
                let s = &p.config.strategy;
                (s.dense_name(), s.ps_whole_variables)
            })
            .collect();
        assert_eq!(whole, [("allreduce", false), ("ps", true)]);
        // the AllReduce points' fusion and pieces are dropped at the PS
        // point of whole variables (a model without tables), not refused
        let sweep = format!(
            "{GOOD}[strategy]\n{ps}ps_placement = \"whole\"\nschedule = \"priority\"\nfusion = \"8MiB\"\npartition = \"1MiB\"\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        let fusion: Vec<_> = p
            .iter()
            .map(|p| {
                let s = &p.config.strategy;
                (s.dense_name(), s.fusion, s.ps_whole_variables)
            })
            .collect();
        let d = crate::strategy::Strategy::default();
        assert_eq!(
            fusion,
            [("allreduce", 8 << 20, false), ("ps", d.fusion, true)]
        );
        // swept itself, it is kept, and refused where it means nothing
        let sweep = format!(
            "{GOOD}[strategy]\n{ps}ps_placement = \"whole\"\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n\"strategy.fusion\" = [\"8MiB\"]\n"
        );
        let e = super::super::load_str(&sweep, "f.toml", "f").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("strategy.fusion"), "{e}");
    }

    /// `allgather_staging` is "none" or "host", and means something only
    /// beside the sparse AllGather (the default beside an AllReduce); each
    /// refusal names the key, its line and what is set instead.
    #[test]
    fn allgather_staging_needs_the_allgather() {
        assert!(!strategy_of(SPARSE, "").host_staged_allgather);
        assert!(!strategy_of(SPARSE, "allgather_staging = \"none\"").host_staged_allgather);
        assert!(strategy_of(SPARSE, "allgather_staging = \"host\"").host_staged_allgather);
        assert!(
            strategy_of(
                SPARSE,
                "sparse = \"allgather\"\nallgather_staging = \"host\""
            )
            .host_staged_allgather
        );
        for (method, name) in [
            ("sparse = \"alltoall\"\n", "alltoall"),
            ("sparse = \"ps\"\n", "ps"),
            ("dense = \"ps\"\n", "ps"),
        ] {
            let text = format!("{SPARSE}[strategy]\n{method}allgather_staging = \"host\"\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("strategy.allgather_staging"), "{e}");
            assert_eq!(e.line, Some(line(&text, "allgather_staging")), "{e}");
            assert!(e.message.contains("means nothing here"), "{e}");
            assert!(e.message.contains(&format!("`{name}`")), "{e}");
        }
        let text = format!("{SPARSE}[strategy]\nallgather_staging = \"cpu\"\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.allgather_staging"), "{e}");
        assert_eq!(e.line, Some(line(&text, "allgather_staging")), "{e}");
        assert!(e.message.contains("\"none\" or \"host\""), "{e}");
        // a sweep over the sparse method keeps the key at the AllGather
        // and drops it elsewhere
        let sweep = format!(
            "{SPARSE}[strategy]\nallgather_staging = \"host\"\n[sweep]\n\"strategy.sparse\" = [\"allgather\", \"ps\", \"alltoall\"]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        let staged: Vec<_> = p
            .iter()
            .map(|p| {
                let s = &p.config.strategy;
                (s.sparse_name(), s.host_staged_allgather)
            })
            .collect();
        assert_eq!(
            staged,
            [("allgather", true), ("ps", false), ("alltoall", false)]
        );
    }

    /// With an embedding, `sparse` defaults by the dense method (PS for
    /// PS, AllGather beside AllReduce) and takes any of the four methods.
    #[test]
    fn the_sparse_method_and_its_default() {
        let method = |extra: &str| {
            let p =
                super::super::load_str(&format!("{SPARSE}[strategy]\n{extra}\n"), "f.toml", "f")
                    .unwrap();
            p[0].config.strategy.sparse_name()
        };
        assert_eq!(method(""), "allgather");
        assert_eq!(method("dense = \"ps\""), "ps");
        for m in ["ps", "allgather", "allreduce", "alltoall"] {
            assert_eq!(method(&format!("sparse = \"{m}\"")), m);
        }
        let g = super::super::load_str(GOOD, "f.toml", "f").unwrap();
        assert_eq!(g[0].config.strategy.sparse_name(), "none");
    }

    /// `ps_partitions` takes "auto" or a count, for a sparse PS only.
    #[test]
    fn partitions_of_a_sparse_ps() {
        let with = |extra: &str| format!("{SPARSE}[strategy]\n{extra}\n");
        let ok = |extra: &str| strategy_of(SPARSE, extra).ps_partitions;
        use crate::strategy::Partitions;
        assert_eq!(ok("sparse = \"ps\""), Partitions::PerServer);
        assert_eq!(
            ok("sparse = \"ps\"\nps_partitions = 64"),
            Partitions::Fixed(64)
        );
        assert_eq!(
            ok("sparse = \"ps\"\nps_partitions = \"auto\""),
            Partitions::Auto
        );
        for (extra, what) in [
            (
                "sparse = \"ps\"\nps_partitions = 0",
                "from 1 to 65536, got 0",
            ),
            ("sparse = \"ps\"\nps_partitions = \"many\"", "got \"many\""),
            ("sparse = \"ps\"\nps_partitions = 100000", "got 100000"),
            (
                "sparse = \"allgather\"\nps_partitions = 8",
                "means nothing here",
            ),
        ] {
            let text = with(extra);
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("strategy.ps_partitions"), "{e}");
            assert_eq!(e.line, Some(line(&text, "ps_partitions")), "{e}");
            assert!(e.message.contains(what), "{extra}: {e}");
        }
        // more partitions than the table has rows
        let e = err(&with("sparse = \"ps\"\nps_partitions = 60000")
            .replace("vocab = 100000", "vocab = 50000"));
        assert_eq!(e.key.as_deref(), Some("strategy.ps_partitions"), "{e}");
        assert!(e.message.contains("50000 rows"), "{e}");
    }

    /// DCT-DP takes a sparsity in [0, 1) (default 0.95) and a life-span
    /// from 1 (default 1000); both mean nothing beside another method.
    #[test]
    fn dct_and_its_keys() {
        let with = |extra: &str| format!("{GOOD}[strategy]\n{extra}\n");
        let ok = |extra: &str| strategy_of(GOOD, extra);
        let s = ok("dense = \"dct\"");
        assert_eq!(
            (s.dense_name(), s.dct_sparsity, s.dct_lifespan),
            ("dct", 0.95, 1000)
        );
        let s = ok("dense = \"dct\"\ndct_sparsity = 0.0\ndct_lifespan = 1");
        assert_eq!((s.dct_sparsity, s.dct_lifespan), (0.0, 1));
        for (extra, key, what) in [
            (
                "dense = \"dct\"\ndct_sparsity = 1.0",
                "strategy.dct_sparsity",
                "in [0, 1), got 1",
            ),
            (
                "dense = \"dct\"\ndct_sparsity = -0.5",
                "strategy.dct_sparsity",
                "got -0.5",
            ),
            (
                "dense = \"dct\"\ndct_lifespan = 0",
                "strategy.dct_lifespan",
                "from 1 to 1000000, got 0",
            ),
            (
                "dense = \"dct\"\ndct_lifespan = 2000000",
                "strategy.dct_lifespan",
                "got 2000000",
            ),
            (
                "dct_sparsity = 0.9",
                "strategy.dct_sparsity",
                "means nothing here",
            ),
            (
                "dense = \"topk\"\ndct_lifespan = 10",
                "strategy.dct_lifespan",
                "dense method is `topk`",
            ),
        ] {
            let text = with(extra);
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert_eq!(
                e.line,
                Some(line(&text, key.trim_start_matches("strategy."))),
                "{e}"
            );
            assert!(e.message.contains(what), "{extra}: {e}");
        }
    }

    /// Keys a compressed method does not read are refused, naming them;
    /// in a sweep over `strategy.dense` each point drops the other
    /// methods' keys instead, so one file compares the methods with their
    /// own settings.
    #[test]
    fn other_methods_keys() {
        for (dense, set, key) in [
            ("topk", "fusion = \"64MiB\"", "strategy.fusion"),
            ("topk", "schedule = \"priority\"", "strategy.schedule"),
            ("gtopk", "schedule = \"fifo\"", "strategy.schedule"),
            ("gtopk", "partition = \"1MiB\"", "strategy.partition"),
            ("gtopk", "allreduce = \"tree\"", "strategy.allreduce"),
            ("topk", "ps_servers = 2", "strategy.ps_servers"),
            (
                "dct",
                "local_aggregation = true",
                "strategy.local_aggregation",
            ),
            ("dct", "fusion = 0", "strategy.fusion"),
        ] {
            let text = format!("{GOOD}[strategy]\ndense = \"{dense}\"\n{set}\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert_eq!(e.line, Some(line(&text, set)), "{e}");
            assert!(e.message.contains("means nothing here"), "{e}");
        }
        let sweep = format!(
            "{GOOD}[strategy]\nfusion = \"32MiB\"\nschedule = \"priority\"\ndensity = 0.01\ndct_lifespan = 10\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"topk\", \"dct\"]\n"
        );
        let p = super::super::load_str(&sweep, "f.toml", "f").unwrap();
        let s: Vec<_> = p.iter().map(|p| p.config.strategy.clone()).collect();
        assert_eq!(s[0].fusion, 32 << 20);
        assert_eq!(s[0].schedule, crate::strategy::Schedule::Priority);
        assert_eq!(s[1].schedule, crate::strategy::Schedule::Fifo);
        assert_eq!(s[2].schedule, crate::strategy::Schedule::Priority);
        assert_eq!((s[1].dense_name(), s[1].density), ("topk", 0.01));
        assert_eq!((s[2].dense_name(), s[2].dct_lifespan), ("dct", 10));
        // a key swept beside the method is kept, and refused where it
        // means nothing (its values would label identical points)
        let both = format!(
            "{GOOD}[strategy]\n[sweep]\n\"strategy.dense\" = [\"allreduce\", \"topk\"]\n\"strategy.density\" = [0.01, 0.1]\n"
        );
        let e = err(&both);
        assert_eq!(e.key.as_deref(), Some("strategy.density"), "{e}");
        assert!(e.message.contains("means nothing here"), "{e}");
        let topk_only = both.replace("[\"allreduce\", \"topk\"]", "[\"topk\", \"gtopk\"]");
        assert_eq!(
            super::super::load_str(&topk_only, "f.toml", "f")
                .unwrap()
                .len(),
            4
        );
        // a sweep over another key drops nothing: the key is refused
        let other = format!(
            "{GOOD}[strategy]\ndense = \"topk\"\nfusion = \"32MiB\"\n[sweep]\n\"cluster.nodes\" = [1, 2]\n"
        );
        let e = err(&other);
        assert_eq!(e.key.as_deref(), Some("strategy.fusion"), "{e}");
    }

    /// A misspelt sparse method is told it is unknown.
    #[test]
    fn an_unknown_sparse_method_is_named() {
        let e = err(&format!("{SPARSE}[strategy]\nsparse = \"allgahter\"\n"));
        assert_eq!(e.key.as_deref(), Some("strategy.sparse"));
        assert!(
            e.message.contains("unknown sparse method `allgahter`"),
            "{e}"
        );
    }

    /// Open MPI's segmented ring needs a segment size, which a scenario
    /// does not set: refused at its line, pointing at the ring.
    #[test]
    fn a_segmented_ring_is_not_a_scenarios() {
        let text = format!("{GOOD}[strategy]\nallreduce = \"segmented-ring\"\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.allreduce"), "{e}");
        assert_eq!(e.line, Some(line(&text, "allreduce")), "{e}");
        assert!(e.message.contains("use `ring`"), "{e}");
    }

    /// Swept, an inert key is blamed on its `[sweep]` line.
    #[test]
    fn a_swept_inert_key_points_at_the_sweep() {
        let text = format!("{GOOD}\n[sweep]\n\"strategy.mp_sparsity\" = [0.5, 0.9]\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.mp_sparsity"));
        assert_eq!(e.line, Some(line(&text, "\"strategy.mp_sparsity\"")));
    }

    /// Top-k and gTop-k take a density in (0, 1] (default 0.001); the key
    /// means nothing beside another dense method, and neither method
    /// accepts a model with embedding tables. Each refusal names the key
    /// and its line.
    #[test]
    fn the_compressed_methods_and_their_density() {
        let with = |extra: &str| format!("{GOOD}[strategy]\n{extra}\n");
        let ok = |extra: &str| strategy_of(GOOD, extra);
        let s = ok("dense = \"topk\"");
        assert_eq!((s.dense_name(), s.density), ("topk", 0.001));
        let s = ok("dense = \"gtopk\"\ndensity = 0.01");
        assert_eq!((s.dense_name(), s.density), ("gtopk", 0.01));
        assert_eq!(ok("dense = \"topk\"\ndensity = 1.0").density, 1.0);
        for (extra, what) in [
            ("dense = \"topk\"\ndensity = 0.0", "in (0, 1], got 0"),
            ("dense = \"gtopk\"\ndensity = 1.5", "in (0, 1], got 1.5"),
            ("dense = \"gtopk\"\ndensity = -0.1", "got -0.1"),
            ("dense = \"gtopk\"\ndensity = nan", "got NaN"),
            ("density = 0.01", "means nothing here"),
            ("dense = \"ps\"\ndensity = 0.01", "dense method is `ps`"),
        ] {
            let text = with(extra);
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("strategy.density"), "{e}");
            assert_eq!(e.line, Some(line(&text, "density")), "{e}");
            assert!(e.message.contains(what), "{extra}: {e}");
        }
        let text = format!("{SPARSE}[strategy]\ndense = \"gtopk\"\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.dense"), "{e}");
        assert_eq!(e.line, Some(line(&text, "dense")), "{e}");
        assert!(e.message.contains("embedding tables"), "{e}");
    }

    /// What model parallelism does not combine with is refused, naming
    /// the key at fault and its line: Top-k and gTop-k, AllReduce
    /// algorithms built on the whole cluster, local aggregation, and a
    /// stage count that does not divide the GPUs or exceeds the layers.
    #[test]
    fn model_parallel_refusals_name_key_and_line() {
        let with = |extra: &str| format!("{GOOD}[strategy]\nmp_stages = 2\n{extra}\n");
        for (extra, key, says) in [
            ("dense = \"topk\"", "strategy.mp_stages", "not modelled"),
            ("dense = \"gtopk\"", "strategy.mp_stages", "not modelled"),
            (
                "allreduce = \"tree\"",
                "strategy.allreduce",
                "use `ring`, `binomial`, `recursive-doubling`",
            ),
            (
                "dense = \"ps\"\nlocal_aggregation = true",
                "strategy.local_aggregation",
                "on their own",
            ),
        ] {
            let text = with(extra);
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{extra}: {e}");
            assert!(e.message.contains(says), "{extra}: {e}");
            let first = extra.lines().last().unwrap();
            let at = if key == "strategy.mp_stages" {
                "mp_stages"
            } else {
                first
            };
            assert_eq!(e.line, Some(line(&text, at)), "{extra}: {e}");
        }
        // GOOD has 8 GPUs
        let text = format!("{GOOD}[strategy]\nmp_stages = 3\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.mp_stages"), "{e}");
        assert!(e.message.contains("divide"), "{e}");
        assert_eq!(e.line, Some(line(&text, "mp_stages")), "{e}");
        let ok = strategy_of(GOOD, "mp_stages = 2\ndense = \"dct\"");
        assert_eq!(ok.mp_stages, 2);
    }
}
