//! The `.nfg` reader: any text is a game or a typed error, never a panic; a game read back
//! from its own `.nfg` text is read again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use metagame_games::nfg::{from_nfg_str, to_nfg_string};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(game) = from_nfg_str(text) {
        let again = to_nfg_string(&game);
        assert!(from_nfg_str(&again).is_ok(), "a game's own .nfg text is refused:\n{again}");
    }
});
