//! io_tester scheduling-group files.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = weir_workload::sched_groups::SchedGroups::parse(text) {
        let _ = e.to_string();
    }
});
