//! Scenario files: TOML in, validated [`TrainConfig`]s out.
//!
//! Two stages, as `shared/DESIGN.md` asks:
//! 1. [`raw`]: serde reads the form — unknown keys and wrong types are
//!    errors with the line and column toml reports;
//! 2. [`validate`]: meaning — presets resolved, units parsed, impossible
//!    values refused; each error names its key, and the key's line is found
//!    in the source.
//!
//! A `[sweep]` table maps dotted keys to lists; the scenario becomes the
//! grid of every combination, keys in sorted order, the last key varying
//! fastest. Every error message reads `FILE:LINE: KEY: what is wrong`.

pub mod raw;

use crate::cluster::{ClusterSpec, LinkParams, Placement, presets};
use crate::collective::Algo;
use crate::limits;
use crate::net::NetModel;
use crate::strategy::{DenseMethod, Schedule, Strategy};
use crate::train::TrainConfig;
use crate::units::{parse_bandwidth, parse_bytes, parse_duration, parse_seconds};
use crate::workload::{Layer, Model};
use raw::{IntOrText, RawScenario};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A scenario problem, located in its file.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The dotted key, when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": ")?;
        if let Some(k) = &self.key {
            write!(f, "`{k}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// One point of a scenario's grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The configuration to simulate.
    pub config: TrainConfig,
    /// The swept keys and their values at this point (empty without a sweep).
    pub sweep: BTreeMap<String, toml::Value>,
}

/// A semantic error before it is located: (dotted key, message).
type Invalid = (String, String);

fn invalid(key: &str, msg: impl Into<String>) -> Invalid {
    (key.to_string(), msg.into())
}

/// Reads and validates a scenario file into its grid of points.
///
/// Every point is held in memory; a sweep of very many points should use
/// [`open_file`] and take the points one at a time.
pub fn load_file(path: &Path) -> Result<Vec<Point>, ScenarioError> {
    open_file(path)?.points()
}

/// Validates scenario text; `file` names it in errors, `stem` is the
/// default scenario name.
pub fn load_str(text: &str, file: &str, stem: &str) -> Result<Vec<Point>, ScenarioError> {
    load_str_in(text, file, stem, None)
}

/// As [`load_str`], resolving relative profile paths in `cluster.network`
/// against `dir` (the scenario's directory; the working directory if
/// `None`).
pub fn load_str_in(
    text: &str,
    file: &str,
    stem: &str,
    dir: Option<&Path>,
) -> Result<Vec<Point>, ScenarioError> {
    open_str_in(text, file, stem, dir)?.points()
}

/// Reads a scenario file into its [`Grid`], checking its form but not yet
/// the meaning of each point (see [`Grid::check`]).
pub fn open_file(path: &Path) -> Result<Grid, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: None,
        key: None,
        message: format!("cannot read the scenario: {e}"),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    open_str_in(&text, &file, &stem, path.parent())
}

/// Reads scenario text into its [`Grid`] (see [`load_str_in`] for the
/// arguments).
pub fn open_str_in(
    text: &str,
    file: &str,
    stem: &str,
    dir: Option<&Path>,
) -> Result<Grid, ScenarioError> {
    let lines = KeyLines::scan(text);
    let base: RawScenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        ScenarioError {
            file: file.into(),
            line,
            key: None,
            message: e.message().trim().to_string(),
        }
    })?;
    let mut grid = Grid {
        file: file.into(),
        stem: stem.into(),
        dir: dir.map(Path::to_path_buf),
        lines,
        keys: base.sweep.keys().cloned().collect(),
        values: base.sweep.values().cloned().collect(),
        len: 1,
        base_table: toml::Table::new(),
        base,
    };
    for (k, v) in grid.keys.iter().zip(&grid.values) {
        if v.is_empty() {
            return Err(grid.locate(invalid(k, "a sweep needs at least one value"), true));
        }
    }
    let mut len: usize = 1;
    for (k, v) in grid.keys.iter().zip(&grid.values) {
        len = len
            .checked_mul(v.len())
            .filter(|&n| n as u64 <= limits::MAX_SWEEP_POINTS)
            .ok_or_else(|| {
                grid.locate(
                    invalid(
                        k,
                        format!(
                            "the sweep grid has more than {} points; split it into several scenarios",
                            limits::MAX_SWEEP_POINTS
                        ),
                    ),
                    true,
                )
            })?;
    }
    grid.len = len;
    if !grid.keys.is_empty() {
        let mut t = toml::Table::try_from(&grid.base).expect("raw scenarios serialise");
        t.remove("sweep");
        grid.base_table = t;
    }
    Ok(grid)
}

/// A scenario's grid of points, produced one at a time.
///
/// A `[sweep]` of k keys with n₁ … n_k values has n₁·…·n_k points; point i
/// is the mixed-radix decomposition of i over the keys in sorted order, the
/// last key varying fastest. Building point i costs one validation of one
/// scenario, so a sweep never needs to hold the whole grid.
#[derive(Debug, Clone)]
pub struct Grid {
    file: String,
    stem: String,
    dir: Option<std::path::PathBuf>,
    lines: KeyLines,
    base: RawScenario,
    /// The scenario without its `[sweep]`, as a table to set keys in.
    base_table: toml::Table,
    keys: Vec<String>,
    values: Vec<Vec<toml::Value>>,
    len: usize,
}

impl Grid {
    /// Points in the grid (1 without a sweep).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a grid has at least one point.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The swept keys, sorted.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The values a swept key takes (in the order of the file).
    pub fn values(&self, key: &str) -> Option<&[toml::Value]> {
        let i = self.keys.iter().position(|k| k == key)?;
        Some(&self.values[i])
    }

    /// The swept keys and their values at point `i`.
    ///
    /// # Panics
    /// If `i` is not below [`Grid::len`].
    pub fn swept(&self, i: usize) -> BTreeMap<String, toml::Value> {
        assert!(i < self.len, "point {i} of a grid of {}", self.len);
        let mut rem = i;
        let mut out = BTreeMap::new();
        for (k, v) in self.keys.iter().zip(&self.values).rev() {
            out.insert(k.clone(), v[rem % v.len()].clone());
            rem /= v.len();
        }
        out
    }

    fn locate(&self, (key, message): Invalid, swept: bool) -> ScenarioError {
        ScenarioError {
            file: self.file.clone(),
            line: if swept {
                self.lines.get(&format!("sweep.{key}"))
            } else {
                self.lines.get(&key)
            },
            key: Some(key),
            message,
        }
    }

    /// Validates and returns point `i`.
    ///
    /// # Panics
    /// If `i` is not below [`Grid::len`].
    pub fn point(&self, i: usize) -> Result<Point, ScenarioError> {
        let dir = self.dir.as_deref();
        if self.keys.is_empty() {
            assert_eq!(i, 0, "a scenario without a sweep has one point");
            let cfg = validate(&self.base, &self.stem, dir).map_err(|e| self.locate(e, false))?;
            return Ok(Point {
                config: cfg,
                sweep: BTreeMap::new(),
            });
        }
        let sweep = self.swept(i);
        let mut table = self.base_table.clone();
        for (k, v) in &sweep {
            set_path(&mut table, k, v.clone()).map_err(|m| self.locate(invalid(k, m), true))?;
        }
        let raw: RawScenario =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    // the key the message names, else the one whose value
                    // alone does not fit (found again, on this error path only)
                    let fits_alone = |k: &String| {
                        let mut t = self.base_table.clone();
                        set_path(&mut t, k, sweep[k].clone()).is_ok()
                            && toml::Value::Table(t).try_into::<RawScenario>().is_ok()
                    };
                    let key = self
                        .keys
                        .iter()
                        .find(|k| e.message().contains(k.rsplit('.').next().unwrap_or(k)))
                        .or_else(|| self.keys.iter().find(|k| !fits_alone(k)))
                        .unwrap_or(&self.keys[0]);
                    self.locate(
                        invalid(
                            key,
                            format!("swept value does not fit: {}", e.message().trim()),
                        ),
                        true,
                    )
                })?;
        let cfg = validate(&raw, &self.stem, dir).map_err(|(k, m)| {
            let swept = sweep.contains_key(&k);
            self.locate((k, m), swept)
        })?;
        Ok(Point { config: cfg, sweep })
    }

    /// Every point, in order, held in memory.
    pub fn points(&self) -> Result<Vec<Point>, ScenarioError> {
        (0..self.len).map(|i| self.point(i)).collect()
    }

    /// Validates every point without keeping any, so that a bad value is
    /// reported before a long run starts.
    pub fn check(&self) -> Result<(), ScenarioError> {
        (0..self.len).try_for_each(|i| self.point(i).map(drop))
    }
}

/// Sets a dotted key in a TOML table, creating tables on the way.
fn set_path(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().ok_or("empty key")?;
    let mut t = table;
    for p in parts {
        t = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` is not a table, so `{key}` cannot be swept"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Lines of the keys and tables of a TOML file, by dotted path
/// (`cluster.nodes`, `model.layers[2].params`, `sweep.cluster.nodes`).
///
/// A light scan that understands table headers, arrays of tables and
/// `key = value` lines, which is how scenario files are written; keys it
/// cannot place fall back to their table's header line.
#[derive(Debug, Clone)]
struct KeyLines(BTreeMap<String, usize>);

impl KeyLines {
    fn scan(text: &str) -> KeyLines {
        let mut map = BTreeMap::new();
        let mut table = String::new();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if let Some(h) = line.strip_prefix("[[") {
                let name = h.split("]]").next().unwrap_or("").trim().to_string();
                let c = counts.entry(name.clone()).or_insert(0);
                // nested arrays of tables are not used by scenarios
                table = format!("{name}[{c}]");
                *c += 1;
                map.entry(table.clone()).or_insert(i + 1);
            } else if let Some(h) = line.strip_prefix('[') {
                let name = h.split(']').next().unwrap_or("").trim();
                // [model.layers.embedding] belongs to the latest layer
                table = match counts
                    .iter()
                    .find(|(k, _)| name.starts_with(&format!("{k}.")))
                {
                    Some((k, c)) => format!("{k}[{}]{}", c - 1, &name[k.len()..]),
                    None => name.to_string(),
                };
                map.entry(table.clone()).or_insert(i + 1);
            } else if let Some((k, _)) = line.split_once('=') {
                let k = k.trim().trim_matches('"').trim_matches('\'');
                if k.is_empty() || k.starts_with('#') {
                    continue;
                }
                let full = if table.is_empty() {
                    k.to_string()
                } else {
                    format!("{table}.{k}")
                };
                map.entry(full).or_insert(i + 1);
            }
        }
        KeyLines(map)
    }

    /// The line of `key`, or of the nearest enclosing table that appears.
    fn get(&self, key: &str) -> Option<usize> {
        let mut k = key;
        loop {
            if let Some(&l) = self.0.get(k) {
                return Some(l);
            }
            match k.rfind(['.', '[']) {
                Some(i) => k = &k[..i],
                None => return None,
            }
        }
    }
}

fn need<T: Clone>(v: &Option<T>, key: &str) -> Result<T, Invalid> {
    v.clone()
        .ok_or_else(|| invalid(key, "is required but missing"))
}

fn count(v: Option<i64>, key: &str, default: Option<i64>, min: i64) -> Result<u32, Invalid> {
    let v = match (v, default) {
        (Some(v), _) => v,
        (None, Some(d)) => d,
        (None, None) => return Err(invalid(key, "is required but missing")),
    };
    if v < min || v > u32::MAX as i64 {
        return Err(invalid(
            key,
            format!("must be an integer from {min} to {}, got {v}", u32::MAX),
        ));
    }
    Ok(v as u32)
}

fn iterations(v: Option<i64>, key: &str, default: i64, min: i64) -> Result<u32, Invalid> {
    let n = count(v, key, Some(default), min)?;
    if n as u64 > limits::MAX_ITERATIONS {
        return Err(invalid(
            key,
            format!(
                "{n} is more than the {} dtsim simulates",
                limits::MAX_ITERATIONS
            ),
        ));
    }
    Ok(n)
}

fn size(v: &Option<IntOrText>, key: &str, default: u64) -> Result<u64, Invalid> {
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

fn fraction(v: Option<f64>, key: &str, lo_open: bool, hi_open: bool) -> Result<(), Invalid> {
    if let Some(x) = v {
        let lo_ok = if lo_open { x > 0.0 } else { x >= 0.0 };
        let hi_ok = if hi_open { x < 1.0 } else { x <= 1.0 };
        if !(lo_ok && hi_ok && x.is_finite()) {
            let (a, b) = (
                if lo_open { "(" } else { "[" },
                if hi_open { ")" } else { "]" },
            );
            return Err(invalid(key, format!("must be in {a}0, 1{b}, got {x}")));
        }
    }
    Ok(())
}

/// Link parameters from a calibration profile's `[network]` table
/// (written by `dtsim calibrate`): (latency s, bandwidth B/s).
fn profile_network(path: &Path) -> Result<(f64, f64), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read calibration profile {}: {e}", path.display()))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        format!(
            "calibration profile {}: {}",
            path.display(),
            e.message().trim()
        )
    })?;
    let net = table
        .get("network")
        .and_then(|v| v.as_table())
        .ok_or_else(|| {
            format!(
                "calibration profile {} has no [network] table",
                path.display()
            )
        })?;
    let num = |k: &str| {
        net.get(k)
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
            .ok_or_else(|| {
                format!(
                    "calibration profile {}: [network] needs a number `{k}`",
                    path.display()
                )
            })
    };
    let (lat, bw) = (num("latency_s")?, num("bandwidth_bps")?);
    limits::check_latency(lat)
        .map_err(|m| format!("calibration profile {}: {m}", path.display()))?;
    limits::check_bandwidth(bw)
        .map_err(|m| format!("calibration profile {}: {m}", path.display()))?;
    Ok((lat, bw))
}

/// Checks meaning and builds the configuration; a relative profile path in
/// `cluster.network` is resolved against `dir`.
pub fn validate(raw: &RawScenario, stem: &str, dir: Option<&Path>) -> Result<TrainConfig, Invalid> {
    let c = &raw.cluster;
    let nodes = count(c.nodes, "cluster.nodes", None, 1)?;
    let gpn = count(c.gpus_per_node, "cluster.gpus_per_node", Some(1), 1)?;
    limits::check_gpus(nodes as u64, gpn as u64)
        .map_err(|m| invalid("cluster.gpus_per_node", m))?;
    let nics = count(c.nics_per_node, "cluster.nics_per_node", Some(1), 1)?;
    if nics > gpn.max(64) {
        return Err(invalid(
            "cluster.nics_per_node",
            format!("{nics} NICs per node is more than max(GPUs per node, 64)"),
        ));
    }
    let network = need(&c.network, "cluster.network")?;
    let inter = if network.ends_with(".toml") {
        let path = match dir {
            Some(d) if Path::new(&network).is_relative() => d.join(&network),
            _ => Path::new(&network).to_path_buf(),
        };
        let (latency_s, bandwidth) =
            profile_network(&path).map_err(|m| invalid("cluster.network", m))?;
        presets::LinkPreset {
            name: "profile",
            bandwidth_bytes_per_s: bandwidth,
            latency_s,
            source: "calibration profile",
        }
    } else {
        *presets::inter_node(&network).ok_or_else(|| {
            let known: Vec<_> = presets::INTER_NODE.iter().map(|p| p.name).collect();
            invalid(
                "cluster.network",
                format!(
                    "unknown network `{network}`; known: {}, or the path of a calibration profile (.toml)",
                    known.join(", ")
                ),
            )
        })?
    };
    let intra_name = c.intra.clone().unwrap_or_else(|| "pcie3-x16".into());
    let intra = presets::intra_node(&intra_name).ok_or_else(|| {
        let known: Vec<_> = presets::INTRA_NODE.iter().map(|p| p.name).collect();
        invalid(
            "cluster.intra",
            format!(
                "unknown intra-node link `{intra_name}`; known: {}",
                known.join(", ")
            ),
        )
    })?;
    let bw = |v: &Option<String>, key: &str, d: f64| match v {
        None => Ok::<f64, Invalid>(d),
        Some(t) => {
            let b = parse_bandwidth(t).map_err(|e| invalid(key, e.to_string()))?;
            limits::check_bandwidth(b).map_err(|m| invalid(key, m))?;
            Ok(b)
        }
    };
    let lat = |v: &Option<String>, key: &str, d: f64| match v {
        None => Ok::<f64, Invalid>(d),
        Some(t) => {
            let l = parse_seconds(t).map_err(|e| invalid(key, e.to_string()))?;
            limits::check_latency(l).map_err(|m| invalid(key, m))?;
            Ok(l)
        }
    };
    let over = c.oversubscription.unwrap_or(1.0);
    limits::check_oversubscription(over).map_err(|m| invalid("cluster.oversubscription", m))?;
    let net_model = match c.model.as_deref().unwrap_or("flow") {
        "flow" => NetModel::Flow,
        "analytical" => NetModel::Analytical,
        other => {
            return Err(invalid(
                "cluster.model",
                format!("unknown network model `{other}`; expected flow or analytical"),
            ));
        }
    };
    let placement = match c.placement.as_deref().unwrap_or("contiguous") {
        "contiguous" => Placement::Contiguous,
        "scattered" => Placement::Scattered,
        other => {
            return Err(invalid(
                "cluster.placement",
                format!("unknown placement `{other}`; expected contiguous or scattered"),
            ));
        }
    };
    let custom = |name: &str, overridden: bool| {
        if overridden {
            format!("{name}*")
        } else {
            name.to_string()
        }
    };
    let cluster = ClusterSpec {
        nodes,
        gpus_per_node: gpn,
        network: custom(&network, c.bandwidth.is_some() || c.latency.is_some()),
        inter: LinkParams {
            bandwidth: bw(
                &c.bandwidth,
                "cluster.bandwidth",
                inter.bandwidth_bytes_per_s,
            )?,
            latency: lat(&c.latency, "cluster.latency", inter.latency_s)?,
        },
        intra_name: custom(
            &intra_name,
            c.intra_bandwidth.is_some() || c.intra_latency.is_some(),
        ),
        intra: LinkParams {
            bandwidth: bw(
                &c.intra_bandwidth,
                "cluster.intra_bandwidth",
                intra.bandwidth_bytes_per_s,
            )?,
            latency: lat(&c.intra_latency, "cluster.intra_latency", intra.latency_s)?,
        },
        nics_per_node: nics,
        oversubscription: over,
        placement,
    };

    let model = validate_model(raw)?;
    let strategy = validate_strategy(raw, nodes)?;
    if strategy.schedule == Schedule::Priority && strategy.partition > 0 {
        for l in &model.layers {
            let pieces = l.grad_bytes().div_ceil(strategy.partition);
            if pieces > limits::MAX_PIECES_PER_TENSOR {
                return Err(invalid(
                    "strategy.partition",
                    format!(
                        "cuts layer `{}` ({} bytes) into {pieces} pieces, more than {}; use a larger partition",
                        l.name,
                        l.grad_bytes(),
                        limits::MAX_PIECES_PER_TENSOR
                    ),
                ));
            }
        }
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
        warmup_iterations: iterations(raw.warmup_iterations, "warmup_iterations", 2, 0)?,
        iterations: iterations(raw.iterations, "iterations", 10, 1)?,
        cluster,
        net_model,
        model,
        strategy,
    })
}

fn validate_model(raw: &RawScenario) -> Result<Model, Invalid> {
    let m = &raw.model;
    let batch = count(m.batch_per_gpu, "model.batch_per_gpu", None, 1)?;
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
            Model::from_preset(p, &gpu, batch).map_err(|e| {
                let key = match e {
                    crate::workload::PresetError::UnknownModel(..) => "model.preset",
                    _ => "model.gpu",
                };
                invalid(key, e.to_string())
            })
        }
        (None, false) => {
            let mut layers = Vec::with_capacity(m.layers.len());
            for (i, l) in m.layers.iter().enumerate() {
                let k = |f: &str| format!("model.layers[{i}].{f}");
                if l.embedding.is_some() {
                    return Err(invalid(
                        &k("embedding"),
                        "sparse embeddings are not supported yet (they arrive with the sparse-methods issue)",
                    ));
                }
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
                layers.push(Layer {
                    name: l.name.clone().unwrap_or_else(|| format!("layer{i}")),
                    params: params as u64,
                    forward: time(&l.forward, "forward")?,
                    backward: time(&l.backward, "backward")?,
                    activation_bytes: size(&l.activation_bytes, &k("activation_bytes"), 0)?,
                });
            }
            if layers.iter().all(|l| l.forward.0 == 0 && l.backward.0 == 0) {
                return Err(invalid(
                    "model.layers",
                    "at least one layer needs a non-zero compute time",
                ));
            }
            Ok(Model {
                name: raw.name.clone().unwrap_or_else(|| "custom".into()),
                gpu: m.gpu.clone().unwrap_or_else(|| "custom".into()),
                batch_per_gpu: batch,
                layers,
            })
        }
    }
}

fn validate_strategy(raw: &RawScenario, nodes: u32) -> Result<Strategy, Invalid> {
    let s = &raw.strategy;
    let d = Strategy::default();
    fraction(s.density, "strategy.density", true, false)?;
    fraction(s.dct_sparsity, "strategy.dct_sparsity", false, true)?;
    fraction(s.mp_sparsity, "strategy.mp_sparsity", false, true)?;
    if let Some(l) = s.dct_lifespan
        && l < 1
    {
        return Err(invalid(
            "strategy.dct_lifespan",
            format!("must be ≥ 1, got {l}"),
        ));
    }
    let mp = count(s.mp_stages, "strategy.mp_stages", Some(1), 1)?;
    if mp > 1 {
        return Err(invalid(
            "strategy.mp_stages",
            "model-parallel stages are not supported yet (they arrive with DCT-MP)",
        ));
    }
    if let Some(sp) = &s.sparse
        && !matches!(sp.as_str(), "ps" | "allgather" | "allreduce" | "alltoall")
    {
        return Err(invalid(
            "strategy.sparse",
            format!("unknown sparse method `{sp}`; expected ps, allgather, allreduce or alltoall"),
        ));
    }
    let algo = match s.allreduce.as_deref().unwrap_or("ring") {
        "ring" => Algo::Ring,
        "tree" => Algo::Tree,
        "hierarchical" => Algo::Hierarchical,
        other => {
            return Err(invalid(
                "strategy.allreduce",
                format!(
                    "unknown AllReduce algorithm `{other}`; expected ring, tree or hierarchical"
                ),
            ));
        }
    };
    let dense = match s.dense.as_deref().unwrap_or("allreduce") {
        "allreduce" => DenseMethod::AllReduce(algo),
        "ps" => DenseMethod::Ps,
        m @ ("topk" | "gtopk" | "dct") => {
            return Err(invalid(
                "strategy.dense",
                format!(
                    "`{m}` is not supported in training yet (compressed methods arrive with the compression issue; `dtsim collective --op topk|gtopk` times their collectives)"
                ),
            ));
        }
        other => {
            return Err(invalid(
                "strategy.dense",
                format!(
                    "unknown dense method `{other}`; expected allreduce, ps, topk, gtopk or dct"
                ),
            ));
        }
    };
    let schedule = match s.schedule.as_deref().unwrap_or("fifo") {
        "fifo" => Schedule::Fifo,
        "priority" => Schedule::Priority,
        other => {
            return Err(invalid(
                "strategy.schedule",
                format!("unknown schedule `{other}`; expected fifo or priority"),
            ));
        }
    };
    let ps_servers = count(s.ps_servers, "strategy.ps_servers", Some(0), 0)?;
    if ps_servers > 64 * nodes.max(1) {
        return Err(invalid(
            "strategy.ps_servers",
            format!("{ps_servers} servers on {nodes} machines is more than 64 per machine"),
        ));
    }
    match &s.ps_partitions {
        None => {}
        Some(IntOrText::Text(t)) if t == "auto" => {}
        Some(IntOrText::Int(i)) if *i >= 1 => {}
        Some(v) => {
            return Err(invalid(
                "strategy.ps_partitions",
                format!("must be \"auto\" or an integer ≥ 1, got {v:?}"),
            ));
        }
    }
    Ok(Strategy {
        dense,
        schedule,
        fusion: size(&s.fusion, "strategy.fusion", d.fusion)?,
        partition: size(&s.partition, "strategy.partition", d.partition)?,
        local_aggregation: s.local_aggregation.unwrap_or(d.local_aggregation),
        ps_servers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
[cluster]
nodes = 2
gpus_per_node = 4
network = "ib-edr-100g"
[model]
preset = "resnet50"
batch_per_gpu = 64
gpu = "titan-xp"
"#;

    fn err(text: &str) -> ScenarioError {
        load_str(text, "f.toml", "f").unwrap_err()
    }

    #[test]
    fn good_file_loads() {
        let p = load_str(GOOD, "f.toml", "f").unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].config.cluster.gpus(), 8);
    }

    #[test]
    fn unknown_key_names_line() {
        let e = err(&GOOD.replace("gpus_per_node = 4", "gpus_per_node = 4\nspeed = 3"));
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("speed"), "{e}");
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

    #[test]
    fn sweep_expands_last_key_fastest() {
        let text = format!(
            "{GOOD}\n[sweep]\n\"cluster.nodes\" = [1, 2]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n"
        );
        let p = load_str(&text, "f.toml", "f").unwrap();
        let got: Vec<(u32, &str)> = p
            .iter()
            .map(|p| (p.config.cluster.nodes, p.config.strategy.schedule.name()))
            .collect();
        assert_eq!(
            got,
            [(1, "fifo"), (1, "priority"), (2, "fifo"), (2, "priority")]
        );
    }

    #[test]
    fn bad_sweep_value_points_at_sweep_line() {
        let text = format!("{GOOD}\n[sweep]\n\"cluster.nodes\" = [1, 0]\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("cluster.nodes"));
        assert_eq!(
            e.line,
            Some(
                text.lines()
                    .position(|l| l.starts_with("\"cluster.nodes\""))
                    .unwrap()
                    + 1
            )
        );
    }

    /// A count out of range says the range, too large as well as too small.
    #[test]
    fn counts_out_of_range_say_the_range() {
        for n in ["0", "9223372036854775807"] {
            let e = err(&GOOD.replace("nodes = 2", &format!("nodes = {n}")));
            assert_eq!(e.key.as_deref(), Some("cluster.nodes"));
            assert!(e.to_string().contains("from 1 to 4294967295"), "{e}");
        }
    }

    /// A swept value of the wrong type is blamed on its own key, even when
    /// the parser's message names no field and another key comes first.
    #[test]
    fn a_swept_value_of_the_wrong_type_blames_its_key() {
        let text = format!(
            "{GOOD}\n[sweep]\n\"cluster.network\" = [\"eth-10g\", \"ib-edr-100g\"]\n\"cluster.nodes\" = [1, \"x\"]\n"
        );
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("cluster.nodes"), "{e}");
        let line = text
            .lines()
            .position(|l| l.starts_with("\"cluster.nodes\""))
            .unwrap()
            + 1;
        assert_eq!(e.line, Some(line));
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
        let e = load_str_in(
            &text.replace("net.toml", "missing.toml"),
            "f.toml",
            "f",
            Some(&dir),
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("cluster.network"));
        assert!(e.message.contains("cannot read"), "{e}");
        std::fs::write(dir.join("bad.toml"), "[network]\nlatency_s = 2e-6\n").unwrap();
        let e = load_str_in(
            &text.replace("net.toml", "bad.toml"),
            "f.toml",
            "f",
            Some(&dir),
        )
        .unwrap_err();
        assert!(e.message.contains("bandwidth_bps"), "{e}");
    }
}
