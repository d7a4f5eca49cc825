//! The `command` condition at hook time: each text read once per event into the commands it
//! runs, a rule's patterns read from the artifact only as far as some command may match them,
//! and the first command one of them matches, read back.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::ops::Range;

use super::{Engine, Facts, Fired, Scan};
use crate::artifact::format::command;
use crate::artifact::{ArtifactError, Effort, RuleView, StrRef};
use crate::command::Pattern;
use crate::rule::{Decision, Layer};
use crate::shell;

/// What the texts of one field run, read once per event.
pub(super) type Commands<'p> = std::rc::Rc<Vec<Text<'p>>>;

/// A pattern tried on a program's commands: its index among the rule's patterns, the positions
/// of the commands it may match (`None`: all of them) and how far through them the walk is.
struct Walk<'p> {
    pattern: usize,
    positions: Option<Cow<'p, [usize]>>,
    cursor: usize,
}

/// A rule's `command` patterns whose programs the text runs, each with its program and
/// subcommand read, and the entries of its rule's list that hold the rest.
type Patterns<'a> = Vec<(Pattern<&'a str>, Range<usize>)>;

/// The commands a text runs and, for each program ([`shell::Parsed::by_name`]), what patterns
/// have read of its commands (`command::Reading`, made for a program's commands when a pattern
/// first tries one) and its commands by their first operand.
#[derive(Debug)]
pub(super) struct Text<'p> {
    pub(super) parsed: shell::Parsed<'p>,
    readings: Vec<OnceCell<Vec<crate::command::Reading>>>,
    firsts: Vec<OnceCell<BTreeMap<String, Vec<usize>>>>,
    /// For each program, the positions of its commands that write to a file (`> file`).
    writers: Vec<OnceCell<Vec<usize>>>,
}

impl<'p> Text<'p> {
    fn new(parsed: shell::Parsed<'p>) -> Text<'p> {
        let readings = std::iter::repeat_with(OnceCell::new).take(parsed.by_name().len());
        let firsts = std::iter::repeat_with(OnceCell::new).take(parsed.by_name().len());
        let writers = std::iter::repeat_with(OnceCell::new).take(parsed.by_name().len());
        Text {
            readings: readings.collect(),
            firsts: firsts.collect(),
            writers: writers.collect(),
            parsed,
        }
    }

    /// The `k`th command of the `n`th program, named `name`, whose commands are `indices`
    /// ([`shell::Parsed::by_name`]), as patterns see it.
    fn run<'t>(
        &'t self,
        n: usize,
        name: &'t str,
        indices: &[u32],
        k: usize,
    ) -> Option<crate::command::Run<'t>> {
        let command = self.parsed.command(*indices.get(k)? as usize)?;
        let readings = self
            .readings
            .get(n)?
            .get_or_init(|| std::iter::repeat_with(Default::default).take(indices.len()).collect());
        Some(crate::command::Run::new(command, name, readings.get(k)?))
    }

    /// The commands of the `n`th program ([`shell::Parsed::by_name`]) by their first operand,
    /// in ASCII lowercase: made once per text, in a time linear in their arguments (paid for
    /// with the text's reading).
    pub(super) fn firsts<'t>(
        &'t self,
        n: usize,
        name: &'t str,
        indices: &[u32],
    ) -> Option<&'t BTreeMap<String, Vec<usize>>> {
        let run = |k: usize| self.run(n, name, indices, k);
        Some(self.firsts.get(n)?.get_or_init(|| first_operands(indices.len(), &run)))
    }
}

impl<'a> Engine<'a> {
    /// The commands the texts rule `r` reads run, read once per text and event.
    fn commands<'p>(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<Commands<'p>, ArtifactError> {
        self.commands_of(effort, r.field(), facts, scan)
    }

    /// The commands the texts of `field` run, read once per text and event.
    pub(super) fn commands_of<'p>(
        &self,
        effort: &Effort,
        field: StrRef,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<Commands<'p>, ArtifactError> {
        let key = field_key_of(field);
        if let Some(parsed) = scan.shared.commands.borrow().get(&key) {
            return Ok(parsed.clone());
        }
        let tool = facts.input.tool_name();
        let dialect = if tool == Some("PowerShell") {
            shell::Dialect::PowerShell
        } else {
            shell::Dialect::Posix
        };
        let mut parsed = Vec::new();
        for text in self.texts(effort, facts, field)? {
            // Read once per event (not per rule), so its work is bounded by the text
            // (`shell::max_word_bytes`); charged as done: the text read, the words made and kept.
            let len = text.len();
            let commands = shell::parse(text, dialect);
            let words = commands.word_bytes();
            effort.scan(len.saturating_add(words))?;
            effort.keep(words)?;
            parsed.push(Text::new(commands));
        }
        let parsed = std::rc::Rc::new(parsed);
        scan.shared.commands.borrow_mut().insert(key, parsed.clone());
        Ok(parsed)
    }

    /// Rule `r`'s `command` patterns whose `program` matches a program `parsed` runs, decoded;
    /// the others are passed over without reading more than their programs.
    fn command_patterns<'p>(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        parsed: &[Text],
        scan: &Scan<'p>,
    ) -> Result<Patterns<'a>, ArtifactError> {
        let field = field_key_of(r.field());
        let list = self.list(effort, r.command())?;
        let entries = list.len() / 3;
        let entry = |i: usize| {
            (list.get(3 * i), StrRef { offset: list.get(3 * i + 1), len: list.get(3 * i + 2) })
        };
        let mut patterns = Vec::new();
        let mut start = 0;
        while start < entries {
            // `[NEXT, n, 0]` and the pattern's `n` entries.
            let (next, count) = entry(start);
            if next != command::NEXT {
                return Err(ArtifactError::Malformed("command pattern"));
            }
            let end = start
                .checked_add(1 + count.offset as usize)
                .filter(|&end| end <= entries)
                .ok_or(ArtifactError::Malformed("command pattern"))?;
            effort.spend(1)?;
            let pattern = start + 1..end;
            start = end;
            // Its programs first: most patterns stop there. Each glob is tried on the text's
            // names once per event, whichever rules name it.
            let mut runs = false;
            for (kind, glob) in pattern.clone().map(entry) {
                if kind != command::PROGRAM || runs {
                    break;
                }
                runs = self.glob_runs(effort, scan, field, glob, parsed)?;
            }
            if !runs {
                continue;
            }
            // Its program, subcommand and writes: enough to find the commands it may match. The
            // rest is read when there are some (`complete_pattern`).
            // Made at their size: most patterns are one program and a subcommand word or two.
            let count = |wanted: u32| {
                pattern.clone().map(entry).take_while(|(kind, _)| *kind == wanted).count()
            };
            let programs = count(command::PROGRAM);
            let words = pattern.clone().skip(programs).map(entry);
            let subcommand = words.take_while(|(kind, _)| *kind == command::SUBCOMMAND).count();
            let mut candidate = Pattern {
                program: Vec::with_capacity(programs),
                subcommand: Vec::with_capacity(subcommand),
                ..Pattern::default()
            };
            let mut rest = pattern.end;
            for (at, (kind, text)) in pattern.clone().map(|i| (i, entry(i))) {
                match kind {
                    command::PROGRAM => candidate.program.push(self.str(effort, text)?),
                    command::SUBCOMMAND => candidate.subcommand.push(self.str(effort, text)?),
                    command::WRITE => candidate.writes.push(self.str(effort, text)?),
                    command::OVERWRITE => candidate.overwrites.push(self.str(effort, text)?),
                    command::FLAG
                    | command::ARG
                    | command::PIPED_FROM
                    | command::TARGET
                    | command::CALL
                    | command::SQL
                    | command::FIND
                    | command::EMPTY => {
                        rest = at;
                        break;
                    }
                    _ => return Err(ArtifactError::Malformed("command pattern")),
                }
            }
            patterns.push((candidate, rest..pattern.end));
        }
        Ok(patterns)
    }

    /// Whether a program the texts of `field` run (`parsed`) matches the `program` glob `glob`:
    /// found once per event, whichever rules name the glob (the compiler stores each once).
    pub(super) fn glob_runs(
        &self,
        effort: &Effort,
        scan: &Scan<'_>,
        field: (u32, u32),
        glob: StrRef,
        parsed: &[Text],
    ) -> Result<bool, ArtifactError> {
        let key = (field.0, field.1, glob.offset, glob.len);
        effort.spend(1)?;
        if let Some(&found) = scan.shared.programs.borrow().get(&key) {
            return Ok(found);
        }
        let single = Pattern { program: vec![self.str(effort, glob)?], ..Pattern::default() };
        let mut charge = |units: usize| effort.spend(units as u64);
        let mut found = false;
        for (name, _) in parsed.iter().flat_map(|text| text.parsed.by_name()) {
            if single.runs(name, &mut charge)? {
                found = true;
                break;
            }
        }
        scan.shared.programs.borrow_mut().insert(key, found);
        Ok(found)
    }

    /// Reads the rest of a `command` pattern (its flags, args, pipes, targets, calls, sql, find and empties)
    /// from the entries `range` of rule `r`'s list.
    fn complete_pattern(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        pattern: &mut Pattern<&'a str>,
        range: Range<usize>,
    ) -> Result<(), ArtifactError> {
        let list = self.list(effort, r.command())?;
        let count = |kind: u32| range.clone().filter(|&i| list.get(3 * i) == kind).count();
        pattern.flags.reserve_exact(count(command::FLAG));
        pattern.args.reserve_exact(count(command::ARG));
        for i in range {
            let text = StrRef { offset: list.get(3 * i + 1), len: list.get(3 * i + 2) };
            match list.get(3 * i) {
                command::FLAG => pattern.flags.push(self.str(effort, text)?),
                command::ARG => pattern.args.push(self.str(effort, text)?),
                command::PIPED_FROM => pattern.piped_from.push(self.str(effort, text)?),
                command::TARGET => pattern.targets.push(self.str(effort, text)?),
                command::CALL => pattern.calls.push(self.str(effort, text)?),
                command::SQL => pattern.sql.push(self.str(effort, text)?),
                command::FIND => pattern.find.push(self.str(effort, text)?),
                command::EMPTY => pattern.empties.push(self.str(effort, text)?),
                _ => return Err(ArtifactError::Malformed("command pattern")),
            }
        }
        Ok(())
    }

    /// For a rule with a `command` condition, the first command of its text that one of its
    /// patterns matches, read back.
    pub(super) fn matched_command<'p>(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<CommandMatch, ArtifactError> {
        let list = r.command();
        if list.len == 0 {
            return Ok(CommandMatch::NoCondition);
        }
        let field = field_key_of(r.field());
        let key = (field.0, field.1, list.offset, list.len);
        if let Some(known) = scan.shared.matched.borrow().get(&key) {
            return Ok(known.clone());
        }
        let found = self.match_command(effort, r, facts, scan)?;
        scan.shared.matched.borrow_mut().insert(key, found.clone());
        Ok(found)
    }

    /// [`Engine::matched_command`], found.
    fn match_command<'p>(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<CommandMatch, ArtifactError> {
        let parsed = self.commands(effort, r, facts, scan)?;
        let mut patterns = self.command_patterns(effort, r, &parsed, scan)?;
        if patterns.is_empty() {
            return Ok(CommandMatch::Missed);
        }
        // Which patterns have been read whole.
        let mut complete = vec![false; patterns.len()];
        let mut charge = |units: usize| effort.spend(units as u64);
        // The programs a text runs are few, its commands may be thousands: each pattern is
        // tried on the commands of the names its `program` matches, and a pattern whose
        // subcommand begins with plain words only on the commands whose first operand is one
        // (their positions, from an index made once per program and event). The commands are
        // gone through in order, each pattern in turn on each: the first command some pattern
        // matches is the one shown, and every step is charged.
        for text in parsed.iter() {
            for (n, (name, indices)) in text.parsed.by_name().enumerate() {
                let run = |k: usize| text.run(n, name, indices, k);
                let mut first = None;
                let mut wanted: Vec<Walk<'_>> = Vec::new();
                for (p, (pattern, _)) in patterns.iter().enumerate() {
                    if !pattern.runs(name, &mut charge)? {
                        continue;
                    }
                    let Some(words) = pattern.first_words() else {
                        // A pattern on what a command writes tries only the commands that write.
                        let writing = !pattern.writes.is_empty() || !pattern.overwrites.is_empty();
                        let positions = writing.then(|| {
                            let writers = text.writers.get(n).map(|cell| {
                                cell.get_or_init(|| {
                                    (0..indices.len())
                                        .filter(|&k| {
                                            run(k).is_some_and(|r| r.command().writes().len() > 0)
                                        })
                                        .collect()
                                })
                            });
                            Cow::Borrowed(writers.map_or(&[][..], Vec::as_slice))
                        });
                        wanted.push(Walk { pattern: p, positions, cursor: 0 });
                        continue;
                    };
                    let firsts = first.get_or_insert_with(|| text.firsts(n, name, indices));
                    let mut lists = Vec::new();
                    for word in words {
                        effort.spend(word.len() as u64)?;
                        let listed = firsts.and_then(|f| f.get(&word.to_ascii_lowercase()));
                        lists.extend(listed.map(Vec::as_slice));
                    }
                    let positions = match lists.as_slice() {
                        [] => continue,
                        [one] => Cow::Borrowed(*one),
                        many => {
                            let mut all: Vec<usize> = many.concat();
                            effort.spend(all.len() as u64)?;
                            all.sort_unstable();
                            all.dedup();
                            Cow::Owned(all)
                        }
                    };
                    wanted.push(Walk { pattern: p, positions: Some(positions), cursor: 0 });
                }
                let mut at = 0;
                loop {
                    // The next command some pattern may match.
                    effort.spend(wanted.len() as u64)?;
                    let mut next: Option<usize> = None;
                    for Walk { positions, cursor, .. } in &mut wanted {
                        let head = match positions {
                            None => Some(at).filter(|&k| k < indices.len()),
                            Some(list) => {
                                while list.get(*cursor).is_some_and(|&k| k < at) {
                                    *cursor += 1;
                                }
                                list.get(*cursor).copied()
                            }
                        };
                        next = match (next, head) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    let Some(k) = next else { break };
                    let Some(command) = run(k) else { break };
                    for Walk { pattern: p, positions, cursor } in &wanted {
                        if positions.as_ref().is_some_and(|list| list.get(*cursor) != Some(&k)) {
                            continue;
                        }
                        if !std::mem::replace(&mut complete[*p], true) {
                            let (pattern, range) = &mut patterns[*p];
                            self.complete_pattern(effort, r, pattern, range.clone())?;
                        }
                        let places = scan.places(facts);
                        if patterns[*p].0.matches_run(&command, places, &mut charge)? {
                            let shown = shown(&patterns[*p].0, &command, places, &mut charge)?;
                            effort.keep(shown.len())?;
                            return Ok(CommandMatch::Matched(shown));
                        }
                    }
                    at = k + 1;
                }
            }
        }
        Ok(CommandMatch::Missed)
    }
}

/// How a rule's `command` condition went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CommandMatch {
    /// The rule has none.
    NoCondition,
    /// No command of the text matches it.
    Missed,
    /// This command (read back) matches it.
    Matched(String),
}

/// The positions (among `count` commands of one program, `run(k)`) of the commands with each
/// first operand, in ASCII lowercase.
fn first_operands<'t>(
    count: usize,
    run: &impl Fn(usize) -> Option<crate::command::Run<'t>>,
) -> BTreeMap<String, Vec<usize>> {
    let mut firsts: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    // A program's commands share a few first operands: each is made a key (lowercased, owned)
    // once, and found by a borrowed lowercase copy after that.
    let mut buffer = [0u8; 16];
    for k in 0..count {
        let Some(operand) = run(k).as_ref().and_then(crate::command::Run::first_operand) else {
            continue;
        };
        let short = crate::shell::lowercase(operand, &mut buffer);
        match firsts.get_mut(short).filter(|_| !short.is_empty() || operand.is_empty()) {
            Some(positions) => positions.push(k),
            None => firsts.entry(operand.to_ascii_lowercase()).or_default().push(k),
        }
    }
    firsts
}

/// The key of a field's texts: every rule reading the default text (an empty field) shares one.
fn field_key_of(field: StrRef) -> (u32, u32) {
    if field.len == 0 { (0, 0) } else { (field.offset, field.len) }
}

/// What fires when a command line nests `eval`, `bash -c` or backticks too deeply to be read
/// in full by the rules that guard commands.
pub(super) fn unreadable_command() -> Fired {
    Fired {
        index: u32::MAX,
        id: UNREADABLE_COMMAND.to_owned(),
        layer: Layer::Constitution,
        priority: 0,
        pinned: false,
        context: None,
        decision: Some(Decision::Ask),
        reason: Some(
            "This command nests eval, bash -c or backticks too deeply for hookpack's guards to \
             read in full. Write it plainly, one command per line, so that it can be checked."
                .to_owned(),
        ),
        message: None,
        stop: None,
        session_title: None,
        watch_paths: Vec::new(),
        rewrite: Vec::new(),
        once: None,
        recall: None,
        command: None,
        observes: false,
        exports: false,
    }
}

/// The id of [`unreadable_command`]'s answer.
const UNREADABLE_COMMAND: &str = "hookpack/unreadable-command";

/// A matched command as `explain` shows it: read back, with the path that decided and its
/// class when the pattern placed one (`rm -rf /tmp/../etc  [target ...: system, ...]`), else
/// the pattern that matched, the program's entry in the catalogue
/// (`fly apps destroy x  [entry { program = "fly|flyctl", subcommand = "* destroy|…" }]`).
fn shown<E>(
    pattern: &Pattern<&str>,
    command: &crate::command::Run<'_>,
    places: &crate::paths::Places,
    charge: &mut impl FnMut(usize) -> Result<(), E>,
) -> Result<String, E> {
    let mut shown = command.command().to_string();
    if let Some((path, class)) = pattern.target(command, places, charge)? {
        let path = if path.is_empty() { "(none)" } else { &path };
        shown = format!("{shown}  [target `{path}`: {class}, {}]", class.describe());
    } else {
        shown = format!("{shown}  [entry {{ {pattern} }}]");
    }
    Ok(shown)
}
