//! Legends: one entry per series (or per stacked column, or per kind of
//! timeline span), in a column right of the plot. The entries are chosen
//! by each kind of chart; their layout (how wide the column is, how a
//! long title wraps) and drawing live here so that every kind's legend
//! looks alike.

use super::PlotSpec;
use super::chart::{Chart, MARKERS, color};
use super::draw::{Scale, draw_marker, text};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One line of the legend.
#[derive(Debug, Clone)]
pub(super) struct LegendEntry {
    pub(super) label: String,
    pub(super) color: RGBColor,
    /// `Some(marker)`: a line with that marker; `None`: a filled box.
    pub(super) marker: Option<usize>,
}

/// The legend of a chart with one line or bar per series, `names` in
/// series order, coloured as the series are: lines with their markers
/// (`lines`), else filled boxes. None without a series column: a single
/// line or bar needs no legend.
pub(super) fn of_series(spec: &PlotSpec, names: &[String], lines: bool) -> Vec<LegendEntry> {
    if spec.series.is_none() {
        return Vec::new();
    }
    names
        .iter()
        .enumerate()
        .map(|(i, n)| LegendEntry {
            label: n.clone(),
            color: color(i),
            marker: lines.then_some(i % MARKERS),
        })
        .collect()
}

/// Lengths of a legend row: the swatch before each label (a line or a
/// box, and the gap after it) and the row's height.
struct Row {
    swatch: i32,
    gap: i32,
    height: i32,
}

impl Row {
    fn of(scale: Scale) -> Row {
        Row {
            swatch: scale.px(44.0),
            gap: scale.px(10.0),
            height: scale.px(34.0),
        }
    }
}

/// The width in pixels of `c`'s legend column: its widest entry, or the
/// widest comma-separated part of its title, plus a margin; at most 2/5 of
/// `area_w`, the width of the area beside the title. 0 without entries.
pub(super) fn width<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    c: &Chart,
    scale: Scale,
    area_w: u32,
) -> Result<i32, String> {
    let font = scale.font(22.0);
    let size = |t: &str| root.estimate_text_size(t, &font).map_err(text);
    let row = Row::of(scale);
    let mut w = 0;
    for e in &c.legend {
        w = w.max(size(&e.label)?.0 as i32 + row.swatch + row.gap);
    }
    // a long legend title (several keys) wraps at its commas, so it never
    // widens the legend more than its longest part
    if let Some(t) = &c.legend_title {
        for part in t.split(", ") {
            w = w.max(size(part)?.0 as i32);
        }
    }
    Ok(if c.legend.is_empty() {
        0
    } else {
        (w + scale.px(30.0)).min(area_w as i32 * 2 / 5)
    })
}

/// Draws `c`'s legend in a column `width` pixels wide ([`width`]) whose
/// top left corner is `(x0, top)`: the title, wrapped at its commas to fit,
/// then one row per entry.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    c: &Chart,
    scale: Scale,
    width: i32,
    (x0, top): (i32, i32),
) -> Result<(), String> {
    let px = |v: f64| scale.px(v);
    let font = scale.font(22.0);
    let size = |t: &str| root.estimate_text_size(t, &font).map_err(text);
    let Row {
        swatch,
        gap,
        height: row_h,
    } = Row::of(scale);
    let mut y = top + px(6.0);
    let left = x0 + px(14.0);
    let entry_font = font.pos(Pos::new(HPos::Left, VPos::Center));
    if let Some(t) = &c.legend_title {
        let room = width - px(30.0);
        let mut lines: Vec<String> = Vec::new();
        for part in t.split(", ") {
            match lines.last_mut() {
                Some(l) if size(&format!("{l}, {part}"))?.0 as i32 <= room => {
                    l.push_str(", ");
                    l.push_str(part);
                }
                Some(l) => {
                    l.push(',');
                    lines.push(part.to_string());
                }
                None => lines.push(part.to_string()),
            }
        }
        for l in &lines {
            root.draw_text(l, &entry_font, (left, y + row_h / 2))
                .map_err(text)?;
            y += row_h;
        }
    }
    for e in &c.legend {
        let mid = y + row_h / 2;
        match e.marker {
            Some(m) => {
                root.draw(&PathElement::new(
                    vec![(left, mid), (left + swatch - gap, mid)],
                    e.color.stroke_width(px(3.0).max(1) as u32),
                ))
                .map_err(text)?;
                draw_marker(root, (left + (swatch - gap) / 2, mid), m, px(7.0), e.color)?;
            }
            None => {
                root.draw(&Rectangle::new(
                    [
                        (left, mid - px(10.0)),
                        (left + swatch - gap, mid + px(10.0)),
                    ],
                    e.color.filled(),
                ))
                .map_err(text)?;
            }
        }
        root.draw_text(&e.label, &entry_font, (left + swatch, mid))
            .map_err(text)?;
        y += row_h;
    }
    Ok(())
}
