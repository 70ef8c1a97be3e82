//! The meaning of a scenario: one raw scenario in, one [`TrainConfig`] out.
//!
//! This file owns the second stage of reading a scenario (`shared/DESIGN.md`,
//! "Configuration"): [`validate`] resolves the cluster's presets or
//! calibration profile, the model's preset or layers, and (through
//! `strategy.rs`) the strategy, parses units, and refuses impossible values.
//! Every refusal is an [`Invalid`]: the dotted key and what is wrong, which
//! the caller ([`super::Grid`]) locates in the file. The small checks shared
//! by every table (`need`, `count`, `iterations`, `size`) live here too.

use super::raw::{IntOrText, RawEmbedding, RawScenario};
use super::strategy::validate_strategy;
use super::{Invalid, invalid};
use crate::cluster::build::{Description, NodeKeys};
use crate::cluster::{ClusterSpec, Placement};
use crate::limits;
use crate::losses::{FittedLosses, Losses, Param};
use crate::names::Named;
use crate::net::NetModel;
use crate::strategy::{Schedule, SparseMethod, Strategy};
use crate::train::TrainConfig;
use crate::units::{HumanBytes, parse_bytes, parse_duration};
use crate::workload::{Embedding, Layer, Model, Precision, Rows, TablePlacement};
use std::path::Path;

/// Checks meaning and builds the configuration; a relative profile path in
/// `cluster.network` is resolved against `dir`.
pub fn validate(raw: &RawScenario, stem: &str, dir: Option<&Path>) -> Result<TrainConfig, Invalid> {
    let c = &raw.cluster;
    let (losses, fitted_losses) = training_profile(raw, dir)?;
    let max_gpus = limits::MAX_GPUS as u32;
    let nodes = count_to(c.nodes, "cluster.nodes", None, 1, max_gpus)?;
    let given = |v: Option<i64>, key: &str| {
        v.map(|v| count_to(Some(v), key, None, 1, max_gpus))
            .transpose()
    };
    let gpn = given(c.gpus_per_node, "cluster.gpus_per_node")?;
    let nics = c
        .nics_per_node
        .map(|v| {
            count_to(
                Some(v),
                "cluster.nics_per_node",
                None,
                1,
                crate::cluster::build::MAX_NICS_PER_NODE,
            )
        })
        .transpose()?;
    // 0: no shared switch (a node preset's turned off)
    let per_switch = c
        .gpus_per_pcie_switch
        .map(|v| count(Some(v), "cluster.gpus_per_pcie_switch", None, 0))
        .transpose()?;
    let net_model = match &c.model {
        Some(m) => NetModel::parse(m).map_err(|e| invalid("cluster.model", e))?,
        None => NetModel::default(),
    };
    let placement = match &c.placement {
        Some(p) => Placement::parse(p).map_err(|e| invalid("cluster.placement", e))?,
        None => Placement::default(),
    };
    let description = Description {
        dir: dir.map(Path::to_path_buf),
        bandwidth: c.bandwidth.clone(),
        latency: c.latency.clone(),
        intra_bandwidth: c.intra_bandwidth.clone(),
        intra_latency: c.intra_latency.clone(),
        gpudirect: c.gpudirect,
        oversubscription: c.oversubscription.unwrap_or(1.0),
        cpu_cores: {
            count_to(
                c.cpu_cores,
                "cluster.cpu_cores",
                Some(crate::cluster::DEFAULT_CPU_CORES as i64),
                1,
                limits::MAX_CPU_CORES,
            )?
        },
        placement,
        nic_efficiency: c.nic_efficiency.unwrap_or(losses.nic_efficiency),
        ..Description::from_keys(
            nodes,
            NodeKeys {
                node: c.node.clone(),
                gpus_per_node: gpn,
                nics_per_node: nics,
                network: c.network.clone(),
                intra: c.intra.clone(),
                nic_link: c.nic_link.clone(),
                gpus_per_pcie_switch: per_switch,
                pcie_uplink: c.pcie_uplink.clone(),
            },
        )
        .map_err(|e| invalid(&format!("cluster.{}", e.field.key()), e.message))?
    };
    limits::check_gpus(nodes as u64, description.gpus_per_node as u64)
        .map_err(|m| invalid("cluster.gpus_per_node", m))?;
    let cluster = ClusterSpec {
        ps_machines: super::strategy::ps_machines(raw)?,
        ..description
            .build()
            .map_err(|e| invalid(&format!("cluster.{}", e.field.key()), e.message))?
    };

    let model = validate_model(raw, losses.compute_jitter)?;
    let strategy = Strategy {
        message_overhead_s: match &raw.strategy.message_overhead {
            None => losses.message_overhead_s,
            Some(t) => {
                let key = "strategy.message_overhead";
                let s = crate::units::parse_seconds(t).map_err(|e| invalid(key, e.to_string()))?;
                if s > limits::MAX_LATENCY_S {
                    return Err(invalid(
                        key,
                        format!(
                            "{t} a message is more than the {} s dtsim accepts",
                            limits::MAX_LATENCY_S
                        ),
                    ));
                }
                s
            }
        },
        ..validate_strategy(raw, nodes, model.has_sparse())?
    };
    let model = kernel_profile(raw, model, &strategy, dir)?;
    let strategy = model_parallel(raw, &model, strategy, cluster.gpus())?;
    // each table against the partitions and the column split asked for
    let gpus = cluster.gpus();
    for (i, l) in model.layers.iter().enumerate() {
        let Some(e) = &l.embedding else { continue };
        if let crate::strategy::Partitions::Fixed(p) = strategy.ps_partitions
            && e.vocab < p as u64
        {
            return Err(invalid(
                "strategy.ps_partitions",
                format!(
                    "{p} partitions of layer `{}`'s table, which has {} rows: a partition needs a row at least",
                    l.name, e.vocab
                ),
            ));
        }
        if strategy.sparse == Some(SparseMethod::AllToAll) && e.dim < gpus as u64 {
            // a preset's width is not in the file: the method's line is
            let key = if raw.model.preset.is_some() {
                "strategy.sparse".to_string()
            } else {
                format!("model.layers[{i}].embedding.dim")
            };
            return Err(invalid(
                &key,
                format!(
                    "`sparse = \"alltoall\"` splits layer `{}`'s table, {} columns, over the {gpus} GPUs, and each needs at least one (EmbRace's column partitioning); use fewer GPUs or another sparse method",
                    l.name, e.dim
                ),
            ));
        }
    }
    // staging through host memory means nothing where every table is there
    if strategy.host_staged_allgather
        && model
            .layers
            .iter()
            .filter_map(|l| l.embedding.as_ref())
            .all(|e| e.placement == TablePlacement::Host)
    {
        return Err(invalid(
            "strategy.allgather_staging",
            "means nothing here: every embedding table is in host memory (`placement = \"host\"`), where its gradient is gathered and applied already; remove the key",
        ));
    }
    if let Some(why) = strategy.dense_collective().hardware_refusal(&cluster) {
        return Err(invalid("strategy.allreduce", why));
    }
    if strategy.schedule == Schedule::Priority && strategy.partition > 0 {
        for l in &model.layers {
            // the sparse message the planner sends for the table
            let sparse = match (&l.embedding, strategy.sparse) {
                (Some(e), Some(method)) => crate::train::planner::sparse::message_bytes(
                    e,
                    method,
                    cluster.gpus(),
                    model.gradient_precision,
                ),
                _ => 0,
            };
            let largest = model.grad_bytes(l).max(sparse);
            let pieces = largest.div_ceil(strategy.partition);
            if pieces > limits::MAX_PIECES_PER_TENSOR {
                return Err(invalid(
                    "strategy.partition",
                    format!(
                        "cuts layer `{}` ({} bytes) into {pieces} pieces, more than {}; use a larger partition",
                        l.name,
                        largest,
                        limits::MAX_PIECES_PER_TENSOR
                    ),
                ));
            }
        }
    }
    let warmup_iterations = iterations(raw.warmup_iterations, "warmup_iterations", 2, 0)?;
    let iterations = iterations(raw.iterations, "iterations", 10, 1)?;
    // the token model draws every GPU's words of every iteration (and the
    // one after the last, for the next batch's overlap)
    if strategy.sparse.is_some() {
        let per_run = (warmup_iterations + iterations + 1) as u128 * cluster.gpus() as u128;
        // tokens a GPU, and tables, so far
        let (mut per_gpu, mut tables) = (0u128, 0u32);
        for (i, l) in model.layers.iter().enumerate() {
            if let Some(Rows::Tokens { tokens, .. }) = l.embedding.as_ref().map(|e| e.rows) {
                per_gpu += tokens as u128;
                tables += 1;
                let draws = per_gpu * per_run;
                if draws > limits::MAX_TOKEN_DRAWS as u128 {
                    // a preset's tokens follow from `embedding_zipf`
                    let key = if raw.model.preset.is_some() {
                        "model.embedding_zipf".to_string()
                    } else {
                        format!("model.layers[{i}].embedding.tokens_per_batch")
                    };
                    return Err(invalid(
                        &key,
                        format!(
                            "the token model would draw {draws} tokens in this run ({per_gpu} a GPU{}, {} GPUs, {} iterations and the next), more than the {} dtsim draws; use fewer tokens or iterations, or `density`",
                            if tables > 1 {
                                format!(" over {tables} tables")
                            } else {
                                String::new()
                            },
                            cluster.gpus(),
                            warmup_iterations + iterations,
                            limits::MAX_TOKEN_DRAWS
                        ),
                    ));
                }
            }
        }
    }
    // EmbRace's vertical scheduling sends its prior and delayed rows by an
    // AlltoAllv of N × N sizes, for each iteration of drawn rows (one set
    // under a density) and table: held in memory, and every pair a flow
    if strategy.vertical_scheduling {
        let n = cluster.gpus() as u128;
        let sets: u128 = model
            .layers
            .iter()
            .filter_map(|l| l.embedding.as_ref())
            .map(|e| match e.rows {
                Rows::Tokens { .. } => (warmup_iterations + iterations).max(1) as u128,
                Rows::Density(_) => 1,
            })
            .sum();
        let sizes = 2 * n * n * sets;
        if sizes > limits::MAX_PER_PAIR_SIZES as u128 {
            return Err(invalid(
                "strategy.vertical_scheduling",
                format!(
                    "EmbRace's prior and delayed rows go by an AlltoAllv of a size for every pair of GPUs: on {n} GPUs, {sets} set{} of them (one a table under a density, one a table and iteration under the token model), that is {sizes} sizes, more than the {} dtsim holds (256 MiB); use fewer GPUs, fewer iterations or a `density`, or leave vertical scheduling off (the AlltoAll of equal blocks runs at any size)",
                    if sets == 1 { "" } else { "s" },
                    limits::MAX_PER_PAIR_SIZES
                ),
            ));
        }
    }
    if raw.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        // the results' scenario column would be blank
        return Err(invalid(
            "name",
            "is empty: give the scenario a name, or leave the key out (it is then the file's name)",
        ));
    }
    Ok(TrainConfig {
        name: raw.name.clone().unwrap_or_else(|| stem.to_string()),
        seed: {
            let s = raw.seed.unwrap_or(0);
            if s < 0 {
                return Err(invalid("seed", format!("must be ≥ 0, got {s}")));
            }
            s as u64
        },
        warmup_iterations,
        iterations,
        cluster,
        net_model,
        model,
        strategy,
        fitted_losses,
    })
}

/// The losses' defaults: `sim::losses`' (none with `ideal = true`), or a
/// training profile's fitted values (`training_profile`), with the fit's
/// uncertainty of those the scenario does not set itself.
fn training_profile(
    raw: &RawScenario,
    dir: Option<&Path>,
) -> Result<(Losses, Option<FittedLosses>), Invalid> {
    let key = "training_profile";
    let Some(given) = &raw.training_profile else {
        return Ok((Losses::defaults(raw.ideal.unwrap_or(false)), None));
    };
    if raw.ideal == Some(true) {
        return Err(invalid(
            key,
            "a training profile gives the losses fitted to measured runs, and `ideal = true` asks for none: keep one of the two",
        ));
    }
    let (path, text, profile) = read_profile(key, "training", given, dir)?;
    // a hand-edited value is named at its line of the profile
    let line_of = |name: &str| {
        let field = name.split_whitespace().next().unwrap_or(name);
        text.lines()
            .position(|l| {
                l.trim_start()
                    .strip_prefix(field)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
            })
            .map_or(String::new(), |i| format!(":{}", i + 1))
    };
    let bad_at = |field: &str, m: String| {
        invalid(
            key,
            format!("training profile {}{}: {m}", path.display(), line_of(field)),
        )
    };
    let bad = |m: String| invalid(key, format!("training profile {}: {m}", path.display()));
    let t = profile.training.ok_or_else(|| {
        bad("has no [training] table (`dtsim calibrate training` writes one)".into())
    })?;
    for (p, v) in [
        (Param::ComputeJitter, t.compute_jitter),
        (Param::MessageOverhead, t.message_overhead_s),
        (Param::NicEfficiency, t.nic_efficiency),
    ] {
        if !p.admits(v) {
            let field = match p {
                Param::MessageOverhead => "message_overhead_s",
                _ => p.name(),
            };
            return Err(bad_at(
                field,
                format!("[training] {field} = {v} is outside {}", p.admitted()),
            ));
        }
    }
    let mut fitted: Vec<Param> = Vec::new();
    for name in &t.fitted {
        let p =
            Param::parse(name).map_err(|m| bad_at("fitted", format!("[training] fitted: {m}")))?;
        if fitted.contains(&p) {
            return Err(bad_at(
                "fitted",
                format!("[training] fitted names `{name}` twice"),
            ));
        }
        fitted.push(p);
    }
    let n = fitted.len();
    let cov = &t.covariance;
    if cov.is_empty() && n > 0 {
        // every fitted loss would be taken as exact (a review deleted the
        // line and `--uncertainty` drew nothing)
        return Err(bad_at(
            "fitted",
            format!(
                "[training] fitted names {n} loss{} and there is no covariance: give `covariance` ({n} × {n}, zeros for losses known exactly)",
                if n == 1 { "" } else { "es" }
            ),
        ));
    }
    if !cov.is_empty() {
        let shaped = cov.len() == n
            && cov
                .iter()
                .all(|r| r.len() == n && r.iter().all(|c| c.is_finite()));
        let symmetric = shaped
            && (0..n).all(|i| {
                cov[i][i] >= 0.0
                    && (0..n).all(|j| {
                        let scale = (cov[i][i] * cov[j][j]).sqrt().max(f64::MIN_POSITIVE);
                        (cov[i][j] - cov[j][i]).abs() <= 1e-9 * scale
                    })
            });
        // a factor that is not finite would draw nothing sensible, and
        // one whose product is not the matrix (a pivot that was negative)
        // would draw from another law: the matrix is no covariance
        let factors = symmetric && {
            let l = crate::losses::cholesky(cov);
            l.iter().flatten().all(|x| x.is_finite())
                && (0..n).all(|i| {
                    (0..n).all(|j| {
                        let llt: f64 = (0..n).map(|k| l[i][k] * l[j][k]).sum();
                        let scale = (cov[i][i] * cov[j][j]).sqrt().max(f64::MIN_POSITIVE);
                        (llt - cov[i][j]).abs() <= 1e-9 * scale
                    })
                })
        };
        if !factors {
            return Err(bad_at(
                "covariance",
                format!(
                    "[training] covariance must be a symmetric, positive semi-definite {n} × {n} matrix of finite numbers, a row and a column for each fitted parameter"
                ),
            ));
        }
    }
    // a loss the scenario sets itself is not the profile's
    let set_here = |p: Param| match p {
        Param::ComputeJitter => raw.model.compute_jitter.is_some(),
        Param::MessageOverhead => raw.strategy.message_overhead.is_some(),
        Param::NicEfficiency => raw.cluster.nic_efficiency.is_some(),
    };
    let keep: Vec<usize> = (0..n).filter(|&i| !set_here(fitted[i])).collect();
    let fitted_losses = FittedLosses {
        profile: given.clone(),
        taken: Param::ALL.into_iter().filter(|&p| !set_here(p)).collect(),
        params: keep.iter().map(|&i| fitted[i]).collect(),
        covariance: if cov.is_empty() {
            vec![]
        } else {
            keep.iter()
                .map(|&i| keep.iter().map(|&j| cov[i][j]).collect())
                .collect()
        },
    };
    Ok((
        Losses {
            ideal: false,
            compute_jitter: t.compute_jitter,
            message_overhead_s: t.message_overhead_s,
            nic_efficiency: t.nic_efficiency,
        },
        Some(fitted_losses),
    ))
}

/// The model: a preset, or `[[model.layers]]`; and its compute jitter.
fn validate_model(raw: &RawScenario, default_jitter: f64) -> Result<Model, Invalid> {
    let m = &raw.model;
    let batch = count(m.batch_per_gpu, "model.batch_per_gpu", None, 1)?;
    let compute_jitter = compute_jitter(m.compute_jitter, default_jitter)?;
    let gradient_precision = match &m.gradient_precision {
        Some(p) => Precision::parse(p).map_err(|e| invalid("model.gradient_precision", e))?,
        None => Precision::default(),
    };
    match (&m.preset, m.layers.is_empty()) {
        (Some(_), false) => Err(invalid(
            "model.preset",
            "give either a preset or [[model.layers]], not both",
        )),
        (None, true) => Err(invalid(
            "model.preset",
            "is required (or describe the model with [[model.layers]])",
        )),
        (Some(p), true) => {
            let gpu = need(&m.gpu, "model.gpu")?;
            let model = Model::from_preset(p, &gpu, batch).map_err(|e| {
                let key = match e {
                    crate::workload::PresetError::UnknownModel(..) => "model.preset",
                    _ => "model.gpu",
                };
                invalid(key, e.to_string())
            })?;
            // the preset's times scale with the batch: each layer's must
            // stay within what a custom layer may take
            if let Some((l, pass, t)) = model
                .layers
                .iter()
                .flat_map(|l| [(l, "forward", l.forward), (l, "backward", l.backward)])
                .find(|(_, _, t)| t.as_secs() > limits::MAX_LAYER_TIME_S)
            {
                return Err(invalid(
                    "model.batch_per_gpu",
                    format!(
                        "at {batch} samples a GPU, layer `{}`'s {pass} pass takes {:.3e} s, more than the {} s per layer dtsim simulates",
                        l.name,
                        t.as_secs(),
                        limits::MAX_LAYER_TIME_S
                    ),
                ));
            }
            let model = match m.embedding_density {
                None => model,
                Some(_) if !model.has_sparse() => {
                    return Err(invalid(
                        "model.embedding_density",
                        format!("means nothing here: preset `{p}` has no embedding tables"),
                    ));
                }
                Some(a) if a.is_finite() && a > 0.0 && a <= 1.0 => model.with_density(a),
                Some(a) => {
                    return Err(invalid(
                        "model.embedding_density",
                        format!("must be a fraction of the rows in (0, 1], got {a}"),
                    ));
                }
            };
            let model = match m.embedding_zipf {
                None => model,
                Some(_) if !model.has_sparse() => {
                    return Err(invalid(
                        "model.embedding_zipf",
                        format!("means nothing here: preset `{p}` has no embedding tables"),
                    ));
                }
                Some(_) if m.embedding_density.is_some() => {
                    return Err(invalid(
                        "model.embedding_zipf",
                        "give `embedding_density` (a fixed fraction of the rows) or `embedding_zipf` (rows drawn per iteration), not both",
                    ));
                }
                Some(s) if s.is_finite() && s > 0.0 => model.with_token_model(s),
                Some(s) => {
                    return Err(invalid(
                        "model.embedding_zipf",
                        format!(
                            "must be a Zipf exponent > 0 (about 1 for natural language), got {s}"
                        ),
                    ));
                }
            };
            let model = match placement(
                m.embedding_placement.as_deref(),
                "model.embedding_placement",
            )? {
                None => model,
                Some(_) if !model.has_sparse() => {
                    return Err(invalid(
                        "model.embedding_placement",
                        format!("means nothing here: preset `{p}` has no embedding tables"),
                    ));
                }
                Some(place) => model.with_placement(place),
            };
            Ok(Model {
                compute_jitter,
                gradient_precision,
                ..model
            })
        }
        (None, false) => {
            for (key, given) in [
                ("embedding_density", m.embedding_density.is_some()),
                ("embedding_zipf", m.embedding_zipf.is_some()),
                ("embedding_placement", m.embedding_placement.is_some()),
            ] {
                if given {
                    return Err(invalid(
                        &format!("model.{key}"),
                        "means nothing here: it sets a preset's tables; give each table its own `density` (or `tokens_per_batch` and `zipf`) and `placement` in `[model.layers.embedding]`",
                    ));
                }
            }
            let mut layers = Vec::with_capacity(m.layers.len());
            // each layer's name, to the first layer of it
            let mut named: std::collections::HashMap<String, usize> =
                std::collections::HashMap::new();
            for (i, l) in m.layers.iter().enumerate() {
                let k = |f: &str| format!("model.layers[{i}].{f}");
                let embedding = l
                    .embedding
                    .as_ref()
                    .map(|e| embedding(e, &|f: &str| k(&format!("embedding.{f}"))))
                    .transpose()?;
                let params = l
                    .params
                    .ok_or_else(|| invalid(&k("params"), "is required but missing"))?;
                if !(0..=limits::MAX_LAYER_PARAMS as i64).contains(&params) {
                    return Err(invalid(
                        &k("params"),
                        format!("must be in [0, {}], got {params}", limits::MAX_LAYER_PARAMS),
                    ));
                }
                let time = |v: &Option<String>, f: &str| -> Result<crate::SimTime, Invalid> {
                    let t = v
                        .as_ref()
                        .ok_or_else(|| invalid(&k(f), "is required but missing"))?;
                    let d = parse_duration(t).map_err(|e| invalid(&k(f), e.to_string()))?;
                    if d.as_secs() > limits::MAX_LAYER_TIME_S {
                        return Err(invalid(
                            &k(f),
                            format!(
                                "{t} is longer than the {} s per layer dtsim simulates",
                                limits::MAX_LAYER_TIME_S
                            ),
                        ));
                    }
                    Ok(d)
                };
                let variables = match &l.variables {
                    None => Vec::new(),
                    Some(v) => layer_variables(v, params as u64, &k("variables"))?,
                };
                let name = l.name.clone().unwrap_or_else(|| format!("layer{i}"));
                if name.trim().is_empty() {
                    // traces, tables and mp_splits name layers (a review:
                    // `model parallel: 2 stages ( | layer1)`)
                    return Err(invalid(
                        &k("name"),
                        "is empty: give the layer a name, or leave the key out (it is then layer<its index>)",
                    ));
                }
                if let Some(&j) = named.get(&name) {
                    let unnamed = l.name.is_none() || m.layers[j].name.is_none();
                    return Err(invalid(
                        &k("name"),
                        format!(
                            "`{name}` names layer {j} too; layers need different names (traces, tables and `strategy.mp_splits` name them){}",
                            if unnamed {
                                " (a layer without a name is called layer<its index>)"
                            } else {
                                ""
                            }
                        ),
                    ));
                }
                named.insert(name.clone(), i);
                layers.push(Layer {
                    name,
                    params: params as u64,
                    variables,
                    forward: time(&l.forward, "forward")?,
                    backward: time(&l.backward, "backward")?,
                    activation_bytes: size(&l.activation_bytes, &k("activation_bytes"), 0)?,
                    embedding,
                });
            }
            if layers.iter().all(|l| l.forward.0 == 0 && l.backward.0 == 0) {
                return Err(invalid(
                    "model.layers",
                    "at least one layer needs a non-zero compute time",
                ));
            }
            let gpu = m.gpu.clone().unwrap_or_else(|| "custom".into());
            Ok(Model {
                name: raw.name.clone().unwrap_or_else(|| "custom".into()),
                kernels: crate::workload::kernels::KernelCosts::preset(&gpu),
                gpu,
                batch_per_gpu: batch,
                layers,
                compute_jitter,
                gradient_precision,
                words_per_sample: 1.0,
                throughput_unit: "samples/s".into(),
            })
        }
    }
}

/// `model.kernel_profile`: the kernel models of a calibration profile
/// (a path relative to the scenario's directory, `dir`) in place of the
/// device's defaults, for the kernels the dense method inserts.
/// `strategy.mp_stages` S against the cluster and the model: S divides
/// the GPUs (GPUs / S trainers) and is at most the layers (a stage owns a
/// layer at least); with DCT-MP (`mp_sparsity` > 0) each activation that
/// crosses a split must be whole fp32 rows of the batch (its per-row mask
/// needs the row width d = bytes / (4 · batch)).
///
/// `strategy.mp_splits` names the layers after which stages end: each must
/// be a layer of the model, in forward order, not the last; resolved here
/// into the strategy's layer indices.
fn model_parallel(
    raw: &RawScenario,
    model: &Model,
    mut strategy: crate::strategy::Strategy,
    gpus: u32,
) -> Result<crate::strategy::Strategy, Invalid> {
    let s = strategy.mp_stages;
    // the stages' count comes from `mp_splits` where `mp_stages` is not
    // given: a count that does not fit is the splits' then
    let (key, what) = match (&raw.strategy.mp_stages, &raw.strategy.mp_splits) {
        (None, Some(names)) => (
            "strategy.mp_splits",
            format!("{} splits make {s} stages a trainer, and", names.len()),
        ),
        _ => ("strategy.mp_stages", format!("{s} stages a trainer:")),
    };
    if s < 2 {
        return Ok(strategy);
    }
    if let Some(names) = &raw.strategy.mp_splits {
        let key = "strategy.mp_splits";
        let mut at = Vec::with_capacity(names.len());
        for name in names {
            let Some(i) = model.layers.iter().position(|l| &l.name == name) else {
                let known: Vec<&str> = model.layers.iter().map(|l| l.name.as_str()).collect();
                return Err(invalid(key, crate::names::unknown("layer", name, &known)));
            };
            if i + 1 == model.layers.len() {
                return Err(invalid(
                    key,
                    format!("`{name}` is the model's last layer: no stage can follow it"),
                ));
            }
            if at.last().is_some_and(|&p| p >= i as u32) {
                return Err(invalid(
                    key,
                    format!(
                        "`{name}` does not come after the split before it: list the layers in forward order, each once"
                    ),
                ));
            }
            at.push(i as u32);
        }
        strategy.mp_splits = at;
    }
    if !gpus.is_multiple_of(s) {
        return Err(invalid(
            key,
            format!("{what} the stages must divide the cluster's {gpus} GPUs"),
        ));
    }
    let layers = model.layers.len();
    if s as usize > layers {
        return Err(invalid(
            key,
            format!("{what} the model has {layers} layers: each stage owns a layer at least"),
        ));
    }
    let mb = strategy.mp_microbatches;
    if !model.batch_per_gpu.is_multiple_of(mb) {
        return Err(invalid(
            "strategy.mp_microbatches",
            format!(
                "{mb} micro-batches must divide the trainer's batch of {} (`model.batch_per_gpu`)",
                model.batch_per_gpu
            ),
        ));
    }
    if strategy.mp_sparsity > 0.0 {
        let split = crate::train::planner::mp::stages_of(model, &strategy);
        let row = 4 * model.batch_per_gpu as u64;
        for &b in &split[1..s as usize] {
            let last = &model.layers[b as usize - 1];
            if last.activation_bytes == 0 || !last.activation_bytes.is_multiple_of(row) {
                return Err(invalid(
                    "strategy.mp_sparsity",
                    format!(
                        "DCT-MP masks each row of the activation that layer `{}` hands to the next stage, and its {} bytes are not whole fp32 rows of the batch of {} (a multiple of {row} bytes; set the layer's `activation_bytes`)",
                        last.name, last.activation_bytes, model.batch_per_gpu
                    ),
                ));
            }
        }
    }
    Ok(strategy)
}

fn kernel_profile(
    raw: &RawScenario,
    model: Model,
    strategy: &crate::strategy::Strategy,
    dir: Option<&Path>,
) -> Result<Model, Invalid> {
    use crate::strategy::DenseMethod;
    use crate::workload::kernels::Kernel;
    let key = "model.kernel_profile";
    let Some(given) = &raw.model.kernel_profile else {
        return Ok(model);
    };
    let needed: &[Kernel] = match strategy.dense {
        DenseMethod::TopK => &[Kernel::TopK],
        DenseMethod::GTopK => &[Kernel::TopK, Kernel::Merge],
        DenseMethod::Dct => &[Kernel::Threshold, Kernel::Mask],
        // DCT-MP's row thresholds and masks
        _ if strategy.mp_sparsity > 0.0 => &[Kernel::Threshold, Kernel::Mask],
        _ => {
            return Err(invalid(
                key,
                format!(
                    "means nothing here: the dense method `{}` inserts no kernels (Top-k, gTop-k, DCT-DP and DCT-MP do); remove the key",
                    strategy.dense_name()
                ),
            ));
        }
    };
    let (_, _, profile) = read_profile(key, "kernel", given, dir)?;
    let kernels = model
        .kernels
        .with_profile(&profile, given, needed, &model.gpu)
        .map_err(|m| invalid(key, m))?;
    Ok(Model { kernels, ..model })
}

/// Reads the `what` profile a scenario names at `key` (a path relative to
/// the scenario's directory `dir`): its path, its text (to name a value's
/// line) and contents, or an error at the key saying which file and why.
fn read_profile(
    key: &str,
    what: &str,
    given: &str,
    dir: Option<&Path>,
) -> Result<(std::path::PathBuf, String, crate::profile::Profile), Invalid> {
    let path = match dir {
        Some(d) if Path::new(given).is_relative() => d.join(given),
        _ => std::path::PathBuf::from(given),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        invalid(
            key,
            format!("cannot read {what} profile {}: {e}", path.display()),
        )
    })?;
    let profile = crate::profile::Profile::from_toml(&text)
        .map_err(|e| invalid(key, format!("{what} profile {}: {e}", path.display())))?;
    Ok((path, text, profile))
}

/// `model.compute_jitter`: a coefficient of variation in [0, 1] (default
/// `default`, `sim::losses::Losses::defaults`'s).
fn compute_jitter(v: Option<f64>, default: f64) -> Result<f64, Invalid> {
    let key = "model.compute_jitter";
    let c = v.unwrap_or(default);
    if !(c.is_finite() && c >= 0.0) {
        return Err(invalid(
            key,
            format!("must be a finite coefficient of variation ≥ 0, got {c}"),
        ));
    }
    if c > 1.0 {
        return Err(invalid(
            key,
            format!(
                "{c} is more than 1.0, the largest coefficient of variation dtsim accepts (at 1.0 the standard deviation of a GPU's compute time equals its mean)"
            ),
        ));
    }
    Ok(c)
}

/// Settings that are valid but probably a mistake, each as (key, why):
/// printed as warnings, never refused.
///
/// Priority scheduling with messages so small that per-message latency
/// dominates: under priority a channel sends messages of at most
/// max(partition, fusion) bytes (the partition alone when fusion is off).
/// If even that largest message costs at least as much in latency as in
/// transfer on this cluster (the dense collective's analytical cost a + b·m,
/// warned when a ≥ b·m), priority pays a latency per small piece that FIFO
/// does not, and may run slower than FIFO (VGG-16 on 4 × 4 GPUs over 25 GbE
/// with fusion off: 64 KiB pieces take 7.95 s an iteration against FIFO's
/// 0.46 s; 1 MiB 0.84 s; 4 MiB, where latency is a quarter of each
/// message, 0.48 s). Partitions that cut no tensor are left alone.
///
/// DCT-DP with a measured window that is not a whole number of
/// life-spans: the window holds ⌊iterations/L⌋ or one more of the sorts,
/// so its mean is not the long-run mean (docs/scenarios.md).
///
/// Tables in host memory synchronised by a sparse PS on more than one GPU:
/// the servers hold the tables, so where the workers would keep them
/// changes nothing (docs/models.md §6.7).
///
/// A node preset beside the compute table of another known device
/// (`node = "dgx-h100"` with `gpu = "a100"`): the run takes the links of
/// the one and the compute of the other, which a what-if may want but a
/// slip gives silently. `raw` is the scenario `cfg` was validated from.
pub fn advice(raw: &RawScenario, cfg: &TrainConfig) -> Vec<Invalid> {
    let mut out = priority_advice(cfg);
    // the devices dtsim knows: the GPUs of its memory table and its CPUs
    let gpu = cfg.model.gpu.as_str();
    let devices: Vec<&str> = crate::workload::gpus::MEMORY_BANDWIDTH
        .iter()
        .map(|(k, _, _)| *k)
        .chain(crate::workload::kernels::CPU_DEVICES)
        .collect();
    let known = devices.contains(&gpu);
    // a custom model's device, any name, but one a letter off a known one
    // is probably it (a review: `H200` took a P102-100's kernel costs,
    // 68 times the H200's, silently)
    let hint = crate::names::did_you_mean(gpu, &devices);
    if raw.model.preset.is_none() && !known && !hint.is_empty() {
        out.push(invalid(
            "model.gpu",
            format!(
                "`{gpu}` is no device dtsim knows{hint}: a custom model's device picks the costs of the kernels a method inserts, and an unknown one takes the slowest known memory (the P102-100's) and no measured kernel"
            ),
        ));
    }
    if let Some(node) = raw
        .cluster
        .node
        .as_deref()
        .and_then(crate::cluster::presets::node)
        && known
        && !node.gpu_tables.contains(&gpu)
    {
        let tables: Vec<String> = node.gpu_tables.iter().map(|t| format!("\"{t}\"")).collect();
        out.push(invalid(
            "model.gpu",
            format!(
                "`{gpu}` computes on `{}` nodes, which carry {}: the run takes the node's links and this device's compute; the node's own GPU is `gpu = {}`",
                node.name,
                node.gpu,
                tables.join("` or `gpu = ")
            ),
        ));
    }
    // a compressed method's selection on a GPU dtsim has not measured:
    // the 2019 implementation's cost, carried over by memory bandwidth
    let selects = matches!(
        cfg.strategy.dense,
        crate::strategy::DenseMethod::TopK
            | crate::strategy::DenseMethod::GTopK
            | crate::strategy::DenseMethod::Dct
    ) || cfg.strategy.mp_sparsity > 0.0;
    let derived = cfg
        .model
        .kernels
        .topk
        .source
        .starts_with("DERIVED: the P102-100's measured Top-k");
    if selects && derived {
        out.push(invalid(
            "model.gpu",
            format!(
                "the selection kernels on `{}` cost what the gTop-k authors measured of PyTorch 0.4's torch.topk on a P102-100 (2019), scaled by memory bandwidth: on the H200 and H100, whose kernels dtsim measured, that rule gives 36 and 48 times the measured cost of ResNet-50's 25.6M elements (2 times below a million, where kernel launches dominate; docs/models.md §7), so the compression here is probably overcharged; a `kernel_profile` measured on this GPU (`dtsim calibrate kernels --backend cuda`) replaces it",
                cfg.model.gpu
            ),
        ));
    }
    let host_tables = cfg
        .model
        .layers
        .iter()
        .filter_map(|l| l.embedding.as_ref())
        .any(|e| e.placement == crate::workload::TablePlacement::Host);
    if host_tables
        && cfg.strategy.sparse == Some(crate::strategy::SparseMethod::Ps)
        && cfg.cluster.gpus() > 1
    {
        out.push(invalid(
            "strategy.sparse",
            "the parameter servers of a sparse PS (`sparse = \"ps\"`, which `dense = \"ps\"` and `\"dct\"` take by default) hold the sparse tables, as Parallax's do, so tables in host memory (`placement = \"host\"`) change nothing here: no worker looks them up or updates them",
        ));
    }
    if let Some(w) = nic_path_advice(&cfg.cluster) {
        out.push(w);
    }
    let machines = cfg.cluster.ps_machines;
    if machines > 0 && cfg.cluster.gpus() == 1 {
        out.push(invalid(
            "strategy.ps_machines",
            "one GPU synchronises with no one, and dtsim runs no communication on one GPU: the dedicated server machines carry nothing here",
        ));
    } else if machines > 0 {
        // the servers of whichever method uses them (a hybrid's sparse PS
        // beside a dense AllReduce too)
        let servers = cfg.strategy.server_count(&cfg.cluster);
        if servers < machines {
            out.push(invalid(
                "strategy.ps_machines",
                format!(
                    "{servers} server{} on {machines} dedicated machines (server j on machine j mod {machines}) {} {} of them without a server (`ps_servers`: 0 is one a machine)",
                    if servers == 1 { "" } else { "s" },
                    if servers == 1 { "leaves" } else { "leave" },
                    machines - servers
                ),
            ));
        }
    }
    // a sparse PS's tables in fewer partitions than servers: partition k
    // on server k mod S, so some servers (machines) hold none of them
    if let (Some(crate::strategy::SparseMethod::Ps), crate::strategy::Partitions::Fixed(p)) =
        (cfg.strategy.sparse, cfg.strategy.ps_partitions)
        && cfg.cluster.gpus() > 1
    {
        let servers = cfg.strategy.server_count(&cfg.cluster);
        if p < servers {
            out.push(invalid(
                "strategy.ps_partitions",
                format!(
                    "{p} partition{} of each table on {servers} servers (partition k on server k mod {servers}) {} {} servers without any of the tables' work; use at least {servers} (or \"auto\")",
                    if p == 1 { "" } else { "s" },
                    if p == 1 { "leaves" } else { "leave" },
                    servers - p
                ),
            ));
        }
    }
    let s = &cfg.strategy;
    let (n, l) = (cfg.iterations, s.dct_lifespan);
    let dct = s.dense == crate::strategy::DenseMethod::Dct;
    if dct && !n.is_multiple_of(l) && !crate::train::planner::dct::kernel_uses(cfg).is_empty() {
        out.push(invalid(
            "iterations",
            format!(
                "DCT-DP sorts each threshold once every {l} iterations (`dct_lifespan`), and {n} measured iterations are not a whole number of life-spans: the mean counts {} sort(s) where the long run has {:.3}; measure a multiple of {l} iterations",
                sorts_in(cfg.warmup_iterations, n, l),
                n as f64 / l as f64
            ),
        ));
    }
    out
}

/// NICs that their GPUs can never fill: a node's NICs (nics × B_nic)
/// faster than all its GPUs' PCIe paths to them together (gpus × B_pcie,
/// each GPU's `nic_link`, or its `intra` link on a PCIe node), so that a
/// faster network changes nothing (a review: `ib-ndr-400g` behind the
/// default pcie3-x16 ran at EDR's 12.4 GB/s). A calibration profile's
/// network was measured end to end and is not bounded by PCIe; one node
/// has no transfers across nodes.
fn nic_path_advice(c: &ClusterSpec) -> Option<Invalid> {
    if c.nodes < 2 || c.measured_end_to_end {
        return None;
    }
    let (path, path_bw) = match &c.nic_link {
        Some(n) => (n.name.as_str(), n.link.bandwidth),
        None => (c.intra_name.as_str(), c.intra.bandwidth),
    };
    let nics = c.nics_per_node as f64 * c.inter.bandwidth;
    let gpus = c.gpus_per_node as f64 * path_bw;
    (nics > gpus).then(|| {
        let gb = |b: f64| format!("{:.1} GB/s", b / 1e9);
        let (n, g) = (c.nics_per_node, c.gpus_per_node);
        let nic = if n == 1 {
            format!("one `{}` NIC ({})", c.network, gb(nics))
        } else {
            format!("{n} `{}` NICs ({} together)", c.network, gb(nics))
        };
        let over = if g == 1 {
            format!("its GPU's `{path}` link ({})", gb(path_bw))
        } else {
            format!("its {g} GPUs' `{path}` links ({} each)", gb(path_bw))
        };
        invalid(
            "cluster.network",
            format!(
                "a node's {nic} {} reached over {over}: the GPU{} can fill {:.0}% of the NICs, so a faster network changes nothing here; give the PCIe generation such NICs sit on (`nic_link`, or `intra` on a PCIe node: pcie4-x16 for 200 Gb/s, pcie5-x16 for 400 Gb/s)",
                if n == 1 { "is" } else { "are" },
                if g == 1 { "" } else { "s" },
                100.0 * gpus / nics
            ),
        )
    })
}

/// The multiples of `l` in the window of `n` ≥ 1 iterations from `w`:
/// the sorts DCT-DP's measured window holds.
fn sorts_in(w: u32, n: u32, l: u32) -> u32 {
    ((w + n - 1) / l + 1).saturating_sub(w.div_ceil(l))
}

/// [`advice`]'s first check: priority pieces whose latency is at least
/// their transfer's.
fn priority_advice(cfg: &TrainConfig) -> Vec<Invalid> {
    let s = &cfg.strategy;
    let largest = cfg
        .model
        .layers
        .iter()
        .map(|l| cfg.model.grad_bytes(l))
        .max()
        .unwrap_or(0);
    if s.schedule != Schedule::Priority || s.partition == 0 || s.partition >= largest {
        return vec![];
    }
    // Top-k and gTop-k send one message an iteration, uncut; DCT-DP's
    // channel does not fuse
    let fusion = match s.dense {
        crate::strategy::DenseMethod::TopK | crate::strategy::DenseMethod::GTopK => return vec![],
        crate::strategy::DenseMethod::Dct => 0,
        _ => s.fusion,
    };
    let message = s.partition.max(fusion);
    // the algorithm a message of that size runs (an MPI library's
    // selection changes with the size): its latency and its transfer
    let cost = s
        .dense_collective()
        .running_at(&cfg.cluster, message as f64)
        .analytical(&cfg.cluster);
    let latency = cost.time(0.0);
    let transfer = cost.time(message as f64) - latency;
    if latency < transfer || transfer <= 0.0 {
        return vec![];
    }
    let even = (latency / transfer * message as f64).ceil();
    // the key that sets the messages' size: the larger of the two
    let (key, which) = if fusion > s.partition {
        ("strategy.fusion", "a fusion buffer")
    } else {
        ("strategy.partition", "a partition")
    };
    vec![invalid(
        key,
        format!(
            "priority scheduling sends messages of at most {} here, and each costs {:.0} µs of latency against {:.0} µs of transfer: per-message latency is as large as the transfer or larger, and priority may run slower than FIFO; {which} of at least {} keeps latency under half of each message",
            HumanBytes(message as f64),
            latency * 1e6,
            transfer * 1e6,
            HumanBytes(even)
        ),
    )]
}

/// A layer's `[model.layers.embedding]`; `k` names its keys.
fn embedding(e: &RawEmbedding, k: &dyn Fn(&str) -> String) -> Result<Embedding, Invalid> {
    let whole = |v: Option<i64>, f: &str| -> Result<u64, Invalid> {
        let v = v.ok_or_else(|| invalid(&k(f), "is required but missing"))?;
        if !(1..=limits::MAX_LAYER_PARAMS as i64).contains(&v) {
            return Err(invalid(
                &k(f),
                format!("must be from 1 to {}, got {v}", limits::MAX_LAYER_PARAMS),
            ));
        }
        Ok(v as u64)
    };
    let vocab = whole(e.vocab, "vocab")?;
    let dim = whole(e.dim, "dim")?;
    if vocab
        .checked_mul(dim)
        .is_none_or(|p| p > limits::MAX_LAYER_PARAMS)
    {
        return Err(invalid(
            &k("dim"),
            format!(
                "vocab × dim = {vocab} × {dim} is more than the {} parameters of a layer dtsim simulates",
                limits::MAX_LAYER_PARAMS
            ),
        ));
    }
    let tokens = e.tokens_per_batch.is_some() || e.zipf.is_some();
    if e.padding_tokens.is_some() && !tokens {
        return Err(invalid(
            &k("padding_tokens"),
            "means nothing without the token model (`tokens_per_batch` and `zipf`): a `density` counts distinct rows, padding among them",
        ));
    }
    let rows = match (e.density, tokens) {
        (Some(_), true) => {
            return Err(invalid(
                &k("density"),
                "give either `density` or the token model (`tokens_per_batch` and `zipf`), not both",
            ));
        }
        (None, true) => {
            if let Some(t) = e.tokens_per_batch
                && !(1..=crate::workload::tokens::MAX_TOKENS as i64).contains(&t)
            {
                return Err(invalid(
                    &k("tokens_per_batch"),
                    format!(
                        "must be from 1 to 2^40 = {} tokens per GPU per iteration, got {t}",
                        crate::workload::tokens::MAX_TOKENS
                    ),
                ));
            }
            if let Some(z) = e.zipf
                && !(z > 0.0 && z.is_finite())
            {
                return Err(invalid(
                    &k("zipf"),
                    format!(
                        "the Zipf exponent must be a positive number (about 1 for words), got {z}"
                    ),
                ));
            }
            let tokens = e.tokens_per_batch.ok_or_else(|| {
                invalid(
                    &k("tokens_per_batch"),
                    "is required with `zipf` (the words one GPU's batch holds per iteration)",
                )
            })?;
            let zipf = e.zipf.ok_or_else(|| {
                invalid(
                    &k("zipf"),
                    "is required with `tokens_per_batch` (the Zipf exponent of the words: about 1 for natural language)",
                )
            })?;
            let padding = match e.padding_tokens {
                None => 0,
                Some(p) if !(0..tokens).contains(&p) => {
                    return Err(invalid(
                        &k("padding_tokens"),
                        format!(
                            "must be from 0 to tokens_per_batch − 1 = {} (the batch's positions on the padding row; at least one token is a word), got {p}",
                            tokens - 1
                        ),
                    ));
                }
                Some(p) if p > 0 && vocab < 2 => {
                    return Err(invalid(
                        &k("padding_tokens"),
                        "needs a table of at least 2 rows: the padding row and a row for the words",
                    ));
                }
                Some(p) => p as u64,
            };
            Rows::Tokens {
                tokens: tokens as u64,
                zipf,
                padding,
            }
        }
        (None, false) => {
            return Err(invalid(
                &k("density"),
                "is required but missing (the fraction of rows one GPU touches per iteration, in (0, 1])",
            ));
        }
        (Some(a), false) => {
            if !(a > 0.0 && a <= 1.0) {
                return Err(invalid(
                    &k("density"),
                    format!(
                        "must be in (0, 1] (the fraction of rows one GPU touches per iteration), got {a}"
                    ),
                ));
            }
            Rows::Density(a)
        }
    };
    let placement = placement(e.placement.as_deref(), &k("placement"))?.unwrap_or_default();
    Ok(Embedding {
        vocab,
        dim,
        rows,
        placement,
    })
}

/// A table's placement, `key`'s value ("gpu" or "host"); `None` when
/// absent.
fn placement(value: Option<&str>, key: &str) -> Result<Option<TablePlacement>, Invalid> {
    value
        .map(|v| TablePlacement::parse(v).map_err(|e| invalid(key, e)))
        .transpose()
}

/// The value of a required key.
pub(super) fn need<T: Clone>(v: &Option<T>, key: &str) -> Result<T, Invalid> {
    v.clone()
        .ok_or_else(|| invalid(key, "is required but missing"))
}

/// An integer key as a `u32` of at least `min` (`default` if absent;
/// required if there is none).
pub(super) fn count(
    v: Option<i64>,
    key: &str,
    default: Option<i64>,
    min: i64,
) -> Result<u32, Invalid> {
    // the count's real bound, where it has one, depends on the rest of
    // the scenario (servers on machines, stages on layers) and is checked
    // there: a count below `min` is told the least alone
    if let Some(v) = v.filter(|&v| v < min) {
        return Err(invalid(
            key,
            format!("must be a whole number of at least {min}, got {v}"),
        ));
    }
    count_to(v, key, default, min, u32::MAX)
}

/// [`count`] with a largest value of its own, which the message names
/// (a count below `min` is told the whole range, not u32's).
pub(super) fn count_to(
    v: Option<i64>,
    key: &str,
    default: Option<i64>,
    min: i64,
    max: u32,
) -> Result<u32, Invalid> {
    let v = match (v, default) {
        (Some(v), _) => v,
        (None, Some(d)) => d,
        (None, None) => return Err(invalid(key, "is required but missing")),
    };
    if v < min || v > max as i64 {
        return Err(invalid(
            key,
            format!("must be an integer from {min} to {max}, got {v}"),
        ));
    }
    Ok(v as u32)
}

/// An iteration count: [`count`], at most [`limits::MAX_ITERATIONS`].
fn iterations(v: Option<i64>, key: &str, default: i64, min: i64) -> Result<u32, Invalid> {
    count_to(v, key, Some(default), min, limits::MAX_ITERATIONS as u32)
}

/// A size in bytes: a non-negative integer or a quantity with a unit
/// (`default` if absent).
pub(super) fn size(v: &Option<IntOrText>, key: &str, default: u64) -> Result<u64, Invalid> {
    match v {
        None => Ok(default),
        Some(IntOrText::Int(i)) if *i >= 0 => Ok(*i as u64),
        Some(IntOrText::Int(i)) => Err(invalid(
            key,
            format!("must be a non-negative size, got {i}"),
        )),
        Some(IntOrText::Text(t)) => parse_bytes(t).map_err(|e| invalid(key, e.to_string())),
    }
}

/// A custom layer's `variables` (`key`): at least one, at most
/// `limits::MAX_LAYER_VARIABLES`, each of one element or more, adding up
/// to the layer's `params`.
fn layer_variables(v: &[i64], params: u64, key: &str) -> Result<Vec<u64>, Invalid> {
    if v.is_empty() {
        return Err(invalid(
            key,
            "lists no variable: give each variable's elements, or leave the key out for one variable of `params`",
        ));
    }
    if v.len() > limits::MAX_LAYER_VARIABLES {
        return Err(invalid(
            key,
            format!(
                "lists {} variables, more than the {} a layer may have",
                v.len(),
                limits::MAX_LAYER_VARIABLES
            ),
        ));
    }
    if let Some((j, x)) = v.iter().enumerate().find(|&(_, &x)| x < 1) {
        return Err(invalid(
            key,
            format!("entry {j} is {x}: a variable holds one element or more"),
        ));
    }
    let sum: u128 = v.iter().map(|&x| x as u128).sum();
    if sum != params as u128 {
        return Err(invalid(
            key,
            format!(
                "adds up to {sum} elements, and the layer's `params` is {params}: the variables hold the layer's parameters"
            ),
        ));
    }
    Ok(v.iter().map(|&x| x as u64).collect())
}
#[cfg(test)]
mod tests {
    /// The warnings of a scenario's first point (it must load).
    fn warned(text: &str) -> Vec<crate::scenario::ScenarioError> {
        crate::scenario::load_str(text, "t.toml", "t").unwrap()[0]
            .warnings
            .clone()
    }

    /// A count's message names its own range, not u32's (a review found
    /// `iterations = 0` told "1 to 4294967295" where 1,000,000 is the
    /// most), below and above it.
    #[test]
    fn counts_name_their_own_range() {
        let text = |set: &str| {
            format!(
                "name = \"t\"\n{set}\n[cluster]\nnodes = 2\ngpus_per_node = 1\nnetwork = \"eth-10g\"\n[model]\npreset = \"resnet20\"\nbatch_per_gpu = 128\ngpu = \"p102-100\"\n"
            )
        };
        for (set, key, says) in [
            ("iterations = 0", "iterations", "from 1 to 1000000, got 0"),
            (
                "iterations = 2000000",
                "iterations",
                "from 1 to 1000000, got 2000000",
            ),
            (
                "warmup_iterations = -1",
                "warmup_iterations",
                "from 0 to 1000000, got -1",
            ),
        ] {
            let e = crate::scenario::load_str(&text(set), "t.toml", "t").unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert!(e.message.contains(says), "{set}: {e}");
        }
        let cores = text("").replace("gpus_per_node = 1", "gpus_per_node = 1\ncpu_cores = 0");
        let e = crate::scenario::load_str(&cores, "t.toml", "t").unwrap_err();
        assert!(e.message.contains("from 1 to 4096, got 0"), "{e}");
    }

    /// DCT-DP warns when the measured window is not a whole number of
    /// life-spans, and counts the sorts the window holds.
    #[test]
    fn dct_warns_of_a_window_of_partial_lifespans() {
        assert_eq!(super::sorts_in(1, 8, 4), 2);
        assert_eq!(super::sorts_in(0, 8, 4), 2);
        assert_eq!(super::sorts_in(1, 1000, 10000), 0);
        assert_eq!(super::sorts_in(1, 1000, 1000), 1);
        assert_eq!(super::sorts_in(2, 10, 1000), 0);
        let text = |n: u32| {
            format!(
                "name = \"t\"\niterations = {n}\n[cluster]\nnodes = 2\ngpus_per_node = 1\nnetwork = \"eth-10g\"\n[model]\npreset = \"resnet20\"\nbatch_per_gpu = 128\ngpu = \"p102-100\"\n[strategy]\ndense = \"dct\"\ndct_lifespan = 100\n"
            )
        };
        let p = crate::scenario::load_str(&text(250), "t.toml", "t").unwrap();
        let w = &p[0].warnings;
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key.as_deref(), Some("iterations"));
        assert!(
            w[0].message
                .contains("counts 2 sort(s) where the long run has 2.500"),
            "{}",
            w[0].message
        );
        let p = crate::scenario::load_str(&text(300), "t.toml", "t").unwrap();
        assert!(p[0].warnings.is_empty());
    }
    /// An empty scenario or layer name is refused at its key (a review:
    /// a blank scenario column, and `2 stages ( | layer1)`).
    #[test]
    fn empty_names_are_refused() {
        let good = "name = \"t\"\n[cluster]\nnodes = 2\nnetwork = \"eth-10g\"\n[model]\ngpu = \"h200\"\nbatch_per_gpu = 8\n[[model.layers]]\nname = \"a\"\nparams = 1000000\nforward = \"1ms\"\nbackward = \"1ms\"\n";
        assert!(crate::scenario::load_str(good, "t.toml", "t").is_ok());
        for (change, key, line) in [
            (("name = \"t\"", "name = \"\""), "name", 1),
            (("name = \"a\"", "name = \" \""), "model.layers[0].name", 9),
        ] {
            let e = crate::scenario::load_str(&good.replace(change.0, change.1), "t.toml", "t")
                .unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.starts_with("is empty"), "{e}");
        }
    }

    /// A custom model's device a letter or a case off a known one is
    /// warned about with the name it probably meant; a name far from any
    /// (a device of one's own) is not.
    #[test]
    fn a_custom_devices_typo_is_warned_about() {
        let text = |gpu: &str| {
            format!(
                "name = \"t\"\n[cluster]\nnodes = 2\nnetwork = \"eth-10g\"\n[model]\ngpu = \"{gpu}\"\nbatch_per_gpu = 8\n[[model.layers]]\nparams = 1000000\nforward = \"1ms\"\nbackward = \"1ms\"\n"
            )
        };
        for (typo, meant) in [("H200", "h200"), ("xeon-18", "xeon-18c"), ("a10O", "a100")] {
            let w = warned(&text(typo));
            assert_eq!(w.len(), 1, "{typo}: {w:?}");
            assert_eq!(w[0].key.as_deref(), Some("model.gpu"));
            assert!(
                w[0].message.starts_with(&format!(
                    "`{typo}` is no device dtsim knows (did you mean `{meant}`?)"
                )),
                "{}",
                w[0].message
            );
        }
        for fine in ["h200", "xeon-18c", "my-accelerator"] {
            assert!(warned(&text(fine)).is_empty(), "{fine}");
        }
    }

    /// A node preset beside another known device's compute table is
    /// warned about at `model.gpu`, at its sweep's points too (a review
    /// swept `cluster.node` over DGX A100 and H100 with `gpu = "a100"`:
    /// the H100 nodes ran A100s' compute, silently); the node's own GPU,
    /// a custom model's own device name, and no node preset are not.
    #[test]
    fn a_node_presets_gpu_beside_another_device_is_warned_about() {
        let text = |node: &str, gpu: &str| {
            format!(
                "name = \"t\"\n[cluster]\nnodes = 2\nnode = \"{node}\"\n[model]\npreset = \"resnet50\"\nbatch_per_gpu = 64\ngpu = \"{gpu}\"\n"
            )
        };
        let w = warned(&text("dgx-h100", "a100"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key.as_deref(), Some("model.gpu"));
        assert!(
            w[0].message.contains("`a100` computes on `dgx-h100` nodes")
                && w[0]
                    .message
                    .contains("`gpu = \"h100\"` or `gpu = \"h200\"`"),
            "{}",
            w[0].message
        );
        assert_eq!(w[0].line, Some(8));
        for (node, gpu) in [
            ("dgx-h100", "h100"),
            ("dgx-h100", "h200"),
            ("aws-p4d", "a100"),
        ] {
            assert!(warned(&text(node, gpu)).is_empty(), "{node} {gpu}");
        }
        let w = warned(&text("aws-p4d", "titan-xp"));
        assert!(w[0].message.contains("`gpu = \"a100\"`"), "{w:?}");
        // no node preset: nothing to compare
        let plain = text("x", "v100").replace(
            "node = \"x\"",
            "gpus_per_node = 8\nnetwork = \"ib-edr-100g\"",
        );
        assert!(warned(&plain).is_empty());
        // a custom model's device is its own name
        let custom = "name = \"t\"\n[cluster]\nnodes = 2\nnode = \"dgx-a100\"\n[model]\nbatch_per_gpu = 8\ngpu = \"my-accelerator\"\n[[model.layers]]\nname = \"d\"\nparams = 1000\nforward = \"1ms\"\nbackward = \"1ms\"\n";
        assert!(warned(custom).is_empty(), "{:?}", warned(custom));
        // at a point of a sweep over the nodes
        let sweep = format!(
            "{}[sweep]\n\"cluster.node\" = [\"dgx-a100\", \"dgx-h100\"]\n",
            text("dgx-a100", "a100")
        );
        let points = crate::scenario::load_str(&sweep, "t.toml", "t").unwrap();
        assert!(points[0].warnings.is_empty());
        assert_eq!(points[1].warnings.len(), 1, "{:?}", points[1].warnings);
    }

    /// NICs faster than all their GPUs' PCIe paths together are warned
    /// about at `cluster.network` (NDR behind the default pcie3-x16: a
    /// review found it ran at EDR's speed); NICs the GPUs can fill (one
    /// EDR NIC for 6 PCIe GPUs, a PCIe 5 node, every node preset) and one
    /// node are not.
    #[test]
    fn nics_their_gpus_cannot_fill_are_warned_about() {
        let text = |cluster: &str| {
            format!(
                "name = \"t\"\n[cluster]\nnodes = 2\n{cluster}\n[model]\npreset = \"resnet50\"\nbatch_per_gpu = 64\ngpu = \"a100\"\n"
            )
        };
        let w = warned(&text("network = \"ib-ndr-400g\""));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key.as_deref(), Some("cluster.network"));
        // 400 Gb/s at 94% efficiency over pcie3-x16's 12.4 GB/s
        assert!(
            w[0].message.contains("one `ib-ndr-400g` NIC (47.0 GB/s)")
                && w[0]
                    .message
                    .contains("its GPU's `pcie3-x16` link (12.4 GB/s)")
                && w[0].message.contains("can fill 26%"),
            "{}",
            w[0].message
        );
        let w = warned(&text(
            "gpus_per_node = 8\nintra = \"nvlink3\"\nnics_per_node = 8\nnic_link = \"pcie3-x16\"\nnetwork = \"ib-ndr-400g\"",
        ));
        assert!(
            w[0].message
                .contains("8 `ib-ndr-400g` NICs (376.0 GB/s together)"),
            "{w:?}"
        );
        assert!(
            w[0].message
                .contains("8 GPUs' `pcie3-x16` links (12.4 GB/s each)"),
            "{w:?}"
        );
        for quiet in [
            "gpus_per_node = 6\nnetwork = \"ib-edr-100g\"",
            "network = \"ib-ndr-400g\"\nintra = \"pcie5-x16\"",
            "node = \"dgx-a100\"",
            "node = \"dgx-h100\"",
            "node = \"aws-p4d\"",
            "node = \"aws-p5\"",
        ] {
            let w: Vec<_> = warned(&text(quiet))
                .into_iter()
                .filter(|w| w.key.as_deref() == Some("cluster.network"))
                .collect();
            assert!(w.is_empty(), "{quiet}: {w:?}");
        }
        let one = text("network = \"ib-ndr-400g\"").replace("nodes = 2", "nodes = 1");
        assert!(warned(&one).is_empty());
        // the NIC count's range is the builder's, however far off (a
        // review: 0 said "1 to 1048576", 65 "1 to 64")
        for n in [0, 65, 1 << 30] {
            let t = text(&format!("nics_per_node = {n}\nnetwork = \"eth-10g\""));
            let e = crate::scenario::load_str(&t, "t.toml", "t").unwrap_err();
            assert!(e.message.contains("from 1 to 64"), "{n}: {e}");
        }
    }

    /// Dedicated server machines warn where they carry nothing: machines
    /// beyond the servers (server j on machine j mod M), and one GPU (no
    /// communication at all); as many servers as machines, none.
    #[test]
    fn idle_server_machines_are_warned_about() {
        let text = |gpus: u32, set: &str| {
            format!(
                "name = \"t\"\n[cluster]\nnodes = {gpus}\ngpus_per_node = 1\nnetwork = \"eth-10g\"\n[model]\npreset = \"resnet20\"\nbatch_per_gpu = 128\ngpu = \"p102-100\"\n[strategy]\ndense = \"ps\"\n{set}\n"
            )
        };
        let w = warned(&text(4, "ps_machines = 3\nps_servers = 1"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key.as_deref(), Some("strategy.ps_machines"));
        assert!(
            w[0].message.contains("1 server on 3 dedicated machines")
                && w[0].message.contains("leaves 2 of them"),
            "{}",
            w[0].message
        );
        let w = warned(&text(1, "ps_machines = 1"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("one GPU"), "{}", w[0].message);
        assert!(warned(&text(4, "ps_machines = 3")).is_empty());
        assert!(warned(&text(4, "ps_machines = 2\nps_servers = 4")).is_empty());
        // a hybrid's sparse PS beside a dense AllReduce: one server a
        // machine by default, none idle
        let hybrid = "name = \"t\"\n[cluster]\nnodes = 4\ngpus_per_node = 1\nnetwork = \"eth-10g\"\n[model]\nbatch_per_gpu = 8\n[[model.layers]]\nname = \"e\"\nparams = 0\nforward = \"1ms\"\nbackward = \"1ms\"\n[model.layers.embedding]\nvocab = 1000\ndim = 8\ndensity = 0.01\n[[model.layers]]\nname = \"d\"\nparams = 1000\nforward = \"1ms\"\nbackward = \"1ms\"\n[strategy]\nsparse = \"ps\"\nps_machines = 3\n";
        assert!(warned(hybrid).is_empty(), "{:?}", warned(hybrid));
        let w = warned(&hybrid.replace("ps_machines = 3", "ps_machines = 3\nps_servers = 2"));
        assert!(w[0].message.contains("2 servers on 3"), "{w:?}");
        // too few partitions for the servers, dedicated or not
        let w = warned(&hybrid.replace("ps_machines = 3", "ps_machines = 3\nps_partitions = 2"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key.as_deref(), Some("strategy.ps_partitions"));
        assert!(
            w[0].message
                .contains("2 partitions of each table on 3 servers"),
            "{w:?}"
        );
        let w = warned(&hybrid.replace("ps_machines = 3", "ps_partitions = 1"));
        assert!(w[0].message.contains("leaves 3 servers"), "{w:?}");
        assert!(warned(&hybrid.replace("ps_machines = 3", "ps_partitions = 4")).is_empty());
    }
    use super::super::tests::{GOOD, err};
    use super::super::{load_str, load_str_in};

    /// Bad input the DESIGN audit of 2026-11-29 found passing or told
    /// vaguely: a key or a table given twice names the key or the table;
    /// two layers of one name (an unnamed layer is `layer<i>`) are refused
    /// on the second's `name`; a preset's batch that makes a layer's pass
    /// longer than a day is refused on `batch_per_gpu`; a size too large
    /// says so, not "non-negative".
    #[test]
    fn repeated_names_and_huge_values_are_told_where() {
        let err = |text: &str| load_str(text, "f.toml", "f").unwrap_err().to_string();
        let base = "[cluster]\nnodes = 2\ngpus_per_node = 1\nnetwork = \"ib-edr-100g\"\n[model]\npreset = \"resnet50\"\ngpu = \"v100\"\nbatch_per_gpu = 32\n";
        let e = err(&base.replace("nodes = 2\n", "nodes = 2\nnodes = 3\n"));
        assert!(
            e.starts_with("f.toml:3: `cluster.nodes`: is given twice in its table"),
            "{e}"
        );
        let e = err(&format!("{base}[cluster]\nlatency = \"1us\"\n"));
        assert!(
            e.starts_with("f.toml:9:") && e.contains("the table [cluster] is given twice"),
            "{e}"
        );
        // named as every other message names it: a layer's index, a
        // sweep's key unquoted; an inline table's key; a list's line
        let layer = "[[model.layers]]\nparams = 10\nforward = \"1ms\"\nbackward = \"1ms\"\n";
        let e = err(&format!(
            "[cluster]\nnodes = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\n{layer}{layer}params = 11\n"
        ));
        assert!(
            e.starts_with("f.toml:14: `model.layers[1].params`: is given twice"),
            "{e}"
        );
        let e = err(&format!(
            "{base}[sweep]\n\"cluster.nodes\" = [1, 2]\n\"cluster.nodes\" = [3]\n"
        ));
        assert!(
            e.starts_with("f.toml:11: `sweep.cluster.nodes`: is given twice"),
            "{e}"
        );
        let e = err(&base.replace("nodes = 2\n", "nodes = 2\nx = { a = 1, a = 2 }\n"));
        assert!(
            e.contains("a key of this inline table is given twice"),
            "{e}"
        );
        let e = err(&format!(
            "{base}[sweep]\n\"cluster.network\" = [\n[\"a\"],\n]\n\"cluster.network\" = [\"eth-10g\"]\n"
        ));
        assert!(!e.contains("the table"), "{e}");
        let e = err(&base.replace("batch_per_gpu = 32", "batch_per_gpu = 4294967295"));
        assert!(
            e.starts_with("f.toml:8: `model.batch_per_gpu`: at 4294967295 samples a GPU, layer `conv1`'s forward pass takes"),
            "{e}"
        );
        let e = err(&format!("{base}[strategy]\nfusion = \"1e30TiB\"\n"));
        assert!(
            e.contains("`strategy.fusion`") && e.contains("at most 9e18 bytes"),
            "{e}"
        );
        let layers = |a: &str, b: &str| {
            format!(
                "[cluster]\nnodes = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\n[[model.layers]]\n{a}params = 10\nforward = \"1ms\"\nbackward = \"1ms\"\n[[model.layers]]\n{b}params = 10\nforward = \"1ms\"\nbackward = \"1ms\"\n"
            )
        };
        let e = err(&layers("name = \"a\"\n", "name = \"a\"\n"));
        assert!(
            e.starts_with("f.toml:12: `model.layers[1].name`: `a` names layer 0 too"),
            "{e}"
        );
        let e = err(&layers("name = \"layer1\"\n", ""));
        assert!(
            e.contains("`layer1` names layer 0 too") && e.contains("without a name is called"),
            "{e}"
        );
        let e = err(&layers("", "name = \"layer0\"\n"));
        assert!(
            e.contains("`layer0` names layer 0 too") && e.contains("without a name is called"),
            "{e}"
        );
        // distinct names, or none, load
        load_str(&layers("name = \"a\"\n", "name = \"b\"\n"), "f.toml", "f").unwrap();
        let p = load_str(&layers("", ""), "f.toml", "f").unwrap();
        let names: Vec<&str> = p[0]
            .config
            .model
            .layers
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert_eq!(names, ["layer0", "layer1"]);
    }

    /// A custom layer's `variables`: kept as given when they add up to
    /// its `params`; refused, naming the key and its line, when empty,
    /// with an entry under one element, or adding up to another count.
    #[test]
    fn a_layers_variables_add_up_to_its_params() {
        let base = |vars: &str| {
            format!(
                "name = \"t\"\n[cluster]\nnodes = 2\ngpus_per_node = 1\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\n[[model.layers]]\nname = \"a\"\nparams = 3000\nforward = \"1ms\"\nbackward = \"2ms\"\n{vars}"
            )
        };
        let layers = |text: &str| {
            load_str(text, "f.toml", "f").unwrap()[0]
                .config
                .model
                .layers
                .clone()
        };
        assert_eq!(layers(&base(""))[0].variable_sizes(), [3000]);
        let given = layers(&base("variables = [1000, 2000]\n"));
        assert_eq!(given[0].variables, [1000, 2000]);
        assert_eq!(given[0].variable_sizes(), [1000, 2000]);
        for (vars, says) in [
            ("variables = []\n", "lists no variable"),
            ("variables = [3000, 0]\n", "entry 1 is 0"),
            ("variables = [-1, 3001]\n", "entry 0 is -1"),
            ("variables = [1000, 1000]\n", "adds up to 2000 elements"),
        ] {
            let text = base(vars);
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("model.layers[0].variables"), "{e}");
            let line = text
                .lines()
                .position(|l| l.starts_with("variables"))
                .unwrap()
                + 1;
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.contains(says), "{vars}: {e}");
        }
        // a preset's layers carry their architecture's variables
        let p = load_str(GOOD, "f.toml", "f").unwrap();
        let conv1 = &p[0].config.model.layers[0];
        assert_eq!(conv1.variables, [9408, 64, 64]);
    }

    /// `cluster.node` stands for its bundle; a key beside it wins; an
    /// unknown node is refused at its line, with the known names; without
    /// node or network, the message says either will do.
    #[test]
    fn a_node_preset_stands_for_its_keys() {
        let text = GOOD
            .replace("gpus_per_node = 4\n", "")
            .replace("network = \"ib-edr-100g\"", "node = \"dgx-a100\"");
        let c = &load_str(&text, "f.toml", "f").unwrap()[0].config.cluster;
        assert_eq!((c.gpus(), c.nics_per_node), (16, 8));
        assert_eq!(
            (c.network.as_str(), c.intra_name.as_str()),
            ("ib-hdr-200g", "nvlink3")
        );
        let text = text.replace(
            "node = \"dgx-a100\"",
            "node = \"dgx-a100\"\nnics_per_node = 2",
        );
        let c = &load_str(&text, "f.toml", "f").unwrap()[0].config.cluster;
        assert_eq!(c.nics_per_node, 2);
        let e = err(&text.replace("dgx-a100", "dgx-a10"));
        assert_eq!(e.key.as_deref(), Some("cluster.node"));
        assert_eq!(e.line, Some(5));
        assert!(e.to_string().contains("dgx-a100"), "{e}");
        let e = err(&GOOD.replace("network = \"ib-edr-100g\"", ""));
        assert_eq!(e.key.as_deref(), Some("cluster.network"));
        assert!(e.to_string().contains("node"), "{e}");
    }

    /// NVLink SHARP is refused where the switch cannot reduce, at the
    /// strategy key, and accepted on one H100 node; across nodes `nvls`
    /// needs SHARP between the switches and `nvls-tree` does not.
    #[test]
    fn nvls_needs_a_reducing_switch() {
        let text = |node: &str, nodes: u32, algo: &str| {
            GOOD.replace("gpus_per_node = 4\n", "")
                .replace("nodes = 2", &format!("nodes = {nodes}"))
                .replace("network = \"ib-edr-100g\"", &format!("node = \"{node}\""))
                .replace(
                    "gpu = \"titan-xp\"",
                    &format!("gpu = \"h100\"\n[strategy]\nallreduce = \"{algo}\""),
                )
        };
        for algo in ["nvls", "nvls-tree"] {
            assert!(load_str(&text("dgx-h100", 1, algo), "f.toml", "f").is_ok());
            // across nodes with SHARP between the switches (NDR)
            assert!(load_str(&text("dgx-h100", 2, algo), "f.toml", "f").is_ok());
        }
        // across nodes over EFA: a tree between the nodes
        assert!(load_str(&text("aws-p5", 2, "nvls-tree"), "f.toml", "f").is_ok());
        for (node, nodes, algo, says) in [
            ("dgx-a100", 1, "nvls", "nvlink4"),
            ("dgx-a100", 2, "nvls-tree", "nvlink4"),
            ("aws-p5", 2, "nvls", "nvls-tree"),
        ] {
            let e = err(&text(node, nodes, algo));
            assert_eq!(e.key.as_deref(), Some("strategy.allreduce"));
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    /// A calibration profile's latency was measured end to end: a
    /// cross-node transfer pays it and nothing GPU-side on top.
    #[test]
    fn a_profile_latency_is_end_to_end() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/profiles");
        let text = GOOD.replace("\"ib-edr-100g\"", "\"mpi-4ranks-ci-vm.toml\"");
        let c = &load_str_in(&text, "f.toml", "f", Some(&dir)).unwrap()[0]
            .config
            .cluster;
        let topo = crate::cluster::Topology::new(c);
        let (a, b) = (
            crate::cluster::Endpoint::Gpu(0),
            crate::cluster::Endpoint::Gpu(4),
        );
        assert_eq!(topo.route(a, b, None).latency, c.inter.latency);
        assert!((c.inter.latency - 3.767563743899324e-6).abs() < 1e-18);
    }

    #[test]
    fn zero_gpus_names_key_and_line() {
        let e = err(&GOOD.replace("nodes = 2", "nodes = 0"));
        assert_eq!(e.key.as_deref(), Some("cluster.nodes"));
        assert_eq!(e.line, Some(4));
    }

    #[test]
    fn bad_bandwidth_names_key() {
        let e = err(&GOOD.replace(
            "network = \"ib-edr-100g\"",
            "network = \"ib-edr-100g\"\nbandwidth = \"0Gbps\"",
        ));
        assert_eq!(e.key.as_deref(), Some("cluster.bandwidth"));
        assert_eq!(e.line, Some(7));
    }

    /// A count out of range says the range, too large as well as too small.
    #[test]
    fn embedding_input_is_checked_with_key_and_line() {
        let base = r#"
[cluster]
nodes = 2
gpus_per_node = 4
network = "ib-edr-100g"
[model]
batch_per_gpu = 8
[[model.layers]]
params = 10
forward = "1ms"
backward = "1ms"
[[model.layers]]
name = "emb"
params = 0
forward = "1ms"
backward = "1ms"
[model.layers.embedding]
vocab = 1000
dim = 16
density = 0.1
"#;
        assert!(load_str(base, "f.toml", "f").is_ok());
        let line_of = |text: &str, start: &str| {
            text.lines()
                .position(|l| l.starts_with(start))
                .map(|i| i + 1)
        };
        let k = |f: &str| format!("model.layers[1].embedding.{f}");
        let cases: Vec<(String, String, &str)> = vec![
            (
                base.replace("density = 0.1", "density = 0.0"),
                k("density"),
                "(0, 1]",
            ),
            (
                base.replace("density = 0.1", "density = 1.5"),
                k("density"),
                "(0, 1]",
            ),
            (
                base.replace("density = 0.1", "density = -0.2"),
                k("density"),
                "(0, 1]",
            ),
            (base.replace("dim = 16", "dim = 0"), k("dim"), "from 1"),
            (
                base.replace("vocab = 1000", "vocab = -3"),
                k("vocab"),
                "from 1",
            ),
            (
                base.replace("vocab = 1000", "vocab = 100000000000"),
                k("dim"),
                "vocab × dim",
            ),
            (
                base.replace("density = 0.1\n", ""),
                k("density"),
                "required",
            ),
            (
                base.replace("density = 0.1", "tokens_per_batch = 4096"),
                k("zipf"),
                "required with `tokens_per_batch`",
            ),
            (
                base.replace("density = 0.1", "zipf = 1.1"),
                k("tokens_per_batch"),
                "required with `zipf`",
            ),
            (
                base.replace("density = 0.1", "tokens_per_batch = 100000000\nzipf = 1.1"),
                k("tokens_per_batch"),
                "would draw 10400000000 tokens",
            ),
            (
                base.replace("density = 0.1", "density = 0.1\nzipf = 1.1"),
                k("density"),
                "not both",
            ),
            (
                base.replace("density = 0.1", "tokens_per_batch = 4096\nzipf = 0.0"),
                k("zipf"),
                "positive",
            ),
            (
                base.replace("density = 0.1", "tokens_per_batch = 4096\nzipf = -1.0"),
                k("zipf"),
                "positive",
            ),
            (
                base.replace(
                    "density = 0.1",
                    "tokens_per_batch = 1099511627777\nzipf = 1.0",
                ),
                k("tokens_per_batch"),
                "2^40",
            ),
            (
                base.replace("density = 0.1", "density = 0.1\npadding_tokens = 10"),
                k("padding_tokens"),
                "without the token model",
            ),
            (
                base.replace(
                    "density = 0.1",
                    "tokens_per_batch = 4096\nzipf = 1.0\npadding_tokens = 4096",
                ),
                k("padding_tokens"),
                "from 0 to tokens_per_batch − 1 = 4095",
            ),
            (
                base.replace(
                    "density = 0.1",
                    "tokens_per_batch = 4096\nzipf = 1.0\npadding_tokens = -1",
                ),
                k("padding_tokens"),
                "got -1",
            ),
            (
                base.replace(
                    "density = 0.1",
                    "tokens_per_batch = 4096\nzipf = 1.0\npadding_tokens = 2",
                )
                .replace("vocab = 1000", "vocab = 1"),
                k("padding_tokens"),
                "at least 2 rows",
            ),
            (
                format!("{base}[strategy]\nsparse = \"alltoall\"\n").replace("dim = 16", "dim = 7"),
                k("dim"),
                "at least one",
            ),
            (
                format!("{base}[strategy]\nsparse = \"allgahter\"\n"),
                "strategy.sparse".into(),
                "did you mean `allgather`",
            ),
        ];
        for (text, key, what) in cases {
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key.as_str()), "{e}");
            assert!(e.message.contains(what), "{key}: {e}");
            let leaf = key.rsplit('.').next().unwrap();
            // a missing key is blamed on its table's header
            let want = line_of(&text, &format!("{leaf} ="))
                .or_else(|| line_of(&text, "[model.layers.embedding]"));
            assert_eq!(e.line, want, "{key}: {e}");
        }
        // an AllGather's message grows with the GPUs: cut into too many
        // priority pieces, it is refused on `strategy.partition`
        let big = format!("{base}[strategy]\nschedule = \"priority\"\n")
            .replace("nodes = 2", "nodes = 1024")
            .replace("gpus_per_node = 4", "gpus_per_node = 1024")
            .replace("vocab = 1000", "vocab = 1000000")
            .replace("density = 0.1", "density = 1.0");
        let e = err(&big);
        assert_eq!(e.key.as_deref(), Some("strategy.partition"), "{e}");
        assert!(e.message.contains("`emb`"), "{e}");
        // eleven columns over 8 GPUs are accepted (each holds 2, padded)
        let uneven =
            format!("{base}[strategy]\nsparse = \"alltoall\"\n").replace("dim = 16", "dim = 11");
        assert!(load_str(&uneven, "f.toml", "f").is_ok());
        // a padded batch: 3,000 of its 4,096 tokens on the padding row
        let padded = base
            .replace(
                "density = 0.1",
                "tokens_per_batch = 4096\nzipf = 1.0\npadding_tokens = 3000",
            )
            .replace("vocab = 1000", "vocab = 100000");
        let p = &load_str(&padded, "f.toml", "f").unwrap()[0];
        let e = p.config.model.layers[1].embedding.as_ref().unwrap();
        assert_eq!(
            e.rows,
            crate::workload::Rows::Tokens {
                tokens: 4096,
                zipf: 1.0,
                padding: 3000
            }
        );
        // at most the 1,096 words and the padding row are distinct
        assert_eq!(e.rows_per_gpu(), 1097);
        assert_eq!(e.lookups_per_gpu(), 4096);
    }

    /// `model.embedding_density` sets a preset's tables' density; it is
    /// refused out of (0, 1], for a preset without tables, and for a custom
    /// model (whose tables carry their own), each on its line.
    #[test]
    fn embedding_density_sets_a_presets_tables() {
        let lm = "[cluster]\nnodes = 2\ngpus_per_node = 2\nnetwork = \"ib-edr-100g\"\n[model]\npreset = \"lm\"\nbatch_per_gpu = 128\ngpu = \"titan-xp\"\n";
        let p = &load_str(lm, "f.toml", "f").unwrap()[0];
        let density = |p: &crate::scenario::Point| {
            p.config
                .model
                .layers
                .iter()
                .filter_map(|l| l.embedding.as_ref().map(|e| e.density()))
                .collect::<Vec<_>>()
        };
        assert_eq!(density(p), [8.4e-3, 8.4e-3]);
        let thin =
            &load_str(&format!("{lm}embedding_density = 0.003\n"), "f.toml", "f").unwrap()[0];
        assert_eq!(density(thin), [0.003, 0.003]);
        for (text, what) in [
            (format!("{lm}embedding_density = 0.0\n"), "(0, 1]"),
            (format!("{lm}embedding_density = 1.2\n"), "(0, 1]"),
            (
                format!("{lm}embedding_density = 0.1\n").replace("\"lm\"", "\"resnet50\""),
                "no embedding tables",
            ),
            (
                "[cluster]\nnodes = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\nembedding_density = 0.1\n[[model.layers]]\nparams = 10\nforward = \"1ms\"\nbackward = \"1ms\"\n".to_string(),
                "its own `density`",
            ),
        ] {
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("model.embedding_density"), "{e}");
            assert!(e.message.contains(what), "{e}");
            let line = text
                .lines()
                .position(|l| l.starts_with("embedding_density"))
                .map(|i| i + 1);
            assert_eq!(e.line, line, "{e}");
        }
    }

    /// `model.embedding_placement` puts a preset's tables in host memory,
    /// and `placement` in `[model.layers.embedding]` one table; "gpu" is
    /// the default. Refused, each on its line: an unknown placement (with
    /// a suggestion), the model-level key for a preset without tables or
    /// for a custom model, and `allgather_staging` where every table is in
    /// host memory already.
    #[test]
    fn embedding_placement_puts_tables_in_host_memory() {
        use crate::workload::TablePlacement;
        let lm = "[cluster]\nnodes = 2\ngpus_per_node = 2\nnetwork = \"ib-edr-100g\"\n[model]\npreset = \"lm\"\nbatch_per_gpu = 128\ngpu = \"rtx2080\"\n";
        let placements = |text: &str| {
            load_str(text, "f.toml", "f").unwrap()[0]
                .config
                .model
                .layers
                .iter()
                .filter_map(|l| l.embedding.as_ref().map(|e| e.placement))
                .collect::<Vec<_>>()
        };
        assert_eq!(placements(lm), [TablePlacement::Gpu; 2]);
        let host = format!("{lm}embedding_placement = \"host\"\n");
        assert_eq!(placements(&host), [TablePlacement::Host; 2]);
        let custom = "[cluster]\nnodes = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\n[[model.layers]]\nparams = 10\nforward = \"1ms\"\nbackward = \"1ms\"\n[model.layers.embedding]\nvocab = 1000\ndim = 16\ndensity = 0.01\n";
        assert_eq!(placements(custom), [TablePlacement::Gpu]);
        assert_eq!(
            placements(&format!("{custom}placement = \"host\"\n")),
            [TablePlacement::Host]
        );
        for (text, key, what, starts) in [
            (
                format!("{lm}embedding_placement = \"hots\"\n"),
                "model.embedding_placement",
                "unknown table placement `hots` (did you mean `host`?); known: gpu, host",
                "embedding_placement",
            ),
            (
                format!("{lm}embedding_placement = \"host\"\n")
                    .replace("\"lm\"", "\"resnet50\"")
                    .replace("rtx2080", "v100"),
                "model.embedding_placement",
                "no embedding tables",
                "embedding_placement",
            ),
            (
                custom.replace(
                    "batch_per_gpu = 8\n",
                    "batch_per_gpu = 8\nembedding_placement = \"host\"\n",
                ),
                "model.embedding_placement",
                "`placement` in `[model.layers.embedding]`",
                "embedding_placement",
            ),
            (
                format!("{custom}placement = \"cpu\"\n"),
                "model.layers[0].embedding.placement",
                "unknown table placement `cpu`",
                "placement",
            ),
            (
                format!("{host}[strategy]\nsparse = \"allgather\"\nallgather_staging = \"host\"\n"),
                "strategy.allgather_staging",
                "every embedding table is in host memory",
                "allgather_staging",
            ),
        ] {
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert!(e.message.contains(what), "{e}");
            let line = text
                .lines()
                .position(|l| l.starts_with(starts))
                .map(|i| i + 1);
            assert_eq!(e.line, line, "{e}");
        }
        // a sparse PS's servers hold the tables: host memory is warned of
        // as changing nothing (on several GPUs; on one the process still
        // looks its tables up), at `strategy.sparse`'s line
        let ps = format!("{host}[strategy]\nsparse = \"ps\"\n");
        let w = warned(&ps);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key.as_deref(), Some("strategy.sparse"));
        assert!(w[0].message.contains("change nothing here"), "{}", w[0]);
        assert_eq!(w[0].line, Some(ps.lines().count()));
        assert!(warned(&format!("{lm}[strategy]\nsparse = \"ps\"\n")).is_empty());
        assert!(warned(&format!("{host}[strategy]\nsparse = \"alltoall\"\n")).is_empty());
        let one_gpu = ps.replace(
            "nodes = 2\ngpus_per_node = 2",
            "nodes = 1\ngpus_per_node = 1",
        );
        assert!(warned(&one_gpu).is_empty());
    }

    /// `model.embedding_zipf` puts a preset's tables under the token model,
    /// each drawing batch × its tokens per sample (+ the LM softmax's 8,192
    /// sampled classes) per GPU and iteration; it is refused when not > 0,
    /// beside `embedding_density`, for a preset without tables, for a
    /// custom model, and when the run would draw too many words, each on
    /// its line.
    #[test]
    fn embedding_zipf_puts_a_presets_tables_under_the_token_model() {
        use crate::workload::Rows;
        let lm = "[cluster]\nnodes = 2\ngpus_per_node = 2\nnetwork = \"ib-edr-100g\"\n[model]\npreset = \"lm\"\nbatch_per_gpu = 64\ngpu = \"titan-xp\"\n";
        let p = &load_str(&format!("{lm}embedding_zipf = 1.1\n"), "f.toml", "f").unwrap()[0];
        let rows: Vec<Rows> = p
            .config
            .model
            .layers
            .iter()
            .filter_map(|l| l.embedding.as_ref().map(|e| e.rows))
            .collect();
        // 64 sequences of 20 words; the softmax's targets and samples
        assert_eq!(
            rows,
            [
                Rows::Tokens {
                    tokens: 1280,
                    zipf: 1.1,
                    padding: 0
                },
                Rows::Tokens {
                    tokens: 1280 + 8192,
                    zipf: 1.1,
                    padding: 0
                }
            ]
        );
        let bert = format!("{lm}embedding_zipf = 1.0\n")
            .replace("\"lm\"", "\"bert_base\"")
            .replace("titan-xp", "rtx3090")
            .replace("batch_per_gpu = 64", "batch_per_gpu = 32");
        let p = &load_str(&bert, "f.toml", "f").unwrap()[0];
        // 32 sequences of 384 positions, 211.96 of each the [PAD] row
        // (SQuAD v1.1's mean of 172.04 real tokens, docs/models.md §6.2)
        assert_eq!(
            p.config.model.layers[0].embedding.as_ref().unwrap().rows,
            Rows::Tokens {
                tokens: 12_288,
                zipf: 1.0,
                padding: 6_783
            }
        );
        for (text, what) in [
            (format!("{lm}embedding_zipf = 0.0\n"), "> 0"),
            (format!("{lm}embedding_zipf = -1.0\n"), "> 0"),
            (
                format!("{lm}embedding_zipf = 1.0\nembedding_density = 0.1\n"),
                "not both",
            ),
            (
                format!("{lm}embedding_zipf = 1.0\n").replace("\"lm\"", "\"resnet50\""),
                "no embedding tables",
            ),
            (
                "[cluster]\nnodes = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\nembedding_zipf = 1.0\n[[model.layers]]\nparams = 10\nforward = \"1ms\"\nbackward = \"1ms\"\n".to_string(),
                "`tokens_per_batch` and `zipf`",
            ),
            (
                format!("iterations = 200000\n{lm}embedding_zipf = 1.0\n"),
                "would draw",
            ),
        ] {
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some("model.embedding_zipf"), "{e}");
            assert!(e.message.contains(what), "{e}");
            let line = text
                .lines()
                .position(|l| l.starts_with("embedding_zipf"))
                .map(|i| i + 1);
            assert_eq!(e.line, line, "{e}");
        }
        // the figures quoted multiply to the total: both tables' tokens
        let e = err(&format!("iterations = 200000\n{lm}embedding_zipf = 1.0\n"));
        let (per_gpu, gpus, iterations) = (1280 + 9472, 4, 200_000u64 + 2);
        assert!(
            e.message.contains(&format!(
                "would draw {} tokens in this run ({per_gpu} a GPU over 2 tables, {gpus} GPUs, {iterations} iterations and the next)",
                per_gpu * gpus * (iterations + 1)
            )),
            "{e}"
        );
        // a preset's table too narrow for AlltoAll's columns: its width
        // is not in the file, so the method's line is blamed
        let wide = format!("{lm}[strategy]\nsparse = \"alltoall\"\n")
            .replace("nodes = 2", "nodes = 128")
            .replace("gpus_per_node = 2", "gpus_per_node = 8");
        let e = err(&wide);
        assert_eq!(e.key.as_deref(), Some("strategy.sparse"), "{e}");
        let line = wide
            .lines()
            .position(|l| l.starts_with("sparse ="))
            .map(|i| i + 1);
        assert_eq!(e.line, line, "{e}");
        assert!(
            e.message
                .contains("splits layer `embedding`'s table, 512 columns, over the 1024 GPUs"),
            "{e}"
        );
    }

    #[test]
    fn counts_out_of_range_say_the_range() {
        for n in ["0", "9223372036854775807"] {
            let e = err(&GOOD.replace("nodes = 2", &format!("nodes = {n}")));
            assert_eq!(e.key.as_deref(), Some("cluster.nodes"));
            assert!(e.to_string().contains("from 1 to 1048576"), "{e}");
        }
        // a count whose bound depends on the rest (servers on machines)
        // is told its least alone
        let e = err(&format!(
            "{GOOD}[strategy]\ndense = \"ps\"\nps_servers = -1\n"
        ));
        assert!(e.message.contains("at least 0, got -1"), "{e}");
    }

    /// `model.gradient_precision` defaults to fp32, halves every layer's
    /// gradient bytes in bf16 and fp16, may be swept, and an unknown
    /// format is refused with its line and the nearest name.
    #[test]
    fn gradient_precision_sets_the_bytes_per_gradient_element() {
        let p = load_str(GOOD, "f.toml", "f").unwrap();
        let m = &p[0].config.model;
        assert_eq!(m.gradient_precision, crate::workload::Precision::Fp32);
        let fp32: Vec<u64> = m.layers.iter().map(|l| m.grad_bytes(l)).collect();
        assert_eq!(fp32[0], m.layers[0].params * 4);
        let swept = format!(
            "{GOOD}
[sweep]
\"model.gradient_precision\" = [\"bf16\", \"fp16\"]
"
        );
        for pt in load_str(&swept, "f.toml", "f").unwrap() {
            let m = &pt.config.model;
            let half: Vec<u64> = m.layers.iter().map(|l| m.grad_bytes(l)).collect();
            assert_eq!(half.iter().map(|b| 2 * b).collect::<Vec<_>>(), fp32);
        }
        let e = err(&GOOD.replace(
            "gpu = \"titan-xp\"",
            "gpu = \"titan-xp\"\ngradient_precision = \"fp61\"",
        ));
        assert_eq!(e.key.as_deref(), Some("model.gradient_precision"));
        assert_eq!(e.line, Some(11));
        assert!(
            e.message
                .contains("unknown gradient precision `fp61` (did you mean `fp16`?)"),
            "{e}"
        );
    }

    /// Every loss besides bytes defaults to the typical cluster's (but
    /// stragglers, off unless set), to none with `ideal = true`, and its
    /// own key wins over both; `ideal` may be swept; impossible values are
    /// refused on their key and line.
    #[test]
    fn losses_default_to_a_typical_cluster_or_to_none() {
        use crate::losses::{
            TYPICAL_COMPUTE_JITTER, TYPICAL_MESSAGE_OVERHEAD_S, TYPICAL_NIC_EFFICIENCY,
        };
        let of = |text: &str| {
            let p = load_str(text, "f.toml", "f").unwrap();
            let c = &p[0].config;
            (
                c.model.compute_jitter,
                c.strategy.message_overhead_s,
                c.cluster.nic_efficiency,
                c.cluster.inter.bandwidth,
            )
        };
        let edr = crate::cluster::presets::inter_node("ib-edr-100g")
            .unwrap()
            .bandwidth_bytes_per_s;
        assert_eq!(
            of(GOOD),
            (
                TYPICAL_COMPUTE_JITTER,
                TYPICAL_MESSAGE_OVERHEAD_S,
                TYPICAL_NIC_EFFICIENCY,
                edr * TYPICAL_NIC_EFFICIENCY
            )
        );
        let ideal = format!("ideal = true\n{GOOD}");
        assert_eq!(of(&ideal), (0.0, 0.0, 1.0, edr));
        assert_eq!(of(&format!("ideal = false\n{GOOD}")), of(GOOD));
        // each key wins over `ideal`
        let keyed = ideal
            .replace("[cluster]\n", "[cluster]\nnic_efficiency = 0.8\n")
            .replace("gpu = \"titan-xp\"", "gpu = \"titan-xp\"\ncompute_jitter = 0.02\n[strategy]\nmessage_overhead = \"25us\"");
        let (j, o, e, b) = of(&keyed);
        assert_eq!((j, e), (0.02, 0.8));
        assert!((o - 25e-6).abs() < 1e-18 && (b - 0.8 * edr).abs() < 1e-6 * edr);
        // `ideal` swept: both points
        let swept = format!("{GOOD}\n[sweep]\nideal = [true, false]\n");
        let p = load_str(&swept, "f.toml", "f").unwrap();
        let o: Vec<f64> = p
            .iter()
            .map(|p| p.config.strategy.message_overhead_s)
            .collect();
        assert_eq!(o, [0.0, TYPICAL_MESSAGE_OVERHEAD_S]);
        // impossible values, on their key and line
        for (table, line, key) in [
            (
                "[cluster]\nnic_efficiency = 0\n",
                4,
                "cluster.nic_efficiency",
            ),
            (
                "[cluster]\nnic_efficiency = 1.5\n",
                4,
                "cluster.nic_efficiency",
            ),
            (
                "[cluster]\nnic_efficiency = nan\n",
                4,
                "cluster.nic_efficiency",
            ),
        ] {
            let e = err(&GOOD.replace("[cluster]\n", table));
            assert_eq!(e.key.as_deref(), Some(key), "{table}: {e}");
            assert_eq!(e.line, Some(line), "{table}: {e}");
            assert!(e.message.contains("(0, 1]"), "{e}");
        }
        for v in ["-1us", "fast", "20s"] {
            let e = err(&format!("{GOOD}[strategy]\nmessage_overhead = \"{v}\"\n"));
            assert_eq!(
                e.key.as_deref(),
                Some("strategy.message_overhead"),
                "{v}: {e}"
            );
            assert_eq!(e.line, Some(12), "{v}: {e}");
        }
        let e = err(&format!("ideal = 1\n{GOOD}"));
        assert!(e.to_string().contains("ideal"), "{e}");
    }

    /// `model.compute_jitter` defaults to 0 (stragglers on only where
    /// asked, `sim::losses::Losses::defaults`), is kept for presets and
    /// custom layers alike, may be swept, and is refused outside [0, 1].
    #[test]
    fn compute_jitter_is_a_coefficient_of_variation() {
        let p = load_str(GOOD, "f.toml", "f").unwrap();
        assert_eq!(
            p[0].config.model.compute_jitter,
            crate::losses::TYPICAL_COMPUTE_JITTER
        );
        let p = load_str(
            &format!(
                "ideal = true
{GOOD}"
            ),
            "f.toml",
            "f",
        )
        .unwrap();
        assert_eq!(p[0].config.model.compute_jitter, 0.0);
        let with = |v: &str| {
            GOOD.replace(
                "gpu = \"titan-xp\"",
                &format!("gpu = \"titan-xp\"\ncompute_jitter = {v}"),
            )
        };
        for (v, want) in [("0", 0.0), ("0.05", 0.05), ("1.0", 1.0)] {
            let p = load_str(&with(v), "f.toml", "f").unwrap();
            assert_eq!(p[0].config.model.compute_jitter, want, "{v}");
        }
        let layers = "[cluster]\nnodes = 2\nnetwork = \"eth-10g\"\n[model]\nbatch_per_gpu = 1\ncompute_jitter = 0.2\n[[model.layers]]\nparams = 10\nforward = \"1ms\"\nbackward = \"2ms\"\n";
        let p = load_str(layers, "f.toml", "f").unwrap();
        assert_eq!(p[0].config.model.compute_jitter, 0.2);
        let swept = format!("{GOOD}\n[sweep]\n\"model.compute_jitter\" = [0, 0.1]\n");
        let p = load_str(&swept, "f.toml", "f").unwrap();
        let got: Vec<f64> = p.iter().map(|p| p.config.model.compute_jitter).collect();
        assert_eq!(got, [0.0, 0.1]);
        for (v, says) in [
            ("1.5", "more than 1.0"),
            ("-0.1", "≥ 0"),
            ("nan", "≥ 0"),
            ("inf", "≥ 0"),
        ] {
            let e = err(&with(v));
            assert_eq!(e.key.as_deref(), Some("model.compute_jitter"), "{v}: {e}");
            assert_eq!(e.line, Some(11), "{v}: {e}");
            assert!(e.message.contains(says), "{v}: {e}");
        }
    }

    #[test]
    fn network_from_a_calibration_profile() {
        let dir = std::env::temp_dir().join(format!("dtsim-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("net.toml"),
            "[provenance]\ntool = \"t\"\n[network]\nlatency_s = 2e-6\nbandwidth_bps = 3e9\nderived_from = \"x\"\n",
        )
        .unwrap();
        let text = GOOD.replace("\"ib-edr-100g\"", "\"net.toml\"");
        let p = load_str_in(&text, "f.toml", "f", Some(&dir)).unwrap();
        assert_eq!(p[0].config.cluster.inter.bandwidth, 3e9);
        assert_eq!(p[0].config.cluster.inter.latency, 2e-6);
        assert_eq!(p[0].config.cluster.network, "net.toml");
        let load = |file: &str| {
            load_str_in(&text.replace("net.toml", file), "f.toml", "f", Some(&dir)).unwrap_err()
        };
        let e = load("missing.toml");
        assert_eq!(e.key.as_deref(), Some("cluster.network"));
        assert!(e.message.contains("cannot read"), "{e}");
        let bad = |file: &str, body: &str, says: &[&str]| {
            std::fs::write(dir.join(file), body).unwrap();
            let e = load(file);
            assert_eq!(e.key.as_deref(), Some("cluster.network"), "{e}");
            for s in says {
                assert!(e.message.contains(s), "`{s}` missing from: {e}");
            }
        };
        bad(
            "bad.toml",
            "[network]\nlatency_s = 2e-6\n",
            &["bad.toml", "bandwidth_bps"],
        );
        bad(
            "nonet.toml",
            "[provenance]\ntool = \"t\"\n",
            &["nonet.toml", "no [network] table"],
        );
        bad(
            "slow.toml",
            "[network]\nlatency_s = 2e-6\nbandwidth_bps = 1\n",
            &["slow.toml", "bandwidth 1e0 B/s is outside"],
        );
        bad(
            "typo.toml",
            "[network]\nlatency_s = 2e-6\nbandwidth_bps = 3e9\nbandwith = 1\n",
            &["typo.toml", "line 4", "bandwith"],
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// DESIGN: "a calibration profile can replace any preset": `intra`
    /// takes one too (since 2026-11-29): its `[network]` link is the GPUs'
    /// fabric inside a node (latency GPU to GPU, bandwidth a GPU's), taken
    /// for a fabric of its own as NVLink is, so the GPUs reach their NICs
    /// over the NICs' PCIe generation unless `nic_link` says otherwise;
    /// `intra_bandwidth` overrides it as a preset's. A bad profile is
    /// refused on `cluster.intra`.
    #[test]
    fn intra_node_fabric_from_a_calibration_profile() {
        let dir = std::env::temp_dir().join(format!("dtsim-intra-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("node.toml"),
            "[provenance]\ntool = \"t\"\n[network]\nlatency_s = 3e-6\nbandwidth_bps = 2e11\nderived_from = \"x\"\n",
        )
        .unwrap();
        let text = GOOD.replace(
            "network = \"ib-edr-100g\"",
            "network = \"ib-edr-100g\"\nintra = \"node.toml\"",
        );
        let p = load_str_in(&text, "f.toml", "f", Some(&dir)).unwrap();
        let c = &p[0].config.cluster;
        assert_eq!((c.intra.bandwidth, c.intra.latency), (2e11, 3e-6));
        assert_eq!(c.intra_name, "node.toml");
        assert_eq!(c.nic_link.as_ref().unwrap().name, "pcie3-x16");
        // the network's own latency, not end to end: only a network
        // profile's is
        assert!(!c.measured_end_to_end);
        let over = text.replace(
            "intra = \"node.toml\"",
            "intra = \"node.toml\"\nintra_bandwidth = \"100GB/s\"\nnic_link = \"pcie4-x16\"",
        );
        let p = load_str_in(&over, "f.toml", "f", Some(&dir)).unwrap();
        let c = &p[0].config.cluster;
        assert_eq!((c.intra.bandwidth, c.intra.latency), (1e11, 3e-6));
        assert_eq!(c.intra_name, "node.toml*");
        assert_eq!(c.nic_link.as_ref().unwrap().name, "pcie4-x16");
        let e = load_str_in(
            &text.replace("node.toml", "missing.toml"),
            "f.toml",
            "f",
            Some(&dir),
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("cluster.intra"), "{e}");
        assert!(e.message.contains("cannot read calibration profile"), "{e}");
        let e = load_str_in(
            &text.replace("node.toml", "nvlnk4"),
            "f.toml",
            "f",
            Some(&dir),
        )
        .unwrap_err();
        assert!(
            e.message.contains("nvlink4")
                && e.message.contains("or the path of a calibration profile"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Priority with messages whose latency outweighs their transfer is
    /// warned about (located at the partition), not refused; the defaults
    /// (4 MiB pieces fused up to 64 MiB) and FIFO are not.
    #[test]
    fn tiny_priority_messages_are_warned_about() {
        let vgg = |strategy: &str| {
            format!(
                "[cluster]\nnodes = 4\ngpus_per_node = 4\nnetwork = \"eth-25g\"\n[model]\npreset = \"vgg16\"\nbatch_per_gpu = 32\ngpu = \"titan-xp\"\n[strategy]\n{strategy}\n"
            )
        };
        let w = warned(&vgg(
            "schedule = \"priority\"\nfusion = 0\npartition = \"64KiB\"",
        ));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            (w[0].line, w[0].key.as_deref()),
            (Some(12), Some("strategy.partition"))
        );
        // the ring's latency 2(N−1)·α and its transfer of 64 KiB, from the
        // cost model the warning cites
        assert!(
            w[0].message
                .starts_with("priority scheduling sends messages of at most 64.0 KiB here"),
            "{}",
            w[0]
        );
        assert!(
            w[0].message.contains("may run slower than FIFO"),
            "{}",
            w[0]
        );
        for quiet in [
            "schedule = \"priority\"",
            "schedule = \"priority\"\nfusion = 0\npartition = \"16MiB\"",
            "schedule = \"fifo\"\nfusion = 0",
        ] {
            assert!(warned(&vgg(quiet)).is_empty(), "{quiet}");
        }
        assert!(warned(GOOD).is_empty());
    }
}
