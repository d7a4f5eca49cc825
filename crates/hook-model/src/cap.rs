//! The length cap on output strings.
//!
//! Claude Code saves any hook output string over 10,000 characters to a file and shows the model
//! only a ~2 KB preview, silently. hookpack keeps every string it writes at most
//! [`MAX_OUTPUT_CHARS`] long, cut visibly. Characters are counted as Claude Code (JavaScript)
//! counts them, in UTF-16 code units, which is never fewer than Rust's `char`s: a string within
//! the cap is within it by either count.

/// The most characters (UTF-16 code units) hookpack writes in any output string.
pub const MAX_OUTPUT_CHARS: usize = 9_500;

/// What ends a string that [`cap_text`] cut.
pub const TRUNCATION_MARKER: &str = "\n[… truncated by hookpack]";

/// The length of `text` as JavaScript counts it: UTF-16 code units.
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// Cuts `text` so that it is at most `max` UTF-16 code units long, marker included, on a
/// `char` boundary, ending with [`TRUNCATION_MARKER`]. Returns whether it cut anything.
pub fn cap_text(text: &mut String, max: usize) -> bool {
    // Every UTF-16 code unit takes at least one byte, so a string of at most `max` bytes fits.
    if text.len() <= max || utf16_len(text) <= max {
        return false;
    }
    // A cap too small for the marker (never the case for hookpack's own caps) cuts bare.
    let marker = if max >= utf16_len(TRUNCATION_MARKER) { TRUNCATION_MARKER } else { "" };
    let budget = max - utf16_len(marker);
    let mut used = 0;
    let mut cut = 0;
    for (at, c) in text.char_indices() {
        if used + c.len_utf16() > budget {
            break;
        }
        used += c.len_utf16();
        cut = at + c.len_utf8();
    }
    text.truncate(cut);
    text.push_str(marker);
    true
}

/// Output values whose strings the cap applies to.
pub(crate) trait CapStrings {
    /// Caps every string inside; returns whether any was cut.
    fn cap_strings(&mut self, max: usize) -> bool;
}

impl CapStrings for String {
    fn cap_strings(&mut self, max: usize) -> bool {
        cap_text(self, max)
    }
}

impl<T: CapStrings> CapStrings for Option<T> {
    fn cap_strings(&mut self, max: usize) -> bool {
        self.as_mut().is_some_and(|value| value.cap_strings(max))
    }
}

impl<T: CapStrings> CapStrings for Vec<T> {
    fn cap_strings(&mut self, max: usize) -> bool {
        self.iter_mut().fold(false, |cut, value| value.cap_strings(max) | cut)
    }
}

/// Values with no free text of ours: flags, closed enumerations, and JSON that replaces a tool's
/// input or output, where cutting a string would corrupt the call instead of shortening a note.
macro_rules! no_strings_to_cap {
    ($($ty:ty),+) => {
        $(impl CapStrings for $ty {
            fn cap_strings(&mut self, _: usize) -> bool {
                false
            }
        })+
    };
}

no_strings_to_cap!(bool, serde_json::Value, serde_json::Map<String, serde_json::Value>);

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, max: usize, expected: &str) {
        let mut text = input.to_owned();
        let cut = cap_text(&mut text, max);
        assert_eq!(text, expected);
        assert_eq!(cut, input != expected);
        assert!(utf16_len(&text) <= max);
    }

    #[test]
    fn short_strings_are_untouched() {
        check("", 10, "");
        check("hello", 5, "hello");
        check("ééééé", 5, "ééééé");
    }

    #[test]
    fn long_strings_are_cut_with_a_marker() {
        let marker = utf16_len(TRUNCATION_MARKER);
        let input = "a".repeat(100);
        check(&input, marker + 10, &format!("{}{TRUNCATION_MARKER}", "a".repeat(10)));
    }

    #[test]
    fn cuts_fall_on_char_boundaries_and_count_utf16() {
        let marker = utf16_len(TRUNCATION_MARKER);
        // An emoji is two UTF-16 code units: with room for 3 units only one fits.
        let input = "😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀";
        check(input, marker + 3, &format!("😀{TRUNCATION_MARKER}"));
        // 9,500 emoji are 19,000 units: over the cap although only 9,500 chars.
        let mut text = "😀".repeat(MAX_OUTPUT_CHARS);
        assert!(cap_text(&mut text, MAX_OUTPUT_CHARS));
        assert!(utf16_len(&text) <= MAX_OUTPUT_CHARS);
        assert!(text.ends_with(TRUNCATION_MARKER));
    }

    #[test]
    fn a_cap_smaller_than_the_marker_still_holds() {
        let mut text = "abcdefgh".to_owned();
        assert!(cap_text(&mut text, 3));
        assert_eq!(text, "abc");
    }
}
