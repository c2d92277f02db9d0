//! `report.html`: one self-contained page per run folder (inline CSS and SVG, no scripts,
//! nothing fetched): the config, the NashConv curves, the final meta-game, the meta-mixtures,
//! the lineage as a graph and the per-iteration table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use metagame_games::NormalFormGame;

use crate::error::{Error, Result};
use crate::plots;
use crate::run_report::RunReport;
use metagame_populations::IterationReport;

/// Name of the page in a run folder.
pub(crate) const REPORT_HTML_FILE: &str = "report.html";

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1160px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.summary { color: #555; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
figure { margin: 0.5em 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { padding: 0.2em 0.6em; text-align: right; border-bottom: 1px solid #eee; }
th { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #999; }
.scroll { max-height: 32em; overflow-y: auto; display: inline-block; }
";

/// Escape text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG document as an inline element: without the namespace attribute, which HTML does
/// not need (so the page names no URL at all).
fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// A serde enum's name (`"max_iterations"`), or its debug form.
fn name_of(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s.replace('_', " "),
        Ok(other) => other.to_string(),
        Err(_) => String::from("?"),
    }
}

/// A number as a table shows it: 6 significant digits, scientific below 1e-4.
/// A report's NashConv as a cell: the exact value, else the estimate by trained best
/// responses (`≥ 1.46 ± 0.0217`, a lower bound up to its error), else `-`.
fn nash_conv_cell(r: &IterationReport) -> String {
    match (r.nash_conv, r.nash_conv_estimate) {
        (Some(x), _) => number(x),
        (None, Some(x)) => {
            format!("≥ {} ± {}", number(x), number(r.nash_conv_estimate_stderr.unwrap_or(f64::NAN)))
        }
        (None, None) => "-".into(),
    }
}

fn number(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() < 1e-4 || x.abs() >= 1e6 {
        format!("{x:.3e}")
    } else {
        let text = format!("{x:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A member of the lineage graph: its player, the iteration it was added at and its label.
struct Node {
    player: usize,
    iteration: usize,
    label: String,
}

/// A lineage: members by DOT id, and weighted edges from opponent member to response.
type Lineage = (BTreeMap<String, Node>, Vec<(String, String, f64)>);

/// The lineage in the DOT form the loops write (`n3 [label="p1#3 it1 (exact-br)"];`,
/// `n1 -> n3 [label="0.500"];`); `None` when it does not parse.
fn parse_lineage(dot: &str) -> Option<Lineage> {
    let mut nodes = BTreeMap::new();
    let mut edges = Vec::new();
    for line in dot.lines().map(str::trim) {
        let Some((head, rest)) = line.split_once(" [label=\"") else { continue };
        let label = rest.strip_suffix("\"];")?;
        if let Some((from, to)) = head.split_once(" -> ") {
            edges.push((from.to_string(), to.to_string(), label.parse().ok()?));
        } else {
            let mut words = label.split_whitespace();
            let player = words.next()?.strip_prefix('p')?.split('#').next()?.parse().ok()?;
            let iteration = words.next()?.strip_prefix("it")?.parse().ok()?;
            nodes.insert(head.to_string(), Node { player, iteration, label: label.to_string() });
        }
    }
    Some((nodes, edges))
}

/// The lineage as an SVG graph: one lane per player, members at the iteration they joined,
/// an edge from each opponent member a response answered, as dark as its weight.
fn lineage_svg(dot: &str) -> Option<String> {
    let (nodes, edges) = parse_lineage(dot)?;
    if nodes.is_empty() {
        return None;
    }
    let players = nodes.values().map(|n| n.player).max()? + 1;
    let last = nodes.values().map(|n| n.iteration).max()?.max(1);
    let (left, lane, width) = (70.0, 110.0, 1100.0);
    let dx = (width - left - 30.0) / last as f64;
    // Members of one player added at the same iteration (symmetric or multi-response
    // loops) are spread across the lane.
    let mut slots: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut at: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (id, n) in &nodes {
        let slot = slots.entry((n.player, n.iteration)).or_insert(0);
        let y = 40.0 + lane * n.player as f64 + 30.0 * (*slot % 3) as f64;
        *slot += 1;
        at.insert(id.as_str(), (left + dx * n.iteration as f64, y));
    }
    let height = 40.0 + lane * (players - 1) as f64 + 60.0;
    let mut svg = format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" \
         aria-label=\"lineage\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    for p in 0..players {
        let y = 40.0 + lane * p as f64;
        let _ = writeln!(svg, "<text x=\"8\" y=\"{:.1}\">player {p}</text>", y + 4.0);
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>",
            width - 30.0
        );
    }
    for (from, to, weight) in &edges {
        // Weights below 1% would only grey the picture.
        let (Some(a), Some(b)) = (at.get(from.as_str()), at.get(to.as_str())) else { continue };
        if *weight < 0.01 {
            continue;
        }
        let mid = (a.0 + b.0) / 2.0;
        let _ = writeln!(
            svg,
            "<path d=\"M{:.1},{:.1} C{mid:.1},{:.1} {mid:.1},{:.1} {:.1},{:.1}\" fill=\"none\" \
             stroke=\"#1f77b4\" stroke-opacity=\"{:.3}\"/>",
            a.0,
            a.1,
            a.1,
            b.1,
            b.0,
            b.1,
            (0.04 + 0.6 * weight).min(1.0)
        );
    }
    for (id, n) in &nodes {
        let (x, y) = at[id.as_str()];
        let _ = writeln!(
            svg,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"#333\"><title>{}</title></circle>",
            escape(&n.label)
        );
    }
    let step = (last / 10).max(1);
    for it in (0..=last).step_by(step) {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{it}</text>",
            left + dx * it as f64,
            height - 24.0
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">iteration</text>",
        left + (width - left - 30.0) / 2.0,
        height - 6.0
    );
    svg.push_str("</svg>\n");
    Some(svg)
}

fn figure(svg: &str, caption: &str) -> String {
    format!("<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n", inline_svg(svg), escape(caption))
}

/// The page's HTML.
///
/// # Errors
///
/// A figure that cannot be drawn, as text.
pub(crate) fn report_html(
    report: &RunReport,
    meta_game: Option<&NormalFormGame>,
    lineage_dot: Option<&str>,
) -> std::result::Result<String, String> {
    let title = plots::run::run_title(report);
    let last = report.iterations.last();
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    let _ = writeln!(
        html,
        "<p class=\"summary\">Stopped: {} after iteration {}; NashConv {}; {} s.</p>",
        escape(&name_of(&report.stop_reason)),
        last.map_or(0, |r| r.iteration),
        last.map_or_else(|| "-".into(), nash_conv_cell),
        last.map_or_else(|| "-".into(), |r| number(r.elapsed_s)),
    );
    let _ = writeln!(html, "<h2>Config</h2>\n<pre>{}</pre>", escape(&report.config.to_toml()));

    html.push_str("<h2>NashConv</h2>\n");
    html.push_str(&figure(
        &plots::run::exploitability_figure(report)?,
        "Exact NashConv of the run's profile against iteration and against wall time; \
         estimates by trained best responses (lower bounds) as triangles with ±2 standard errors.",
    ));
    if let Some(game) = meta_game
        && let Some(svg) = plots::payoffs::payoffs_figure(game, &plots::run::final_mixtures(report))
    {
        html.push_str("<h2>The final meta-game</h2>\n");
        html.push_str(&figure(&svg?, "Player 0's payoffs, with both players' final meta-mixtures."));
    }
    if let Some(svg) = plots::run::mixtures_figure(report) {
        html.push_str("<h2>Meta-mixtures</h2>\n");
        html.push_str(&figure(&svg?, "Each player's meta-mixture at every iteration."));
    }
    if let Some(dot) = lineage_dot {
        html.push_str("<h2>Lineage</h2>\n");
        match lineage_svg(dot) {
            Some(svg) => html.push_str(&figure(
                &svg,
                "Members by player and by the iteration they joined; each edge runs from an \
                 opponent member to the response that answered it, darker for a larger weight.",
            )),
            None => {
                let _ = writeln!(html, "<pre>{}</pre>", escape(dot));
            }
        }
    }

    html.push_str("<h2>Iterations</h2>\n<div class=\"scroll\"><table>\n<tr>");
    let meta = report.iterations.iter().any(|r| r.meta_game.is_some());
    let mut columns =
        vec!["iteration", "population", "NashConv", "exploitability", "episodes", "elapsed (s)"];
    if meta {
        columns.extend(["meta NashConv", "meta status", "new entries"]);
    }
    for c in &columns {
        let _ = write!(html, "<th>{c}</th>");
    }
    html.push_str("</tr>\n");
    for r in &report.iterations {
        let sizes: Vec<String> = r.population_sizes.iter().map(usize::to_string).collect();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            r.iteration,
            sizes.join(", "),
            nash_conv_cell(r),
            r.exploitability.map_or_else(|| "-".into(), number),
            r.episodes,
            number(r.elapsed_s)
        );
        if meta {
            match &r.meta_game {
                Some(m) => {
                    let _ = write!(
                        html,
                        "<td>{}</td><td>{}</td><td>{}</td>",
                        number(m.meta_nash_conv),
                        escape(&name_of(&m.meta_status)),
                        m.new_entries
                    );
                }
                None => html.push_str("<td>-</td><td>-</td><td>-</td>"),
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table></div>\n</body>\n</html>\n");
    Ok(html)
}

/// Write `report.html` into the run folder, atomically.
///
/// # Errors
///
/// [`Error::Output`] when a figure cannot be drawn or the file cannot be written.
pub(crate) fn write(
    report: &RunReport,
    meta_game: Option<&NormalFormGame>,
    lineage_dot: Option<&str>,
    dir: &Path,
) -> Result<()> {
    let path = dir.join(REPORT_HTML_FILE);
    let err = |e: String| Error::Output { path: path.clone(), source: e.into() };
    let html = report_html(report, meta_game, lineage_dot).map_err(err)?;
    metagame_populations::checkpoint::write_atomic(&path, html.as_bytes()).map_err(|e| err(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::{lineage_svg, parse_lineage};

    #[test]
    fn the_lineage_dot_parses_into_members_and_weighted_edges() {
        let dot = "digraph lineage {\n  rankdir=LR;\n  n0 [label=\"p0#0 it0 (initial)\"];\n  \
                   n1 [label=\"p1#1 it0 (initial)\"];\n  n2 [label=\"p0#2 it1 (exact-br)\"];\n  \
                   n1 -> n2 [label=\"1.000\"];\n}\n";
        let (nodes, edges) = parse_lineage(dot).unwrap();
        assert_eq!(nodes.len(), 3);
        assert_eq!((nodes["n2"].player, nodes["n2"].iteration), (0, 1));
        assert_eq!(edges, vec![("n1".to_string(), "n2".to_string(), 1.0)]);
        let svg = lineage_svg(dot).unwrap();
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<path").count(), 1);
    }
}
