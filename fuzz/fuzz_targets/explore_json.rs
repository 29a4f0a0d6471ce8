//! explore.json files, as `weir explore --compare` reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match weir_explore::compare::compare_frontiers(text, "a.json", text, "b.json") {
        Ok(c) => {
            let _ = weir_explore::compare::comparison_text(&c, 0.05);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
