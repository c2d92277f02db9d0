//! SVG plots of a run: NashConv curves and the final meta-game (plotters, no fonts needed).

use std::path::Path;

use metagame_games::NormalFormGame;
use plotters::prelude::*;

use crate::driver::RunReport;
use crate::error::{Error, Result};

/// Values below this are drawn at this height on log scales (NashConv can be exactly 0).
const LOG_FLOOR: f64 = 1e-16;

fn plot_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Output { path: path.into(), source: format!("plot: {e}").into() }
}

/// NashConv against iteration and against wall time, log scale, side by side.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
pub fn exploitability_svg(report: &RunReport, path: &Path) -> Result<()> {
    let points: Vec<(f64, f64, f64)> = report
        .iterations
        .iter()
        .map(|r| (r.iteration as f64, r.elapsed_s.max(1e-6), r.nash_conv.max(LOG_FLOOR)))
        .collect();
    let root = SVGBackend::new(path, (1100, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let algorithm = report.config.algorithm();
    let title = format!(
        "{} — {} {}",
        report.config.game(),
        algorithm.algorithm().as_str(),
        match algorithm {
            crate::config::AlgorithmConfig::Psro(s) => s.meta_solver.as_str(),
            _ => "",
        }
    );
    let root = root.titled(&title, ("sans-serif", 20)).map_err(|e| plot_err(path, e))?;
    let (left, right) = root.split_horizontally(550);
    let y_min = points.iter().map(|p| p.2).fold(f64::INFINITY, f64::min).min(1.0) / 2.0;
    let y_max = points.iter().map(|p| p.2).fold(0.0, f64::max).max(1e-12) * 2.0;
    let x_max = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let t_min = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min).min(1e-3) / 2.0;
    let t_max = points.iter().map(|p| p.1).fold(1e-3, f64::max) * 2.0;

    let mut chart = ChartBuilder::on(&left)
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..x_max, (y_min..y_max).log_scale())
        .map_err(|e| plot_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("NashConv")
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    chart
        .draw_series(LineSeries::new(points.iter().map(|p| (p.0, p.2)), BLUE.stroke_width(2)))
        .map_err(|e| plot_err(path, e))?;
    chart
        .draw_series(points.iter().map(|p| Circle::new((p.0, p.2), 3, BLUE.filled())))
        .map_err(|e| plot_err(path, e))?;

    let mut chart = ChartBuilder::on(&right)
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d((t_min..t_max).log_scale(), (y_min..y_max).log_scale())
        .map_err(|e| plot_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("wall time (s)")
        .y_desc("NashConv")
        .x_label_formatter(&|v| format!("{v:.0e}"))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    chart
        .draw_series(LineSeries::new(points.iter().map(|p| (p.1, p.2)), RED.stroke_width(2)))
        .map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}

/// The final 2-player meta-game as a heat map of player 0's payoffs, with both players'
/// meta-mixtures as bars beside it.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
pub fn payoffs_svg(game: &NormalFormGame, mixtures: &[Vec<f64>], path: &Path) -> Result<()> {
    let Some(a) = game.matrix(0) else { return Ok(()) };
    let (rows, cols) = a.dim();
    let lo = a.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(1e-12);
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let (left, right) = root.split_horizontally(640);
    let mut chart = ChartBuilder::on(&left)
        .caption(
            format!("meta-game: player 0 payoffs ({rows}×{cols}; {lo:.3} blue … {hi:.3} red)"),
            ("sans-serif", 16),
        )
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0..cols, 0..rows)
        .map_err(|e| plot_err(path, e))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("player 1 member")
        .y_desc("player 0 member")
        .draw()
        .map_err(|e| plot_err(path, e))?;
    chart
        .draw_series((0..rows).flat_map(|i| (0..cols).map(move |j| (i, j))).map(|(i, j)| {
            let t = (a[[i, j]] - lo) / span;
            let color = RGBColor(
                (255.0 * t) as u8,
                (80.0 * (1.0 - (2.0 * t - 1.0).abs())) as u8,
                (255.0 * (1.0 - t)) as u8,
            );
            Rectangle::new([(j, i), (j + 1, i + 1)], color.filled())
        }))
        .map_err(|e| plot_err(path, e))?;

    let areas = right.split_evenly((2, 1));
    for (p, area) in areas.iter().enumerate() {
        let mix = mixtures.get(p).cloned().unwrap_or_default();
        let n = mix.len().max(1);
        let top = (mix.iter().copied().fold(0.0, f64::max) * 1.15).clamp(0.05, 1.0);
        let mut chart = ChartBuilder::on(area)
            .caption(format!("player {p} meta-mixture"), ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(0..n, 0f64..top)
            .map_err(|e| plot_err(path, e))?;
        chart.configure_mesh().disable_x_mesh().x_desc("member").draw().map_err(|e| plot_err(path, e))?;
        chart
            .draw_series(
                mix.iter().enumerate().map(|(k, &w)| Rectangle::new([(k, 0.0), (k + 1, w)], GREEN.filled())),
            )
            .map_err(|e| plot_err(path, e))?;
    }
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}

/// A tick label on a log axis: 1, 2 and 5 times each decade (`1e-2`, `2e-2`, `5e-2`),
/// nothing between them.
fn decade_label(v: f64) -> String {
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
        format!("{v:.0e}")
    } else {
        String::new()
    }
}

/// A tick label on a linear axis: integers as integers, large ones with k or M.
fn axis_number(v: f64, integer: bool) -> String {
    match (integer, v.abs()) {
        (true, a) if a >= 1e6 => format!("{}M", v / 1e6),
        (true, a) if a >= 1e4 => format!("{}k", v / 1e3),
        (true, _) => format!("{}", v.round() as i64),
        (false, _) => format!("{v:.3}"),
    }
}

/// Curve colours, distinguishable on white (matplotlib's tab10).
const CURVE_COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

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
/// of 2 or more runs a band of the mean ± 1.96 standard errors. Values at or below 0 are
/// drawn on a floor one decade below the smallest positive value, named in the axis label
/// when a mean reaches it.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
pub fn compare_svg(curves: &[Curve], title: &str, x_label: &str, y_label: &str, path: &Path) -> Result<()> {
    // Mean and half-width of the band per index, over the runs long enough to have it.
    let summaries: Vec<Vec<(f64, f64, f64)>> = curves
        .iter()
        .map(|c| {
            let len = c.runs.iter().map(Vec::len).max().unwrap_or(0);
            (0..len)
                .map(|i| {
                    let pts: Vec<(f64, f64)> = c.runs.iter().filter_map(|r| r.get(i).copied()).collect();
                    let n = pts.len() as f64;
                    let x = pts.iter().map(|p| p.0).sum::<f64>() / n;
                    let y = pts.iter().map(|p| p.1).sum::<f64>() / n;
                    let half = if pts.len() > 1 {
                        let var = pts.iter().map(|p| (p.1 - y).powi(2)).sum::<f64>() / (n - 1.0);
                        1.96 * (var / n).sqrt()
                    } else {
                        0.0
                    };
                    (x, y, half)
                })
                .collect()
        })
        .collect();
    let positive = summaries.iter().flatten().flat_map(|&(_, y, h)| [y, y - h]).filter(|&v| v > 0.0);
    let min_positive = positive.fold(f64::INFINITY, f64::min);
    let any_zero = summaries.iter().flatten().any(|&(_, y, _)| y <= 0.0);
    let floor = match (min_positive.is_finite(), any_zero) {
        (false, _) => 1e-3,
        (true, true) => min_positive / 10.0,
        (true, false) => min_positive / 1.5,
    };
    let y_max = summaries.iter().flatten().map(|&(_, y, h)| y + h).fold(floor * 10.0, f64::max) * 1.5;
    let x_min = summaries.iter().flatten().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = summaries.iter().flatten().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_min < x_max { (x_min, x_max) } else { (0.0, 1.0) };
    let integer_x = summaries.iter().flatten().all(|p| p.0.fract() == 0.0);

    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(x_min..x_max, (floor..y_max).log_scale())
        .map_err(|e| plot_err(path, e))?;
    let y_desc = if any_zero { format!("{y_label} (0 drawn at {floor:.0e})") } else { y_label.to_string() };
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_desc.as_str())
        .x_label_formatter(&|v| axis_number(*v, integer_x))
        .y_label_formatter(&|v| decade_label(*v))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    for (k, (curve, points)) in curves.iter().zip(&summaries).enumerate() {
        let color = CURVE_COLORS[k % CURVE_COLORS.len()].to_rgba();
        if curve.runs.len() > 1 {
            let upper = points.iter().map(|&(x, y, h)| (x, (y + h).max(floor)));
            let lower = points.iter().rev().map(|&(x, y, h)| (x, (y - h).max(floor)));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    upper.chain(lower).collect::<Vec<_>>(),
                    color.mix(0.2),
                )))
                .map_err(|e| plot_err(path, e))?;
        }
        let runs = curve.runs.len();
        let label = if runs > 1 {
            format!("{} (mean of {runs}, 95% band)", curve.label)
        } else {
            curve.label.clone()
        };
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|&(x, y, _)| (x, y.max(floor))),
                color.stroke_width(2),
            ))
            .map_err(|e| plot_err(path, e))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}
