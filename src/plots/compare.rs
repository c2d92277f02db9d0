//! Several runs on one figure: each curve's mean over its runs, with their band.

use std::path::Path;

use plotters::prelude::*;

use crate::error::Result;

use super::kit::{
    CURVE_COLORS, DESC_FONT, GRID_COLOR, LABEL_FONT, LogAxis, NASH_CONV_ZERO, TITLE_FONT, axis_number,
    downsample, draw_legend, draw_zero_bands, linear_axis, linear_ticks, log_axis, quietest_corner, svg_text,
    text_err, write_figure,
};

/// One curve of a comparison: a label and the runs it averages (each a list of `(x, y)`
/// points, aligned by index: the runs of one config differ only in their seed).
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The legend entry.
    pub label: String,
    /// The runs' points.
    pub runs: Vec<Vec<(f64, f64)>>,
}

/// Several curves on one log-scale figure: each curve's mean over its runs, and for curves
/// of 2 or more runs a band from the smallest to the largest run (a study's few seeds make a
/// normal 95% interval of the mean too narrow). Values at or below 0 are
/// drawn on a floor one decade below the smallest positive value, the tick labelled `0`,
/// inside a shaded band under a break in the axis (so that 0 is not read as that decade).
///
/// # Errors
///
/// [`Error::Output`](crate::Error::Output) when the file cannot be written.
pub fn compare_svg(curves: &[Curve], title: &str, x_label: &str, y_label: &str, path: &Path) -> Result<()> {
    let summaries = summarise(curves);
    let y = LogAxis::with_zero_below(
        summaries.iter().flatten().flat_map(|&(_, y, low, high)| [y, low, high]),
        NASH_CONV_ZERO,
    );
    let x = XAxis::of(&summaries);
    let y_desc = y.describe(y_label, "below");
    let figure = svg_text((900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, TITLE_FONT)
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x.axis(), log_axis(y.low..y.high, y.ticks.clone()))
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc(x_label)
            .y_desc(y_desc.as_str())
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, x.integer))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        draw_zero_bands(&mut chart, None, Some(&y))?;
        let (log_low, log_span) = (y.low.ln(), (y.high.ln() - y.low.ln()).max(f64::MIN_POSITIVE));
        draw_curves(&mut chart, curves, &summaries, &x, &|v| y.place(v), &|v| {
            (y.place(v).ln() - log_low) / log_span
        })
    });
    write_figure(path, figure)
}

/// [`compare_svg`] on a linear y axis over `y_range` (win rates in [0, 1], ratings), values
/// drawn as they are.
///
/// # Errors
///
/// [`Error::Output`](crate::Error::Output) when the file cannot be written.
pub fn compare_linear_svg(
    curves: &[Curve],
    title: &str,
    (x_label, y_label): (&str, &str),
    y_range: (f64, f64),
    path: &Path,
) -> Result<()> {
    let summaries = summarise(curves);
    let x = XAxis::of(&summaries);
    let (low, high) = if y_range.0 < y_range.1 { y_range } else { (y_range.0, y_range.0 + 1.0) };
    let figure = svg_text((900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, TITLE_FONT)
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x.axis(), linear_axis(low..high, linear_ticks(low, high, 10, false)))
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc(x_label)
            .y_desc(y_label)
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, x.integer))
            .y_label_formatter(&|v| axis_number(*v, false))
            .draw()
            .map_err(text_err)?;
        draw_curves(&mut chart, curves, &summaries, &x, &|v| v, &|v| (v - low) / (high - low))
    });
    write_figure(path, figure)
}

/// Per curve and index, the mean `x`, the mean `y` and the band's edges (the runs'
/// smallest and largest `y`), over the runs long enough to have that index.
fn summarise(curves: &[Curve]) -> Vec<Vec<(f64, f64, f64, f64)>> {
    curves
        .iter()
        .map(|c| {
            let len = c.runs.iter().map(Vec::len).max().unwrap_or(0);
            (0..len)
                .map(|i| {
                    let pts: Vec<(f64, f64)> = c.runs.iter().filter_map(|r| r.get(i).copied()).collect();
                    let n = pts.len() as f64;
                    let x = pts.iter().map(|p| p.0).sum::<f64>() / n;
                    let y = pts.iter().map(|p| p.1).sum::<f64>() / n;
                    let low = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
                    let high = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
                    (x, y, low, high)
                })
                .collect()
        })
        .collect()
}

/// A comparison's x axis as plotters draws it.
type XTicks = super::kit::Ticked<plotters::coord::types::RangedCoordf64>;

/// The x axis of a comparison: its range and whether its values are whole.
struct XAxis {
    min: f64,
    max: f64,
    integer: bool,
}

impl XAxis {
    fn of(summaries: &[Vec<(f64, f64, f64, f64)>]) -> Self {
        let min = summaries.iter().flatten().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let max = summaries.iter().flatten().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if min < max { (min, max) } else { (0.0, 1.0) };
        let integer = summaries.iter().flatten().all(|p| p.0.fract() == 0.0);
        Self { min, max, integer }
    }
    fn axis(&self) -> XTicks {
        linear_axis(self.min..self.max, linear_ticks(self.min, self.max, 10, self.integer))
    }
}

/// The curves (bands for curves of several runs, then the means) and the legend where it
/// hides the least; `place` maps a value to the y axis, `share` to its height in the plot
/// (0 at the bottom, 1 at the top).
fn draw_curves<'a, DB: DrawingBackend + 'a, Y: plotters::coord::ranged1d::Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<XTicks, Y>>,
    curves: &[Curve],
    summaries: &[Vec<(f64, f64, f64, f64)>],
    x: &XAxis,
    place: &dyn Fn(f64) -> f64,
    share: &dyn Fn(f64) -> f64,
) -> std::result::Result<(), String> {
    for (k, (curve, points)) in curves.iter().zip(summaries).enumerate() {
        let color = CURVE_COLORS[k % CURVE_COLORS.len()].to_rgba();
        // Long curves thinned to the figure's resolution, extremes kept (the band's edges
        // each on their own).
        let thin = |f: &dyn Fn(f64, f64, f64) -> f64| {
            downsample(
                &points.iter().map(|&(x, v, low, high)| (x, place(f(v, low, high)))).collect::<Vec<_>>(),
            )
        };
        if curve.runs.len() > 1 {
            let upper = thin(&|_, _, high| high);
            let lower = thin(&|_, low, _| low);
            chart
                .draw_series(std::iter::once(Polygon::new(
                    upper.into_iter().chain(lower.into_iter().rev()).collect::<Vec<_>>(),
                    color.mix(0.2),
                )))
                .map_err(text_err)?;
        }
        let runs = curve.runs.len();
        let label = if runs > 1 {
            format!("{} (mean of {runs}; band: their range)", curve.label)
        } else {
            curve.label.clone()
        };
        chart
            .draw_series(LineSeries::new(thin(&|v, _, _| v), color.stroke_width(2)))
            .map_err(text_err)?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    // Where the legend hides the least: each curve's points as shares of the plot.
    let shares: Vec<Vec<(f64, f64)>> = summaries
        .iter()
        .map(|points| {
            points.iter().map(|&(px, v, _, _)| ((px - x.min) / (x.max - x.min), share(v))).collect()
        })
        .collect();
    draw_legend(chart, quietest_corner(&shares, curves.len()))?;
    Ok(())
}
