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
    // Mean and the band's edges (the runs' smallest and largest value) per index, over the
    // runs long enough to have it.
    let summaries: Vec<Vec<(f64, f64, f64, f64)>> = curves
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
        .collect();
    let y = LogAxis::with_zero_below(
        summaries.iter().flatten().flat_map(|&(_, y, low, high)| [y, low, high]),
        NASH_CONV_ZERO,
    );
    let x_min = summaries.iter().flatten().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = summaries.iter().flatten().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_min < x_max { (x_min, x_max) } else { (0.0, 1.0) };
    let integer_x = summaries.iter().flatten().all(|p| p.0.fract() == 0.0);
    let x_ticks = linear_ticks(x_min, x_max, 10, integer_x);
    let y_desc = y.describe(y_label, "below");
    let figure = svg_text((900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, TITLE_FONT)
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(linear_axis(x_min..x_max, x_ticks), log_axis(y.low..y.high, y.ticks.clone()))
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc(x_label)
            .y_desc(y_desc.as_str())
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, integer_x))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        draw_zero_bands(&mut chart, None, Some(&y))?;
        for (k, (curve, points)) in curves.iter().zip(&summaries).enumerate() {
            let color = CURVE_COLORS[k % CURVE_COLORS.len()].to_rgba();
            // Long curves thinned to the figure's resolution, extremes kept (the band's
            // edges each on their own).
            let thin = |f: &dyn Fn(f64, f64, f64) -> f64| {
                downsample(
                    &points
                        .iter()
                        .map(|&(x, v, low, high)| (x, y.place(f(v, low, high))))
                        .collect::<Vec<_>>(),
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
        let (log_low, log_span) = (y.low.ln(), (y.high.ln() - y.low.ln()).max(f64::MIN_POSITIVE));
        let shares: Vec<Vec<(f64, f64)>> = summaries
            .iter()
            .map(|points| {
                points
                    .iter()
                    .map(|&(x, v, _, _)| {
                        ((x - x_min) / (x_max - x_min), (y.place(v).ln() - log_low) / log_span)
                    })
                    .collect()
            })
            .collect();
        draw_legend(&mut chart, quietest_corner(&shares, curves.len()))?;
        Ok(())
    });
    write_figure(path, figure)
}
