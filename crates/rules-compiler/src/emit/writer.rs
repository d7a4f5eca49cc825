//! [`Writer`]: sections in memory, then the file: header, section table, aligned sections, CRC.

use std::collections::HashMap;

use hook_engine::artifact::format::{
    ALIGN, FORMAT_VERSION, HEADER_LEN, MAGIC, SECTION_ENTRY_LEN, Section, header,
};
use hook_engine::artifact::{ListRef, StrRef, checksum};

/// An artifact being written.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    strings: Vec<u8>,
    interned: HashMap<String, StrRef>,
    lists: Vec<u32>,
    sections: HashMap<u32, Vec<u8>>,
}

impl Writer {
    /// The reference of `text` in the strings section, stored once however often it is used.
    pub(crate) fn str(&mut self, text: &str) -> StrRef {
        if text.is_empty() {
            return StrRef::default();
        }
        if let Some(&r) = self.interned.get(text) {
            return r;
        }
        let r = StrRef { offset: to_u32(self.strings.len()), len: to_u32(text.len()) };
        self.strings.extend_from_slice(text.as_bytes());
        self.interned.insert(text.to_owned(), r);
        r
    }

    /// A list of words.
    pub(crate) fn list(&mut self, words: &[u32]) -> ListRef {
        if words.is_empty() {
            return ListRef::default();
        }
        let r = ListRef { offset: to_u32(self.lists.len()), len: to_u32(words.len()) };
        self.lists.extend_from_slice(words);
        r
    }

    /// A list of strings, two words each.
    pub(crate) fn str_list<S: AsRef<str>>(&mut self, items: &[S]) -> ListRef {
        let words: Vec<u32> = items
            .iter()
            .flat_map(|item| {
                let r = self.str(item.as_ref());
                [r.offset, r.len]
            })
            .collect();
        self.list(&words)
    }

    /// Sets the bytes of a section other than strings and lists.
    pub(crate) fn section(&mut self, kind: Section, bytes: Vec<u8>) {
        self.sections.insert(kind as u32, bytes);
    }

    /// The whole file.
    pub(crate) fn finish(mut self, sources: u64, compiler: u64) -> Vec<u8> {
        let lists: Vec<u8> = self.lists.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.sections.insert(Section::Strings as u32, std::mem::take(&mut self.strings));
        self.sections.insert(Section::Lists as u32, lists);

        let table_end = HEADER_LEN + Section::ALL.len() * SECTION_ENTRY_LEN;
        let mut file = vec![0; table_end];
        file[header::MAGIC..header::MAGIC + 8].copy_from_slice(&MAGIC);
        put_u32(&mut file, header::VERSION, FORMAT_VERSION);
        put_u32(&mut file, header::SECTIONS, to_u32(Section::ALL.len()));
        put_u64(&mut file, header::SOURCES, sources);
        put_u64(&mut file, header::COMPILER, compiler);
        for (i, kind) in Section::ALL.iter().enumerate() {
            let bytes = self.sections.remove(&(*kind as u32)).unwrap_or_default();
            while !file.len().is_multiple_of(ALIGN) {
                file.push(0);
            }
            let entry = HEADER_LEN + i * SECTION_ENTRY_LEN;
            let offset = file.len();
            put_u32(&mut file, entry, *kind as u32);
            put_u32(&mut file, entry + 4, to_u32(offset));
            put_u32(&mut file, entry + 8, to_u32(bytes.len()));
            file.extend_from_slice(&bytes);
        }
        let length = file.len() as u64;
        put_u64(&mut file, header::LENGTH, length);
        let crc = checksum(&file);
        put_u32(&mut file, header::CRC, crc);
        file
    }
}

/// A `u32` for an offset or a count. Artifacts are limited to 4 GiB by their format; the
/// compiler refuses inputs anywhere near that long before (`compile` checks the total).
pub(crate) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Appends words to a byte buffer, little-endian.
pub(crate) fn push_words(bytes: &mut Vec<u8>, words: &[u32]) {
    for word in words {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
}
