//! Axes: the range of each axis, linear, logarithmic or categorical, its
//! ticks and their labels, and how numbers are printed on them.
//!
//! Every kind of chart goes through these, so that one rule decides when
//! an axis turns logarithmic, where ticks fall and how many digits a label
//! shows; the labels are fixed here, before drawing, so the layout can
//! measure them. Labels must be the same bytes at every optimisation
//! level, hence [`pow10`] instead of `powi`.

use super::PlotError;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// A numeric axis (linear or logarithmic) or a categorical one (category
/// `i` spans `[i, i + 1)`), with its ticks and their labels fixed up front
/// so the layout can measure them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
    pub(super) ticks: Vec<f64>,
    pub(super) labels: Vec<String>,
    /// Positions of the light grid lines.
    pub(super) minor: Vec<f64>,
    /// Categories: `draw` places the labels itself, staggered when
    /// they are too wide for their slots.
    pub(super) categorical: bool,
}

/// About how many labelled ticks a linear axis gets.
const TARGET_TICKS: f64 = 6.0;
/// A logarithmic x axis is ticked at its data values when it has at most
/// this many distinct ones.
const MAX_DATA_TICKS: usize = 12;

impl Axis {
    /// An axis for `values` (finite, at least one): logarithmic when all
    /// are positive and max / min > 100, else linear. `zero`: a linear axis
    /// starts at zero (bars); `data_ticks`: a logarithmic axis may be
    /// ticked at the values themselves.
    pub(super) fn numeric(values: &[f64], zero: bool, data_ticks: bool) -> Axis {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if min > 0.0 && max / min > 100.0 {
            let mut distinct: Vec<f64> = values.to_vec();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            let at_values = data_ticks && distinct.len() <= MAX_DATA_TICKS;
            Axis::log(min, max, at_values.then_some(distinct))
        } else if values.iter().all(|v| v.fract() == 0.0) {
            // whole numbers (GPUs, nodes, partitions) get whole ticks
            Axis::linear_from(min, max, zero, 1.0)
        } else {
            Axis::linear(min, max, zero)
        }
    }

    /// A linear axis over `[min, max]` with 4% headroom on each side that
    /// is not pinned at zero; `zero` includes zero in the range.
    pub(super) fn linear(min: f64, max: f64, zero: bool) -> Axis {
        Axis::linear_from(min, max, zero, 0.0)
    }

    /// [`Axis::linear`] with ticks at least `min_step` apart.
    fn linear_from(min: f64, max: f64, zero: bool, min_step: f64) -> Axis {
        let (mut a, mut b) = (min, max);
        if zero {
            a = a.min(0.0);
            b = b.max(0.0);
        }
        // values equal to within rounding get the range of equal values,
        // not an axis of indistinguishable tick labels
        if b - a <= 1e-9 * a.abs().max(b.abs()) {
            let d = if a == 0.0 && b == 0.0 {
                1.0
            } else {
                a.abs().max(b.abs()) * 0.1
            };
            a -= d;
            b += d;
            if zero && min >= 0.0 {
                a = a.max(0.0);
            }
            if zero && max <= 0.0 {
                b = b.min(0.0);
            }
        }
        let span = b - a;
        if !(zero && a == 0.0) {
            a -= 0.04 * span;
        }
        if !(zero && b == 0.0) {
            b += 0.04 * span;
        }
        let step = nice_step((b - a) / TARGET_TICKS).max(min_step);
        let first = (a / step).ceil() as i64;
        let last = (b / step).floor() as i64;
        let ticks: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        let decimals = decimals(step);
        let big = a.abs().max(b.abs());
        let labels = ticks
            .iter()
            .map(|&v| {
                if v != 0.0 && !(1e-3..1e6).contains(&big) {
                    short(v)
                } else {
                    format!("{v:.decimals$}")
                }
            })
            .collect();
        let minor_step = step / 2.0;
        let minor = ((a / minor_step).ceil() as i64..=(b / minor_step).floor() as i64)
            .map(|k| k as f64 * minor_step)
            .collect();
        Axis {
            lo: a,
            hi: b,
            log: false,
            ticks,
            labels,
            minor,
            categorical: false,
        }
    }

    /// A logarithmic axis over `[min, max]` (both positive), padded by a
    /// factor 1.25 at each end so no point sits on the frame. With `at`, it
    /// is ticked at those values; otherwise at the powers of ten inside
    /// (and at 2× and 5× when it spans at most three decades).
    pub(super) fn log(min: f64, max: f64, at: Option<Vec<f64>>) -> Axis {
        let (lo, hi) = (min / 1.25, max * 1.25);
        let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let ticks = match at {
            Some(values) => values,
            None => {
                let mantissas: &[f64] = if hi / lo <= 1000.0 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                // at most about a dozen labelled decades
                let every = ((k1 - k0) / 12).max(1);
                (k0..=k1)
                    .filter(|k| (k - k0) % every == 0)
                    .flat_map(|k| mantissas.iter().map(move |m| m * pow10(k)))
                    .filter(|v| (lo..=hi).contains(v))
                    .collect()
            }
        };
        let labels = ticks.iter().map(|&v| value_label(v)).collect();
        // minor ticks at 2..9 × 10^k only while they can be told apart
        let minor = if k1 - k0 <= 24 {
            (k0..=k1)
                .flat_map(|k| (1..10).map(move |m| f64::from(m) * pow10(k)))
                .filter(|v| (lo..=hi).contains(v))
                .collect()
        } else {
            Vec::new()
        };
        Axis {
            lo,
            hi,
            log: true,
            ticks,
            labels,
            minor,
            categorical: false,
        }
    }

    /// A categorical axis: `labels[i]` at the middle of `[i, i + 1)`.
    pub(super) fn categories(labels: Vec<String>) -> Axis {
        Axis {
            lo: 0.0,
            hi: labels.len().max(1) as f64,
            log: false,
            ticks: (0..labels.len()).map(|i| i as f64 + 0.5).collect(),
            labels,
            minor: Vec::new(),
            categorical: true,
        }
    }

    /// The label of tick `v`.
    pub(super) fn label(&self, v: f64) -> String {
        match self.ticks.iter().position(|&t| t == v) {
            Some(i) => self.labels[i].clone(),
            None => short(v),
        }
    }

    /// Where `v` falls along the axis, 0 at `lo` and 1 at `hi` (clamped to
    /// [-1, 2] so that far-off values stay drawable).
    fn fraction(&self, v: f64) -> f64 {
        let t = if self.log {
            if v <= 0.0 {
                -1.0
            } else {
                (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
            }
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        if t.is_nan() { 0.0 } else { t.clamp(-1.0, 2.0) }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = self.fraction(*value);
        (f64::from(limit.0) + t * f64::from(limit.1 - limit.0)).round() as i32
    }

    /// The labelled ticks for bold grid lines, the minor positions for light
    /// ones; the hint's count is ignored since the ticks were chosen with
    /// the picture's size in mind.
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// `10^k`, exactly the double nearest to it (`powi` may differ between
/// optimisation levels, which would break byte-identical output).
fn pow10(k: i32) -> f64 {
    format!("1e{k}").parse().unwrap_or(f64::NAN)
}

/// Largest magnitude a chart axis takes: beyond it the axis arithmetic
/// (spans, padding, ticks) would overflow an f64.
const MAX_PLOTTED: f64 = 1e300;

/// Refuses values whose axis could not be computed.
pub(super) fn plottable(values: &[f64], what: &str) -> Result<(), PlotError> {
    match values
        .iter()
        .find(|v| v.abs() > MAX_PLOTTED || !v.is_finite())
    {
        Some(v) => Err(PlotError::BadSpec(format!(
            "{what} holds {v}: values beyond ±1e300 cannot be plotted"
        ))),
        None => Ok(()),
    }
}

/// The one of 1, 2, 2.5, 5, 10 × 10^k nearest to `raw` by ratio.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let k = raw.log10().floor() as i32;
    let base = pow10(k);
    let m = raw / base;
    let off = |c: f64| (c / m).ln().abs();
    let nice = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .min_by(|a, b| off(*a).total_cmp(&off(*b)))
        .unwrap_or(1.0);
    nice * base
}

/// Decimal places that show every multiple of `step` exactly.
fn decimals(step: f64) -> usize {
    (0..12)
        .find(|&d| {
            let scaled = step * pow10(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(12)
}

/// `v` rounded to 6 significant digits, shortest form; scientific
/// notation (`1.5e6`, `2e-4`) outside [0.001, 10^6).
pub(super) fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{}", if v == 0.0 { 0.0 } else { v });
    }
    let k = v.abs().log10().floor() as i32;
    let f = pow10(5 - k);
    let r = (v * f).round() / f;
    if !(1e-3..1e6).contains(&r.abs()) {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

/// A data value as a label: integers without a decimal point.
pub(super) fn value_label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{}", v as i64)
    } else {
        short(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_cover_the_data() {
        let a = Axis::linear(0.0, 0.93, true);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 0.93);
        assert_eq!(a.labels, ["0.0", "0.2", "0.4", "0.6", "0.8"]);
        let b = Axis::linear(4.0, 64.0, false);
        assert!(b.lo < 4.0 && b.hi > 64.0);
        assert_eq!(b.labels, ["10", "20", "30", "40", "50", "60"]);
        let c = Axis::linear(0.0, 3.0e7, true);
        assert_eq!(c.labels[1], "5e6");
    }

    #[test]
    fn axes_turn_logarithmic_beyond_two_decades() {
        let a = Axis::numeric(&[1.0, 50.0, 100.0], false, false);
        assert!(!a.log);
        let b = Axis::numeric(&[1.0, 50.0, 101.0], false, false);
        assert!(b.log);
        assert_eq!((b.lo, b.hi), (0.8, 126.25));
        assert_eq!(b.labels, ["1", "2", "5", "10", "20", "50", "100"]);
        let wide = Axis::numeric(&[1.0, 1e6], false, false);
        assert_eq!(
            wide.labels,
            ["1", "10", "100", "1000", "10000", "100000", "1e6"]
        );
        let c = Axis::numeric(&[3.0, 40.0], false, false);
        assert!(!c.log);
        let d = Axis::numeric(&[0.5, 80.0], false, false);
        assert!(d.log);
        assert_eq!(d.labels, ["0.5", "1", "2", "5", "10", "20", "50", "100"]);
        // few GPU counts: ticks at the data
        let gpus = [1.0, 4.0, 16.0, 64.0, 256.0, 4.0];
        let e = Axis::numeric(&gpus, false, true);
        assert!(e.log);
        assert_eq!(e.labels, ["1", "4", "16", "64", "256"]);
        // a negative value keeps the axis linear
        assert!(!Axis::numeric(&[-1.0, 1000.0], false, false).log);
        // whole numbers get whole ticks: not 1.0, 1.5, 2.0 GPUs
        let few = Axis::numeric(&[1.0, 2.0, 3.0, 4.0], false, true);
        assert_eq!(few.labels, ["1", "2", "3", "4"]);
        assert_eq!(Axis::numeric(&[2.0, 3.0], false, true).labels, ["2", "3"]);
        // fractions keep their steps
        assert_eq!(
            Axis::numeric(&[1.0, 1.5, 4.0], false, true).labels,
            ["1.0", "1.5", "2.0", "2.5", "3.0", "3.5", "4.0"]
        );
    }

    #[test]
    fn axis_maps_ends_to_limits() {
        let a = Axis::log(1.25, 800.0, None);
        assert_eq!(a.map(&1.0, (100, 700)), 100);
        assert_eq!(a.map(&1000.0, (100, 700)), 700);
        assert_eq!(a.map(&10.0, (100, 700)), 300);
        let c = Axis::categories(vec!["a".into(), "b".into()]);
        assert_eq!(c.map(&1.0, (0, 100)), 50);
        assert_eq!(c.label(1.5), "b");
    }

    #[test]
    fn numbers_print_short() {
        assert_eq!(short(0.30000000000000004), "0.3");
        assert_eq!(short(1234567.0), "1.23457e6");
        assert_eq!(short(0.00025), "2.5e-4");
        assert_eq!(value_label(16.0), "16");
        assert_eq!(value_label(2.5), "2.5");
        assert_eq!(nice_step(10.8), 10.0);
        assert_eq!(nice_step(0.21), 0.2);
        assert_eq!(nice_step(0.16), 0.2);
        assert_eq!(nice_step(0.24), 0.25);
        assert_eq!(decimals(0.25), 2);
        assert_eq!(decimals(20.0), 0);
    }
}
