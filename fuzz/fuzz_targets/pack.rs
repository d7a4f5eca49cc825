//! The `pack` fuzz target: `hook_fuzz::Target::Pack` on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(init: hook_fuzz::Target::Pack.init(), |data: &[u8]| {
    let _ = hook_fuzz::Target::Pack.run(data);
});
