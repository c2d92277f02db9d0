//! `metagame config --example ALGORITHM`: an annotated config for one algorithm, every field
//! with its default and range, ready to save and run (`examples/config/*.toml`).

use super::outln;

/// The algorithms with an annotated example, by their config names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Example {
    /// Policy-Space Response Oracles.
    Psro,
    /// Extensive-form fictitious play.
    Xfp,
    /// Double Oracle on the normal form.
    DoubleOracle,
    /// An AlphaStar league.
    League,
    /// Fictitious Cross-Play.
    Fxp,
}

impl Example {
    /// The annotated config, as `examples/config/` holds it.
    pub fn text(self) -> &'static str {
        match self {
            Example::Psro => include_str!("../../examples/config/psro.toml"),
            Example::Xfp => include_str!("../../examples/config/xfp.toml"),
            Example::DoubleOracle => include_str!("../../examples/config/double-oracle.toml"),
            Example::League => include_str!("../../examples/config/league.toml"),
            Example::Fxp => include_str!("../../examples/config/fxp.toml"),
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Print an annotated config for this algorithm (save it, edit it, `metagame run` it).
    #[arg(long, value_enum, value_name = "ALGORITHM")]
    example: Example,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    outln!("{}", args.example.text().trim_end());
    Ok(())
}
