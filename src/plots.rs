//! Figures of a run, as SVG: NashConv curves, the final meta-game, the meta-mixtures over
//! time, and several runs on one figure.
//!
//! Every figure follows the same conventions: integer axes (iterations, members) have integer
//! ticks; log axes have ticks at decades (and at 2 and 5 times them when the range spans
//! few decades), and a value of 0 is drawn on an explicit floor, a tick labelled `0`; one
//! quantity keeps one colour and style in every panel; matrices put row 0 at the top, ticks
//! at cell centres, and a colour bar beside them.
//!
//! Every figure stays a few hundred kilobytes at any run length and population size: a
//! long curve is thinned to the figure's resolution with its extremes kept (the M4 rule:
//! first, last, lowest and highest point per pixel column), and a matrix larger than
//! 80 × 80 is drawn in blocks of consecutive members.
//!
//! SVG only: plotters' SVG backend writes text as SVG text, so no font or system library is
//! needed. Its bitmap backend needs the `ttf` feature (font-kit, with the system's fontconfig
//! and FreeType) or a font file built into the binary to draw text, so PNG is left to an
//! SVG converter (`rsvg-convert -w 900 exploitability.svg -o exploitability.png`).

use std::path::Path;

use metagame_games::NormalFormGame;
use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::run_report::RunReport;

/// A drawing failure, as text (plotters' errors are generic over the backend).
pub(crate) type Drawn<T = ()> = std::result::Result<T, String>;

pub(crate) fn text_err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn plot_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Output { path: path.into(), source: format!("plot: {e}").into() }
}

/// Draw a `size` figure on a white page and return its SVG text.
pub(crate) fn svg_text(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Drawn,
) -> Drawn<String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE).map_err(text_err)?;
        draw(&root)?;
        root.present().map_err(text_err)?;
    }
    // Cells of heat maps and colour bars meet without anti-aliased seams.
    if let Some(end) = text.find('>') {
        text.insert_str(end + 1, "\n<style>rect { shape-rendering: crispEdges; }</style>");
    }
    Ok(text)
}

/// Write a figure's SVG text atomically (a reader never sees half a figure).
pub(crate) fn write_figure(path: &Path, figure: Drawn<String>) -> Result<()> {
    let text = figure.map_err(|e| plot_err(path, e))?;
    metagame_populations::checkpoint::write_atomic(path, text.as_bytes()).map_err(|e| plot_err(path, e))
}

/// The colour of NashConv in every figure of one run (matplotlib's tab10 blue).
const NASH_CONV_COLOR: RGBColor = RGBColor(31, 119, 180);
/// The colour of mixture bars: muted, so the heat map stays the figure's subject.
const BAR_COLOR: RGBColor = RGBColor(126, 146, 178);
/// The grid: light enough to read values off without competing with the data.
pub(crate) const GRID_COLOR: RGBAColor = RGBAColor(0, 0, 0, 0.12);
/// Where no value exists (a member not yet added).
pub(crate) const ABSENT_COLOR: RGBColor = RGBColor(236, 236, 236);

/// NashConv below this is drawn as 0 (the CLI's `gap` prints it as 0 too).
pub(crate) const NASH_CONV_ZERO: f64 = 1e-12;

pub(crate) const TITLE_FONT: (&str, u32) = ("sans-serif", 20);
pub(crate) const CAPTION_FONT: (&str, u32) = ("sans-serif", 16);
pub(crate) const DESC_FONT: (&str, u32) = ("sans-serif", 15);
pub(crate) const LABEL_FONT: (&str, u32) = ("sans-serif", 13);

/// An axis with ticks chosen here, not by plotters (whose `WithKeyPoints` has no default
/// label formatting, so the mesh would not draw).
pub(crate) struct Ticked<R> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }
    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
    fn axis_pixel_range(&self, limit: (i32, i32)) -> Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

/// A linear axis over `range` with ticks at `ticks`.
pub(crate) fn linear_axis(range: Range<f64>, ticks: Vec<f64>) -> Ticked<RangedCoordf64> {
    Ticked { inner: range.into(), ticks }
}

/// A log axis over `range` with ticks at `ticks`.
pub(crate) fn log_axis(range: Range<f64>, ticks: Vec<f64>) -> Ticked<LogCoord<f64>> {
    Ticked { inner: range.log_scale().into(), ticks }
}

/// An exponent in superscript digits: `-3` → `⁻³`.
fn superscript(k: i32) -> String {
    k.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            d => ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'][d.to_digit(10).unwrap_or(0) as usize],
        })
        .collect()
}

/// The decade of a positive value: `k` with `10^k ≤ v < 10^(k+1)`.
fn decade(v: f64) -> i32 {
    (v.log10() + 1e-9).floor() as i32
}

/// A log axis: its drawn range, its ticks, and the floor that stands for 0 (if any value
/// is 0 or below).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LogAxis {
    pub(crate) low: f64,
    pub(crate) high: f64,
    pub(crate) ticks: Vec<f64>,
    pub(crate) zero_floor: Option<f64>,
    /// Values below this are drawn on the floor.
    pub(crate) zero: f64,
    pub(crate) plain: bool,
}

impl LogAxis {
    /// The axis for `values`: from the smallest positive value (or, when some values are 0
    /// or below, a floor one decade under it) to the largest, with margins.
    pub(crate) fn new(values: impl IntoIterator<Item = f64>) -> LogAxis {
        Self::with_zero_below(values, 0.0)
    }

    /// As [`LogAxis::new`], with values below `zero` counted as 0 (NashConv below 1e-12 is
    /// the rounding noise of payoffs of order 1; the CLI prints it as 0 too).
    pub(crate) fn with_zero_below(values: impl IntoIterator<Item = f64>, zero: f64) -> LogAxis {
        let values: Vec<f64> =
            values.into_iter().filter(|v| v.is_finite()).map(|v| if v < zero { 0.0 } else { v }).collect();
        let min_positive = values.iter().copied().filter(|&v| v > 0.0).fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let any_zero = values.iter().any(|&v| v <= 0.0);
        let (min_positive, max) = if min_positive.is_finite() { (min_positive, max) } else { (1.0, 1.0) };
        let zero_floor = any_zero.then(|| 10f64.powi(decade(min_positive) - 1));
        let zero = zero.max(zero_floor.unwrap_or(0.0));
        let low = zero_floor.map_or(min_positive / 1.5, |f| f / 1.6);
        let high = max.max(min_positive * 1.01) * 1.5;
        let mut ticks = log_ticks(zero_floor.unwrap_or(low), high);
        if let Some(f) = zero_floor {
            ticks.retain(|&t| t > f * 1.5);
            ticks.insert(0, f);
        }
        let plain = ticks.iter().all(|&t| (1e-3..1e4).contains(&t) || zero_floor == Some(t));
        LogAxis { low, high, ticks, zero_floor, zero, plain }
    }

    /// Where a value is drawn: at the floor when it counts as 0.
    pub(crate) fn place(&self, v: f64) -> f64 {
        match self.zero_floor {
            Some(f) if v < self.zero || v <= 0.0 => f,
            _ => v.max(self.low),
        }
    }

    /// A tick's label: `0` at the floor; plain numbers when every tick is between 0.001
    /// and 10 000, else `10⁻³` and `2×10⁻³`.
    pub(crate) fn label(&self, v: f64) -> String {
        if self.zero_floor.is_some_and(|f| (v - f).abs() <= f * 1e-9) {
            return "0".into();
        }
        let k = decade(v);
        let mantissa = (v / 10f64.powi(k)).round();
        if self.plain {
            format!("{:.*}", (-k).max(0) as usize, v)
        } else if mantissa == 1.0 {
            format!("10{}", superscript(k))
        } else {
            format!("{mantissa}×10{}", superscript(k))
        }
    }
}

/// Ticks on a log range: every decade (every second or third when there are many), and 2
/// and 5 times each decade when at most 3 decades fit.
fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    let (first, last) = (decade(low), decade(high));
    let step = ((last - first + 1) as usize).div_ceil(8).max(1) as i32;
    let in_range = |v: &f64| *v >= low * (1.0 - 1e-9) && *v <= high * (1.0 + 1e-9);
    // Every `step`-th decade, counted from 10⁰ so that 1 stays labelled.
    let decades: Vec<f64> =
        (first..=last).filter(|k| k.rem_euclid(step) == 0).map(|k| 10f64.powi(k)).filter(in_range).collect();
    if decades.len() > 3 {
        return decades;
    }
    let mut ticks: Vec<f64> =
        (first..=last).flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k))).filter(in_range).collect();
    if ticks.len() < 2 {
        // Less than one 1-2-5 step: every mantissa.
        ticks = (first..=last).flat_map(|k| (1..10).map(move |m| f64::from(m) * 10f64.powi(k))).collect();
        ticks.retain(in_range);
    }
    ticks
}

/// A step of 1, 2 or 5 times a power of ten that cuts `span` into at most `max_ticks` parts.
fn nice_step(span: f64, max_ticks: usize, integer: bool) -> f64 {
    let raw = (span / max_ticks.max(1) as f64).max(if integer { 1.0 } else { f64::MIN_POSITIVE });
    let base = 10f64.powi(decade(raw));
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|&s| s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * base)
}

/// Ticks at multiples of a 1-2-5 step between `low` and `high`.
pub(crate) fn linear_ticks(low: f64, high: f64, max_ticks: usize, integer: bool) -> Vec<f64> {
    let step = nice_step(high - low, max_ticks, integer);
    let first = (low / step).ceil() as i64;
    let last = (high / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A tick label on a linear axis: integers as integers, large ones with k or M.
pub(crate) fn axis_number(v: f64, integer: bool) -> String {
    match (integer, v.abs()) {
        (true, a) if a >= 1e6 => format!("{}M", v / 1e6),
        (true, a) if a >= 1e4 => format!("{}k", v / 1e3),
        (true, _) => format!("{}", v.round() as i64),
        (false, _) => {
            let text = format!("{v:.3}");
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// Tick positions at the centres of cells `0..n` (cell `k` spans `[k, k + 1]`), at most
/// `max_ticks` of them, at multiples of a 1-2-5 step.
pub(crate) fn cell_ticks(n: usize, max_ticks: usize) -> Vec<f64> {
    let step = nice_step(n as f64, max_ticks, true) as usize;
    (0..n).step_by(step.max(1)).map(|k| k as f64 + 0.5).collect()
}

/// Points per line of a long curve at most: a figure is about 1 000 pixels wide, so
/// [`downsample`] keeps up to 4 points per pixel column of [`CURVE_COLUMNS`] columns.
pub(crate) const CURVE_COLUMNS: usize = 600;

/// A long curve thinned to what a figure can show, keeping its extremes (the M4 rule of
/// Jugel et al. 2014, "M4: a visualization-oriented time series data aggregation"): the
/// points, in order, are cut into `columns` equal spans of `key(x)` (the axis position: `x`
/// on a linear axis, `ln x` on a log one), and each span keeps its first, last, lowest and
/// highest point. A curve of at most `4 · columns` points is returned as it is.
///
/// # Complexity
///
/// O(n) for n points.
pub(crate) fn downsample_by(
    points: &[(f64, f64)],
    columns: usize,
    key: impl Fn(f64) -> f64,
) -> Vec<(f64, f64)> {
    let columns = columns.max(1);
    if points.len() <= 4 * columns {
        return points.to_vec();
    }
    let keys: Vec<f64> = points.iter().map(|p| key(p.0)).collect();
    let (lo, hi) = keys
        .iter()
        .filter(|k| k.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &k| (l.min(k), h.max(k)));
    let span = if lo.is_finite() && hi > lo { hi - lo } else { 1.0 };
    // Points whose key is not finite (x ≤ 0 on a log axis) go to the first column.
    let column = |k: f64| {
        if k.is_finite() { (((k - lo) / span * columns as f64) as usize).min(columns - 1) } else { 0 }
    };
    let mut kept = Vec::with_capacity(4 * columns);
    let mut start = 0;
    while start < points.len() {
        let c = column(keys[start]);
        let mut end = start + 1;
        while end < points.len() && column(keys[end]) == c {
            end += 1;
        }
        let span = start..end;
        let lowest = span.clone().min_by(|&a, &b| points[a].1.total_cmp(&points[b].1)).unwrap_or(start);
        let highest = span.clone().max_by(|&a, &b| points[a].1.total_cmp(&points[b].1)).unwrap_or(start);
        let mut picks = [start, lowest, highest, end - 1];
        picks.sort_unstable();
        let mut last = None;
        for i in picks {
            if last != Some(i) {
                kept.push(points[i]);
                last = Some(i);
            }
        }
        start = end;
    }
    kept
}

/// [`downsample_by`] on a linear x axis, [`CURVE_COLUMNS`] columns.
pub(crate) fn downsample(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    downsample_by(points, CURVE_COLUMNS, |x| x)
}

/// Cells of a heat map per side at most: a larger matrix is drawn in blocks of
/// consecutive rows and columns (see [`blocks`]).
pub(crate) const MAX_CELLS_PER_SIDE: usize = 80;

/// `n` indices cut into at most `max` blocks of consecutive indices, as equal as they can
/// be (each block's range); one block per index when `n ≤ max`.
pub(crate) fn blocks(n: usize, max: usize) -> Vec<Range<usize>> {
    let k = n.min(max.max(1));
    (0..k).map(|b| b * n / k..(b + 1) * n / k).collect()
}

/// The title of a run's figures: game and algorithm (as its unit names it).
pub(crate) fn run_title(report: &RunReport) -> String {
    format!("{}: {}", report.config.game(), report.config.algorithm().figure_title())
}

/// ColorBrewer's RdBu, blue for negative, white at 0, red for positive: `t` in [-1, 1].
pub(crate) fn diverging(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 7] = [
        (33, 102, 172),
        (103, 169, 207),
        (209, 229, 240),
        (247, 247, 247),
        (253, 219, 199),
        (239, 138, 98),
        (178, 24, 43),
    ];
    interpolate(&STOPS, (t.clamp(-1.0, 1.0) + 1.0) / 2.0)
}

/// ColorBrewer's Blues, white at 0 to dark blue at 1: `t` in [0, 1].
fn sequential(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] =
        [(255, 255, 255), (198, 219, 239), (107, 174, 214), (33, 113, 181), (8, 48, 107)];
    interpolate(&STOPS, t.clamp(0.0, 1.0))
}

/// The colour at `t` in [0, 1] along `stops` (evenly spaced), linearly between neighbours.
pub(crate) fn interpolate(stops: &[(u8, u8, u8)], t: f64) -> RGBColor {
    let x = t * (stops.len() - 1) as f64;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + f * (f64::from(b) - f64::from(a))).round() as u8;
    let (a, b) = (stops[i], stops[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A vertical colour bar for `color` over `low..high`, with `ticks` labelled on its right.
pub(crate) fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    low: f64,
    high: f64,
    ticks: Vec<f64>,
    color: impl Fn(f64) -> RGBColor,
    label: impl Fn(f64) -> String,
) -> Drawn {
    // The caption on its own line above the bar, clear of the top tick's label.
    let area = area.margin(18, 0, 0, 0).titled(caption, LABEL_FONT).map_err(text_err)?;
    let mut chart = ChartBuilder::on(&area)
        .margin_top(14)
        .margin_bottom(52)
        .margin_left(4)
        .right_y_label_area_size(52)
        .build_cartesian_2d(0f64..1.0, linear_axis(low..high, ticks))
        .map_err(text_err)?;
    let steps = 120;
    chart
        .draw_series((0..steps).map(|k| {
            let a = low + (high - low) * k as f64 / steps as f64;
            let b = low + (high - low) * (k + 1) as f64 / steps as f64;
            Rectangle::new([(0.0, a), (1.0, b)], color((a + b) / 2.0).filled())
        }))
        .map_err(text_err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .label_style(LABEL_FONT)
        .y_label_formatter(&|v| label(*v))
        .draw()
        .map_err(text_err)?;
    chart
        .plotting_area()
        .draw(&Rectangle::new([(0.0, low), (1.0, high)], BLACK.stroke_width(1)))
        .map_err(text_err)?;
    Ok(())
}

/// NashConv against iteration and against wall time, log scale, side by side: the same
/// colour, line and markers in both panels, on one shared y axis.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
pub fn exploitability_svg(report: &RunReport, path: &Path) -> Result<()> {
    write_figure(path, exploitability_figure(report))
}

pub(crate) fn exploitability_figure(report: &RunReport) -> Drawn<String> {
    let points: Vec<(f64, f64, f64)> =
        report.iterations.iter().map(|r| (r.iteration as f64, r.elapsed_s, r.nash_conv)).collect();
    let y = LogAxis::with_zero_below(points.iter().map(|p| p.2), NASH_CONV_ZERO);
    let t = LogAxis::new(points.iter().map(|p| p.1));
    let x_max = points.iter().map(|p| p.0).fold(1.0, f64::max);
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
    let y_desc = match y.zero_floor {
        Some(_) => "NashConv (log scale; 0 at the bottom)",
        None => "NashConv (log scale)",
    };
    let t_desc = match t.zero_floor {
        Some(_) => "wall time, s (log scale; 0 at the left)",
        None => "wall time, s (log scale)",
    };
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
            .y_desc(y_desc)
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, true))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        chart.draw_series(LineSeries::new(by_iteration.iter().copied(), style)).map_err(text_err)?;
        if let Some(size) = markers {
            chart
                .draw_series(by_iteration.iter().map(|&p| Circle::new(p, size, NASH_CONV_COLOR.filled())))
                .map_err(text_err)?;
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
            .x_desc(t_desc)
            .y_desc(y_desc)
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| t.label(*v))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        chart.draw_series(LineSeries::new(by_time.iter().copied(), style)).map_err(text_err)?;
        if let Some(size) = markers {
            chart
                .draw_series(by_time.iter().map(|&p| Circle::new(p, size, NASH_CONV_COLOR.filled())))
                .map_err(text_err)?;
        }
        Ok(())
    })
}

/// The final 2-player meta-game as a heat map of player 0's payoffs (a diverging colour map
/// centred on 0, a colour bar, row 0 at the top, ticks at cell centres), with both players'
/// meta-mixtures as bars beside it. Meta-games of other sizes write nothing. Past 80
/// members a side, the heat map is drawn in blocks of consecutive members, each block in
/// its mean payoff.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
pub fn payoffs_svg(game: &NormalFormGame, mixtures: &[Vec<f64>], path: &Path) -> Result<()> {
    match payoffs_figure(game, mixtures) {
        Some(figure) => write_figure(path, figure),
        None => Ok(()),
    }
}

pub(crate) fn payoffs_figure(game: &NormalFormGame, mixtures: &[Vec<f64>]) -> Option<Drawn<String>> {
    let a = game.matrix(0)?;
    let (rows, cols) = a.dim();
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let (lo, hi) = a.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    // A large meta-game (a league's payoff table among thousands of members) in blocks of
    // consecutive members, each drawn in its mean payoff: at most 80 × 80 cells.
    let (row_blocks, col_blocks) = (blocks(rows, MAX_CELLS_PER_SIDE), blocks(cols, MAX_CELLS_PER_SIDE));
    let blocked = row_blocks.len() < rows || col_blocks.len() < cols;
    let caption = format!(
        "player 0's payoff, {rows}×{cols} meta-game (from {} to {}){}",
        axis_number(lo, false),
        axis_number(hi, false),
        if blocked { "; block means" } else { "" }
    );
    // Without meta-mixtures (the league's payoff table) the heat map is the whole figure.
    let with_mixtures = mixtures.iter().any(|m| !m.is_empty());
    let size = if with_mixtures { (1150, 640) } else { (760, 640) };
    Some(svg_text(size, |root| {
        let (left, right) = root.split_horizontally(760);
        let (map_area, bar_area) = left.split_horizontally(670);
        let mut chart = ChartBuilder::on(&map_area)
            .caption(&caption, CAPTION_FONT)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(
                linear_axis(0f64..cols as f64, cell_ticks(cols, 12)),
                linear_axis(
                    0f64..rows as f64,
                    cell_ticks(rows, 12).iter().map(|y| rows as f64 - y).collect(),
                ),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("player 1's member")
            .y_desc("player 0's member")
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| format!("{}", (v - 0.5).round() as i64))
            .y_label_formatter(&|v| format!("{}", (rows as f64 - v - 0.5).round() as i64))
            .draw()
            .map_err(text_err)?;
        chart
            .draw_series(row_blocks.iter().flat_map(|r| col_blocks.iter().map(move |c| (r, c))).map(
                |(r, c)| {
                    let cells = (r.len() * c.len()) as f64;
                    let mean = r.clone().flat_map(|i| c.clone().map(move |j| a[[i, j]])).sum::<f64>() / cells;
                    let (top, bottom) = ((rows - r.start) as f64, (rows - r.end) as f64);
                    Rectangle::new(
                        [(c.start as f64, bottom), (c.end as f64, top)],
                        diverging(mean / scale).filled(),
                    )
                },
            ))
            .map_err(text_err)?;
        let bar_ticks = linear_ticks(-scale, scale, 8, false);
        colour_bar(
            &bar_area,
            "payoff",
            -scale,
            scale,
            bar_ticks,
            |v| diverging(v / scale),
            |v| axis_number(v, false),
        )?;

        let panels = if with_mixtures { right.split_evenly((2, 1)) } else { Vec::new() };
        for (p, area) in panels.iter().enumerate() {
            let mix = mixtures.get(p).cloned().unwrap_or_default();
            let n = mix.len().max(1);
            let top = (mix.iter().copied().fold(0.0, f64::max) * 1.15).clamp(0.05, 1.0);
            let mut chart = ChartBuilder::on(area)
                .caption(format!("player {p}'s meta-mixture"), CAPTION_FONT)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(50)
                .build_cartesian_2d(
                    linear_axis(0f64..n as f64, cell_ticks(n, 8)),
                    linear_axis(0f64..top, linear_ticks(0.0, top, 5, false)),
                )
                .map_err(text_err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .bold_line_style(GRID_COLOR)
                .x_desc("member")
                .y_desc("probability")
                .axis_desc_style(DESC_FONT)
                .label_style(LABEL_FONT)
                .x_label_formatter(&|v| format!("{}", (v - 0.5).round() as i64))
                .y_label_formatter(&|v| axis_number(*v, false))
                .draw()
                .map_err(text_err)?;
            chart
                .draw_series(mix.iter().enumerate().filter(|(_, w)| **w > 0.0).map(|(k, &w)| {
                    Rectangle::new([(k as f64 + 0.1, 0.0), (k as f64 + 0.9, w)], BAR_COLOR.filled())
                }))
                .map_err(text_err)?;
        }
        Ok(())
    }))
}

/// Every player's meta-mixture at every iteration: one panel per player, iterations across,
/// members down (member 0 at the top), the probability as colour (white 0 to dark blue 1,
/// by its square root so that small weights show; grey where the member did not exist yet). Written for any number of players; `Ok(false)`,
/// and nothing written, when the run's loop has no meta-game. A long run is drawn in blocks
/// of consecutive iterations (at most 300 across) and members (at most 100 down), each
/// block's colour its members' summed probability averaged over its iterations.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
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
    Some(svg_text((1100, 50 + panel * players as u32), |root| {
        let root = root.titled(&title, TITLE_FONT).map_err(text_err)?;
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

/// Write every common figure of a finished run into `dir`: `exploitability.svg`; for loops
/// with a meta-game `mixtures.svg` (any number of players) and, for 2 players,
/// `payoffs.svg`. A loop's own figures come from its unit (`src/loops/`).
///
/// # Errors
///
/// [`Error::Output`] when a file cannot be written.
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

/// Curve colours, distinguishable on white (matplotlib's tab10).
pub(crate) const CURVE_COLORS: [RGBColor; 10] = [
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
/// of 2 or more runs a band from the smallest to the largest run (a study's few seeds make a
/// normal 95% interval of the mean too narrow). Values at or below 0 are
/// drawn on a floor one decade below the smallest positive value, the tick labelled `0`.
///
/// # Errors
///
/// [`Error::Output`] when the file cannot be written.
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
    let y_desc = match y.zero_floor {
        Some(_) => format!("{y_label} (log scale; 0 at the bottom)"),
        None => format!("{y_label} (log scale)"),
    };
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
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .label_font(LABEL_FONT)
            .draw()
            .map_err(text_err)?;
        Ok(())
    });
    write_figure(path, figure)
}

#[cfg(test)]
mod tests {
    use super::{LogAxis, blocks, cell_ticks, downsample, downsample_by, linear_ticks, log_ticks};

    #[test]
    fn downsampling_keeps_a_curves_ends_and_extremes_and_bounds_its_points() {
        // 20 000 points of a noisy curve with one spike up and one down.
        let mut points: Vec<(f64, f64)> =
            (0..20_000).map(|i| (f64::from(i), 1.0 + (f64::from(i) * 0.37).sin() * 0.1)).collect();
        points[7_777].1 = 9.0;
        points[12_345].1 = -4.0;
        let thin = downsample(&points);
        assert!(thin.len() <= 4 * super::CURVE_COLUMNS, "{}", thin.len());
        assert!(thin.contains(&points[7_777]) && thin.contains(&points[12_345]));
        assert_eq!(thin.first(), points.first());
        assert_eq!(thin.last(), points.last());
        assert!(thin.windows(2).all(|w| w[0].0 < w[1].0), "in order");
        // A short curve as it is; a log axis's columns by ln x.
        assert_eq!(downsample(&points[..100]), points[..100].to_vec());
        let log: Vec<(f64, f64)> = (1..=50_000).map(|i| (f64::from(i) * 1e-3, f64::from(i % 17))).collect();
        let thin = downsample_by(&log, 100, f64::ln);
        assert!(thin.len() <= 400 && thin.iter().any(|p| p.1 == 16.0) && thin.iter().any(|p| p.1 == 0.0));
    }

    #[test]
    fn blocks_cover_every_index_once_in_order() {
        assert_eq!(blocks(3, 80), vec![0..1, 1..2, 2..3]);
        let b = blocks(2_500, 80);
        assert_eq!(b.len(), 80);
        assert_eq!(b[0].start, 0);
        assert_eq!(b[79].end, 2_500);
        assert!(b.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()));
    }

    #[test]
    fn log_ticks_label_decades_and_fill_short_ranges() {
        assert_eq!(log_ticks(1e-6, 2e1), vec![1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]);
        // Less than 3 decades: 1, 2 and 5 times each.
        assert_eq!(log_ticks(0.3, 12.0), vec![0.5, 1.0, 2.0, 5.0, 10.0]);
        // Many decades: every third, 1 among them.
        assert_eq!(log_ticks(1e-16, 10.0), vec![1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 1.0]);
    }

    #[test]
    fn a_zero_sits_on_a_labelled_floor_below_the_smallest_positive_value() {
        let axis = LogAxis::new([0.0, 3e-3, 2.5]);
        assert_eq!(axis.zero_floor, Some(1e-4));
        assert_eq!(axis.ticks[0], 1e-4);
        assert_eq!(axis.label(1e-4), "0");
        assert_eq!(axis.place(0.0), 1e-4);
        assert!(axis.low < 1e-4 && axis.high > 2.5);
        let axis = LogAxis::new([0.5, 4.0]);
        assert_eq!(axis.zero_floor, None);
        assert_eq!(axis.label(0.5), "0.5");
        let axis = LogAxis::new([1e-9, 4.0]);
        assert_eq!(axis.label(1e-6), "10⁻⁶");
    }

    #[test]
    fn integer_ticks_are_integers_and_cell_ticks_sit_at_centres() {
        assert_eq!(linear_ticks(0.0, 7.0, 10, true), (0..=7).map(f64::from).collect::<Vec<_>>());
        assert_eq!(
            linear_ticks(0.0, 100.0, 10, true),
            (0..=10).map(|k| f64::from(k) * 10.0).collect::<Vec<_>>()
        );
        assert_eq!(cell_ticks(3, 12), vec![0.5, 1.5, 2.5]);
        assert_eq!(cell_ticks(101, 12)[..3], [0.5, 10.5, 20.5]);
    }
}
