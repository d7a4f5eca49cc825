//! Reading the payload: all of stdin, to EOF, within a bound.

use std::io::{self, Read};

/// The largest payload hookpack reads. Claude Code middle-truncates tool errors at 10,000
/// characters and prompts are rarely above a megabyte; 64 MiB leaves room for a `Write` of a
/// large generated file without letting a runaway producer exhaust memory.
pub const MAX_STDIN_BYTES: usize = 64 << 20;

/// Why stdin could not be read.
#[derive(Debug)]
pub(crate) enum StdinError {
    /// More than the limit arrived; `total` bytes were read and discarded.
    TooLarge { total: u64 },
    /// Reading failed.
    Io(io::Error),
}

/// Reads `input` to EOF. Past `limit` bytes it stops keeping what it reads and drains the rest,
/// so that the writer (Claude Code) never meets a closed pipe.
pub(crate) fn read_payload(input: &mut dyn Read, limit: usize) -> Result<Vec<u8>, StdinError> {
    let mut payload = Vec::with_capacity(16 * 1024);
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    let mut head = (&mut *input).take(limit.saturating_add(1));
    head.read_to_end(&mut payload).map_err(StdinError::Io)?;
    let kept = payload.len() as u64;
    if kept <= limit {
        return Ok(payload);
    }
    drop(payload);
    let rest = io::copy(input, &mut io::sink()).map_err(StdinError::Io)?;
    Err(StdinError::TooLarge { total: kept + rest })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_everything_within_the_limit() {
        let mut input: &[u8] = b"{\"a\":1}";
        assert_eq!(read_payload(&mut input, 7).unwrap(), b"{\"a\":1}");
    }

    #[test]
    fn drains_what_is_over_the_limit() {
        let mut input = io::repeat(b'x').take(1_000);
        match read_payload(&mut input, 10) {
            Err(StdinError::TooLarge { total }) => assert_eq!(total, 1_000),
            other => panic!("expected TooLarge, got {other:?}"),
        }
        assert_eq!(input.limit(), 0, "the rest was drained");
    }
}
