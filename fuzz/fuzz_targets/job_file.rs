//! io_tester job files: any text either parses into a plan that validates, or is refused with
//! an error that names where; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match weir_workload::parse::parse_plan(text) {
        Ok(plan) => {
            let _ = plan.validate();
            for job in &plan.jobs {
                let _ = job.data_per_shard_bytes(64);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
