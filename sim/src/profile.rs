//! Calibration profiles: the file format, read and written in one place.
//!
//! A profile is a TOML file written by `dtsim calibrate` (the
//! `calibration` crate measures and fits; this module only says what the
//! file holds). A scenario names it in `cluster.network` and the simulator
//! takes the per-NIC link from its `[network]` table
//! ([`Profile::network_link`]). The other tables keep the evidence: the
//! fits per operation and size regime with their quality, the raw
//! measurements, and kernel timings with their fitted cost models.
//! `[provenance]` says which logs or host, which command, and when.
//!
//! The format lives here, in the engine, because the engine reads it and
//! `sim` depends on no other crate of ours; `calibration::profile`
//! re-exports these types.
//!
//! ```
//! use sim::profile::Profile;
//!
//! let text = r#"
//! [provenance]
//! tool = "dtsim 0.1.0 calibrate net"
//! created = "2026-11-22T00:40:00Z"
//! sources = ["logs/all_reduce_perf.txt"]
//!
//! [network]
//! latency_s = 2.1e-5
//! bandwidth_bps = 1.9e10
//! derived_from = "allreduce over 16 ranks, largest-size regime"
//! "#;
//! let p = Profile::from_toml(text).unwrap();
//! assert_eq!(p.network_link().unwrap().bandwidth_bps, 1.9e10);
//! ```
//!
//! Every table denies unknown keys. Hand-written profiles may leave out
//! `[provenance]` and `derived_from`: a `[network]` table with
//! `latency_s` and `bandwidth_bps` is a whole profile.
//!
//! Reading also refuses values no measurement or fit can have, at their
//! line: a `[[measurement]]`'s time that is not positive seconds up to
//! [`MAX_MEASURED_TIME_S`], or its size or ranks out of dtsim's range; a
//! `[[kernel_model]]` that [`crate::workload::kernels::check_models`]
//! refuses (a backend `dtsim calibrate kernels` has not, a form dtsim does
//! not know, a cost term out of range, a kernel given twice).

use crate::limits;
use crate::scenario::line_of;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a profile's numbers came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The command that wrote the profile, with dtsim's version (default
    /// empty, for hand-written profiles).
    #[serde(default)]
    pub tool: String,
    /// When, UTC, RFC 3339 (default empty: unknown).
    #[serde(default)]
    pub created: String,
    /// Source logs, or the host that was measured.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Host name and processor, for measurements made by dtsim itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The command line that wrote the profile.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// Free-text notes (e.g. the launcher and MCA parameters used).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The link parameters a scenario uses when it names this profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkEntry {
    /// Per-message latency α, seconds.
    pub latency_s: f64,
    /// Per-link bandwidth B, bytes/s.
    pub bandwidth_bps: f64,
    /// Which fit they come from (default empty, for hand-written profiles).
    #[serde(default)]
    pub derived_from: String,
}

/// Bandwidths at or above this are a fit's stand-in for "no bandwidth
/// term": `calibration::fit` fits β = 10⁻³⁰ s/B to a regime whose time is
/// flat in size.
pub const LATENCY_ONLY_BPS: f64 = 1e29;

/// One size regime of a fit (`calibration::fit` produces it, a profile's
/// `[[fit.segments]]` stores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Segment {
    /// Smallest fitted size in the regime, bytes.
    pub min_bytes: u64,
    /// Largest fitted size in the regime, bytes.
    pub max_bytes: u64,
    /// Fitted latency α, seconds (≥ 0).
    pub alpha_s: f64,
    /// Fitted bandwidth B, bytes/s.
    pub bandwidth_bps: f64,
    /// Points fitted.
    pub points: usize,
    /// Coefficient of determination of the regime's fit in time (not
    /// relative) terms; 1 for a perfect fit, NaN with fewer than 3 points.
    pub r2: f64,
    /// The protocol this line stands for, in a fit of the fastest of a
    /// few protocols (`calibration::fit::Shape::Protocols`: "LL", "LL128",
    /// "Simple" for NCCL; "short", "eager", "rendezvous" for MPI, named
    /// by rank in bandwidth); absent for a size regime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

impl Segment {
    /// The fitted bandwidth, or `None` for a latency-only regime (time
    /// flat in size: β was fitted as ≈ 0, a bandwidth of ~10³⁰ B/s that
    /// never matters and means nothing; see [`LATENCY_ONLY_BPS`]).
    pub fn bandwidth(&self) -> Option<f64> {
        (self.bandwidth_bps < LATENCY_ONLY_BPS).then_some(self.bandwidth_bps)
    }
}

/// One size regime of a fit, as a profile stores it.
pub type SegmentEntry = Segment;

/// A fitted operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitEntry {
    /// The log or measurement it was fitted to.
    pub source: String,
    /// Operation ("allreduce", "pingpong", "latency", ...).
    pub op: String,
    /// Ranks of the operation.
    pub ranks: u32,
    /// Median |relative residual| over the fitted points.
    pub median_abs_residual: f64,
    /// How the time was fitted over sizes: "protocols" (the fastest of a
    /// few lines, `segments` one per protocol) or "regimes" (`segments` by
    /// size); absent in profiles written before the choice existed
    /// (regimes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// How sharply a protocol fit switches from one protocol to the next
    /// (`calibration::fit::blend`'s q; absent: at the lines' crossing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharpness: Option<f64>,
    /// The simulator's algorithm the fit's step structure is that of
    /// ("ring", "binomial"; absent for point-to-point fits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// Open MPI's segmented broadcast (`algorithm = "ompi-binomial"`, its
    /// other trees) or segmented ring (`"segmented-ring"`): the segment
    /// size the fit modelled, bytes (`--algo broadcast=ompi-binomial:SIZE`,
    /// `allreduce=segmented-ring:SIZE`); absent, unsegmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_bytes: Option<u64>,
    /// Open MPI's chains (`algorithm = "chain"`) or k-nomial radix
    /// (`"knomial"`, `"ompi"`) the fit modelled (`--algo
    /// broadcast=knomial/K`), absent its default, 4; or MPICH's scattered
    /// AlltoAll's batch (`"scattered"`, `"mpich"`, `"mpich-nb"`:
    /// `alltoall=scattered/K`), absent its default, 32, and 4294967295 for
    /// every destination at once (`MPIR_CVAR_ALLTOALL_THROTTLE` = 0); or
    /// Open MPI's `linear_sync`'s requests outstanding (`"linear-sync"`,
    /// and `"ompi"` for the alltoall: `alltoall=linear-sync/K`), absent
    /// no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanout: Option<u32>,
    /// Size regimes, or protocols by rising bandwidth.
    pub segments: Vec<SegmentEntry>,
    /// Relative residual (fitted − measured)/measured of every fitted point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residuals: Vec<ResidualEntry>,
    /// Sizes kept out of the fit as measurement anomalies
    /// (`calibration::fit::screen`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screened_out_bytes: Vec<u64>,
    /// Sizes of the log that measure no message, kept out of the fit: a
    /// size of 0 (the library returns at once) or a time of 0 (under the
    /// log's resolution) (`calibration::fit::unmeasured`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured_bytes: Vec<u64>,
    /// How `ranks` was inferred, where the log did not state it (an
    /// nccl-tests log without `# Rank` lines: from busbw/algbw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_inferred: Option<String>,
    /// Lines of the log skipped as not the benchmark's (launcher, Slurm,
    /// Open MPI help, NCCL debug lines).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lines: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One fitted point's residual.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResidualEntry {
    /// Size, bytes.
    pub size_bytes: u64,
    /// (fitted − measured)/measured.
    pub residual: f64,
}

/// A raw measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasurementEntry {
    /// Operation.
    pub op: String,
    /// Size in bytes (nccl-tests' meaning).
    pub size_bytes: u64,
    /// Median time, seconds.
    pub time_s: f64,
    /// Ranks.
    pub ranks: u32,
    /// The log it was read from (empty for dtsim's own measurements).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// A kernel timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelEntry {
    /// Kernel name ("topk", "threshold_sort", "mask", ...).
    pub kernel: String,
    /// Backend ("cpu" or "cuda").
    pub backend: String,
    /// Elements.
    pub m: u64,
    /// Density (k/m, or kept fraction).
    pub density: f64,
    /// Median seconds.
    pub median_s: f64,
    /// 25th percentile, seconds.
    pub p25_s: f64,
    /// 75th percentile, seconds.
    pub p75_s: f64,
    /// Timed repeats.
    pub repeats: u32,
}

/// A fitted kernel cost model: `time = a + b·m + c·k`, or
/// `a + b·m·log2(m)` for sorting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelModel {
    /// Kernel name.
    pub kernel: String,
    /// Backend.
    pub backend: String,
    /// The model: `"a + b*m + c*k"` (k: selected or kept elements) or
    /// `"a + b*m*log2(m)"`.
    pub form: String,
    /// Constant term, seconds.
    pub a_s: f64,
    /// Per-element term, seconds (per m, or per m·log2 m).
    pub b_s: f64,
    /// Per-selected-element term, seconds (0 where the form has no k).
    #[serde(default)]
    pub c_s: f64,
    /// Median |relative residual| over the timings.
    pub median_abs_residual: f64,
}

/// Losses besides bytes fitted to measured training runs (`dtsim
/// calibrate training`): the values a scenario that names the profile in
/// `training_profile` takes in place of `sim::losses`' defaults, and how
/// sure the fit is of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingEntry {
    /// The scenario whose points were measured, as given to the command
    /// (several, comma-separated, where the runs named theirs).
    #[serde(default)]
    pub scenario: String,
    /// `model.compute_jitter`: stragglers' coefficient of variation.
    pub compute_jitter: f64,
    /// `strategy.message_overhead`, seconds.
    pub message_overhead_s: f64,
    /// `cluster.nic_efficiency`.
    pub nic_efficiency: f64,
    /// The parameters that were fitted, by their keys' last names
    /// (`compute_jitter`, `message_overhead`, `nic_efficiency`); the others
    /// were held at the scenario's values.
    #[serde(default)]
    pub fitted: Vec<String>,
    /// Covariance of the fitted parameters, in `fitted`'s order, in the
    /// units above (seconds for the overhead): the residual variance of
    /// ln(predicted/measured) times (JᵀJ)⁻¹ at the optimum. A parameter
    /// that ended on a bound of its range has row and column 0 (the
    /// linearisation does not hold there). Empty: no uncertainty known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covariance: Vec<Vec<f64>>,
    /// Measured points the fit used.
    #[serde(default)]
    pub points: usize,
    /// Root mean square of ln(predicted/measured) over them at the optimum.
    #[serde(default)]
    pub rms_log_residual: f64,
}

/// One measured training run and the fit's prediction of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingPointEntry {
    /// The point's keys and values, as the measurements' file gave them
    /// (`cluster.nodes=4, strategy.dense=allreduce`).
    pub point: String,
    /// Measured seconds an iteration.
    pub measured_s: f64,
    /// Predicted seconds an iteration with the fitted losses.
    pub predicted_s: f64,
}

/// A calibration profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Where it came from (default empty, for hand-written profiles).
    #[serde(default)]
    pub provenance: Provenance,
    /// Link parameters for scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkEntry>,
    /// Fits per operation.
    #[serde(default, rename = "fit", skip_serializing_if = "Vec::is_empty")]
    pub fits: Vec<FitEntry>,
    /// Raw collective measurements.
    #[serde(default, rename = "measurement", skip_serializing_if = "Vec::is_empty")]
    pub measurements: Vec<MeasurementEntry>,
    /// Kernel timings.
    #[serde(default, rename = "kernel", skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelEntry>,
    /// Kernel cost models.
    #[serde(
        default,
        rename = "kernel_model",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub kernel_models: Vec<KernelModel>,
    /// Losses fitted to measured training runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<TrainingEntry>,
    /// The measured training runs behind `training`.
    #[serde(
        default,
        rename = "training_point",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub training_points: Vec<TrainingPointEntry>,
}

/// Why a profile cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// Not TOML, or not a profile's form: an unknown key, a wrong type, a
    /// missing field. `line` is where toml found it, when it knows.
    #[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Form {
        /// 1-based line.
        line: Option<usize>,
        /// toml's message.
        message: String,
    },
    /// The profile has no `[network]` table, so a scenario cannot take its
    /// link from it.
    #[error("has no [network] table")]
    NoNetwork,
    /// The `[network]` numbers are outside what the simulator accepts
    /// ([`crate::limits`]).
    #[error("[network]: {0}")]
    Network(String),
    /// A value of the right type that no measurement or fit can have (a
    /// `[[measurement]]`'s negative time, a `[[kernel_model]]`'s unknown
    /// backend, a kernel modelled twice). `line` is the value's, when
    /// known.
    #[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Value {
        /// 1-based line.
        line: Option<usize>,
        /// What is wrong, naming the table and key.
        message: String,
    },
}

/// Longest time a `[[measurement]]` may hold, seconds: 10⁶ (11.6 days).
/// A measurement is the median time of one operation that a benchmark
/// (nccl-tests, OSU, `dtsim calibrate collectives`) timed over and over;
/// their largest messages take seconds, and no benchmark times an
/// operation of days, so a longer time is a mistake (a unit, an exponent)
/// that would drag its regime's fit. Far above any real measurement, it
/// refuses only what cannot have been measured.
pub const MAX_MEASURED_TIME_S: f64 = 1e6;

/// `v` as a message shows it: as Rust prints it where that is short
/// (`-0.000000001`, `1000000`), else in exponent form (`1e300`, not 301
/// digits).
pub(crate) fn short_number(v: f64) -> String {
    let s = v.to_string();
    if s.len() <= 24 { s } else { format!("{v:e}") }
}

/// Where the values of the tables whose values [`Profile::from_toml`]
/// checks are in the text: each `[[measurement]]`'s and
/// `[[kernel_model]]`'s keys with their values' spans. Parsed only to
/// locate a refused value.
#[derive(Debug, Default, Deserialize)]
struct Spans {
    #[serde(default)]
    measurement: Vec<BTreeMap<String, toml::Spanned<toml::Value>>>,
    #[serde(default)]
    kernel_model: Vec<BTreeMap<String, toml::Spanned<toml::Value>>>,
}

impl Spans {
    /// The line of key `key` of the `index`th (0-based) table of array
    /// `table` ("measurement" or "kernel_model") in `text`, if there.
    fn line(&self, text: &str, table: &str, index: usize, key: &str) -> Option<usize> {
        let tables = match table {
            "measurement" => &self.measurement,
            "kernel_model" => &self.kernel_model,
            _ => return None,
        };
        let value = tables.get(index)?.get(key)?;
        Some(line_of(text, value.span().start))
    }
}

impl Profile {
    /// Serialises to TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("profiles serialise")
    }

    /// Parses a profile; the error carries toml's line and message, or,
    /// for a value no measurement or fit can have ([`ProfileError::Value`],
    /// [`Profile::check_values`]), the value's line and what is wrong.
    pub fn from_toml(text: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Form {
            line: e.span().map(|s| line_of(text, s.start)),
            message: e.message().trim().to_string(),
        })?;
        // the spans are parsed only to locate a value refused
        let spans = std::cell::OnceCell::new();
        p.check(&|table, index, key| {
            spans
                .get_or_init(|| toml::from_str::<Spans>(text).unwrap_or_default())
                .line(text, table, index, key)
        })?;
        Ok(p)
    }

    /// Checks the values the format's types admit but no measurement or
    /// fit can have, as [`Profile::from_toml`] does (without lines): for
    /// profiles built in code.
    ///
    /// # Errors
    /// [`ProfileError::Value`], naming the table, its number (1-based, in
    /// file order) and the key.
    pub fn check_values(&self) -> Result<(), ProfileError> {
        self.check(&|_, _, _| None)
    }

    /// [`Profile::check_values`], with `line(table, index, key)` the line
    /// of a table's key where known.
    fn check(&self, line: &dyn Fn(&str, usize, &str) -> Option<usize>) -> Result<(), ProfileError> {
        for (i, m) in self.measurements.iter().enumerate() {
            let what = format!(
                "[[measurement]] #{} (`{}`, {} bytes on {} ranks)",
                i + 1,
                m.op,
                m.size_bytes,
                m.ranks
            );
            let fault = if m.size_bytes > limits::MAX_BYTES {
                Some((
                    "size_bytes",
                    format!(
                        "{what} has size_bytes = {}: more than the {} bytes (1 PiB) of the largest buffer dtsim simulates",
                        m.size_bytes,
                        limits::MAX_BYTES
                    ),
                ))
            } else if !(m.time_s.is_finite() && m.time_s > 0.0 && m.time_s <= MAX_MEASURED_TIME_S) {
                Some((
                    "time_s",
                    format!(
                        "{what} has time_s = {}: a measured time is seconds, finite, positive and at most {MAX_MEASURED_TIME_S:e} (11.6 days)",
                        short_number(m.time_s)
                    ),
                ))
            } else if !(1..=limits::MAX_GPUS).contains(&u64::from(m.ranks)) {
                Some((
                    "ranks",
                    format!(
                        "{what} has ranks = {}: a measurement runs on 1 to {} ranks (the most dtsim simulates)",
                        m.ranks,
                        limits::MAX_GPUS
                    ),
                ))
            } else {
                None
            };
            if let Some((key, message)) = fault {
                return Err(ProfileError::Value {
                    line: line("measurement", i, key),
                    message,
                });
            }
        }
        crate::workload::kernels::check_models(&self.kernel_models, &|i, key| {
            line("kernel_model", i, key)
        })
        .map_err(|f| ProfileError::Value {
            line: line("kernel_model", f.index, f.key),
            message: f.message,
        })
    }

    /// The per-NIC link a scenario takes from this profile: its `[network]`
    /// table, with latency and bandwidth checked against
    /// [`limits::check_latency`] and [`limits::check_bandwidth`].
    pub fn network_link(&self) -> Result<&NetworkEntry, ProfileError> {
        let n = self.network.as_ref().ok_or(ProfileError::NoNetwork)?;
        limits::check_latency(n.latency_s).map_err(ProfileError::Network)?;
        limits::check_bandwidth(n.bandwidth_bps).map_err(ProfileError::Network)?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let p = Profile {
            provenance: Provenance {
                tool: "t".into(),
                created: "2026-11-22T00:40:00Z".into(),
                sources: vec!["a.txt".into()],
                ..Provenance::default()
            },
            network: Some(NetworkEntry {
                latency_s: 1e-6,
                bandwidth_bps: 1e10,
                derived_from: "x".into(),
            }),
            fits: vec![FitEntry {
                source: "a.txt".into(),
                op: "allreduce".into(),
                ranks: 16,
                median_abs_residual: 0.01,
                shape: Some("protocols".into()),
                sharpness: Some(4.0),
                algorithm: Some("ring".into()),
                segment_bytes: None,
                fanout: None,
                segments: vec![Segment {
                    min_bytes: 8,
                    max_bytes: 1 << 20,
                    alpha_s: 2e-5,
                    bandwidth_bps: 1e10,
                    points: 5,
                    r2: 0.99,
                    protocol: Some("Simple".into()),
                }],
                residuals: vec![],
                screened_out_bytes: vec![],
                unmeasured_bytes: vec![],
                ranks_inferred: Some("16 ranks inferred".into()),
                skipped_lines: 3,
            }],
            ..Profile::default()
        };
        assert_eq!(Profile::from_toml(&p.to_toml()).unwrap(), p);
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let e = Profile::from_toml("[provenance]\ntool = \"t\"\ncreated = \"x\"\nbogus = 1\n")
            .unwrap_err();
        assert!(e.to_string().starts_with("line 4"), "{e}");
    }

    /// A hand-written `[network]` table is a whole profile; integers are
    /// numbers too.
    #[test]
    fn a_network_table_alone_is_a_profile() {
        let p = Profile::from_toml("[network]\nlatency_s = 0\nbandwidth_bps = 3e9\n").unwrap();
        let n = p.network_link().unwrap();
        assert_eq!((n.latency_s, n.bandwidth_bps), (0.0, 3e9));
        assert_eq!(p.provenance, Provenance::default());
    }

    #[test]
    fn network_link_is_present_and_in_range() {
        let no = Profile::from_toml("[provenance]\ntool = \"t\"\n").unwrap();
        assert_eq!(no.network_link(), Err(ProfileError::NoNetwork));
        let e = Profile::from_toml("[network]\nlatency_s = 2e-6\n").unwrap_err();
        assert!(e.to_string().contains("bandwidth_bps"), "{e}");
        for (lat, bw, what) in [("-1", "3e9", "latency"), ("1e-6", "1", "bandwidth")] {
            let p = Profile::from_toml(&format!(
                "[network]\nlatency_s = {lat}\nbandwidth_bps = {bw}\n"
            ))
            .unwrap();
            let e = p.network_link().unwrap_err();
            assert!(matches!(e, ProfileError::Network(_)), "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
    }

    /// Two `[[measurement]]` tables, the second's `key` set to `value`.
    fn measurements(key: &str, value: &str) -> String {
        let mut t = String::new();
        for i in 0..2 {
            let (op, size, time, ranks) = ("allreduce", "1024", "0.001", "4");
            let v = |k: &str, d: &str| {
                if i == 1 && k == key {
                    value.to_string()
                } else {
                    d.to_string()
                }
            };
            t += &format!(
                "[[measurement]]\nop = \"{op}\"\nsize_bytes = {}\ntime_s = {}\nranks = {}\n\n",
                v("size_bytes", size),
                v("time_s", time),
                v("ranks", ranks)
            );
        }
        t
    }

    /// A measured time that is not positive, finite seconds up to
    /// [`MAX_MEASURED_TIME_S`], no ranks, more ranks than dtsim simulates
    /// or a buffer larger than it simulates are refused at the value's
    /// line (the second table's: 9, 10, 11), naming the measurement; until
    /// 2026-11-28 they were read, and `dtsim validate` dropped the point
    /// silently.
    #[test]
    fn impossible_measurements_are_refused_at_their_line() {
        for (key, value, line, shown) in [
            ("time_s", "-1", 10, "time_s = -1:"),
            ("time_s", "0", 10, "time_s = 0:"),
            ("time_s", "nan", 10, "time_s = NaN:"),
            ("time_s", "inf", 10, "time_s = inf:"),
            ("time_s", "-inf", 10, "time_s = -inf:"),
            ("time_s", "1e300", 10, "time_s = 1e300:"),
            ("time_s", "1000000.5", 10, "time_s = 1000000.5:"),
            ("ranks", "0", 11, "ranks = 0:"),
            ("ranks", "1048577", 11, "ranks = 1048577:"),
            (
                "size_bytes",
                "1125899906842625",
                9,
                "size_bytes = 1125899906842625:",
            ),
        ] {
            let e = Profile::from_toml(&measurements(key, value)).unwrap_err();
            let ProfileError::Value { line: l, message } = &e else {
                panic!("{key} = {value}: {e}");
            };
            assert_eq!(*l, Some(line), "{key} = {value}: {e}");
            assert!(
                message.starts_with("[[measurement]] #2 (`allreduce`, ") && message.contains(shown),
                "{e}"
            );
            assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
        }
        let e = Profile::from_toml(&measurements("time_s", "-1")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 10: [[measurement]] #2 (`allreduce`, 1024 bytes on 4 ranks) has time_s = -1: a measured time is seconds, finite, positive and at most 1e6 (11.6 days)"
        );
        // the bounds themselves, a 0-byte message (OSU's latency test) and
        // one rank (NCCL on one GPU) are measurements
        for (key, value) in [
            ("time_s", "1e6"),
            ("time_s", "1e-9"),
            ("size_bytes", "0"),
            ("size_bytes", "1125899906842624"),
            ("ranks", "1"),
            ("ranks", "1048576"),
        ] {
            let p = Profile::from_toml(&measurements(key, value))
                .unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
            assert_eq!(p.measurements.len(), 2);
        }
        // a profile built in code is checked the same, without a line
        let mut p = Profile::from_toml(&measurements("ranks", "4")).unwrap();
        assert_eq!(p.check_values(), Ok(()));
        p.measurements[0].time_s = f64::NAN;
        let e = p.check_values().unwrap_err();
        assert!(
            matches!(&e, ProfileError::Value { line: None, message } if message.starts_with("[[measurement]] #1 ")),
            "{e}"
        );
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(-1e-9), "-0.000000001");
        assert_eq!(short_number(1e6), "1000000");
        assert_eq!(short_number(1e300), "1e300");
        assert_eq!(short_number(f64::NAN), "NaN");
        assert_eq!(short_number(0.004960622999999997), "0.004960622999999997");
    }

    #[test]
    fn latency_only_regimes_have_no_bandwidth() {
        let s = |bw| Segment {
            min_bytes: 0,
            max_bytes: 8,
            alpha_s: 1e-6,
            bandwidth_bps: bw,
            points: 3,
            r2: 1.0,
            protocol: None,
        };
        assert_eq!(s(1e10).bandwidth(), Some(1e10));
        assert_eq!(s(1e30).bandwidth(), None);
    }
}
