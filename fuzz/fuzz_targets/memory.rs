//! The `memory` fuzz target: `hook_fuzz::Target::Memory` on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(init: hook_fuzz::Target::Memory.init(), |data: &[u8]| {
    let _ = hook_fuzz::Target::Memory.run(data);
});
