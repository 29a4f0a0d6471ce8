//! Diskplorer's fio JSON, as `weir explore --import` reads it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match weir_explore::import::import(text, "fuzz.json", 1000.0, 4096, 131_072) {
        Ok(map) => {
            let _ = weir_explore::output::summary(&map);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
