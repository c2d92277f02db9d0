//! The league's own figures: each main agent's NashConv over training episodes
//! (`nash_conv.svg`), the members' online Elo by round (`elo.svg`) and the final win-rate
//! table (`win_rates.svg`), drawn with the common axes and colours of [`crate::plots`].

use std::path::Path;

use metagame_populations::{IterationReport, League, LeagueConfig, LeagueReport};
use plotters::prelude::*;

use crate::error::Result;
use crate::plots::{
    ABSENT_COLOR, CURVE_COLORS, DESC_FONT, Drawn, GRID_COLOR, LABEL_FONT, LogAxis, NASH_CONV_ZERO, TITLE_FONT,
    axis_number, cell_ticks, colour_bar, diverging, linear_axis, linear_ticks, log_axis, svg_text, text_err,
    write_figure,
};

/// Write the league's figures into `dir` (none when the reports hold no league part).
///
/// # Errors
///
/// [`crate::Error::Output`] when a file cannot be written.
pub(super) fn write(
    config: &LeagueConfig,
    league: &League<'_>,
    iterations: &[IterationReport],
    game: &str,
    dir: &Path,
) -> Result<()> {
    let Some(parts) = iterations.iter().map(|r| r.details.get::<LeagueReport>()).collect::<Option<Vec<_>>>()
    else {
        return Ok(());
    };
    let report = &Run { game, iterations };
    if let Some(figure) = league_nash_conv_figure(report, &parts) {
        write_figure(&dir.join("nash_conv.svg"), figure)?;
    }
    if let Some(figure) = league_elo_figure(config, report, &parts) {
        write_figure(&dir.join("elo.svg"), figure)?;
    }
    if let Some(figure) = win_rates_figure(config, report, &league.win_rate_table()) {
        write_figure(&dir.join("win_rates.svg"), figure)?;
    }
    Ok(())
}

/// The run whose figures are drawn: its game string and its reports.
struct Run<'a> {
    game: &'a str,
    iterations: &'a [IterationReport],
}

/// A league member as the reports tell it: the learning agent it is or was snapped from,
/// and the round it joined (`None` for the learning agent itself).
#[derive(Clone, Copy, Debug, PartialEq)]
struct LeagueMemberInfo {
    agent: usize,
    snapped_at: Option<usize>,
}

/// The learning agents' roles, in agent order, from a league run's config.
fn league_roles(c: &LeagueConfig) -> Option<Vec<&'static str>> {
    Some(
        std::iter::repeat_n("main agent", c.main_agents())
            .chain(std::iter::repeat_n("main exploiter", c.main_exploiters()))
            .chain(std::iter::repeat_n("league exploiter", c.league_exploiters()))
            .collect(),
    )
}

/// Every member of a league run, in member order, rebuilt from the config and the reports:
/// the learning agents, the main agents' initial snapshots, then each round's snapshots in
/// agent order (as the league adds them). `None` when the reports disagree.
fn league_members(c: &LeagueConfig, report: &Run<'_>, parts: &[LeagueReport]) -> Option<Vec<LeagueMemberInfo>> {
    let roles = league_roles(c)?;
    let mut members: Vec<LeagueMemberInfo> =
        (0..roles.len()).map(|agent| LeagueMemberInfo { agent, snapped_at: None }).collect();
    for (agent, role) in roles.iter().enumerate() {
        if *role == "main agent" {
            members.push(LeagueMemberInfo { agent, snapped_at: Some(0) });
        }
    }
    for (r, league) in report.iterations.iter().zip(parts) {
        if r.iteration > 0 {
            for &agent in &league.snapshots {
                members.push(LeagueMemberInfo { agent, snapped_at: Some(r.iteration) });
            }
        }
        if members.len() != league.members {
            return None;
        }
    }
    Some(members)
}

/// Each main agent's exact NashConv (its current policy dashed, its average policy solid)
/// against training episodes, log scale; one colour per main agent.
fn league_nash_conv_figure(report: &Run<'_>, parts: &[LeagueReport]) -> Option<Drawn<String>> {
    let mut episodes = 0u64;
    let points: Vec<(f64, &[f64], &[f64])> = report
        .iterations
        .iter()
        .zip(parts)
        .map(|(r, l)| {
            episodes += r.episodes;
            (episodes as f64, &l.main_nash_conv[..], &l.main_average_nash_conv[..])
        })
        .collect();
    let mains = points.iter().map(|p| p.1.len()).max()?;
    if mains == 0 {
        return None;
    }
    let y =
        LogAxis::with_zero_below(points.iter().flat_map(|p| p.1.iter().chain(p.2).copied()), NASH_CONV_ZERO);
    let x_max = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let pad = x_max * 0.02;
    let y_desc = match y.zero_floor {
        Some(_) => "exact NashConv (log scale; 0 at the bottom)",
        None => "exact NashConv (log scale)",
    };
    let title = format!("{}: league main agents' NashConv", report.game);
    Some(svg_text((900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, TITLE_FONT)
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(
                linear_axis(-pad..x_max + pad, linear_ticks(0.0, x_max, 10, true)),
                log_axis(y.low..y.high, y.ticks.clone()),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc("training episodes (all learning agents)")
            .y_desc(y_desc)
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, true))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        for k in 0..mains {
            let color = CURVE_COLORS[k % CURVE_COLORS.len()];
            let name = if mains > 1 { format!("main agent {k}") } else { "main agent".into() };
            let average: Vec<(f64, f64)> =
                points.iter().filter_map(|p| p.2.get(k).map(|&v| (p.0, y.place(v)))).collect();
            let current: Vec<(f64, f64)> =
                points.iter().filter_map(|p| p.1.get(k).map(|&v| (p.0, y.place(v)))).collect();
            chart
                .draw_series(DashedLineSeries::new(current, 6, 4, color.mix(0.8).stroke_width(1)))
                .map_err(text_err)?
                .label(format!("{name}: current policy"))
                .legend(move |(x, y)| {
                    PathElement::new(
                        vec![(x, y), (x + 8, y), (x + 12, y), (x + 20, y)],
                        color.stroke_width(1),
                    )
                });
            chart
                .draw_series(LineSeries::new(average, color.stroke_width(3)))
                .map_err(text_err)?
                .label(format!("{name}: average policy"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
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
    }))
}

/// Every member's online Elo rating by round: the learning agents thick, each in its own
/// colour, their snapshots thin in the same colour from the round they joined.
fn league_elo_figure(c: &LeagueConfig, report: &Run<'_>, parts: &[LeagueReport]) -> Option<Drawn<String>> {
    let rounds: Vec<(usize, &[f64])> =
        report.iterations.iter().zip(parts).map(|(r, l)| (r.iteration, &l.elo[..])).collect();
    let n = rounds.iter().map(|r| r.1.len()).max()?;
    let roles = league_roles(c)?;
    let members = league_members(c, report, parts)
        .unwrap_or_else(|| (0..n).map(|m| LeagueMemberInfo { agent: m, snapped_at: None }).collect());
    let (lo, hi) = rounds
        .iter()
        .flat_map(|r| r.1.iter().copied())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if !lo.is_finite() {
        return None;
    }
    let margin = ((hi - lo) * 0.05).max(10.0);
    let (lo, hi) = (lo - margin, hi + margin);
    let last = rounds.last()?.0 as f64;
    let x_max = last.max(1.0);
    let title = format!("{}: league members' online Elo", report.game);
    Some(svg_text((900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, TITLE_FONT)
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(
                linear_axis(-x_max * 0.02..x_max * 1.02, linear_ticks(0.0, x_max, 10, true)),
                linear_axis(lo..hi, linear_ticks(lo, hi, 8, true)),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .bold_line_style(GRID_COLOR)
            .x_desc("round")
            .y_desc("Elo (online, K = 32)")
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, true))
            .y_label_formatter(&|v| axis_number(*v, true))
            .draw()
            .map_err(text_err)?;
        let line = |m: usize| -> Vec<(f64, f64)> {
            rounds.iter().filter_map(|&(r, elo)| elo.get(m).map(|&v| (r as f64, v))).collect()
        };
        // Snapshots first, so the learning agents are drawn over them.
        let mut labelled = false;
        for (m, info) in members.iter().enumerate().filter(|(_, i)| i.snapped_at.is_some()) {
            let color = CURVE_COLORS[info.agent % CURVE_COLORS.len()].mix(0.45);
            let series =
                chart.draw_series(LineSeries::new(line(m), color.stroke_width(1))).map_err(text_err)?;
            if !labelled {
                labelled = true;
                series.label("snapshots (thin, in their agent's colour)").legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.45).stroke_width(1))
                });
            }
        }
        for (m, info) in members.iter().enumerate().filter(|(_, i)| i.snapped_at.is_none()) {
            let color = CURVE_COLORS[info.agent % CURVE_COLORS.len()];
            let role = roles.get(info.agent).copied().unwrap_or("agent");
            chart
                .draw_series(LineSeries::new(line(m), color.stroke_width(3)))
                .map_err(text_err)?
                .label(format!("{role} (member {m})"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(LABEL_FONT)
            .draw()
            .map_err(text_err)?;
        Ok(())
    }))
}

/// The final win-rate table among all league members as a heat map: row `i`, column `j` is
/// how often member `i` beats member `j` (a diverging colour map centred on ½, a colour
/// bar, row 0 at the top, grey for pairs that never played).
fn win_rates_figure(c: &LeagueConfig, report: &Run<'_>, table: &[Vec<Option<f64>>]) -> Option<Drawn<String>> {
    let n = table.len();
    if n == 0 {
        return None;
    }
    let agents = league_roles(c).map_or(0, |r| r.len());
    let played = table.iter().flatten().filter(|v| v.is_some()).count();
    let caption = format!(
        "final win rates, row beats column: {n} members (0–{} learning agents, then snapshots); \
         {played} of {} cells played, grey never",
        agents.saturating_sub(1),
        n * n
    );
    let title = format!("{}: league win rates", report.game);
    Some(svg_text((900, 780), |root| {
        let root = root.titled(&title, TITLE_FONT).map_err(text_err)?;
        let (map_area, bar_area) = root.split_horizontally(790);
        let mut chart = ChartBuilder::on(&map_area)
            .caption(&caption, LABEL_FONT)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(
                linear_axis(0f64..n as f64, cell_ticks(n, 12)),
                linear_axis(0f64..n as f64, cell_ticks(n, 12).iter().map(|y| n as f64 - y).collect()),
            )
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("opponent (member)")
            .y_desc("member")
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| format!("{}", (v - 0.5).round() as i64))
            .y_label_formatter(&|v| format!("{}", (n as f64 - v - 0.5).round() as i64))
            .draw()
            .map_err(text_err)?;
        chart
            .draw_series(table.iter().enumerate().flat_map(|(i, row)| {
                row.iter().enumerate().map(move |(j, v)| {
                    let top = (n - i) as f64;
                    let color = v.map_or(ABSENT_COLOR, |w| diverging((w - 0.5) * 2.0));
                    Rectangle::new([(j as f64, top - 1.0), (j as f64 + 1.0, top)], color.filled())
                })
            }))
            .map_err(text_err)?;
        if agents > 0 && agents < n {
            // The learning agents' block, outlined.
            let a = agents as f64;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, n as f64 - a), (a, n as f64)],
                    BLACK.stroke_width(1),
                )))
                .map_err(text_err)?;
        }
        colour_bar(
            &bar_area,
            "win rate",
            0.0,
            1.0,
            vec![0.0, 0.25, 0.5, 0.75, 1.0],
            |v| diverging((v - 0.5) * 2.0),
            |v| axis_number(v, false),
        )
    }))
}

