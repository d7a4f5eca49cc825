//! The artifact's layout: every constant the writer and the reader share.
//!
//! All integers are little-endian. A string is a [`StrRef`](super::StrRef) `(offset, length)`
//! into the strings section; a list is a [`ListRef`](super::ListRef) `(offset, count)` into the
//! lists section, counted in `u32` words.

/// The first eight bytes of every artifact.
pub const MAGIC: [u8; 8] = *b"HOOKPACK";

/// The layout's version. Any change to this module's meaning bumps it; a hook refuses any
/// other version and says what to run.
pub const FORMAT_VERSION: u32 = 17;

/// The header's length.
pub const HEADER_LEN: usize = 64;

/// Offsets of the header's fields.
pub mod header {
    /// `MAGIC`.
    pub const MAGIC: usize = 0;
    /// `FORMAT_VERSION`, u32.
    pub const VERSION: usize = 8;
    /// The number of sections, u32.
    pub const SECTIONS: usize = 12;
    /// The file's length, u64.
    pub const LENGTH: usize = 16;
    /// A fingerprint of every source the artifact was compiled from, u64.
    pub const SOURCES: usize = 24;
    /// A fingerprint of the compiler (its version), u64.
    pub const COMPILER: usize = 32;
    /// CRC-32 of the whole file with these four bytes zeroed, u32.
    pub const CRC: usize = 40;
}

/// The length of one section-table entry: kind, offset, length, reserved (u32 each).
pub const SECTION_ENTRY_LEN: usize = 16;

/// The words of one entry of a matcher section (globs, regexes), after its count: the
/// automaton's offset and length (from the end of the table), flags (a regex's: its reverse
/// automaton's index + 1, 0 for none), the source's string, and the offset and length of the
/// regex's prefilter (length 0: none, and from the end of the table too). The table is padded
/// to 8 bytes; the prefilters follow it, together (a hook reads many of them and few
/// automata), then the automata, each at an offset that is a multiple of 8.
pub const MATCHER_ENTRY: usize = 7;

/// A regex's prefilter: the texts of which every match contains one (at most [`NEEDLES`]
/// of them), each a marker byte followed by its UTF-8 text (from 1 to [`NEEDLE_LEN`] bytes).
/// UTF-8 never holds the markers' bytes, so a needle ends where the next marker or the
/// prefilter does.
///
/// [`NEEDLES`]: prefilter::NEEDLES
/// [`NEEDLE_LEN`]: prefilter::NEEDLE_LEN
pub mod prefilter {
    /// Marks a needle found as it is.
    pub const EXACT: u8 = 0xFF;
    /// Marks a needle found with its ASCII letters in either case (stored in lower case).
    pub const FOLDED: u8 = 0xFE;
    /// The most needles a prefilter holds.
    pub const NEEDLES: usize = 8;
    /// The longest needle, in bytes (a longer literal is cut: what holds it holds its start).
    pub const NEEDLE_LEN: usize = 32;
}

/// Sections are aligned to this many bytes (serialized DFAs need `u32` alignment).
pub const ALIGN: usize = 8;

/// The kinds of section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Section {
    /// UTF-8 strings, referenced by `(offset, length)`.
    Strings = 1,
    /// `u32` lists, referenced by `(offset, count)` in words.
    Lists = 2,
    /// Fixed-size rule records, [`rule::LEN`] words each.
    Rules = 3,
    /// Per event, in `EventKind::ALL` order: [`event::LEN`] words.
    Events = 4,
    /// The keyword automaton and its postings.
    Keywords = 5,
    /// The glob matchers.
    Globs = 6,
    /// The regex matchers.
    Regexes = 7,
    /// The sources the artifact was compiled from, for staleness checks.
    Sources = 8,
    /// Settings from the config.
    Settings = 9,
}

impl Section {
    /// Every kind, in file order.
    pub const ALL: [Section; 9] = [
        Section::Strings,
        Section::Lists,
        Section::Rules,
        Section::Events,
        Section::Keywords,
        Section::Globs,
        Section::Regexes,
        Section::Sources,
        Section::Settings,
    ];
}

/// A rule record: word offsets. A `*_S` field is a string (2 words), a `*_L` field a list
/// (2 words); the rest are single words.
pub mod rule {
    /// Full id `pack/rule`, string.
    pub const ID_S: usize = 0;
    /// Events mask, 2 words (low, high): bit `i` = `EventKind::ALL[i]`.
    pub const EVENTS: usize = 2;
    /// Flags, [`super::flag`].
    pub const FLAGS: usize = 4;
    /// Priority, i32.
    pub const PRIORITY: usize = 5;
    /// Layer (byte 0), decision (byte 1), once (byte 2).
    pub const KINDS: usize = 6;
    /// `field`, string; empty for the event's default text.
    pub const FIELD_S: usize = 7;
    /// `context`, string.
    pub const CONTEXT_S: usize = 9;
    /// `reason`, string.
    pub const REASON_S: usize = 11;
    /// `message`, string.
    pub const MESSAGE_S: usize = 13;
    /// Exact tool names: list of strings (2 words each).
    pub const TOOL_NAMES_L: usize = 15;
    /// Tool regex: index + 1 into the regexes, 0 for none.
    pub const TOOL_REGEX: usize = 17;
    /// `paths` includes: list of glob indices.
    pub const PATHS_L: usize = 18;
    /// `paths` excludes: list of glob indices.
    pub const PATHS_EXCLUDED_L: usize = 20;
    /// `keywords`: list of keyword ids.
    pub const KEYWORDS_L: usize = 22;
    /// `keywords_all`: list of keyword ids.
    pub const KEYWORDS_ALL_L: usize = 24;
    /// `exclude`: list of keyword ids.
    pub const EXCLUDE_L: usize = 26;
    /// `regex`: list of regex indices.
    pub const REGEX_L: usize = 28;
    /// `star`: list of strings.
    pub const STAR_L: usize = 30;
    /// `fields`: list of (path string, JSON array of values string), 4 words each.
    pub const FIELDS_L: usize = 32;
    /// `agent`: list of strings.
    pub const AGENT_L: usize = 34;
    /// `workflow`: list of strings.
    pub const WORKFLOW_L: usize = 36;
    /// `task`: list of strings.
    pub const TASK_L: usize = 38;
    /// `flags`: list of strings.
    pub const FLAGS_L: usize = 40;
    /// `not_flags`: list of strings.
    pub const NOT_FLAGS_L: usize = 42;
    /// `permission_mode`: list of strings.
    pub const PERMISSION_MODE_L: usize = 44;
    /// `every`, 0 for none.
    pub const EVERY: usize = 46;
    /// `bracket`: mask, bit `i` = fresh, moderate, depleted, critical; 0 for any.
    pub const BRACKETS: usize = 47;
    /// `set.agent`, string.
    pub const SET_AGENT_S: usize = 48;
    /// `set.workflow`, string.
    pub const SET_WORKFLOW_S: usize = 50;
    /// `set.task`, string.
    pub const SET_TASK_S: usize = 52;
    /// `set.flags`: list of strings.
    pub const SET_FLAGS_L: usize = 54;
    /// `unset`: bit 0 agent, bit 1 workflow, bit 2 task.
    pub const UNSET: usize = 56;
    /// `unset.flags`: list of strings.
    pub const UNSET_FLAGS_L: usize = 57;
    /// `capture.namespace`, string.
    pub const CAPTURE_NAMESPACE_S: usize = 59;
    /// `capture.confidence`, f32 bits.
    pub const CAPTURE_CONFIDENCE: usize = 61;
    /// `recall`: [`super::recall::PROMPT`] or [`super::recall::HANDOFF`] in the high bits,
    /// `max` in the low ones.
    pub const RECALL: usize = 62;
    /// `stop`, string: the `stopReason` of a `continue: false`; empty for none.
    pub const STOP_S: usize = 63;
    /// `session_title`, string; empty for none.
    pub const SESSION_TITLE_S: usize = 65;
    /// `watch_paths`: list of strings, relative to the project.
    pub const WATCH_PATHS_L: usize = 67;
    /// `rewrite`: list of strings, (input field, template) pairs.
    pub const REWRITE_L: usize = 69;
    /// `command`: list of (kind, string) triples, [`super::command`].
    pub const COMMAND_L: usize = 71;
    /// `branch`: list of strings, globs over the current branch (`!` in front: excluded).
    pub const BRANCH_L: usize = 73;
    /// Words per rule.
    pub const LEN: usize = 75;
}

/// The entries of [`rule::COMMAND_L`]: `[kind, offset, len]`, a string of the kind's part of a
/// pattern; each pattern starts with a [`command::NEXT`] entry, which counts its entries.
pub mod command {
    /// A new pattern starts: `[NEXT, n, 0]`, then its `n` entries, `[kind, offset, len]`: its
    /// programs, subcommand, writes and overwrites first (what finds the commands it may
    /// match), then its flags, args, pipes, targets, calls, sql and find.
    pub const NEXT: u32 = 0;
    /// A `program` glob.
    pub const PROGRAM: u32 = 1;
    /// A `subcommand` word.
    pub const SUBCOMMAND: u32 = 2;
    /// A `flags` entry.
    pub const FLAG: u32 = 3;
    /// An `args` glob.
    pub const ARG: u32 = 4;
    /// A `writes` glob.
    pub const WRITE: u32 = 5;
    /// A `piped_from` glob.
    pub const PIPED_FROM: u32 = 6;
    /// A `targets` class of path.
    pub const TARGET: u32 = 7;
    /// A `calls` function name.
    pub const CALL: u32 = 8;
    /// An `sql` effect.
    pub const SQL: u32 = 9;
    /// A `find` effect.
    pub const FIND: u32 = 10;
    /// An `overwrites` class of path.
    pub const OVERWRITE: u32 = 11;
    /// An `empties` class of path.
    pub const EMPTY: u32 = 12;
}

/// Bits of [`rule::FLAGS`].
pub mod flag {
    /// `pinned = true`.
    pub const PINNED: u32 = 1;
    /// `fail = "closed"`.
    pub const FAIL_CLOSED: u32 = 1 << 1;
    /// `repeat = true`.
    pub const REPEAT: u32 = 1 << 2;
    /// Has `capture`.
    pub const CAPTURE: u32 = 1 << 3;
    /// Has `recall`.
    pub const RECALL: u32 = 1 << 4;
    /// Changes session state (`set` or `unset`): evaluated first (reference §2.2).
    pub const CHANGES_STATE: u32 = 1 << 5;
    /// Has a `context` (the string may be empty).
    pub const CONTEXT: u32 = 1 << 6;
    /// Reads or changes the session state, or needs it for its bracket or `once`: the hook
    /// opens the state only when such a rule's other conditions hold.
    pub const USES_STATE: u32 = 1 << 7;
    /// `capture.markers = true`: only marked text is captured, and the rule fires only when
    /// its text has a marker.
    pub const CAPTURE_MARKERS: u32 = 1 << 8;
    /// `capture.signal = true`: the rule's regex matches are signals (their regex entries'
    /// flags name their reverse automata).
    pub const CAPTURE_SIGNAL: u32 = 1 << 9;
    /// `observe = true`: the event's observation goes into the session's books.
    pub const OBSERVE: u32 = 1 << 10;
    /// `branch_changed = true`.
    pub const BRANCH_CHANGED: u32 = 1 << 11;
    /// `export = true`: the conventions kept in memory are written into `CLAUDE.md`.
    pub const EXPORT: u32 = 1 << 12;
}

/// Bits of [`rule::RECALL`].
pub mod recall {
    /// `from = "prompt"` (the event's text).
    pub const PROMPT: u32 = 1 << 31;
    /// `from = "handoff"` (what `PreCompact` wrote).
    pub const HANDOFF: u32 = 1 << 30;
    /// `from = "sessions"` (the index of recent sessions).
    pub const SESSIONS: u32 = 1 << 29;
    /// The low bits: `max`.
    pub const MAX: u32 = (1 << 29) - 1;
}

/// Per-event record, in words.
pub mod event {
    /// Rules of the event found without the keyword automaton: list of rule indices.
    pub const ALWAYS_L: usize = 0;
    /// The texts keyword rules of the event read: list of strings (empty = default text).
    pub const FIELDS_L: usize = 2;
    /// Rules of the shell tools (`Bash`, `PowerShell`, `Monitor`) on the default text, found by
    /// the programs the call's command runs (each a rule's every `command` pattern can match):
    /// a list of `[name offset, name len, first offset, first len, rule]`, sorted by name then
    /// first. The name is a program's, the first a word its command's first operand must be
    /// (both in ASCII lowercase); an empty first: any command of the program.
    pub const PROGRAMS_L: usize = 4;
    /// The same rules' patterns whose programs are globs: a list of `[glob offset, glob len,
    /// writes, rule]`, found when a program the command runs matches the glob (`writes` 1: and
    /// some command of the text writes to a file).
    pub const GLOBS_L: usize = 6;
    /// Rules found by the path of the call (`crate::path_keys`): each rule whose every include
    /// glob requires an extension, a file name or a first folder, under each such key: a list
    /// of `[key offset, key len, rule]`, sorted by key. Such rules are not in [`ALWAYS_L`].
    pub const PATHS_L: usize = 8;
    /// Words per event.
    pub const LEN: usize = 10;
}

/// Decision codes in [`rule::KINDS`] byte 1.
pub mod decision {
    /// No decision.
    pub const NONE: u8 = 0;
    /// `allow`.
    pub const ALLOW: u8 = 1;
    /// `ask`.
    pub const ASK: u8 = 2;
    /// `deny`.
    pub const DENY: u8 = 3;
    /// `block`.
    pub const BLOCK: u8 = 4;
}

/// `once` codes in [`rule::KINDS`] byte 2.
pub mod once {
    /// No `once`.
    pub const NONE: u8 = 0;
    /// `once = "session"`.
    pub const SESSION: u8 = 1;
    /// `once = "compaction"`.
    pub const COMPACTION: u8 = 2;
}

/// Words of the settings section.
pub mod settings {
    /// The context window in tokens; 0 for the model's.
    pub const WINDOW_TOKENS: usize = 0;
    /// Remaining % where fresh, moderate and depleted start: 3 words.
    pub const BRACKETS: usize = 1;
    /// Tokens of context per bracket: 4 words.
    pub const BUDGET: usize = 4;
    /// Days after which a session's state is removed.
    pub const MAX_AGE_DAYS: usize = 8;
    /// Bits: [`NEEDS_BRACKET`], [`COUNTS_PROMPTS`], [`COUNTS_COMPACTIONS`], [`WRITES_HANDOFF`],
    /// [`READS_CONVERSATION`].
    pub const FLAGS: usize = 9;
    /// Events whose hooks open the session state, 2 words (low, high).
    pub const STATE_EVENTS: usize = 10;
    /// `[memory] namespaces`: list of strings.
    pub const NAMESPACES_L: usize = 12;
    /// `[memory] aliases`: list of (shorthand, namespace) strings, 4 words each.
    pub const ALIASES_L: usize = 14;
    /// `[memory] private_tags`: list of strings.
    pub const PRIVATE_TAGS_L: usize = 16;
    /// `[memory] max`: the most memories kept; 0 for no limit.
    pub const MEMORY_MAX: usize = 18;
    /// `[memory] max_age_days`: days a memory is kept; 0 for ever.
    pub const MEMORY_MAX_AGE_DAYS: usize = 19;
    /// Events whose hooks read the current git branch, 2 words (low, high).
    pub const BRANCH_EVENTS: usize = 20;
    /// `[memory] auto`: a signal this sure, in thousandths, is captured.
    pub const SIGNAL_AUTO: usize = 22;
    /// `[memory] suggest`: a signal this sure, in thousandths, is suggested.
    pub const SIGNAL_SUGGEST: usize = 23;
    /// `[memory] max_signals`: the most signals one event captures or suggests.
    pub const SIGNAL_MAX: usize = 24;
    /// `[branch] issues`: list of strings, the templates `{issue}` is found by (when
    /// [`ISSUE_TEMPLATES`] is set).
    pub const ISSUES_L: usize = 25;
    /// Words.
    pub const LEN: usize = 27;
    /// [`FLAGS`] bit: some rule reads the context bracket.
    pub const NEEDS_BRACKET: u32 = 1;
    /// [`FLAGS`] bit: `UserPromptSubmit` counts prompts (`every`, the bracket estimate).
    pub const COUNTS_PROMPTS: u32 = 2;
    /// [`FLAGS`] bit: compactions are counted (`once = "compaction"`, the bracket estimate).
    pub const COUNTS_COMPACTIONS: u32 = 4;
    /// [`FLAGS`] bit: some rule recalls the handoff, so `PreCompact` writes one.
    pub const WRITES_HANDOFF: u32 = 8;
    /// [`FLAGS`] bit: some `PreCompact` rule reads the event's text, which holds the
    /// conversation.
    pub const READS_CONVERSATION: u32 = 16;
    /// [`FLAGS`] bit: `[branch] issues` is configured (else the built-in reading of a branch).
    pub const ISSUE_TEMPLATES: u32 = 32;
}

/// The keyword section, in words: header, then arrays.
///
/// ```text
/// [state_count, pattern_count, trans_count, out_count]
/// root: 256 words, the root's transition for each (folded) byte
/// states: state_count + 1 records of STATE_LEN words (a sentinel ends the arrays)
///         [trans_start, out_start, fail, dict, depth]
/// trans_targets: trans_count words      (per state, sorted by byte)
/// trans_bytes: trans_count bytes, padded to a word
/// outs: out_count words                 (pattern ids ending at the state)
/// patterns: pattern_count × PATTERN_LEN [length, boundary bits, postings offset, postings count]
/// ```
pub mod keywords {
    /// Header words.
    pub const HEADER: usize = 4;
    /// Words of the root table.
    pub const ROOT: usize = 256;
    /// Words per state.
    pub const STATE_LEN: usize = 5;
    /// Words per pattern.
    pub const PATTERN_LEN: usize = 4;
    /// No state: the end of a dictionary chain.
    pub const NONE: u32 = u32::MAX;
    /// Pattern bit: its first character is a word character, so a match needs a boundary
    /// before it.
    pub const BOUNDARY_START: u32 = 1;
    /// Pattern bit: its last character is a word character.
    pub const BOUNDARY_END: u32 = 2;
}
