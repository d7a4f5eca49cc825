//! The `artifact` fuzz target: `hook_fuzz::Target::Artifact` on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(init: hook_fuzz::Target::Artifact.init(), |data: &[u8]| {
    let _ = hook_fuzz::Target::Artifact.run(data);
});
