//! What every figure is drawn with: the page and its SVG text, fonts and colours, linear
//! and log axes with their ticks (a 0 drawn in a band below a break in the axis, so that it
//! cannot be read as a value of the log scale), curves thinned to the
//! figure's resolution, matrices in blocks, colour maps and colour bars. The figures of a
//! run, of a loop and of a benchmark use these.

use std::ops::Range;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::{Error, Result};

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

/// The legend of `chart`'s labelled series, as every figure draws it: a white, outlined box
/// at `position`.
pub(crate) fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Drawn
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(position)
        .label_font(LABEL_FONT)
        .draw()
        .map_err(text_err)
}

/// The corner of a plot where a legend of `entries` lines hides the least of the curves
/// through `points` (each `(x, y)` as shares of the plot's width and height from its lower
/// left corner, consecutive points of a curve joined), the upper right on ties.
pub(crate) fn quietest_corner(curves: &[Vec<(f64, f64)>], entries: usize) -> SeriesLabelPosition {
    // The legend box as a share of the plot: about a third of its width, some 16 px a line
    // of about 440.
    let (w, h) = (0.38, (0.04 * entries as f64 + 0.05).min(0.95));
    let corners = [
        (SeriesLabelPosition::UpperRight, 1.0 - w, 1.0 - h),
        (SeriesLabelPosition::UpperLeft, 0.0, 1.0 - h),
        (SeriesLabelPosition::LowerRight, 1.0 - w, 0.0),
        (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
    ];
    // Each segment sampled at 16 points, so that a line crossing the box counts too.
    let samples: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| {
            c.windows(2).flat_map(|s| {
                (0..16).map(move |k| {
                    let t = f64::from(k) / 16.0;
                    (s[0].0 + t * (s[1].0 - s[0].0), s[0].1 + t * (s[1].1 - s[0].1))
                })
            })
        })
        .chain(curves.iter().filter_map(|c| c.last().copied()))
        .collect();
    let hidden = |x0: f64, y0: f64| {
        samples.iter().filter(|&&(x, y)| (x0..=x0 + w).contains(&x) && (y0..=y0 + h).contains(&y)).count()
    };
    let mut best = (corners[0].0.clone(), usize::MAX);
    for (position, x0, y0) in corners {
        let n = hidden(x0, y0);
        if n < best.1 {
            best = (position, n);
        }
    }
    best.0
}

/// Write a figure's SVG text atomically (a reader never sees half a figure).
pub(crate) fn write_figure(path: &Path, figure: Drawn<String>) -> Result<()> {
    let text = figure.map_err(|e| plot_err(path, e))?;
    metagame_populations::checkpoint::write_atomic(path, text.as_bytes()).map_err(|e| plot_err(path, e))
}

/// The grid: light enough to read values off without competing with the data.
pub(crate) const GRID_COLOR: RGBAColor = RGBAColor(0, 0, 0, 0.12);

/// Where no value exists (a member not yet added); a figure that uses it says so in its
/// legend or caption.
pub(crate) const ABSENT_COLOR: RGBColor = RGBColor(236, 236, 236);

/// The band that holds 0 on a log axis, below (or left of) the axis's break: a pale amber,
/// translucent so that the grid shows through, unlike any curve colour or [`ABSENT_COLOR`].
pub(crate) const ZERO_BAND_COLOR: RGBAColor = RGBAColor(240, 190, 60, 0.22);

/// How far the zero band reaches either side of the floor, as a factor on the log axis
/// (10^0.35: the band is 0.7 decade tall, and a gap of at least 0.65 decade separates it
/// from the lowest positive value, which is at least 10 × the floor).
const ZERO_BAND_HALF: f64 = 2.238_721_138_568_339_5;

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
    /// The axis for `values`: from the smallest positive value to the largest, with margins.
    /// When some values are 0 or below, they are drawn on a floor one decade under the decade
    /// of the smallest positive value, inside a band ([`LogAxis::zero_band`]) that a break in
    /// the axis separates from the log scale ([`draw_zero_bands`]); no tick lies between the
    /// band and 10 × the floor.
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
        let low = zero_floor.map_or(min_positive / 1.5, |f| f / ZERO_BAND_HALF);
        let high = max.max(min_positive * 1.01) * 1.5;
        let mut ticks = log_ticks(zero_floor.map_or(low, |f| 10.0 * f), high);
        if let Some(f) = zero_floor {
            // The scale resumes at 10 × the floor: nothing is labelled in the gap.
            ticks.retain(|&t| t >= 10.0 * f * (1.0 - 1e-9));
            ticks.insert(0, f);
        }
        let plain = ticks.iter().all(|&t| (1e-3..1e4).contains(&t) || zero_floor == Some(t));
        LogAxis { low, high, ticks, zero_floor, zero, plain }
    }

    /// The range of the band that holds 0 (from the axis's low end to just above the floor),
    /// when some value is 0.
    pub(crate) fn zero_band(&self) -> Option<Range<f64>> {
        self.zero_floor.map(|f| self.low..f * ZERO_BAND_HALF)
    }

    /// The axis's description: `label (log scale)`, and where 0 is when the axis has a
    /// zero band (`side`: "below" for a y axis, "left of" for an x axis).
    pub(crate) fn describe(&self, label: &str, side: &str) -> String {
        match self.zero_floor {
            Some(_) => format!("{label} (log scale; 0 in the shaded band {side} the break)"),
            None => format!("{label} (log scale)"),
        }
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

/// Shade the zero band of `x` and `y` (those that have one: [`LogAxis::zero_band`]) across
/// the chart and break the axis line where the band ends, so that a curve at 0 reads as 0
/// and not as the value one decade under the lowest tick. Call after the mesh is drawn.
pub(crate) fn draw_zero_bands<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    x: Option<&LogAxis>,
    y: Option<&LogAxis>,
) -> Drawn
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let (xs, ys) = (chart.x_range(), chart.y_range());
    let area = chart.plotting_area();
    // The break: a white gap in the axis line between two parallel strokes, in pixels about
    // the point where the band ends on the axis.
    let stroke = BLACK.stroke_width(1);
    if let Some(band) = y.and_then(LogAxis::zero_band) {
        area.draw(&Rectangle::new([(xs.start, band.start), (xs.end, band.end)], ZERO_BAND_COLOR.filled()))
            .map_err(text_err)?;
        let mark = EmptyElement::at((xs.start, band.end))
            + Rectangle::new([(-9, -3), (9, 3)], WHITE.filled())
            + PathElement::new(vec![(-9, 1), (9, -5)], stroke)
            + PathElement::new(vec![(-9, 5), (9, -1)], stroke);
        area.draw(&mark).map_err(text_err)?;
    }
    if let Some(band) = x.and_then(LogAxis::zero_band) {
        area.draw(&Rectangle::new([(band.start, ys.start), (band.end, ys.end)], ZERO_BAND_COLOR.filled()))
            .map_err(text_err)?;
        let mark = EmptyElement::at((band.end, ys.start))
            + Rectangle::new([(-3, -9), (3, 9)], WHITE.filled())
            + PathElement::new(vec![(-5, 9), (1, -9)], stroke)
            + PathElement::new(vec![(-1, 9), (5, -9)], stroke);
        area.draw(&mark).map_err(text_err)?;
    }
    Ok(())
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
pub(crate) fn sequential(t: f64) -> RGBColor {
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

#[cfg(test)]
mod tests {
    use plotters::prelude::SeriesLabelPosition;

    use super::{
        LogAxis, blocks, cell_ticks, downsample, downsample_by, linear_ticks, log_ticks, quietest_corner,
    };

    #[test]
    fn the_legend_goes_where_the_curves_are_not() {
        let pos = |c: &[Vec<(f64, f64)>]| format!("{:?}", quietest_corner(c, 4));
        // Falling from the upper left to the lower right: the upper right is free.
        let falling = vec![vec![(0.0, 1.0), (1.0, 0.0)]];
        assert_eq!(pos(&falling), format!("{:?}", SeriesLabelPosition::UpperRight));
        // High along the top: a lower corner, the right one on ties after the left is hit.
        let high = vec![vec![(0.0, 0.95), (1.0, 0.9)], vec![(0.0, 0.2), (0.3, 0.0)]];
        assert_eq!(pos(&high), format!("{:?}", SeriesLabelPosition::LowerRight));
        // Sampled along each segment: a line from the top middle into the upper right
        // corner, one across the middle, one along the bottom left; the upper left is free.
        let crossing = vec![
            vec![(0.5, 0.99), (1.0, 0.99)],
            vec![(0.0, 0.5), (1.0, 0.5)],
            vec![(0.0, 0.01), (0.5, 0.01)],
        ];
        assert_eq!(pos(&crossing), format!("{:?}", SeriesLabelPosition::UpperLeft));
    }

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
    fn a_zero_sits_on_a_labelled_floor_in_a_band_below_the_smallest_positive_value() {
        let axis = LogAxis::new([0.0, 3e-3, 2.5]);
        assert_eq!(axis.zero_floor, Some(1e-4));
        assert_eq!(axis.ticks[0], 1e-4);
        assert_eq!(axis.label(1e-4), "0");
        assert_eq!(axis.place(0.0), 1e-4);
        assert!(axis.low < 1e-4 && axis.high > 2.5);
        // The band holds the floor and ends below the scale's first tick, 10 × the floor.
        let band = axis.zero_band().unwrap();
        assert!(band.start == axis.low && band.contains(&1e-4) && band.end < 1e-3, "{band:?}");
        assert_eq!(axis.ticks[1], 1e-3);
        assert!(axis.describe("NashConv", "below").contains("0 in the shaded band below the break"));
        // A short range: no 2 or 5 × the floor's decade in the gap above the band.
        let axis = LogAxis::new([0.0, 0.3, 2.0]);
        assert_eq!(axis.zero_floor, Some(0.01));
        assert_eq!(axis.ticks, vec![0.01, 0.1, 0.2, 0.5, 1.0, 2.0]);
        assert_eq!(axis.label(0.01), "0");
        let axis = LogAxis::new([0.5, 4.0]);
        assert_eq!(axis.zero_floor, None);
        assert_eq!(axis.zero_band(), None);
        assert_eq!(axis.describe("NashConv", "below"), "NashConv (log scale)");
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
