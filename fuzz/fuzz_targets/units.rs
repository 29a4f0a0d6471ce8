//! Sizes and durations as flags and job files give them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = weir_model::units::parse_size(text) {
        let _ = e.to_string();
    }
    if let Err(e) = weir_model::units::parse_duration(text) {
        let _ = e.to_string();
    }
});
