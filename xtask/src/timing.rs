//! Timing hook spawns for the benchmarks: each binary run as Claude Code runs a hook,
//! interleaved with the others on the same payload, and the medians compared.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

/// Spawns each (binary, project) `runs` times, round-robin (the order alternating, so that
/// none always goes first), and returns each one's median.
pub(crate) fn measure<const N: usize>(
    cases: &[(&Path, &Path); N],
    payload: &Path,
    runs: usize,
) -> anyhow::Result<[Duration; N]> {
    let mut samples: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    for _warm_up in 0..3 {
        for (binary, cwd) in cases {
            spawn(binary, payload, cwd)?;
        }
    }
    for run in 0..runs {
        for i in 0..N {
            let i = if run % 2 == 0 { i } else { N - 1 - i };
            samples[i].push(spawn(cases[i].0, payload, cases[i].1)?);
        }
    }
    Ok(samples.map(median))
}

/// One run of `binary` with `payload` on stdin, as Claude Code runs a hook: a clean
/// environment but for the project folder, stdout and stderr read to the end.
fn spawn(binary: &Path, payload: &Path, cwd: &Path) -> anyhow::Result<Duration> {
    let stdin = File::open(payload).with_context(|| format!("opening {}", payload.display()))?;
    let start = Instant::now();
    let output = Command::new(binary)
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", cwd)
        .env("XDG_CONFIG_HOME", cwd)
        .current_dir(cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("spawning {}", binary.display()))?;
    let elapsed = start.elapsed();
    ensure!(output.status.success(), "{} exited with {}", binary.display(), output.status);
    ensure!(
        output.stderr.is_empty(),
        "{}: {}",
        binary.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(elapsed)
}

pub(crate) fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

pub(crate) fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1e3)
}
