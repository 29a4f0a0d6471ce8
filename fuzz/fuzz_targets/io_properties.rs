//! Seastar io-properties.yaml: parse, then build each disk's cost model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weir_model::io_properties::IoProperties;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match IoProperties::parse(text, "fuzz.yaml") {
        Ok(props) => {
            let _ = props.check_devices("fuzz.yaml");
            for disk in &props.disks {
                let _ = disk.cost_model();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
