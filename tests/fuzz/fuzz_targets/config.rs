//! The config reader: any text is a config or a typed error, never a panic; a config read
//! back from its own TOML is the same run.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use metagame::ExperimentConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("fuzz.toml");
    if let Ok(config) = ExperimentConfig::from_toml_str(text, path) {
        let toml = config.to_toml();
        let again = ExperimentConfig::from_toml_str(&toml, path)
            .unwrap_or_else(|e| panic!("a config's own TOML is refused: {e}\n{toml}"));
        assert!(again.same_run_as(&config), "a config's own TOML is another run:\n{toml}");
    }
});
