//! `dtsim run`'s work: a scenario's points simulated one at a time, and
//! the Chrome trace of a single-point scenario. [`start`] opens and
//! validates the scenario (every point, before any runs), writes the trace
//! when asked, and returns [`Runs`], which builds, simulates and yields one
//! point at a time, so that a long sweep never sits in memory. The command
//! line prints what it yields.

use crate::trace::write_chrome_trace;
use sim::scenario::{self, Grid, ScenarioError};
use sim::train::{RunResult, simulate, simulate_traced};
use sim::units::Count;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `dtsim run` was asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The scenario file.
    pub file: PathBuf,
    /// Where to write the Chrome trace of the (single) point, if anywhere.
    pub trace: Option<PathBuf>,
    /// GPUs the trace shows (at least 1).
    pub trace_gpus: u32,
    /// Simulate each point this many times, over the seeds `seed`,
    /// `seed + 1`, …, and give the 5th, 50th and 95th percentiles
    /// ([`Interval`]); 2 to [`MAX_UNCERTAINTY_SAMPLES`].
    pub uncertainty: Option<u32>,
}

/// The most runs `--uncertainty` makes of a point.
pub const MAX_UNCERTAINTY_SAMPLES: u32 = 10_000;

/// A point's percentiles over repeated runs (`--uncertainty`), as `--json`
/// prints them (flattened beside the point's own numbers).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// Runs made (their seeds `seed` … `seed + samples − 1`); 1 when the
    /// point draws nothing from its seed (no stragglers, no token model,
    /// no fitted losses with an uncertainty), whose every run is the
    /// same. With a training profile's fit, each run also draws its losses
    /// from the fit's estimate (`sim::losses::FittedLosses::draw`).
    pub uncertainty_samples: u32,
    /// 5th percentile of the iteration time, seconds.
    pub iteration_time_s_p5: f64,
    /// Median iteration time, seconds.
    pub iteration_time_s_p50: f64,
    /// 95th percentile of the iteration time, seconds.
    pub iteration_time_s_p95: f64,
    /// 5th percentile of the throughput.
    pub throughput_p5: f64,
    /// Median throughput.
    pub throughput_p50: f64,
    /// 95th percentile of the throughput.
    pub throughput_p95: f64,
}

impl Interval {
    /// The percentiles of `runs`' iteration times and throughputs
    /// (statrs's quantile estimator, R's type 8).
    pub fn of(runs: &[RunResult]) -> Interval {
        use statrs::statistics::{Data, OrderStatistics};
        let q = |f: fn(&RunResult) -> f64| {
            let mut d = Data::new(runs.iter().map(f).collect::<Vec<f64>>());
            [d.quantile(0.05), d.quantile(0.5), d.quantile(0.95)]
        };
        let t = q(|r| r.iteration_time_s);
        let x = q(|r| r.throughput);
        Interval {
            uncertainty_samples: runs.len() as u32,
            iteration_time_s_p5: t[0],
            iteration_time_s_p50: t[1],
            iteration_time_s_p95: t[2],
            throughput_p5: x[0],
            throughput_p50: x[1],
            throughput_p95: x[2],
        }
    }
}

/// The percentiles of `n` runs of a point whose own run gave `result`:
/// its seeds `seed` … `seed + n − 1`, each run's losses drawn from a
/// training profile's fit where the point took them from one with an
/// uncertainty (then the first run is drawn too), on every core. A point
/// that draws nothing runs once. A failure reported is the first seed's,
/// whatever ran first.
pub fn interval(
    cfg: &sim::train::TrainConfig,
    result: &RunResult,
    n: u32,
) -> Result<Interval, sim::limits::SimError> {
    use rayon::prelude::*;
    if !cfg.draws() {
        // every run would be this one
        return Ok(Interval::of(std::slice::from_ref(result)));
    }
    let fitted = cfg.fitted_losses.as_ref().filter(|f| f.uncertain());
    let first = if fitted.is_some() { 0 } else { 1 };
    let all: Vec<_> = (first..n as u64)
        .into_par_iter()
        .map(|k| {
            let mut c = match fitted {
                Some(f) => f.draw(cfg, k),
                None => cfg.clone(),
            };
            c.seed = c.seed.wrapping_add(k);
            simulate(&c)
        })
        .collect();
    let mut runs: Vec<RunResult> = all.into_iter().collect::<Result<_, _>>()?;
    if first == 1 {
        runs.push(result.clone());
    }
    Ok(Interval::of(&runs))
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario cannot be read or one of its points is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A point the simulator refuses (its simulated time out of range).
    #[error("{file}: {message}")]
    Point {
        /// The scenario file.
        file: String,
        /// The simulator's message.
        message: String,
    },
    /// The request cannot be carried out as asked (bad input).
    #[error("{0}")]
    Request(String),
    /// The trace could not be written (a failure, not the input's).
    #[error("{path}: cannot write the trace: {message}")]
    Trace {
        /// The trace file.
        path: String,
        /// What failed.
        message: String,
    },
}

impl RunError {
    /// Whether the error is the input's (exit code 2).
    pub fn is_input(&self) -> bool {
        !matches!(self, RunError::Trace { .. })
    }
}

/// One point's result with the values its sweep gave it (empty for a
/// scenario without a sweep), as `--json` prints it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PointResult {
    /// The simulation's result.
    #[serde(flatten)]
    pub result: RunResult,
    /// Swept key → value.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sweep: BTreeMap<String, toml::Value>,
    /// With model-parallel stages, how the model was split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_parallel: Option<ModelParallel>,
    /// With `--uncertainty`, the percentiles over repeated runs.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// The training profile whose fitted losses the point took
    /// (`training_profile`), as the scenario names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub training_profile: Option<String>,
    /// Whether `--uncertainty` drew the losses from the profile's fit.
    #[serde(skip)]
    pub fitted_draws: bool,
    /// With a training profile, where each loss came from: (fitted by the
    /// profile's fit, held by it, set by the scenario itself), by name.
    #[serde(skip)]
    pub loss_sources: Option<LossSources>,
}

/// Where a point's losses came from, beside a training profile
/// (`training_profile`): each loss by its key's name.
#[derive(Debug, Clone, PartialEq)]
pub struct LossSources {
    /// Taken from the profile, which fitted them to measured runs.
    pub fitted: Vec<String>,
    /// Taken from the profile, which held them (left out of `--params`,
    /// or no run depended on them): the scenario's values at the fit.
    pub held: Vec<String>,
    /// Set by the scenario's own keys, which win over the profile.
    pub own: Vec<String>,
}

/// A point's losses besides bytes, as its scenario resolved them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    /// Coefficient of variation of a GPU's per-iteration compute time.
    pub compute_jitter: f64,
    /// Seconds each message costs its channel before its transfer.
    pub message_overhead_s: f64,
    /// Fraction of the network's per-NIC bandwidth collectives reach.
    pub nic_efficiency: f64,
}

impl Losses {
    /// Whether there are none (the pure α-β bound, `ideal = true`).
    pub fn none(&self) -> bool {
        self.compute_jitter == 0.0 && self.message_overhead_s == 0.0 && self.nic_efficiency == 1.0
    }
}

impl std::fmt::Display for Losses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.none() {
            return f.write_str("none (the pure α-β bound)");
        }
        write!(
            f,
            "stragglers (compute CV {:.2}%), {:.1} µs a message, NIC efficiency {:.0}%",
            self.compute_jitter * 100.0,
            self.message_overhead_s * 1e6,
            self.nic_efficiency * 100.0
        )
    }
}

/// How a point's trainers are split into model-parallel stages.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelParallel {
    /// Each stage's layers, "first..last".
    pub stages: Vec<String>,
    /// Trainers (GPUs / stages).
    pub trainers: u32,
    /// Micro-batches a trainer's batch is pipelined in.
    pub microbatches: u32,
}

impl PointResult {
    /// What the point loses besides bytes (`sim::losses`).
    pub fn losses(&self) -> Losses {
        Losses {
            compute_jitter: self.result.compute_jitter,
            message_overhead_s: self.result.message_overhead_s,
            nic_efficiency: self.result.nic_efficiency,
        }
    }

    /// The point's name in a table: its swept values (`network=eth-10g,
    /// nodes=2`), or the scenario's name when nothing is swept.
    pub fn label(&self) -> String {
        if self.sweep.is_empty() {
            self.result.scenario.clone()
        } else {
            self.sweep
                .iter()
                .map(|(k, v)| part(k, v))
                .collect::<Vec<_>>()
                .join(",")
        }
    }
}

/// One swept key's part of a point's label: the key's last component and
/// the value, strings without quotes.
fn part(key: &str, v: &toml::Value) -> String {
    let short = key.rsplit('.').next().unwrap_or(key);
    match v {
        toml::Value::String(s) => format!("{short}={s}"),
        v => format!("{short}={v}"),
    }
}

/// A scenario's points, simulated one at a time as they are taken.
pub struct Runs {
    grid: Grid,
    file: PathBuf,
    next: usize,
    /// The traced point's result: yielded as is, not simulated again.
    traced: Option<RunResult>,
    warnings: Vec<String>,
    /// Runs of each point for its interval (`--uncertainty`).
    samples: Option<u32>,
}

/// Checks a number of runs a point (`--uncertainty N` of `dtsim run`,
/// `sweep` and `report`): 2 to [`MAX_UNCERTAINTY_SAMPLES`]; the message
/// says so.
pub fn check_uncertainty(n: Option<u32>) -> Result<(), String> {
    match n {
        Some(n) if !(2..=MAX_UNCERTAINTY_SAMPLES).contains(&n) => Err(format!(
            "--uncertainty {n}: give 2 to {MAX_UNCERTAINTY_SAMPLES} runs a point (100 gives percentiles to about a percent)"
        )),
        _ => Ok(()),
    }
}

/// Opens and validates the scenario and writes the trace if asked.
pub fn start(req: &Request) -> Result<Runs, RunError> {
    check_uncertainty(req.uncertainty).map_err(RunError::Request)?;
    let grid = scenario::open_file(&req.file)?;
    let warnings = grid.check()?.iter().map(|w| w.to_string()).collect();
    let mut runs = Runs {
        grid,
        file: req.file.clone(),
        next: 0,
        traced: None,
        warnings,
        samples: req.uncertainty,
    };
    if let Some(out) = &req.trace {
        runs.traced = Some(runs.trace(out, req.trace_gpus)?);
    }
    Ok(runs)
}

impl Runs {
    /// Settings of the scenario that are valid but probably a mistake,
    /// each once, located in the file.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Points in the scenario.
    pub fn len(&self) -> usize {
        self.grid.len()
    }

    /// Whether the scenario has no point (never, once validated).
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }

    /// The widest label any point can have (a bound: the widest value of
    /// each swept key), so that a table's label column fits every row
    /// before the rows are simulated.
    pub fn label_width(&self) -> usize {
        let keys = self.grid.keys();
        let widest = |k: &String| {
            let values = self.grid.values(k).unwrap_or_default();
            values.iter().map(|v| part(k, v).len()).max().unwrap_or(0)
        };
        keys.iter().map(widest).sum::<usize>() + keys.len().saturating_sub(1)
    }

    /// The widest AllReduce method a row of the sweep prints
    /// (`ar-recursive-doubling` where `strategy.allreduce` sweeps it), 0
    /// when the sweep does not set the algorithm: the first row's method
    /// then stands for all.
    pub fn method_width(&self) -> usize {
        self.grid
            .values("strategy.allreduce")
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str())
            .map(|a| "ar-".len() + a.len())
            .max()
            .unwrap_or(0)
    }

    /// Simulates the single point with its timeline and writes the trace,
    /// all or nothing (a truncated trace would fail only later, in the
    /// viewer).
    fn trace(&self, out: &Path, gpus: u32) -> Result<RunResult, RunError> {
        if self.grid.len() != 1 {
            return Err(RunError::Request(format!(
                "{}: --trace needs a single-point scenario; this one's sweep has {}",
                self.file.display(),
                Count(self.grid.len() as u64, "point")
            )));
        }
        if gpus == 0 {
            return Err(RunError::Request("--trace-gpus must be at least 1".into()));
        }
        let p = self.grid.point(0)?;
        let (result, timeline) = simulate_traced(&p.config).map_err(|e| self.point_error(e))?;
        crate::write_via_temp(out, |tmp| {
            let file = std::fs::File::create(tmp).map_err(|e| e.to_string())?;
            write_chrome_trace(&p.config, &timeline, gpus, file).map_err(|e| e.to_string())
        })
        .map_err(|message| RunError::Trace {
            path: out.display().to_string(),
            message,
        })?;
        Ok(result)
    }

    fn point_error(&self, e: impl std::fmt::Display) -> RunError {
        RunError::Point {
            file: self.file.display().to_string(),
            message: e.to_string(),
        }
    }
}

impl Iterator for Runs {
    type Item = Result<PointResult, RunError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.grid.len() {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some((|| {
            let p = self.grid.point(i)?;
            let result = match self.traced.take() {
                Some(r) => r,
                None => simulate(&p.config).map_err(|e| self.point_error(e))?,
            };
            let st = &p.config.strategy;
            let model_parallel = (st.mp_stages > 1).then(|| ModelParallel {
                stages: sim::train::planner::mp::stage_layers(&p.config.model, st),
                trainers: p.config.cluster.gpus() / st.mp_stages,
                microbatches: st.mp_microbatches,
            });
            let interval = match self.samples {
                None => None,
                Some(n) => Some(interval(&p.config, &result, n).map_err(|e| self.point_error(e))?),
            };
            let loss_sources = p.config.fitted_losses.as_ref().map(|f| {
                let names = |keep: &dyn Fn(sim::losses::Param) -> bool| {
                    sim::losses::Param::ALL
                        .into_iter()
                        .filter(|&q| keep(q))
                        .map(|q| q.name().to_string())
                        .collect()
                };
                LossSources {
                    fitted: names(&|q| f.params.contains(&q)),
                    held: names(&|q| f.taken.contains(&q) && !f.params.contains(&q)),
                    own: names(&|q| !f.taken.contains(&q)),
                }
            });
            Ok(PointResult {
                result,
                loss_sources,
                training_profile: p
                    .config
                    .fitted_losses
                    .as_ref()
                    .filter(|f| !f.taken.is_empty())
                    .map(|f| f.profile.clone()),
                fitted_draws: p
                    .config
                    .fitted_losses
                    .as_ref()
                    .is_some_and(|f| f.uncertain()),
                sweep: p.sweep,
                model_parallel,
                interval,
            })
        })())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dtsim-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const SWEPT: &str = r#"name = "s"
iterations = 2
[cluster]
nodes = 1
network = "eth-10g"
[model]
preset = "resnet50"
batch_per_gpu = 8
gpu = "titan-xp"
[sweep]
"cluster.nodes" = [1, 16]
"cluster.network" = ["eth-10g", "ib-edr-100g"]
"#;

    /// Points come in grid order with their labels; the label bound holds
    /// the widest label exactly here (every key's widest value meets).
    #[test]
    fn points_in_order_with_labels() {
        let file = scenario("swept.toml", SWEPT);
        let runs = start(&Request {
            file,
            trace: None,
            trace_gpus: 8,
            uncertainty: None,
        })
        .unwrap();
        assert_eq!(runs.len(), 4);
        let width = runs.label_width();
        let labels: Vec<String> = runs.map(|p| p.unwrap().label()).collect();
        assert_eq!(
            labels,
            [
                "network=eth-10g,nodes=1",
                "network=eth-10g,nodes=16",
                "network=ib-edr-100g,nodes=1",
                "network=ib-edr-100g,nodes=16",
            ]
        );
        assert_eq!(width, "network=ib-edr-100g,nodes=16".len());
    }

    /// Eight GPUs of a small custom model with stragglers (CV 5%): every
    /// seed draws other factors.
    const JITTERY: &str = r#"name = "j"
iterations = 4
[cluster]
nodes = 2
gpus_per_node = 4
network = "ib-edr-100g"
model = "analytical"
[model]
batch_per_gpu = 8
compute_jitter = 0.05
[[model.layers]]
params = 1000000
forward = "2ms"
backward = "4ms"
[[model.layers]]
params = 4000000
forward = "3ms"
backward = "6ms"
"#;

    fn interval_of(text: &str, name: &str, n: u32) -> (PointResult, Interval) {
        let file = scenario(name, text);
        let mut runs = start(&Request {
            file,
            trace: None,
            trace_gpus: 8,
            uncertainty: Some(n),
        })
        .unwrap();
        let p = runs.next().unwrap().unwrap();
        let i = p.interval.expect("an interval");
        (p, i)
    }

    /// The 5–95% interval over 100 seeds holds about 90% of other draws:
    /// of 400 runs of seeds it did not use, the fraction inside. The
    /// interval between the 5th and 95th of 100 order statistics covers
    /// 90/101 = 89.1% of the law on average, with a standard deviation of
    /// 3.1% (a Beta(90, 11) coverage), and 400 draws add a binomial 1.6%:
    /// the test allows 3.5 standard deviations of both, ±12 points. Its
    /// percentiles are ordered, and the throughput's mirror the time's.
    #[test]
    fn a_90_percent_interval_holds_about_90_percent_of_draws() {
        let (p, i) = interval_of(JITTERY, "jittery.toml", 100);
        assert_eq!(i.uncertainty_samples, 100);
        assert!(i.iteration_time_s_p5 < i.iteration_time_s_p50);
        assert!(i.iteration_time_s_p50 < i.iteration_time_s_p95);
        assert!(i.throughput_p5 < i.throughput_p50 && i.throughput_p50 < i.throughput_p95);
        // throughput is samples over time: its percentiles are the
        // times' mirrored (to the quantile estimator's interpolation)
        let samples = p.result.throughput * p.result.iteration_time_s;
        assert!((i.throughput_p95 * i.iteration_time_s_p5 / samples - 1.0).abs() < 1e-3);
        let points = scenario::load_str(JITTERY, "j.toml", "j").unwrap();
        let inside = (1000..1400u64)
            .filter(|&seed| {
                let mut cfg = points[0].config.clone();
                cfg.seed = seed;
                let t = simulate(&cfg).unwrap().iteration_time_s;
                (i.iteration_time_s_p5..=i.iteration_time_s_p95).contains(&t)
            })
            .count();
        let coverage = inside as f64 / 400.0;
        eprintln!("coverage of the 5–95% interval: {coverage}");
        assert!(
            (coverage - 90.0 / 101.0).abs() < 0.12,
            "coverage {coverage}"
        );
    }

    /// A point that draws nothing from its seed runs once: its percentiles
    /// are its own numbers. Sample counts outside 2..=10000 are refused
    /// as the input's.
    #[test]
    fn a_point_without_draws_runs_once() {
        let ideal = JITTERY.replace("compute_jitter = 0.05", "compute_jitter = 0");
        let (p, i) = interval_of(&ideal, "steady.toml", 50);
        assert_eq!(i.uncertainty_samples, 1);
        let t = p.result.iteration_time_s;
        assert_eq!(
            (
                i.iteration_time_s_p5,
                i.iteration_time_s_p50,
                i.iteration_time_s_p95
            ),
            (t, t, t)
        );
        for n in [0, 1, MAX_UNCERTAINTY_SAMPLES + 1] {
            let e = start(&Request {
                file: scenario("steady-bad.toml", &ideal),
                trace: None,
                trace_gpus: 8,
                uncertainty: Some(n),
            })
            .err()
            .expect("refused");
            assert!(
                e.is_input() && e.to_string().contains("--uncertainty"),
                "{e}"
            );
        }
    }

    /// A trace needs one point; the refusal is the input's.
    #[test]
    fn a_trace_of_a_sweep_is_refused() {
        let file = scenario("swept-trace.toml", SWEPT);
        let e = start(&Request {
            file: file.clone(),
            trace: Some(file.with_extension("json")),
            trace_gpus: 8,
            uncertainty: None,
        })
        .err()
        .unwrap();
        assert!(e.is_input());
        assert!(
            e.to_string().contains("this one's sweep has 4 points"),
            "{e}"
        );
        assert!(!file.with_extension("json").exists());
    }
}
