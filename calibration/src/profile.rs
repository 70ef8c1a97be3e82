//! Calibration profiles: what was measured, what was fitted, and where it
//! came from.
//!
//! The file format is defined once, in [`sim::profile`] (the engine reads
//! profiles named by scenarios, and `sim` depends on no crate of ours);
//! this module re-exports its types under their calibration paths and adds
//! what writing a profile needs ([`now_rfc3339`]).
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

pub use sim::profile::{
    FitEntry, KernelEntry, KernelModel, MeasurementEntry, NetworkEntry, Profile, ProfileError,
    Provenance, ResidualEntry, SegmentEntry, TrainingEntry, TrainingPointEntry,
};

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

    // (the format's own tests live with it, in `sim::profile`)

    /// RFC 3339 in UTC to the second: `YYYY-MM-DDTHH:MM:SSZ`.
    #[test]
    fn now_is_rfc3339_utc() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        let b = t.as_bytes();
        for (i, c) in [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'Z'),
        ] {
            assert_eq!(b[i], c, "{t}");
        }
        assert!(t[..4].parse::<u32>().unwrap() >= 2026, "{t}");
    }
}
