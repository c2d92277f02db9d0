//! The league's own figures: each main agent's NashConv over training episodes
//! (`nash_conv.svg`), the learning agents' online Elo by round against the band of their
//! snapshots' (`elo.svg`) and the final win-rate table (`win_rates.svg`, per member up to 40
//! members, then per group of members), drawn with the common axes and colours of
//! [`crate::plots`]. Every figure stays small at any league size and run length: long
//! curves are thinned to the figure's resolution ([`downsample`]), and the win-rate table
//! has at most [`MAX_GROUPS`] × [`MAX_GROUPS`] cells.

use std::collections::BTreeMap;
use std::path::Path;

use metagame_populations::{IterationReport, League, LeagueConfig, LeagueMember, LeagueReport, Role};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::Result;
use crate::plots::kit::{
    ABSENT_COLOR, CURVE_COLORS, DESC_FONT, Drawn, GRID_COLOR, LABEL_FONT, LogAxis, NASH_CONV_ZERO, TITLE_FONT,
    axis_number, cell_ticks, colour_bar, diverging, downsample, draw_legend, draw_zero_bands, linear_axis, linear_ticks, log_axis, svg_text,
    text_err, write_figure,
};

/// Rows (and columns) of the win-rate figure at most: up to this many members it has a row
/// per member, beyond it a row per group of members (see [`member_groups`]).
pub(crate) const MAX_GROUPS: usize = 40;

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
    let state = league.state();
    let members = member_infos(state.members(), iterations, &parts);
    let w = state.win_rates();
    let table = GroupTable::new(&members, MAX_GROUPS, |i, j| (w.points(i, j), w.games(i, j)));
    if let Some(figure) = win_rates_figure(report.game, &table) {
        write_figure(&dir.join("win_rates.svg"), figure)?;
    }
    Ok(())
}

/// The run whose figures are drawn: its game string and its reports.
struct Run<'a> {
    game: &'a str,
    iterations: &'a [IterationReport],
}

/// The learning agents' roles, in agent order, from a league run's config.
fn league_roles(c: &LeagueConfig) -> Vec<Role> {
    std::iter::repeat_n(Role::MainAgent, c.main_agents())
        .chain(std::iter::repeat_n(Role::MainExploiter, c.main_exploiters()))
        .chain(std::iter::repeat_n(Role::LeagueExploiter, c.league_exploiters()))
        .collect()
}

/// A role's name in a legend.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::MainAgent => "main agent",
        Role::MainExploiter => "main exploiter",
        Role::LeagueExploiter => "league exploiter",
        _ => role.as_str(),
    }
}

/// A role's short name in a row label.
fn role_short(role: Role) -> &'static str {
    match role {
        Role::MainAgent => "main",
        Role::MainExploiter => "main expl.",
        Role::LeagueExploiter => "league expl.",
        _ => role.as_str(),
    }
}

/// Each agent's number within its role (agents `0, 1, 2` of roles main, main, exploiter
/// are main 0, main 1 and exploiter 0), for agents `0..roles.len()`.
fn numbers_within_role(roles: &[Role]) -> Vec<usize> {
    roles.iter().enumerate().map(|(a, r)| roles[..a].iter().filter(|x| *x == r).count()).collect()
}

/// Each main agent's exact NashConv (its current policy thin, its average policy thick)
/// against training episodes, log scale; one colour per main agent. Curves longer than the
/// figure is wide are thinned, their extremes kept.
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
    let y_desc = y.describe("exact NashConv", "below");
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
            .y_desc(y_desc.as_str())
            .axis_desc_style(DESC_FONT)
            .label_style(LABEL_FONT)
            .x_label_formatter(&|v| axis_number(*v, true))
            .y_label_formatter(&|v| y.label(*v))
            .draw()
            .map_err(text_err)?;
        draw_zero_bands(&mut chart, None, Some(&y))?;
        for k in 0..mains {
            let color = CURVE_COLORS[k % CURVE_COLORS.len()];
            let name = if mains > 1 { format!("main agent {k}") } else { "main agent".into() };
            let current: Vec<(f64, f64)> =
                downsample(&points.iter().filter_map(|p| p.1.get(k).map(|&v| (p.0, y.place(v)))).collect::<Vec<_>>());
            let average: Vec<(f64, f64)> =
                downsample(&points.iter().filter_map(|p| p.2.get(k).map(|&v| (p.0, y.place(v)))).collect::<Vec<_>>());
            // The current policy as a thin solid line: a dashed one is an SVG element per
            // dash, too many on a long noisy curve.
            let thin = color.mix(0.6).stroke_width(1);
            chart
                .draw_series(LineSeries::new(current, thin))
                .map_err(text_err)?
                .label(format!("{name}: current policy"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], thin));
            chart
                .draw_series(LineSeries::new(average, color.stroke_width(3)))
                .map_err(text_err)?
                .label(format!("{name}: average policy"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }))
}

/// The value at quantile `q` of sorted `values` (linear between neighbours).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let x = q * (sorted.len() - 1) as f64;
    let (i, f) = (x.floor() as usize, x.fract());
    match sorted.get(i + 1) {
        Some(&next) => sorted[i] + f * (next - sorted[i]),
        None => sorted[i],
    }
}

/// One edge of the snapshots' band (its lowest, 10%, …).
type Edge = fn(&Band) -> f64;

/// The snapshots' ratings in one round: lowest, 10%, median, 90%, highest.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Band {
    round: f64,
    min: f64,
    low: f64,
    median: f64,
    high: f64,
    max: f64,
}

impl Band {
    /// The band of `ratings` (`None` when there are none).
    fn of(round: f64, ratings: &[f64]) -> Option<Band> {
        let mut sorted: Vec<f64> = ratings.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        Some(Band {
            round,
            min: sorted[0],
            low: quantile(&sorted, 0.1),
            median: quantile(&sorted, 0.5),
            high: quantile(&sorted, 0.9),
            max: sorted[sorted.len() - 1],
        })
    }
}

/// The online Elo rating by round of each learning agent (thick, one colour each) over the
/// band of its snapshots' ratings: the snapshots' median, their 10–90% range and their
/// lowest to highest, grey. Curves longer than the figure is wide are thinned, extremes
/// kept. The learning agents' ratings are in every round's report (`agent_elo`); every
/// member's only at round 0 and the evaluation points (`elo`, members `0..agents` the
/// learning agents, the rest its snapshots), so the band has a point per evaluation.
fn league_elo_figure(c: &LeagueConfig, report: &Run<'_>, parts: &[LeagueReport]) -> Option<Drawn<String>> {
    let roles = league_roles(c);
    let agents = roles.len();
    let numbers = numbers_within_role(&roles);
    let rounds: Vec<(f64, &[f64])> = report
        .iterations
        .iter()
        .zip(parts)
        .filter(|(_, l)| !l.elo.is_empty())
        .map(|(r, l)| (r.iteration as f64, &l.elo[..]))
        .collect();
    let agent_rounds: Vec<(f64, &[f64])> = report
        .iterations
        .iter()
        .zip(parts)
        .map(|(r, l)| {
            let own = if l.agent_elo.is_empty() { &l.elo[..agents.min(l.elo.len())] } else { &l.agent_elo[..] };
            (r.iteration as f64, own)
        })
        .collect();
    let (lo, hi) = rounds
        .iter()
        .chain(&agent_rounds)
        .flat_map(|r| r.1.iter().copied())
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if !lo.is_finite() {
        return None;
    }
    let bands: Vec<Band> =
        rounds.iter().filter_map(|&(r, elo)| Band::of(r, elo.get(agents..).unwrap_or_default())).collect();
    let margin = ((hi - lo) * 0.05).max(10.0);
    // Headroom for the legend (up to 6 entries in the upper left), so it covers no curve.
    let legend = (hi - lo + 2.0 * margin) * 0.45;
    let (lo, hi) = (lo - margin, hi + margin + legend);
    let x_max = agent_rounds.last()?.0.max(1.0);
    let title = format!("{}: league online Elo", report.game);
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
        // The snapshots' band first, so the learning agents are drawn over it.
        let edge = |f: Edge| downsample(&bands.iter().map(|b| (b.round, f(b))).collect::<Vec<_>>());
        let grey = RGBColor(90, 90, 90);
        let ranges: [(Edge, Edge, f64, &str); 2] = [
            (|b| b.min, |b| b.max, 0.12, "snapshots: lowest to highest"),
            (|b| b.low, |b| b.high, 0.28, "snapshots: 10% to 90%"),
        ];
        for (lower, upper, alpha, label) in ranges {
            if bands.is_empty() {
                break;
            }
            let outline: Vec<(f64, f64)> = edge(upper).into_iter().chain(edge(lower).into_iter().rev()).collect();
            let fill = grey.mix(alpha);
            chart
                .draw_series(std::iter::once(Polygon::new(outline, fill)))
                .map_err(text_err)?
                .label(label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], fill.filled()));
        }
        if !bands.is_empty() {
            let style = grey.stroke_width(1);
            chart
                .draw_series(LineSeries::new(edge(|b| b.median), style))
                .map_err(text_err)?
                .label("snapshots: median")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        for (agent, role) in roles.iter().enumerate() {
            let line: Vec<(f64, f64)> =
                agent_rounds.iter().filter_map(|&(r, elo)| elo.get(agent).map(|&v| (r, v))).collect();
            if line.is_empty() {
                continue;
            }
            let color = CURVE_COLORS[agent % CURVE_COLORS.len()];
            let same_role = roles.iter().filter(|r| *r == role).count();
            let name = match same_role {
                1 => role_name(*role).to_string(),
                _ => format!("{} {}", role_name(*role), numbers[agent]),
            };
            chart
                .draw_series(LineSeries::new(downsample(&line), color.stroke_width(3)))
                .map_err(text_err)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(LABEL_FONT)
            .draw()
            .map_err(text_err)?;
        Ok(())
    }))
}

/// A member as the win-rate figure groups it: its id, its role, its learning agent, the
/// round it was snapped at (`None` for the learning agent itself) and, for a snapshot, its
/// agent's generation then (how many times the agent had reset before that round; `None`
/// when the reports do not cover that round).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MemberInfo {
    pub(crate) id: usize,
    pub(crate) role: Role,
    pub(crate) agent: usize,
    pub(crate) snapped_at: Option<usize>,
    pub(crate) generation: Option<u64>,
}

/// The league's members with their generations, counted from the reports' `resets` lists:
/// an agent that resets in round `r` snaps first (its snapshot of round `r` is of the old
/// generation), so a snapshot of round `r` is of generation "resets of its agent before
/// round `r`".
fn member_infos(members: &[LeagueMember], iterations: &[IterationReport], parts: &[LeagueReport]) -> Vec<MemberInfo> {
    let covered = iterations.first().map_or(usize::MAX, |r| r.iteration);
    let mut resets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (r, l) in iterations.iter().zip(parts) {
        for &agent in &l.resets {
            resets.entry(agent).or_default().push(r.iteration);
        }
    }
    members
        .iter()
        .map(|m| MemberInfo {
            id: m.id,
            role: m.role,
            agent: m.agent,
            snapped_at: m.snapped_at,
            generation: m.snapped_at.filter(|&s| s >= covered).map(|s| {
                resets.get(&m.agent).map_or(0, |rounds| rounds.iter().filter(|&&r| r < s).count() as u64)
            }),
        })
        .collect()
}

/// A group of members: a row and a column of the win-rate figure.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Group {
    /// Its row label.
    pub(crate) label: String,
    /// Its members' positions (in the league's member order).
    pub(crate) members: Vec<usize>,
    /// Groups of one block share this key (learning agents, or one agent's snapshots); a
    /// line separates blocks in the figure.
    block: Option<usize>,
}

/// Members cut into at most `max_groups` groups (each member its own group, labelled with its
/// id, while there are at most `max_groups` members). Beyond that:
///
/// - each learning agent is a group;
/// - each agent's snapshots, in the order they were taken, are cut into consecutive windows,
///   one window per agent, then the groups left go one at a time to the agent with the
///   most snapshots per window, so that windows hold about equal numbers of snapshots
///   across agents: a main agent's by snapshot rounds; an exploiter's never splitting a
///   generation (the snapshots between two resets), so its windows are ranges of
///   generations;
/// - when the agents alone are more than the groups allowed, one group per role and kind
///   (learning agents, snapshots).
pub(crate) fn member_groups(members: &[MemberInfo], max_groups: usize) -> Vec<Group> {
    let max_groups = max_groups.max(2);
    let roles: BTreeMap<usize, Role> = members.iter().map(|m| (m.agent, m.role)).collect();
    let number = |agent: usize| roles.range(..agent).filter(|(_, r)| **r == roles[&agent]).count();
    let agent_name = |m: &MemberInfo| format!("{} {}", role_short(m.role), number(m.agent));
    if members.len() <= max_groups {
        return members
            .iter()
            .enumerate()
            .map(|(position, m)| {
                let id = m.id;
                let label = match (m.snapped_at, m.generation) {
                    (None, _) => format!("{id}: {} (learning)", agent_name(m)),
                    (Some(r), Some(g)) if m.role != Role::MainAgent => {
                        format!("{id}: {}, gen {g}, round {r}", agent_name(m))
                    }
                    (Some(r), _) => format!("{id}: {}, round {r}", agent_name(m)),
                };
                // In member order, snapshots of all agents alternate: one block for them all.
                Group { label, members: vec![position], block: m.snapped_at.map(|_| 0) }
            })
            .collect();
    }
    let mut learning: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut snapshots: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (id, m) in members.iter().enumerate() {
        match m.snapped_at {
            None => learning.entry(m.agent).or_default().push(id),
            Some(_) => snapshots.entry(m.agent).or_default().push(id),
        }
    }
    if learning.len() + snapshots.len() > max_groups {
        return by_role(members);
    }
    let mut groups: Vec<Group> = learning
        .values()
        .map(|ids| Group {
            label: format!("{} (learning)", agent_name(&members[ids[0]])),
            members: ids.clone(),
            block: None,
        })
        .collect();
    let budget = max_groups - groups.len();
    let mut units_of: BTreeMap<usize, Vec<Vec<usize>>> = BTreeMap::new();
    for (&agent, ids) in &mut snapshots {
        ids.sort_by_key(|&id| (members[id].snapped_at, id));
        // Units that a window never splits: an exploiter's generations, a main agent's
        // snapshots.
        let mut units: Vec<Vec<usize>> = Vec::new();
        for &id in ids.iter() {
            let m = &members[id];
            let same = units.last().is_some_and(|u: &Vec<usize>| {
                let prev = &members[u[0]];
                m.role != Role::MainAgent && m.generation.is_some() && prev.generation == m.generation
            });
            match units.last_mut() {
                Some(u) if same => u.push(id),
                _ => units.push(vec![id]),
            }
        }
        units_of.insert(agent, units);
    }
    // One window per agent, then one more at a time to the agent with the most snapshots
    // per window (that still has units to split), until the groups are spent.
    let mut windows: BTreeMap<usize, usize> = units_of.keys().map(|&a| (a, 1)).collect();
    for _ in units_of.len()..budget {
        let most = units_of
            .iter()
            .filter(|(a, units)| windows[a] < units.len())
            .max_by(|(a, _), (b, _)| {
                let per = |x: &usize| snapshots[x].len() as f64 / windows[x] as f64;
                per(a).total_cmp(&per(b)).then(b.cmp(a))
            })
            .map(|(&a, _)| a);
        match most {
            Some(a) => *windows.entry(a).or_default() += 1,
            None => break,
        }
    }
    for (&agent, units) in &units_of {
        for window in windows_of(units, windows[&agent]) {
            let first = &members[window[0]];
            let last = &members[window[window.len() - 1]];
            let range = |a: String, b: String| if a == b { a } else { format!("{a}–{b}") };
            let span = match (first.generation, last.generation) {
                (Some(g), Some(h)) if first.role != Role::MainAgent => format!("gen {}", range(g.to_string(), h.to_string())),
                _ => {
                    let r = |m: &MemberInfo| m.snapped_at.unwrap_or(0).to_string();
                    let word = if window.len() > 1 { "rounds" } else { "round" };
                    format!("{word} {}", range(r(first), r(last)))
                }
            };
            let count = if window.len() > 1 { format!(" ({})", window.len()) } else { String::new() };
            groups.push(Group { label: format!("{}, {span}{count}", agent_name(first)), members: window, block: Some(agent) });
        }
    }
    groups
}

/// `units` (in order) cut into `k` consecutive windows of about equal members each (each
/// window at least one unit), flattened into member ids.
fn windows_of(units: &[Vec<usize>], k: usize) -> Vec<Vec<usize>> {
    let total: usize = units.iter().map(Vec::len).sum();
    let mut windows = Vec::with_capacity(k);
    let mut u = 0;
    let mut done = 0;
    for w in 0..k {
        let target = (w + 1) * total / k;
        let mut window = Vec::new();
        while u < units.len() {
            let units_left = units.len() - u;
            let windows_left = k - w;
            let stop = !window.is_empty()
                && w + 1 < k
                && (units_left < windows_left || done >= target || {
                    // Taking the next unit overshoots the target more than stopping falls
                    // short of it.
                    let next = units[u].len();
                    done + next > target && done + next - target > target - done
                });
            if stop {
                break;
            }
            window.extend_from_slice(&units[u]);
            done += units[u].len();
            u += 1;
        }
        if !window.is_empty() {
            windows.push(window);
        }
    }
    windows
}

/// One group per role and kind (learning agents, their snapshots).
fn by_role(members: &[MemberInfo]) -> Vec<Group> {
    let mut keyed: BTreeMap<(Role, bool), Vec<usize>> = BTreeMap::new();
    for (id, m) in members.iter().enumerate() {
        keyed.entry((m.role, m.snapped_at.is_some())).or_default().push(id);
    }
    let mut groups: Vec<(bool, Group)> = keyed
        .into_iter()
        .map(|((role, snapshot), ids)| {
            let kind = if snapshot { "snapshots" } else { "learning" };
            let label = format!("{} {kind} ({})", role_name(role), ids.len());
            (snapshot, Group { label, members: ids, block: snapshot.then_some(role as usize) })
        })
        .collect();
    groups.sort_by_key(|(snapshot, _)| *snapshot);
    groups.into_iter().map(|(_, g)| g).collect()
}

/// The win-rate table summed over groups of members: decayed points and games of every
/// group against every other.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GroupTable {
    pub(crate) members: usize,
    pub(crate) groups: Vec<Group>,
    /// Each group's number on the axes: its member's id with a group per member, else the
    /// group's index.
    numbers: Vec<usize>,
    /// Row-major `groups × groups`: decayed points of the row's members against the column's.
    points: Vec<f64>,
    /// Row-major: decayed games.
    games: Vec<f64>,
}

impl GroupTable {
    /// The table of `members` in at most `max_groups` groups ([`member_groups`]), from
    /// `cell(i, j)` = (decayed points, decayed games) of member `i` against member `j`.
    ///
    /// # Complexity
    ///
    /// O(n²) calls of `cell` for n members.
    pub(crate) fn new(
        members: &[MemberInfo],
        max_groups: usize,
        cell: impl Fn(usize, usize) -> (f64, f64),
    ) -> GroupTable {
        let groups = member_groups(members, max_groups);
        let k = groups.len();
        let numbers = groups
            .iter()
            .enumerate()
            .map(|(g, group)| match group.members[..] {
                [only] if k == members.len() => members[only].id,
                _ => g,
            })
            .collect();
        let mut of = vec![0; members.len()];
        for (g, group) in groups.iter().enumerate() {
            for &m in &group.members {
                of[m] = g;
            }
        }
        let (mut points, mut games) = (vec![0.0; k * k], vec![0.0; k * k]);
        for i in 0..members.len() {
            for j in 0..members.len() {
                let (p, n) = cell(i, j);
                if n > 0.0 && n.is_finite() && p.is_finite() {
                    points[of[i] * k + of[j]] += p;
                    games[of[i] * k + of[j]] += n;
                }
            }
        }
        GroupTable { members: members.len(), groups, numbers, points, games }
    }

    /// The games-weighted win rate of group `g` against group `h` (`None` when they never
    /// played).
    pub(crate) fn win_rate(&self, g: usize, h: usize) -> Option<f64> {
        let n = self.games(g, h);
        (n > 0.0).then(|| self.points[g * self.groups.len() + h] / n)
    }

    /// The decayed games between group `g` and group `h`.
    pub(crate) fn games(&self, g: usize, h: usize) -> f64 {
        self.games[g * self.groups.len() + h]
    }
}

/// A `k × k` heat map of `value(row, column)` (grey where `None`), row 0 at the top, the rows
/// labelled by `row_label`, the columns by `column_label`, lines between blocks of groups.
#[allow(clippy::too_many_arguments)]
fn heat_map<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    k: usize,
    row_label_size: u32,
    row_label: &dyn Fn(usize) -> String,
    column_label: &dyn Fn(usize) -> String,
    boundaries: &[usize],
    value: &dyn Fn(usize, usize) -> Option<RGBColor>,
) -> Drawn {
    let kf = k as f64;
    let font = if k > 25 { ("sans-serif", 11) } else { LABEL_FONT };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, LABEL_FONT)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(row_label_size)
        .build_cartesian_2d(
            linear_axis(0f64..kf, cell_ticks(k, 20)),
            linear_axis(0f64..kf, cell_ticks(k, k.max(1)).iter().map(|y| kf - y).collect()),
        )
        .map_err(text_err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("opponent (numbered as the rows)")
        .axis_desc_style(DESC_FONT)
        .label_style(font)
        .x_label_formatter(&|v| column_label((v - 0.5).round().max(0.0) as usize))
        .y_label_formatter(&|v| row_label((kf - v - 0.5).round().max(0.0) as usize))
        .draw()
        .map_err(text_err)?;
    chart
        .draw_series((0..k).flat_map(|i| (0..k).map(move |j| (i, j))).map(|(i, j)| {
            let top = (k - i) as f64;
            let color = value(i, j).unwrap_or(ABSENT_COLOR);
            Rectangle::new([(j as f64, top - 1.0), (j as f64 + 1.0, top)], color.filled())
        }))
        .map_err(text_err)?;
    chart
        .draw_series(boundaries.iter().flat_map(|&b| {
            let (x, y) = (b as f64, kf - b as f64);
            [
                PathElement::new(vec![(x, 0.0), (x, kf)], BLACK.stroke_width(1)),
                PathElement::new(vec![(0.0, y), (kf, y)], BLACK.stroke_width(1)),
            ]
        }))
        .map_err(text_err)?;
    Ok(())
}

/// The final win-rate table among the league's members, row beats column, in two heat maps
/// side by side: the win rate (a diverging colour map centred on ½; a group's is its
/// members' decayed points over their decayed games, so games-weighted) and how many
/// decayed games are behind each cell (log scale); grey where the members never played.
/// One row per member up to [`MAX_GROUPS`] members, else one per group ([`member_groups`]).
fn win_rates_figure(game: &str, table: &GroupTable) -> Option<Drawn<String>> {
    let k = table.groups.len();
    if k == 0 {
        return None;
    }
    let played = (0..k).flat_map(|i| (0..k).map(move |j| (i, j))).filter(|&(i, j)| table.games(i, j) > 0.0);
    let (lo, hi) = played
        .clone()
        .map(|(i, j)| table.games(i, j).log10())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    let (lo, hi) = if lo.is_finite() { (lo.floor(), hi.ceil().max(lo.floor() + 1.0)) } else { (0.0, 1.0) };
    let played = played.count();
    let grouped = k < table.members;
    let caption = if grouped {
        format!(
            "win rate, row beats column: {} members in {k} groups, (n) members each; grey: never played",
            table.members
        )
    } else {
        format!("win rate, row beats column: {k} members; grey: never played")
    };
    let games_caption = format!("decayed games behind each cell: {played} of {} cells played", k * k);
    let boundaries: Vec<usize> =
        (1..k).filter(|&b| table.groups[b].block != table.groups[b - 1].block).collect();
    let label_width = table.groups.iter().map(|g| g.label.chars().count()).max().unwrap_or(0);
    let label_size = (label_width as u32 * 6 + 16).clamp(40, 260);
    let title = format!("{game}: league win rates");
    let number = |g: usize| table.numbers.get(g).map_or(String::new(), |n| n.to_string());
    Some(svg_text((1560, 780), |root| {
        let root = root.titled(&title, TITLE_FONT).map_err(text_err)?;
        let (left, right) = root.split_horizontally(160 + 600 + label_size);
        let (map_area, bar_area) = left.split_horizontally(80 + 600 + label_size);
        heat_map(
            &map_area,
            &caption,
            k,
            label_size,
            &|g| table.groups.get(g).map_or(String::new(), |x| x.label.clone()),
            &number,
            &boundaries,
            &|i, j| table.win_rate(i, j).map(|w| diverging((w - 0.5) * 2.0)),
        )?;
        colour_bar(
            &bar_area,
            "win rate",
            0.0,
            1.0,
            vec![0.0, 0.25, 0.5, 0.75, 1.0],
            |v| diverging((v - 0.5) * 2.0),
            |v| axis_number(v, false),
        )?;
        let (games_area, games_bar) = right.split_horizontally(right.dim_in_pixel().0.saturating_sub(85));
        let shade = |v: f64| sequential_log(v, lo, hi);
        heat_map(&games_area, &games_caption, k, 40, &number, &number, &boundaries, &|i, j| {
            let n = table.games(i, j);
            (n > 0.0).then(|| shade(n.log10()))
        })?;
        colour_bar(
            &games_bar,
            "games",
            lo,
            hi,
            (lo as i32..=hi as i32).map(f64::from).collect(),
            shade,
            |v| {
                let n = 10f64.powf(v);
                if n >= 1.0 { axis_number(n, true) } else { axis_number(n, false) }
            },
        )
    }))
}

/// A light-to-dark colour for `v` in `lo..hi` (ColorBrewer's Greens, from its second stop so
/// that the fewest games still differ from white and from grey).
fn sequential_log(v: f64, lo: f64, hi: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 4] = [(199, 233, 192), (116, 196, 118), (35, 139, 69), (0, 68, 27)];
    crate::plots::kit::interpolate(&STOPS, ((v - lo) / (hi - lo)).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::{GroupTable, MAX_GROUPS, MemberInfo, member_groups, win_rates_figure};
    use metagame_populations::Role;

    /// A league as `rounds` rounds of the default league would leave it: a main agent, a
    /// main exploiter and a league exploiter, each snapping every round; the main exploiter
    /// resets at every snapshot, the league exploiter at every fourth.
    fn league(rounds: usize) -> Vec<MemberInfo> {
        let roles = [Role::MainAgent, Role::MainExploiter, Role::LeagueExploiter];
        let mut members: Vec<MemberInfo> = (0..3)
            .map(|agent| MemberInfo { id: agent, role: roles[agent], agent, snapped_at: None, generation: None })
            .collect();
        members.push(MemberInfo { id: 3, role: Role::MainAgent, agent: 0, snapped_at: Some(0), generation: Some(0) });
        for r in 1..=rounds {
            for (agent, generation) in [(0, 0), (1, r - 1), (2, (r - 1) / 4)] {
                members.push(MemberInfo {
                    id: members.len(),
                    role: roles[agent],
                    agent,
                    snapped_at: Some(r),
                    generation: Some(generation as u64),
                });
            }
        }
        members
    }

    #[test]
    fn a_small_league_has_a_row_per_member() {
        let members = league(12);
        assert_eq!(members.len(), 40);
        let groups = member_groups(&members, MAX_GROUPS);
        assert_eq!(groups.len(), 40);
        assert!(groups.iter().enumerate().all(|(i, g)| g.members == [i]));
        assert_eq!(groups[0].label, "0: main 0 (learning)");
        assert_eq!(groups[5].label, "5: main expl. 0, gen 0, round 1");
    }

    /// After evictions (members 5 and 7 gone) rows and columns name members by id.
    #[test]
    fn a_small_league_after_evictions_numbers_rows_and_columns_by_member_id() {
        let mut members = league(12);
        members.remove(7);
        members.remove(5);
        let table = GroupTable::new(&members, MAX_GROUPS, |_, _| (0.0, 0.0));
        assert_eq!(table.groups.len(), 38);
        assert_eq!(table.groups[5].label, "6: league expl. 0, gen 0, round 1");
        assert_eq!((table.numbers[4], table.numbers[5], table.numbers[6]), (4, 6, 8));
        // Grouped, the numbers are the groups'.
        let grouped = GroupTable::new(&league(100), MAX_GROUPS, |_, _| (0.0, 0.0));
        assert!(grouped.numbers.iter().enumerate().all(|(g, &n)| g == n));
    }

    #[test]
    fn a_large_league_is_grouped_by_agent_and_generation_into_at_most_40_groups() {
        let members = league(666);
        let groups = member_groups(&members, MAX_GROUPS);
        assert!(groups.len() <= MAX_GROUPS && groups.len() >= MAX_GROUPS - 3, "{}", groups.len());
        // Every member in exactly one group.
        let mut seen: Vec<usize> = groups.iter().flat_map(|g| g.members.iter().copied()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..members.len()).collect::<Vec<_>>());
        for g in &groups {
            // One agent per group, learning agents apart from snapshots.
            let first = members[g.members[0]];
            assert!(g.members.iter().all(|&m| members[m].agent == first.agent));
            assert!(g.members.iter().all(|&m| members[m].snapped_at.is_some() == first.snapped_at.is_some()));
        }
        // No exploiter generation split between groups.
        for agent in [1, 2] {
            for generation in 0..700u64 {
                let holding = groups
                    .iter()
                    .filter(|g| {
                        g.members.iter().any(|&m| {
                            members[m].agent == agent
                                && members[m].snapped_at.is_some()
                                && members[m].generation == Some(generation)
                        })
                    })
                    .count();
                assert!(holding <= 1, "agent {agent} generation {generation} in {holding} groups");
            }
        }
        assert_eq!(groups[0].label, "main 0 (learning)");
        assert!(groups.iter().any(|g| g.label.starts_with("main expl. 0, gen 0–")), "{groups:#?}");
        assert!(groups.iter().any(|g| g.label.starts_with("main 0, rounds 0–")), "{groups:#?}");
    }

    #[test]
    fn a_group_cell_is_the_games_weighted_win_rate() {
        let members = league(100);
        // Member 0 against members 3 and 4 only: 3 games won of 4, and 1 of 1.
        let table = GroupTable::new(&members, MAX_GROUPS, |i, j| match (i, j) {
            (0, 3) => (3.0, 4.0),
            (0, 4) => (1.0, 1.0),
            _ => (0.0, 0.0),
        });
        let h = table.groups.iter().position(|g| g.members.contains(&3)).unwrap();
        assert!(table.groups[h].members.contains(&4), "{:?}", table.groups[h]);
        assert_eq!(table.win_rate(0, h), Some(0.8));
        assert_eq!(table.games(0, h), 5.0);
        assert_eq!(table.win_rate(h, 0), None);
    }

    /// The figure of a 2 000-member league stays small and has at most 40 × 40 cells per
    /// panel (a cell per member pair was 538 MB at 2 500 members).
    #[test]
    fn the_figure_of_a_2000_member_league_is_small() {
        let members = league(666);
        assert!(members.len() >= 2000);
        let table = GroupTable::new(&members, MAX_GROUPS, |i, j| {
            let games = if (i * 7 + j * 3) % 5 == 0 { 1.0 + (i % 9) as f64 } else { 0.0 };
            (games * ((i + j) % 3) as f64 / 2.0, games)
        });
        let svg = win_rates_figure("kuhn_poker", &table).unwrap().unwrap();
        assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
        // Two heat maps of at most 40 × 40 cells, two colour bars of 120 steps, frames.
        let rects = svg.matches("<rect").count();
        assert!(rects <= 2 * MAX_GROUPS * MAX_GROUPS + 2 * 120 + 20, "{rects} rectangles");
    }
}
