//! `metagame config --example ALGORITHM`: an annotated config for one algorithm, every field
//! with its default and range, ready to save and run (`examples/config/*.toml`, the text each
//! loop's unit carries).

use clap::builder::PossibleValuesParser;
use metagame::Algorithm;

use super::output::outln;

#[derive(clap::Args)]
pub struct Args {
    /// Print an annotated config for this algorithm (save it, edit it, `metagame run` it).
    #[arg(long, value_name = "ALGORITHM", value_parser = PossibleValuesParser::new(names()))]
    example: String,
}

/// Every registered algorithm's config name.
fn names() -> Vec<&'static str> {
    Algorithm::ALL.iter().map(|a| a.as_str()).collect()
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // INVARIANT: clap only lets registered names through.
    let algorithm = Algorithm::from_name(&args.example).expect("a registered algorithm");
    outln!("{}", algorithm.example().trim_end());
    Ok(())
}
