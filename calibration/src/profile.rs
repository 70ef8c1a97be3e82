//! Calibration profiles: what was measured, what was fitted, and where it
//! came from.
//!
//! A profile is a TOML file. A scenario names it in `cluster.network`; the
//! simulator then takes the per-link latency and bandwidth from its
//! `[network]` table. The other tables keep the evidence: the fits per
//! operation and size regime with their quality, the raw measurements, and
//! kernel timings with their fitted cost models. `[provenance]` says which
//! logs or host, which command, and when.
//!
//! ```toml
//! [provenance]
//! tool = "dtsim 0.1.0 calibrate net"
//! created = "2026-11-22T00:40:00Z"
//! sources = ["logs/all_reduce_perf.txt"]
//!
//! [network]
//! latency_s = 2.1e-5
//! bandwidth_bps = 1.9e10
//! derived_from = "allreduce over 16 ranks, largest-size regime"
//! ```

use serde::{Deserialize, Serialize};

/// Where a profile's numbers came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The command that wrote the profile, with dtsim's version.
    pub tool: String,
    /// When, UTC, RFC 3339.
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
    /// Which fit they come from.
    pub derived_from: String,
}

/// One size regime of a fit, as [`crate::fit`] produces it.
pub type SegmentEntry = crate::fit::Segment;

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
    /// Size regimes.
    pub segments: Vec<SegmentEntry>,
    /// Relative residual (fitted − measured)/measured of every fitted point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residuals: Vec<ResidualEntry>,
    /// Sizes kept out of the fit as measurement anomalies
    /// (`calibration::fit::screen`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screened_out_bytes: Vec<u64>,
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

/// A calibration profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Where it came from.
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
}

impl Profile {
    /// Serialises to TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("profiles serialise")
    }

    /// Parses a profile; the error carries toml's line and message.
    pub fn from_toml(text: &str) -> Result<Profile, String> {
        toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            match line {
                Some(l) => format!("line {l}: {}", e.message().trim()),
                None => e.message().trim().to_string(),
            }
        })
    }
}

/// The current UTC time as RFC 3339 (seconds), from the system clock.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let p = Profile {
            provenance: Provenance {
                tool: "t".into(),
                created: now_rfc3339(),
                sources: vec!["a.txt".into()],
                host: None,
                notes: vec![],
                command: String::new(),
            },
            network: Some(NetworkEntry {
                latency_s: 1e-6,
                bandwidth_bps: 1e10,
                derived_from: "x".into(),
            }),
            ..Profile::default()
        };
        let back = Profile::from_toml(&p.to_toml()).unwrap();
        assert_eq!(back, p);
        assert_eq!(p.provenance.created.len(), 20);
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let e = Profile::from_toml("[provenance]\ntool = \"t\"\ncreated = \"x\"\nbogus = 1\n")
            .unwrap_err();
        assert!(e.starts_with("line 4"), "{e}");
    }
}
