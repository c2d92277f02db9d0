//! The figure of one game of a benchmark: NashConv against wall time, log–log, one line per
//! algorithm (a peer's dashed, in the colour of the same algorithm of ours), several seeds
//! as their median with the band of their range. Same conventions as [`crate::plots`].

use std::path::Path;

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::error::Result;
use crate::plots::kit::{
    CURVE_COLORS, DESC_FONT, GRID_COLOR, LABEL_FONT, LogAxis, NASH_CONV_ZERO, TITLE_FONT, downsample_by,
    draw_legend, draw_zero_bands, log_axis, svg_text, text_err, write_figure,
};

/// One line of a benchmark figure.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchLine {
    /// The legend entry (the seeds are added to it).
    pub label: String,
    /// Which of the figure colours (the same algorithm keeps its colour on both sides).
    pub color: usize,
    /// Drawn dashed (a peer's line).
    pub dashed: bool,
    /// One curve of `(seconds, nash_conv)` per seed.
    pub seeds: Vec<Vec<(f64, f64)>>,
}

/// A drawn point: `(seconds, low, middle, high)`.
type Point = (f64, f64, f64, f64);

/// Points on a common time grid for lines of several seeds.
const GRID_POINTS: usize = 200;

/// A line's points to draw: `(seconds, low, middle, high)`. One seed: its points, as they
/// are. Several: the seeds' curves as step functions (each one's NashConv is that of its
/// last point so far) on a log-spaced grid over the times every seed covers; the middle is
/// their median, low and high their range.
fn summarise(seeds: &[Vec<(f64, f64)>]) -> Vec<(f64, f64, f64, f64)> {
    let positive: Vec<Vec<(f64, f64)>> = seeds
        .iter()
        .map(|s| s.iter().copied().filter(|p| p.0 > 0.0).collect())
        .filter(|s: &Vec<_>| !s.is_empty())
        .collect();
    match positive.len() {
        0 => Vec::new(),
        1 => positive[0].iter().map(|&(x, y)| (x, y, y, y)).collect(),
        _ => {
            let start = positive.iter().map(|s| s[0].0).fold(f64::NEG_INFINITY, f64::max);
            let end = positive.iter().map(|s| s[s.len() - 1].0).fold(f64::INFINITY, f64::min);
            if end <= start || end.is_nan() || start.is_nan() {
                return Vec::new();
            }
            let ratio = (end / start).ln();
            (0..GRID_POINTS)
                .map(|k| {
                    let t = start * (ratio * k as f64 / (GRID_POINTS - 1) as f64).exp();
                    let mut ys: Vec<f64> = positive
                        .iter()
                        .map(|s| {
                            s.iter().take_while(|p| p.0 <= t * (1.0 + 1e-12)).last().map_or(s[0].1, |p| p.1)
                        })
                        .collect();
                    ys.sort_by(f64::total_cmp);
                    let n = ys.len();
                    let mid = if n % 2 == 1 { ys[n / 2] } else { (ys[n / 2 - 1] + ys[n / 2]) / 2.0 };
                    (t, ys[0], mid, ys[n - 1])
                })
                .collect()
        }
    }
}

/// Draw the lines of one game into `path` (SVG).
///
/// # Errors
///
/// [`crate::Error::Output`] when the file cannot be written.
pub fn bench_svg(lines: &[BenchLine], title: &str, path: &Path) -> Result<()> {
    let summaries: Vec<Vec<(f64, f64, f64, f64)>> = lines.iter().map(|l| summarise(&l.seeds)).collect();
    let x = LogAxis::new(summaries.iter().flatten().map(|p| p.0));
    let y =
        LogAxis::with_zero_below(summaries.iter().flatten().flat_map(|p| [p.1, p.2, p.3]), NASH_CONV_ZERO);
    let y_desc = y.describe("NashConv", "below");
    let figure = svg_text((900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, TITLE_FONT)
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(
                log_axis(x.low..x.high, x.ticks.clone()),
                log_axis(y.low..y.high, y.ticks.clone()),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc("wall time per run, seconds (log scale)")
            .y_desc(y_desc.as_str())
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| x.label(*v))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        draw_zero_bands(&mut chart, Some(&x), Some(&y))?;
        for (line, points) in lines.iter().zip(&summaries) {
            if points.is_empty() {
                continue;
            }
            let color = CURVE_COLORS[line.color % CURVE_COLORS.len()].to_rgba();
            let thin = |f: &dyn Fn(&Point) -> f64| {
                downsample_by(&points.iter().map(|p| (p.0, y.place(f(p)))).collect::<Vec<_>>(), 300, f64::ln)
            };
            let seeds = line.seeds.len();
            if seeds > 1 {
                let upper = thin(&|p| p.3);
                let lower = thin(&|p| p.1);
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        upper.into_iter().chain(lower.into_iter().rev()).collect::<Vec<_>>(),
                        color.mix(if line.dashed { 0.1 } else { 0.2 }),
                    )))
                    .map_err(text_err)?;
            }
            let label = if seeds > 1 {
                format!("{} (median of {seeds} seeds; band: their range)", line.label)
            } else {
                line.label.clone()
            };
            let middle = thin(&|p| p.2);
            let style = color.stroke_width(2);
            if line.dashed {
                chart
                    .draw_series(DashedLineSeries::new(middle, 8, 5, style))
                    .map_err(text_err)?
                    .label(label)
                    .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 22, y)], 6, 4, style));
            } else {
                chart
                    .draw_series(LineSeries::new(middle, style))
                    .map_err(text_err)?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
        Ok(())
    });
    write_figure(path, figure)
}

#[cfg(test)]
mod tests {
    use super::summarise;

    #[test]
    fn seeds_become_a_median_inside_their_range() {
        let a = vec![(0.0, 9.0), (0.1, 4.0), (1.0, 2.0), (10.0, 1.0)];
        let b = vec![(0.2, 3.0), (2.0, 1.5), (8.0, 0.5)];
        let s = summarise(&[a, b]);
        assert_eq!(s.len(), super::GRID_POINTS);
        assert!((s[0].0 - 0.2).abs() < 1e-12 && (s[s.len() - 1].0 - 8.0).abs() < 1e-9);
        assert!(s.iter().all(|p| p.1 <= p.2 && p.2 <= p.3));
        // At 8 s: a is at 2 (its point at 1 s), b at 0.5.
        let last = s[s.len() - 1];
        assert_eq!((last.1, last.3), (0.5, 2.0));
        // One seed: its points, those at 0 s dropped (log axis).
        assert_eq!(summarise(&[vec![(0.0, 1.0), (1.0, 0.5)]]), vec![(1.0, 0.5, 0.5, 0.5)]);
    }
}
