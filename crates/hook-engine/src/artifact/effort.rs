//! [`Effort`]: how much work one evaluation may do, so that no artifact can make it do more
//! than a compiled pack of the same size would.
//!
//! Bounds checks keep a crafted artifact from reading out of place; they do not keep it from
//! asking for too much work through what is in place. Strings are interned and lists can be
//! shared, so a small file can make every rule name one list of millions of words, one string of
//! megabytes, or one automaton thousands of times over (each of those is a valid reference). So
//! every step that follows a reference is counted against an allowance: a fixed base, far above
//! what the largest compiled packs use (their lists are never shared, so a pass over the rules
//! reads each word once), plus one unit per byte of the artifact. When the allowance runs out,
//! the evaluation stops with [`ArtifactError::Effort`], which hooks treat like any damaged
//! artifact (reference §5).
//!
//! What an evaluation keeps (the text of the rules that fired, what they capture, and in
//! explain mode why the others did not) has its own allowance, in bytes, so that one string named
//! by thousands of rules cannot fill the memory before the work allowance runs out.
//!
//! The allowance also grows with the payload: rules scan its text, so a long payload
//! legitimately costs more (128 more scans of it are allowed, up to 8 times the base).
//!
//! A unit is about a nanosecond of work, as measured: a list word; a string read costs 8 and a
//! unit per 8 bytes; a byte of text scanned by an automaton or of JSON parsed costs 4. The
//! allowance (2^29 units and one per byte of the artifact) ends a crafted evaluation in under a
//! second, where Claude Code would wait a minute; a large real pack (3,000 rules, 750 of them
//! regexes over a 64 KiB command) spends 2% of it (the tests show both: `effort` in
//! rules-compiler's tests).

use std::cell::Cell;

use super::reader::ArtifactError;

/// Units any evaluation may spend whatever the artifact's size.
const BASE: u64 = 1 << 29;

/// Passes over the payload's text that every evaluation may make on top: rules scan the
/// payload, so a long one legitimately costs more (100 regexes over a 2 MiB `Write` fit).
const PAYLOAD_PASSES: u64 = 128;

/// The most the payload adds: 8 times the base, a few seconds of work (a 64 MiB payload of
/// numbers could otherwise buy minutes).
const MAX_PAYLOAD_GROWTH: u64 = 8 * BASE;

/// Bytes any evaluation may keep whatever the artifact's size.
const KEEP: u64 = 64 << 20;

/// What one evaluation may still spend.
#[derive(Clone, Debug)]
pub struct Effort {
    left: Cell<u64>,
    limit: u64,
    keep_left: Cell<u64>,
}

impl Effort {
    /// The allowance for one evaluation of an artifact of `artifact_len` bytes.
    pub fn for_artifact(artifact_len: usize) -> Effort {
        Effort::for_evaluation(artifact_len, 0)
    }

    /// The allowance for one evaluation of an artifact of `artifact_len` bytes on a payload
    /// whose strings hold `payload_text` bytes: [`PAYLOAD_PASSES`] scans of them more.
    pub fn for_evaluation(artifact_len: usize, payload_text: usize) -> Effort {
        let len = artifact_len as u64;
        let scans =
            (payload_text as u64).saturating_mul(4 * PAYLOAD_PASSES).min(MAX_PAYLOAD_GROWTH);
        Effort::with_limits(
            BASE.saturating_add(len).saturating_add(scans),
            KEEP.saturating_add(len),
        )
    }

    /// An allowance of `limit` units, of which `keep` bytes may be kept.
    pub fn with_limits(limit: u64, keep: u64) -> Effort {
        Effort { left: Cell::new(limit), limit, keep_left: Cell::new(keep) }
    }

    /// Spends `units`.
    ///
    /// # Errors
    ///
    /// When fewer are left.
    pub fn spend(&self, units: u64) -> Result<(), ArtifactError> {
        match self.left.get().checked_sub(units) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.left.set(0);
                Err(ArtifactError::Effort)
            }
        }
    }

    /// Spends what reading (validating, comparing, copying) `bytes` bytes costs.
    ///
    /// # Errors
    ///
    /// When fewer units are left.
    pub fn read(&self, bytes: usize) -> Result<(), ArtifactError> {
        self.spend(8 + bytes as u64 / 8)
    }

    /// Spends what copying `bytes` bytes costs, and keeps them.
    ///
    /// # Errors
    ///
    /// When fewer units are left, or the evaluation would keep more than its allowance.
    pub fn keep(&self, bytes: usize) -> Result<(), ArtifactError> {
        self.read(bytes)?;
        match self.keep_left.get().checked_sub(bytes as u64) {
            Some(left) => {
                self.keep_left.set(left);
                Ok(())
            }
            None => {
                self.left.set(0);
                Err(ArtifactError::Effort)
            }
        }
    }

    /// Spends what running an automaton over `bytes` bytes costs.
    ///
    /// # Errors
    ///
    /// When fewer units are left.
    pub fn scan(&self, bytes: usize) -> Result<(), ArtifactError> {
        self.spend(1 + (bytes as u64).saturating_mul(4))
    }

    /// Spends what parsing `bytes` bytes of JSON costs.
    ///
    /// # Errors
    ///
    /// When fewer units are left.
    pub fn parse(&self, bytes: usize) -> Result<(), ArtifactError> {
        self.spend(1 + (bytes as u64).saturating_mul(4))
    }

    /// The units spent so far.
    pub fn spent(&self) -> u64 {
        self.limit - self.left.get()
    }

    /// The allowance.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowance_runs_out_and_stays_out() {
        let effort = Effort::with_limits(20, 100);
        assert_eq!(effort.spend(4), Ok(()));
        // A string of 16 bytes: 8 units, and 2 for its bytes.
        assert_eq!(effort.read(16), Ok(()));
        assert_eq!(effort.scan(1), Ok(()));
        assert_eq!(effort.spent(), 19);
        assert_eq!(effort.spend(2), Err(ArtifactError::Effort));
        assert_eq!(effort.spend(0), Ok(()));
        assert_eq!(effort.spend(1), Err(ArtifactError::Effort));
    }

    #[test]
    fn what_is_kept_has_its_own_allowance() {
        let effort = Effort::with_limits(1_000, 100);
        assert_eq!(effort.keep(60), Ok(()));
        assert_eq!(effort.keep(60), Err(ArtifactError::Effort));
        // Running out of either ends the evaluation.
        assert_eq!(effort.spend(1), Err(ArtifactError::Effort));
    }

    #[test]
    fn the_allowance_grows_with_the_artifact() {
        assert_eq!(Effort::for_artifact(0).limit(), BASE);
        assert_eq!(Effort::for_artifact(1 << 20).limit(), BASE + (1 << 20));
        assert_eq!(Effort::for_evaluation(0, 10).limit(), BASE + 10 * 4 * PAYLOAD_PASSES);
        assert_eq!(Effort::for_evaluation(0, 1 << 30).limit(), BASE + MAX_PAYLOAD_GROWTH);
    }
}
