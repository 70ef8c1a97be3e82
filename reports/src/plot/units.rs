//! Units as a picture shows them: what a column measures comes from the
//! one table of columns ([`crate::labels`]); here its values' magnitude
//! picks the scale: a time in s, ms or µs, a throughput in the table's
//! `throughput_unit`, a fraction in %, bytes with binary prefixes, a
//! ratio as ×. One place decides a column's unit, so the axis titles of
//! every kind agree and stacked columns can be checked for sharing one.

use super::rows::{Keys, keys};
use crate::labels::Quantity;
use polars::prelude::DataFrame;

/// A display unit: values are multiplied by `factor` and the axis title
/// ends in `(name)`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Unit {
    pub(super) name: Option<String>,
    pub(super) factor: f64,
}

/// The unit to show `quantity` in, for values whose largest magnitude is
/// `max_abs`.
pub(super) fn unit(quantity: Quantity, max_abs: f64, df: &DataFrame) -> Unit {
    let named = |name: &str, factor: f64| Unit {
        name: Some(name.to_string()),
        factor,
    };
    match quantity {
        Quantity::Time if max_abs >= 1.0 || max_abs == 0.0 => named("s", 1.0),
        Quantity::Time if max_abs >= 1e-3 => named("ms", 1e3),
        Quantity::Time => named("µs", 1e6),
        Quantity::Throughput => {
            let mut units: Vec<String> = Vec::new();
            if let Ok(Keys::Texts(values)) = keys(df, "throughput_unit") {
                for v in values.into_iter().flatten() {
                    if !units.contains(&v) {
                        units.push(v);
                    }
                }
            }
            if units.is_empty() {
                named("samples/s", 1.0)
            } else {
                named(&units.join(" or "), 1.0)
            }
        }
        Quantity::Fraction => named("%", 100.0),
        Quantity::Bytes => {
            const NAMES: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
            let mut k = 0;
            while k + 1 < NAMES.len() && max_abs >= 1024f64.powi(k as i32 + 1) {
                k += 1;
            }
            named(NAMES[k], 1.0 / 1024f64.powi(k as i32))
        }
        Quantity::Ratio => named("×", 1.0),
        Quantity::Plain => Unit {
            name: None,
            factor: 1.0,
        },
    }
}

/// An axis title: the column's human name ([`crate::labels`]), and its
/// unit in parentheses.
pub(super) fn titled(column: &str, unit: &Unit) -> String {
    crate::labels::titled(&crate::labels::label(column), unit.name.as_deref())
}

/// The largest magnitude of `values` (0 for none).
pub(super) fn max_abs(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |m, v| m.max(v.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::df;

    #[test]
    fn units_follow_column_names() {
        let df = df!("throughput_unit" => ["tokens/s"]).unwrap();
        let name = |c: &str, max: f64| unit(crate::labels::quantity(c), max, &df).name;
        assert_eq!(name("iteration_time_s", 2.5).as_deref(), Some("s"));
        assert_eq!(name("compute_s", 0.25).as_deref(), Some("ms"));
        assert_eq!(name("compute_s", 0.0002).as_deref(), Some("µs"));
        assert_eq!(name("throughput", 1e4).as_deref(), Some("tokens/s"));
        assert_eq!(name("scaling_efficiency", 0.9).as_deref(), Some("%"));
        assert_eq!(
            name("bytes_sent_per_gpu", 3.0 * 1024.0 * 1024.0).as_deref(),
            Some("MiB")
        );
        assert_eq!(name("bytes_sent_per_gpu", 100.0).as_deref(), Some("bytes"));
        assert_eq!(name("speedup", 3.0).as_deref(), Some("×"));
        assert_eq!(name("gpus", 64.0), None);
        let empty = df!("x" => [1]).unwrap();
        assert_eq!(
            unit(Quantity::Throughput, 1.0, &empty).name.as_deref(),
            Some("samples/s")
        );
        assert_eq!(unit(Quantity::Fraction, 1.0, &empty).factor, 100.0);
    }
}
