//! The figures of a run folder that every loop has: NashConv against iteration and wall
//! time, and the meta-mixtures over time (with the final meta-game's heat map,
//! [`write_run_figures`]).

use std::path::Path;

use metagame_games::NormalFormGame;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::Result;
use crate::run_report::RunReport;

use super::kit::{
    ABSENT_COLOR, CURVE_COLUMNS, DESC_FONT, Drawn, GRID_COLOR, LABEL_FONT, LogAxis, NASH_CONV_ZERO,
    TITLE_FONT, Ticked, axis_number, blocks, cell_ticks, colour_bar, downsample, downsample_by, draw_legend,
    draw_zero_bands, linear_axis, linear_ticks, log_axis, sequential, svg_text, text_err, write_figure,
};
use super::payoffs::payoffs_svg;

/// The colour of NashConv in every figure of one run (matplotlib's tab10 blue).
const NASH_CONV_COLOR: RGBColor = RGBColor(31, 119, 180);

/// The title of a run's figures: game and algorithm (as its unit names it).
pub(crate) fn run_title(report: &RunReport) -> String {
    format!("{}: {}", report.config.game(), report.config.algorithm().figure_title())
}

/// NashConv against iteration and against wall time, log scale, side by side: the same
/// colour, line and markers in both panels, on one shared y axis.
///
/// # Errors
///
/// [`Error::Output`](crate::Error::Output) when the file cannot be written.
pub fn exploitability_svg(report: &RunReport, path: &Path) -> Result<()> {
    write_figure(path, exploitability_figure(report))
}

pub(crate) fn exploitability_figure(report: &RunReport) -> Drawn<String> {
    // Iterations without an exact NashConv (a game whose tree was not built) are left out;
    // estimates by trained best responses (PSRO's `approximate_every`) are drawn apart.
    let points: Vec<(f64, f64, f64)> = report
        .iterations
        .iter()
        .filter_map(|r| Some((r.iteration as f64, r.elapsed_s, r.nash_conv?)))
        .collect();
    let estimates: Vec<Estimate> = report
        .iterations
        .iter()
        .filter_map(|r| {
            Some(Estimate {
                iteration: r.iteration as f64,
                seconds: r.elapsed_s,
                value: r.nash_conv_estimate?,
                stderr: r.nash_conv_estimate_stderr.unwrap_or(0.0),
            })
        })
        .collect();
    if points.is_empty() && estimates.is_empty() {
        // A game whose tree was not built: say so rather than draw empty axes.
        let title = run_title(report);
        return svg_text((1100, 200), |root| {
            let root = root.titled(&title, TITLE_FONT).map_err(text_err)?;
            let note = "No exact NashConv: the game's tree was not built (past the node limit), so the \
                        reports leave it out.";
            root.draw(&Text::new(note, (40, 60), DESC_FONT.into_font())).map_err(text_err)?;
            let hint = if report.config.algorithm().algorithm() == crate::loops::Algorithm::League {
                "elo.svg, win_rates.svg and payoffs.svg show the league; metagame exploitability --approximate estimates a snapshot's."
            } else {
                "mixtures.svg and payoffs.svg show the run; PSRO estimates it by trained best responses with approximate_every = N."
            };
            root.draw(&Text::new(hint, (40, 90), DESC_FONT.into_font())).map_err(text_err)
        });
    }
    let y = LogAxis::with_zero_below(
        points.iter().map(|p| p.2).chain(estimates.iter().flat_map(|e| [e.value, e.high()])),
        NASH_CONV_ZERO,
    );
    let t = LogAxis::new(points.iter().map(|p| p.1).chain(estimates.iter().map(|e| e.seconds)));
    let x_max = points.iter().map(|p| p.0).chain(estimates.iter().map(|e| e.iteration)).fold(1.0, f64::max);
    let pad = x_max * 0.02;
    let x_ticks = linear_ticks(0.0, x_max, 10, true);
    // A marker per iteration while they can be told apart; a long run is a line alone,
    // thinned to what the panel can show (its lowest and highest points kept).
    let markers = match points.len() {
        0..=60 => Some(3),
        61..=200 => Some(2),
        _ => None,
    };
    let by_iteration = downsample(&points.iter().map(|p| (p.0, y.place(p.2))).collect::<Vec<_>>());
    let by_time = downsample_by(
        &points.iter().map(|p| (t.place(p.1), y.place(p.2))).collect::<Vec<_>>(),
        CURVE_COLUMNS,
        f64::ln,
    );
    let y_desc = y.describe("NashConv", "below");
    let t_desc = t.describe("wall time, s", "left of");
    let title = run_title(report);
    svg_text((1100, 460), |root| {
        let root = root.titled(&title, TITLE_FONT).map_err(text_err)?;
        let (left, right) = root.split_horizontally(550);
        let style = NASH_CONV_COLOR.stroke_width(2);
        let mut chart = ChartBuilder::on(&left)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(
                linear_axis(-pad..x_max + pad, x_ticks),
                log_axis(y.low..y.high, y.ticks.clone()),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc("iteration")
            .y_desc(y_desc.as_str())
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, true))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        draw_zero_bands(&mut chart, None, Some(&y))?;
        let exact =
            chart.draw_series(LineSeries::new(by_iteration.iter().copied(), style)).map_err(text_err)?;
        if !estimates.is_empty() && !points.is_empty() {
            exact.label("exact NashConv").legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], NASH_CONV_COLOR.stroke_width(2))
            });
        }
        if let Some(size) = markers {
            chart
                .draw_series(by_iteration.iter().map(|&p| Circle::new(p, size, NASH_CONV_COLOR.filled())))
                .map_err(text_err)?;
        }
        draw_estimates(&mut chart, &estimates, |e| e.iteration, &y)?;
        if !estimates.is_empty() {
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }

        let mut chart = ChartBuilder::on(&right)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(
                log_axis(t.low..t.high, t.ticks.clone()),
                log_axis(y.low..y.high, y.ticks.clone()),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc(t_desc.as_str())
            .y_desc(y_desc.as_str())
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| t.label(*v))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        draw_zero_bands(&mut chart, Some(&t), Some(&y))?;
        chart.draw_series(LineSeries::new(by_time.iter().copied(), style)).map_err(text_err)?;
        if let Some(size) = markers {
            chart
                .draw_series(by_time.iter().map(|&p| Circle::new(p, size, NASH_CONV_COLOR.filled())))
                .map_err(text_err)?;
        }
        draw_estimates(&mut chart, &estimates, |e| t.place(e.seconds), &y)?;
        Ok(())
    })
}

/// The colour of NashConv estimates (matplotlib's tab10 orange).
const ESTIMATE_COLOR: RGBColor = RGBColor(255, 127, 14);

/// One iteration's NashConv estimate by trained best responses.
struct Estimate {
    iteration: f64,
    seconds: f64,
    value: f64,
    stderr: f64,
}

impl Estimate {
    /// The top of its bar: 2 standard errors above.
    fn high(&self) -> f64 {
        self.value + 2.0 * self.stderr
    }
}

/// Estimates as triangles with bars of ±2 standard errors (the lower end on the axis's
/// floor when it is 0 or below), labelled for the legend; at `x(estimate)` across.
fn draw_estimates<'a, DB, X>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Ticked<LogCoord<f64>>>>,
    estimates: &[Estimate],
    x: impl Fn(&Estimate) -> f64,
    y: &LogAxis,
) -> Drawn
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
{
    if estimates.is_empty() {
        return Ok(());
    }
    let bars = estimates.iter().map(|e| {
        let at = x(e);
        PathElement::new(
            vec![(at, y.place(e.value - 2.0 * e.stderr)), (at, y.place(e.high()))],
            ESTIMATE_COLOR.stroke_width(1),
        )
    });
    chart.draw_series(bars).map_err(text_err)?;
    chart
        .draw_series(
            estimates
                .iter()
                .map(|e| TriangleMarker::new((x(e), y.place(e.value)), 5, ESTIMATE_COLOR.filled())),
        )
        .map_err(text_err)?
        .label("estimate by trained best responses (a lower bound; bars ±2 SE)")
        .legend(|(x, y)| TriangleMarker::new((x + 10, y), 5, ESTIMATE_COLOR.filled()));
    Ok(())
}

/// Every player's meta-mixture at every iteration: one panel per player, iterations across,
/// members down (member 0 at the top), the probability as colour (white 0 to dark blue 1,
/// by its square root so that small weights show; grey where the member did not exist yet,
/// which a legend under the panels says). Written for any number of players; `Ok(false)`,
/// and nothing written, when the run's loop has no meta-game. A long run is drawn in blocks
/// of consecutive iterations (at most 300 across) and members (at most 100 down), each
/// block's colour its members' summed probability averaged over its iterations.
///
/// # Errors
///
/// [`Error::Output`](crate::Error::Output) when the file cannot be written.
pub fn mixtures_svg(report: &RunReport, path: &Path) -> Result<bool> {
    match mixtures_figure(report) {
        Some(figure) => write_figure(path, figure).map(|()| true),
        None => Ok(false),
    }
}

/// Iterations drawn side by side in the mixtures figure at most (a longer run in blocks).
const MAX_MIXTURE_COLUMNS: usize = 300;

/// Members drawn one above the other in the mixtures figure at most.
const MAX_MIXTURE_ROWS: usize = 100;

pub(crate) fn mixtures_figure(report: &RunReport) -> Option<Drawn<String>> {
    let steps: Vec<(usize, &Vec<Vec<f64>>)> = report
        .iterations
        .iter()
        .filter_map(|r| r.meta_game.as_ref().map(|m| (r.iteration, &m.meta_strategies)))
        .collect();
    let players = steps.iter().map(|(_, m)| m.len()).max()?;
    if players == 0 {
        return None;
    }
    let first = steps.first()?.0;
    let last = steps.last()?.0;
    let panel = 250;
    let title = format!("{}: meta-mixtures by iteration", run_title(report));
    let legend = 34;
    let height = 50 + panel * players as u32 + legend;
    Some(svg_text((1100, height), |root| {
        let root = root.titled(&title, TITLE_FONT).map_err(text_err)?;
        let (root, legend_area) = root.split_vertically(root.dim_in_pixel().1 - legend);
        absent_legend(&legend_area)?;
        let (panels, bar_area) = root.split_horizontally(1010);
        for (p, area) in panels.split_evenly((players, 1)).iter().enumerate() {
            let members = steps.iter().map(|(_, m)| m.get(p).map_or(0, Vec::len)).max().unwrap_or(0).max(1);
            let (x0, x1) = (first as f64 - 0.5, last as f64 + 0.5);
            let mut chart = ChartBuilder::on(area)
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(
                    linear_axis(x0..x1, linear_ticks(first as f64, last as f64, 12, true)),
                    linear_axis(
                        0f64..members as f64,
                        cell_ticks(members, 8).iter().map(|y| members as f64 - y).collect(),
                    ),
                )
                .map_err(text_err)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .x_desc(if p + 1 == players { "iteration" } else { "" })
                .y_desc(format!("player {p}'s member"))
                .axis_desc_style(DESC_FONT)
                .label_style(LABEL_FONT)
                .x_label_formatter(&|v| axis_number(*v, true))
                .y_label_formatter(&|v| format!("{}", (members as f64 - v - 0.5).round() as i64))
                .draw()
                .map_err(text_err)?;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, members as f64)],
                    ABSENT_COLOR.filled(),
                )))
                .map_err(text_err)?;
            // A long run in blocks of consecutive iterations and members: a block's colour is
            // the members' summed probability, averaged over the iterations.
            let member_blocks = blocks(members, MAX_MIXTURE_ROWS);
            let cells = blocks(steps.len(), MAX_MIXTURE_COLUMNS).into_iter().flat_map(|s| {
                let steps = &steps[s];
                member_blocks.iter().filter_map(move |k| {
                    let mixes = steps.iter().map(|(_, m)| m.get(p).map_or(&[][..], Vec::as_slice));
                    let existing = mixes.clone().filter(|mix| mix.len() > k.start).count();
                    (existing > 0).then(|| {
                        let mass: f64 =
                            mixes.map(|mix| mix.get(k.clone()).map_or(0.0, |w| w.iter().sum())).sum();
                        let x0 = steps.first().map_or(0.0, |s| s.0 as f64) - 0.5;
                        let x1 = steps.last().map_or(0.0, |s| s.0 as f64) + 0.5;
                        let (top, bottom) = ((members - k.start) as f64, (members - k.end) as f64);
                        let w = mass / steps.len() as f64;
                        Rectangle::new([(x0, bottom), (x1, top)], sequential(w.sqrt()).filled())
                    })
                })
            });
            chart.draw_series(cells).map_err(text_err)?;
        }
        // The colour is the square root of the probability, so that small weights show; the
        // bar runs in that square root and is labelled in probabilities.
        let ticks = [0.0, 0.01, 0.05, 0.2, 0.5, 1.0].iter().map(|p: &f64| p.sqrt()).collect();
        colour_bar(&bar_area, "probability", 0.0, 1.0, ticks, sequential, |s| axis_number(s * s, false))
    }))
}

/// What the grey of the mixtures figure means, in a legend strip under the panels (the
/// colour bar explains the blues): a swatch of [`ABSENT_COLOR`] and its words.
fn absent_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> Drawn {
    let (x, y) = (70, 8);
    area.draw(&Rectangle::new([(x, y), (x + 28, y + 16)], ABSENT_COLOR.filled())).map_err(text_err)?;
    area.draw(&Rectangle::new([(x, y), (x + 28, y + 16)], BLACK.stroke_width(1))).map_err(text_err)?;
    let words = format!("{ABSENT_LABEL} (the member joined the population at a later iteration)");
    area.draw(&Text::new(words, (x + 38, y + 1), LABEL_FONT.into_font())).map_err(text_err)
}

/// The legend entry of the grey in the mixtures figure.
pub(crate) const ABSENT_LABEL: &str = "not yet a member";

/// Write every common figure of a finished run into `dir`: `exploitability.svg`; for loops
/// with a meta-game `mixtures.svg` (any number of players) and, for 2 players,
/// `payoffs.svg`. A loop's own figures come from its unit (`src/loops/`).
///
/// # Errors
///
/// [`Error::Output`](crate::Error::Output) when a file cannot be written.
pub fn write_run_figures(report: &RunReport, meta_game: Option<&NormalFormGame>, dir: &Path) -> Result<()> {
    exploitability_svg(report, &dir.join("exploitability.svg"))?;
    mixtures_svg(report, &dir.join("mixtures.svg"))?;
    if let Some(game) = meta_game {
        payoffs_svg(game, &final_mixtures(report), &dir.join("payoffs.svg"))?;
    }
    Ok(())
}

/// The last iteration's meta-mixtures (empty without a meta-game).
pub(crate) fn final_mixtures(report: &RunReport) -> Vec<Vec<f64>> {
    report
        .iterations
        .last()
        .and_then(|r| r.meta_game.as_ref())
        .map(|m| m.meta_strategies.clone())
        .unwrap_or_default()
}
