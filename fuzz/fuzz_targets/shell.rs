//! The `shell` fuzz target: `hook_fuzz::Target::Shell` on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(init: hook_fuzz::Target::Shell.init(), |data: &[u8]| {
    let _ = hook_fuzz::Target::Shell.run(data);
});
