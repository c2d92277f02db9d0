//! What a run's figures say where a value has no place on a scale (issue 42, item 7): a
//! NashConv of 0 on a log axis sits in a shaded band below a break in the axis, labelled
//! `0`, apart from the lowest decade; and the grey of `mixtures.svg` ("not yet a member")
//! has a legend entry. Kuhn PSRO-nash (examples/kuhn_psro.toml) reaches NashConv 0 (below
//! 1e-12, drawn as 0) at iteration 6, and its population grows by one member an iteration.

use crate::cli::{metagame, temp_dir};

/// The zero band's fill in the figures (kit.rs's `ZERO_BAND_COLOR`, as plotters writes it).
const BAND_FILL: &str = "fill=\"#F0BE3C\"";

/// The grey of a member not yet added (kit.rs's `ABSENT_COLOR`).
const ABSENT_FILL: &str = "fill=\"#ECECEC\"";

/// Every element `<name ...>` of an SVG text, as the text of its opening tag.
fn tags<'a>(svg: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    svg.match_indices(&open).map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap_or(0)]).collect()
}

/// A number attribute of a tag.
fn num(tag: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let from = tag.find(&key).unwrap_or_else(|| panic!("no {name} in {tag}")) + key.len();
    tag[from..].split('"').next().unwrap().parse().unwrap()
}

/// The `(x, y)` of every `<text>` whose content is exactly `content`.
fn texts_at(svg: &str, content: &str) -> Vec<(f64, f64)> {
    all_texts(svg).into_iter().filter(|t| t.0 == content).map(|t| (t.1, t.2)).collect()
}

/// Every `<text>` of an SVG text: its content (trimmed: plotters writes it on a line of its
/// own), x and y.
fn all_texts(svg: &str) -> Vec<(String, f64, f64)> {
    svg.match_indices("<text ")
        .filter_map(|(start, _)| {
            let end = start + svg[start..].find('>')?;
            let content = &svg[end + 1..end + 1 + svg[end + 1..].find("</text>")?];
            let tag = &svg[start..end];
            Some((content.trim().to_owned(), num(tag, "x"), num(tag, "y")))
        })
        .collect()
}

/// The run folder of examples/kuhn_psro.toml, in a folder of its own per test (`name`).
fn kuhn_psro_run(name: &str) -> std::path::PathBuf {
    let out = temp_dir(name);
    let config = format!("{}/examples/kuhn_psro.toml", env!("CARGO_MANIFEST_DIR"));
    let o = metagame(&["run", &config, "--out", out.to_str().unwrap(), "--overwrite", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[test]
fn a_nash_conv_of_zero_sits_in_a_band_below_a_break_not_on_the_lowest_decade() {
    let out = kuhn_psro_run("figures-zero-band");
    let svg = std::fs::read_to_string(out.join("exploitability.svg")).unwrap();
    // Two panels (against iteration, against wall time), each with a band for NashConv 0.
    let bands: Vec<&str> = tags(&svg, "rect").into_iter().filter(|t| t.contains(BAND_FILL)).collect();
    assert!(bands.len() >= 2, "{} zero bands", bands.len());
    assert!(svg.contains("NashConv (log scale; 0 in the shaded band below the break)"));
    // The left panel (iteration axis) is the first band: the tick label `0` lies inside it,
    // every other label of that panel's y axis above it.
    let band = bands[0];
    let (top, bottom) = (num(band, "y"), num(band, "y") + num(band, "height"));
    let (left, right) = (num(band, "x"), num(band, "x") + num(band, "width"));
    assert!(bottom - top >= 12.0, "the band is {} px tall", bottom - top);
    let zero = texts_at(&svg, "0");
    let zero_label = zero
        .iter()
        .find(|&&(x, y)| x < left && y >= top - 1.0 && y <= bottom + 1.0)
        .unwrap_or_else(|| panic!("no `0` beside the band {top}..{bottom}: {zero:?}"));
    // The y axis's other labels (the texts in the column of the `0`, left of the band): all
    // above the band.
    let labels: Vec<(String, f64)> = all_texts(&svg)
        .into_iter()
        .filter(|(t, x, _)| *x < left && (x - zero_label.0).abs() < 30.0 && t != "0")
        .map(|(t, _, y)| (t, y))
        .collect();
    assert!(labels.len() >= 2, "no decade labels on the left axis: {labels:?}");
    assert!(labels.iter().all(|&(_, y)| y < top), "a label inside or under the band at {top}: {labels:?}");
    // The break: a white gap across the axis line where the band ends, crossed by two strokes.
    let gaps: Vec<&str> = tags(&svg, "rect")
        .into_iter()
        .filter(|t| {
            t.contains("fill=\"#FFFFFF\"") && (num(t, "y") + num(t, "height") / 2.0 - top).abs() <= 2.0
        })
        .filter(|t| (num(t, "x") + num(t, "width") / 2.0 - left).abs() <= 3.0)
        .collect();
    assert_eq!(gaps.len(), 1, "the break in the left panel's y axis at y = {top}");
    assert!(right > left);
}

#[test]
fn the_grey_of_the_mixtures_figure_has_a_legend_entry() {
    let out = kuhn_psro_run("figures-mixtures-legend");
    let svg = std::fs::read_to_string(out.join("mixtures.svg")).unwrap();
    let words = texts_at(&svg, "not yet a member (the member joined the population at a later iteration)");
    assert_eq!(words.len(), 1, "the legend's words");
    // Its swatch: the grey, beside the words, below every panel's grey background.
    let greys: Vec<&str> = tags(&svg, "rect").into_iter().filter(|t| t.contains(ABSENT_FILL)).collect();
    let (wx, wy) = words[0];
    let swatch = greys
        .iter()
        .find(|t| num(t, "x") < wx && wx - num(t, "x") < 60.0 && (num(t, "y") - wy).abs() < 20.0)
        .unwrap_or_else(|| panic!("no grey swatch beside the words at ({wx}, {wy})"));
    let panels: Vec<&&str> = greys.iter().filter(|t| num(t, "width") > 100.0).collect();
    assert_eq!(panels.len(), 2, "a grey background per player's panel");
    assert!(panels.iter().all(|p| num(p, "y") + num(p, "height") < num(swatch, "y")));
}
