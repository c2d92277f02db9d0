//! Figures of a run, as SVG: NashConv curves, the final meta-game, the meta-mixtures over
//! time, and several runs on one figure.
//!
//! Every figure follows the same conventions: integer axes (iterations, members) have integer
//! ticks; log axes have ticks at decades (and at 2 and 5 times them when the range spans
//! few decades), and a value of 0 is drawn on a floor, a tick labelled `0`, inside a shaded
//! band below (or left of) a break in the axis, so that it cannot be read as the decade
//! under the lowest tick; one quantity keeps one colour and style in every panel; matrices
//! put row 0 at the top, ticks at cell centres, and a colour bar beside them; every colour
//! that carries a meaning has a legend entry, a colour bar or words in the caption.
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
//!
//! `kit.rs` holds what every figure is drawn with (the loops' own figures and the benchmark
//! figures use it too); `run.rs`, `payoffs.rs` and `compare.rs` draw the figures above.

pub(crate) mod compare;
pub(crate) mod kit;
pub(crate) mod payoffs;
pub(crate) mod run;

pub use compare::{Curve, compare_linear_svg, compare_svg};
pub use payoffs::payoffs_svg;
pub use run::{exploitability_svg, mixtures_svg, write_run_figures};
