//! The meta-game's heat map: each player's payoffs with the final meta-mixture beside them.

use std::path::Path;

use metagame_games::NormalFormGame;
use plotters::prelude::*;

use crate::error::Result;

use super::kit::{
    CAPTION_FONT, DESC_FONT, Drawn, GRID_COLOR, LABEL_FONT, MAX_CELLS_PER_SIDE, axis_number, blocks,
    cell_ticks, colour_bar, diverging, linear_axis, linear_ticks, svg_text, text_err, write_figure,
};

/// The colour of mixture bars: muted, so the heat map stays the figure's subject.
const BAR_COLOR: RGBColor = RGBColor(126, 146, 178);

/// The final 2-player meta-game as a heat map of player 0's payoffs (a diverging colour map
/// centred on 0, a colour bar, row 0 at the top, ticks at cell centres), with both players'
/// meta-mixtures as bars beside it. Meta-games of other sizes write nothing. Past 80
/// members a side, the heat map is drawn in blocks of consecutive members, each block in
/// its mean payoff.
///
/// # Errors
///
/// [`Error::Output`](crate::Error::Output) when the file cannot be written.
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
