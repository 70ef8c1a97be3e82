//! Quantities with units, as scenario files write them.
//!
//! Sizes: `"25MiB"`, `"4MB"`, `"1.2GB"`, `"512"` (bytes), with decimal
//! (k, M, G, T) and binary (Ki, Mi, Gi, Ti) prefixes.
//! Bandwidths: bits (`"100Gbps"`, `"100Gb/s"`, `"100Gbit/s"`) or bytes
//! (`"12.5GB/s"`, `"12.5GBps"`, `"10GiB/s"`) per second.
//! Durations: `"1.5us"` (also `"1.5µs"`), `"50ns"`, `"2ms"`, `"1s"`, `"10ps"`.
//!
//! ```
//! use sim::units::{parse_bandwidth, parse_bytes, parse_duration};
//! assert_eq!(parse_bytes("25MiB").unwrap(), 25 * 1024 * 1024);
//! assert_eq!(parse_bytes("1.2GB").unwrap(), 1_200_000_000);
//! assert_eq!(parse_bandwidth("100Gbps").unwrap(), 12.5e9);
//! assert_eq!(parse_bandwidth("12.5GB/s").unwrap(), 12.5e9);
//! assert_eq!(parse_duration("1.5us").unwrap().0, 1_500_000);
//! ```

use crate::time::SimTime;
use std::fmt;

/// Why a quantity could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UnitError {
    /// The text has no number in front.
    #[error("`{0}` does not start with a number")]
    NoNumber(String),
    /// The unit is not one we know for this kind of quantity, or is
    /// missing where one is needed.
    #[error("`{text}` {} (expected {expected})", unit_words(.unit))]
    UnknownUnit {
        /// The whole text.
        text: String,
        /// The unit part.
        unit: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// Negative, zero where not allowed, not finite, or too large.
    #[error("`{0}` is out of range ({1})")]
    OutOfRange(String, &'static str),
}

/// "has unknown unit `x`", or "has no unit" for an empty one.
fn unit_words(unit: &str) -> String {
    if unit.is_empty() {
        "has no unit".to_string()
    } else {
        format!("has unknown unit `{unit}`")
    }
}

fn split_number(text: &str) -> Result<(f64, &str), UnitError> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '_'
                || ((c == 'e' || c == 'E')
                    && t[i + 1..]
                        .starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+'))
                || ((c == '-' || c == '+')
                    && (i == 0 || matches!(t.as_bytes()[i - 1], b'e' | b'E'))))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let num: String = t[..end].chars().filter(|&c| c != '_').collect();
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError::NoNumber(text.to_string()))?;
    Ok((value, t[end..].trim()))
}

fn prefix_factor(p: &str) -> Option<f64> {
    Some(match p {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Parses a size in bytes. Fractional results are rounded to the nearest
/// byte.
pub fn parse_bytes(text: &str) -> Result<u64, UnitError> {
    let (v, unit) = split_number(text)?;
    let unknown = || UnitError::UnknownUnit {
        text: text.to_string(),
        unit: unit.to_string(),
        expected: "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB",
    };
    let prefix = if unit.is_empty() {
        ""
    } else {
        unit.strip_suffix('B').ok_or_else(unknown)?
    };
    let f = prefix_factor(prefix).ok_or_else(unknown)?;
    let bytes = v * f;
    if bytes.is_nan() || bytes < 0.0 {
        return Err(UnitError::OutOfRange(
            text.to_string(),
            "must be a non-negative size",
        ));
    }
    if bytes > 9.0e18 {
        return Err(UnitError::OutOfRange(
            text.to_string(),
            "a size is at most 9e18 bytes (8 EiB)",
        ));
    }
    Ok(bytes.round() as u64)
}

/// Parses a bandwidth into bytes per second. Must be positive.
pub fn parse_bandwidth(text: &str) -> Result<f64, UnitError> {
    let (v, unit) = split_number(text)?;
    let unknown = || UnitError::UnknownUnit {
        text: text.to_string(),
        unit: unit.to_string(),
        expected: "bits (bps, b/s, bit/s) or bytes (B/s, Bps) per second with an optional k/M/G/T or Ki/Mi/Gi/Ti prefix",
    };
    let (prefix, bits) = if let Some(p) = unit
        .strip_suffix("bps")
        .or_else(|| unit.strip_suffix("b/s"))
        .or_else(|| unit.strip_suffix("bit/s"))
    {
        (p, true)
    } else if let Some(p) = unit
        .strip_suffix("B/s")
        .or_else(|| unit.strip_suffix("Bps"))
    {
        (p, false)
    } else {
        return Err(unknown());
    };
    let f = prefix_factor(prefix).ok_or_else(unknown)?;
    let bps = v * f / if bits { 8.0 } else { 1.0 };
    if !bps.is_finite() || bps <= 0.0 {
        return Err(UnitError::OutOfRange(
            text.to_string(),
            "a bandwidth must be a positive, finite number",
        ));
    }
    Ok(bps)
}

/// Parses a duration. Must be non-negative.
pub fn parse_duration(text: &str) -> Result<SimTime, UnitError> {
    parse_seconds(text).map(SimTime::from_secs)
}

/// Parses a duration into seconds. Must be non-negative and finite.
pub fn parse_seconds(text: &str) -> Result<f64, UnitError> {
    let (v, unit) = split_number(text)?;
    let f = match unit {
        "ps" => 1e-12,
        "ns" => 1e-9,
        "us" | "µs" | "μs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => {
            return Err(UnitError::UnknownUnit {
                text: text.to_string(),
                unit: unit.to_string(),
                expected: "ps, ns, us, ms, s",
            });
        }
    };
    let s = v * f;
    if !s.is_finite() || s < 0.0 {
        return Err(UnitError::OutOfRange(
            text.to_string(),
            "a duration must be non-negative",
        ));
    }
    Ok(s)
}

/// Formats bytes with a binary prefix, for human-readable tables.
pub struct HumanBytes(pub f64);

impl fmt::Display for HumanBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // + 0.0 turns -0.0 (an empty sum) into 0.0, and changes nothing else
        let mut v = self.0 + 0.0;
        for unit in ["B", "KiB", "MiB", "GiB"] {
            if v.abs() < 1024.0 {
                return write!(f, "{v:.1} {unit}");
            }
            v /= 1024.0;
        }
        write!(f, "{v:.1} TiB")
    }
}

/// Formats a rate in bytes per second in decimal units (as nccl-tests and
/// network vendors count: GB/s = 10⁹ B/s), the unit chosen so that three
/// significant digits show: "12.3 GB/s", "4.56 MB/s", "789 B/s" (a
/// 5 MB/s link printed as GB/s with two decimals would read 0.00).
pub struct HumanRate(pub f64);

impl fmt::Display for HumanRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0 + 0.0;
        if !v.is_finite() {
            return write!(f, "{v} B/s");
        }
        let (x, unit) = [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")]
            .into_iter()
            .find(|(s, _)| v.abs() >= *s)
            .map_or((v, "B/s"), |(s, u)| (v / s, u));
        let decimals = if x.abs() >= 100.0 {
            0
        } else if x.abs() >= 10.0 {
            1
        } else {
            2
        };
        write!(f, "{x:.decimals$} {unit}")
    }
}

/// Formats seconds in the unit that shows their digits: "8.4 µs",
/// "1.25 ms", "3.00 s", "0 s" (three significant digits, as
/// [`HumanRate`]).
pub struct HumanSeconds(pub f64);

impl fmt::Display for HumanSeconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0 + 0.0;
        if !v.is_finite() || v == 0.0 {
            return write!(f, "{v} s");
        }
        let (x, unit) = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs")]
            .into_iter()
            .find(|(s, _)| v.abs() >= *s)
            .map_or((v / 1e-9, "ns"), |(s, u)| (v / s, u));
        let decimals = if x.abs() >= 100.0 {
            0
        } else if x.abs() >= 10.0 {
            1
        } else {
            2
        };
        write!(f, "{x:.decimals$} {unit}")
    }
}

/// `n` things, in words: "1 GPU", "2 GPUs", "0 points" (English plural
/// by a trailing "s", which every noun the tool counts takes).
pub struct Count<'a>(pub u64, pub &'a str);

impl fmt::Display for Count<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Count(n, noun) = *self;
        write!(f, "{n} {noun}{}", if n == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three significant digits whatever the time.
    #[test]
    fn seconds_show_their_digits() {
        let s = |v: f64| HumanSeconds(v).to_string();
        assert_eq!(s(8.4e-6), "8.40 µs");
        assert_eq!(s(1.25e-3), "1.25 ms");
        assert_eq!(s(0.34053), "341 ms");
        assert_eq!(s(3.0), "3.00 s");
        assert_eq!(s(5e-10), "0.50 ns");
        assert_eq!(s(0.0), "0 s");
    }

    /// Three significant digits whatever the rate: a slow link is not
    /// "0.00 GB/s".
    #[test]
    fn rates_show_their_digits() {
        let s = |v: f64| HumanRate(v).to_string();
        assert_eq!(s(12.34e9), "12.3 GB/s");
        assert_eq!(s(4.567e6), "4.57 MB/s");
        assert_eq!(s(123.4e6), "123 MB/s");
        assert_eq!(s(789.0), "789 B/s");
        assert_eq!(s(1.5e12), "1.50 TB/s");
        assert_eq!(s(0.0), "0.00 B/s");
    }

    #[test]
    fn counts_are_singular_only_for_one() {
        assert_eq!(Count(1, "GPU").to_string(), "1 GPU");
        assert_eq!(Count(0, "point").to_string(), "0 points");
        assert_eq!(Count(48, "GPU").to_string(), "48 GPUs");
    }

    #[test]
    fn negative_zero_bytes_print_as_zero() {
        assert_eq!(HumanBytes(0.0).to_string(), "0.0 B");
        assert_eq!(HumanBytes(-0.0).to_string(), "0.0 B");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("0").unwrap(), 0);
        assert_eq!(parse_bytes("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_bytes("252.5 MiB").unwrap(), 264_765_440);
        assert_eq!(parse_bytes("100MB").unwrap(), 100_000_000);
        assert_eq!(parse_bytes("1_000kB").unwrap(), 1_000_000);
        assert!(matches!(
            parse_bytes("12 apples"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(parse_bytes("MiB"), Err(UnitError::NoNumber(_))));
        assert!(matches!(
            parse_bytes("-1MB"),
            Err(UnitError::OutOfRange(..))
        ));
    }

    /// A number without the unit a bandwidth or duration needs says so
    /// (a review: `--bandwidth 0` read "`0` has unknown unit ``").
    #[test]
    fn a_missing_unit_is_named() {
        let e = parse_bandwidth("0").unwrap_err().to_string();
        assert!(e.starts_with("`0` has no unit (expected bits"), "{e}");
        let e = parse_seconds("5").unwrap_err().to_string();
        assert_eq!(e, "`5` has no unit (expected ps, ns, us, ms, s)");
        let e = parse_seconds("5 min").unwrap_err().to_string();
        assert!(e.contains("has unknown unit `min`"), "{e}");
    }

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("10Gbps").unwrap(), 1.25e9);
        assert_eq!(parse_bandwidth("10 Gb/s").unwrap(), 1.25e9);
        assert_eq!(parse_bandwidth("10Gbit/s").unwrap(), 1.25e9);
        assert_eq!(parse_bandwidth("6GB/s").unwrap(), 6e9);
        assert_eq!(parse_bandwidth("1GiB/s").unwrap(), 1073741824.0);
        assert_eq!(parse_bandwidth("1e9Bps").unwrap(), 1e9);
        assert!(parse_bandwidth("0Gbps").is_err());
        assert!(parse_bandwidth("-5Gbps").is_err());
        assert!(parse_bandwidth("5GB").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("50us").unwrap(), SimTime(50_000_000));
        assert_eq!(parse_duration("1.5µs").unwrap(), SimTime(1_500_000));
        assert_eq!(parse_duration("0.436ms").unwrap(), SimTime(436_000_000));
        assert_eq!(parse_duration("2s").unwrap(), SimTime(2_000_000_000_000));
        assert!(parse_duration("-1us").is_err());
        assert!(parse_duration("3 fortnights").is_err());
    }
}
