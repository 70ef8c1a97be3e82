//! The picture every kind of chart builds before anything is drawn: axes,
//! bars, lines, marks and legend, in the axes' units. Building it is
//! separate from drawing it (`draw`) so that each kind's choices can be
//! tested without a backend, and so that all kinds share one layout.

use super::axes::Axis;
use super::legend::LegendEntry;
use plotters::style::RGBColor;

/// A chart, independent of the backend: axes, marks and legend, in the
/// axes' (already scaled) units.
#[derive(Debug, Clone)]
pub(super) struct Chart {
    pub(super) title: String,
    pub(super) x: Axis,
    pub(super) y: Axis,
    pub(super) x_title: String,
    pub(super) y_title: String,
    /// Grid lines across the x axis's ticks (off for categories).
    pub(super) x_grid: bool,
    /// Grid lines across the y axis's ticks.
    pub(super) y_grid: bool,
    pub(super) lines: Vec<Series>,
    pub(super) rects: Vec<Bar>,
    /// Vertical lines with a label at the top (a timeline's iterations).
    pub(super) marks: Vec<(f64, String)>,
    /// Error bars.
    pub(super) whiskers: Vec<Whisker>,
    pub(super) legend_title: Option<String>,
    pub(super) legend: Vec<LegendEntry>,
}

/// A line through points, with a marker at each.
#[derive(Debug, Clone)]
pub(super) struct Series {
    pub(super) color: RGBColor,
    pub(super) marker: usize,
    pub(super) points: Vec<(f64, f64)>,
}

/// An error bar: a vertical line at `x` from `lo` to `hi` with end caps.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Whisker {
    pub(super) x: f64,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) color: RGBColor,
}

/// A filled rectangle in axis coordinates.
#[derive(Debug, Clone)]
pub(super) struct Bar {
    pub(super) x0: f64,
    pub(super) x1: f64,
    pub(super) y0: f64,
    pub(super) y1: f64,
    pub(super) color: RGBColor,
    /// Drawn with a darker edge, so that adjacent bars of one colour (a
    /// timeline's layers) stay apart.
    pub(super) edged: bool,
}

/// Tableau 10: distinct hues that stay apart for most colour-blind readers.
pub(super) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];

/// Markers cycle separately from colours, so lines stay apart in grey too.
pub(super) const MARKERS: usize = 4;

/// The colour of series `i`.
pub(super) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}
