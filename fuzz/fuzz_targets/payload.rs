//! The `payload` fuzz target: `hook_fuzz::Target::Payload` on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(init: hook_fuzz::Target::Payload.init(), |data: &[u8]| {
    let _ = hook_fuzz::Target::Payload.run(data);
});
