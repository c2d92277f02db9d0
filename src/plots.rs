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
