//! The byte encoding of what hooks keep between runs (a session's record): little-endian
//! `u64`s, strings as a length and their bytes, optional strings behind a byte (0: none).
//!
//! [`Reader`] trusts nothing it reads: every length is checked against what is left, so a
//! damaged or crafted record reads as `None`, never as an allocation of what it claims.

/// Reads values from the front of a byte slice.
#[derive(Debug)]
pub struct Reader<'b>(pub &'b [u8]);

impl<'b> Reader<'b> {
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    /// The next byte.
    pub fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    /// The next `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(*self.take(8)?.first_chunk()?))
    }

    /// A count of items, each at least 8 bytes long: never more than what is left could hold.
    pub fn count(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok().filter(|n| *n <= self.0.len() / 8)
    }

    /// The next string's bytes, not checked to be UTF-8.
    pub fn bytes(&mut self) -> Option<&'b [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        self.take(len)
    }

    /// The next string.
    pub fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    /// A string that may be absent; `None` when the bytes do not hold one.
    pub fn option(&mut self) -> Option<Maybe> {
        match self.byte()? {
            0 => Some(Maybe(None)),
            1 => Some(Maybe(Some(self.string()?))),
            _ => None,
        }
    }

    /// Passes over a string that may be absent; whether there was one, `None` when the bytes
    /// do not hold one.
    pub fn skip_option(&mut self) -> Option<bool> {
        match self.byte()? {
            0 => Some(false),
            1 => self.bytes().map(|_| true),
            _ => None,
        }
    }
}

/// An optional string read whole.
#[derive(Debug)]
pub struct Maybe(pub Option<String>);

/// Appends `value`.
pub fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Appends `text`.
pub fn put_str(out: &mut Vec<u8>, text: &str) {
    put_u64(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// Appends a string that may be absent.
pub fn put_option(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        None => out.push(0),
        Some(text) => {
            out.push(1);
            put_str(out, text);
        }
    }
}
