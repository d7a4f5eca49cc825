//! An event's scan: its texts searched for keywords once, and the rules to check found (those
//! the event always checks, those a keyword found, and on a shell tool's call those the
//! programs its command runs name).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use hook_model::EventKind;

use super::{Engine, Facts, Mode, Scan, Shared, text_bytes};
use crate::artifact::{ArtifactError, Effort, EventRecord, KeywordMatches, StrRef};

impl Engine<'_> {
    /// Scans the event's texts for keywords and finds the rules to check: in [`Mode::Answer`]
    /// those the event always checks plus those a keyword found; in [`Mode::Explain`] every
    /// rule of the event. A scan depends only on the event and the payload, so one serves every
    /// evaluation of the event, before and after its session state is known.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn scan<'p>(&self, facts: &Facts<'p>, mode: Mode) -> Result<Scan<'p>, ArtifactError> {
        let effort = Effort::for_evaluation(self.artifact.bytes().len(), text_bytes(facts.payload));
        let Some(e) = EventKind::ALL.iter().position(|&k| k == facts.kind()) else {
            return Ok(Scan {
                scans: BTreeMap::new(),
                regex_matched: RefCell::default(),
                shared: Shared::default(),
                candidates: BTreeSet::new(),
                mode,
                effort,
            });
        };
        let scan_effort = effort;
        let effort = &scan_effort;
        let record = self.artifact.event(e)?;

        // Scan each text the event's keyword rules read, once.
        let mut scans: BTreeMap<(u32, u32), KeywordMatches> = BTreeMap::new();
        for entry in self.artifact.list(record.fields)?.iter().collect::<Vec<_>>().chunks_exact(2) {
            let field = StrRef { offset: entry[0], len: entry[1] };
            if scans.contains_key(&(field.offset, field.len)) {
                continue;
            }
            let mut matches = KeywordMatches::default();
            for text in self.texts(effort, facts, field)? {
                self.keywords.find(&text, &mut matches, effort)?;
            }
            scans.insert((field.offset, field.len), matches);
        }

        let candidates: BTreeSet<u32> = match mode {
            Mode::Explain => {
                let mut set = BTreeSet::new();
                for i in 0..self.artifact.rule_count() {
                    let r = self.rule(effort, i)?;
                    if r.events().contains(facts.kind()) {
                        set.extend(u32::try_from(i).ok());
                    }
                }
                set
            }
            Mode::Answer => {
                let mut set: BTreeSet<u32> = self.list(effort, record.always)?.iter().collect();
                for (&(offset, len), matches) in &scans {
                    let field = StrRef { offset, len };
                    for &pattern in matches.ids() {
                        for index in self.list(effort, self.keywords.postings(pattern))?.iter() {
                            let r = self.rule(effort, index as usize)?;
                            if r.events().contains(facts.kind()) && r.field() == field {
                                set.insert(index);
                            }
                        }
                    }
                }
                set
            }
        };
        let mut scan = Scan {
            scans,
            regex_matched: RefCell::default(),
            shared: Shared::default(),
            candidates,
            mode,
            effort: scan_effort,
        };
        if mode == Mode::Answer {
            let found = self.program_candidates(&scan, facts, &record)?;
            scan.candidates.extend(found);
            let found = self.path_candidates(&scan, facts, &record)?;
            scan.candidates.extend(found);
        }
        Ok(scan)
    }

    /// The path rules found by the keys of the call's path (`EventRecord::paths`): those whose
    /// globs require its extension, its file name or its first folder.
    fn path_candidates(
        &self,
        scan: &Scan<'_>,
        facts: &Facts<'_>,
        record: &EventRecord,
    ) -> Result<Vec<u32>, ArtifactError> {
        let effort = &scan.effort;
        let list = self.list(effort, record.paths)?;
        let entries = list.len() / 3;
        if entries == 0 {
            return Ok(Vec::new());
        }
        let Some(path) = scan.tool_path(facts) else {
            return Ok(Vec::new());
        };
        let key_at = |i: usize| {
            self.str(effort, StrRef { offset: list.get(3 * i), len: list.get(3 * i + 1) })
        };
        let mut found = Vec::new();
        for key in crate::path_keys::path_keys(path) {
            // The first entry not below `key`, by binary search over the sorted keys.
            let (mut low, mut high) = (0, entries);
            while low < high {
                let middle = low + (high - low) / 2;
                if key_at(middle)? < key.as_str() {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            while low < entries && key_at(low)? == key.as_str() {
                found.push(list.get(3 * low + 2));
                low += 1;
            }
        }
        Ok(found)
    }

    /// The rules found by the programs the event's default text runs (`EventRecord::programs`),
    /// and by their commands' first operands.
    pub(super) fn program_candidates<'p>(
        &self,
        scan: &Scan<'p>,
        facts: &Facts<'p>,
        record: &EventRecord,
    ) -> Result<Vec<u32>, ArtifactError> {
        let effort = &scan.effort;
        let tool = facts.input.tool_name();
        if !matches!(tool, Some("Bash" | "PowerShell" | "Monitor")) {
            return Ok(Vec::new());
        }
        let list = self.list(effort, record.programs)?;
        let globs = self.list(effort, record.globs)?;
        let entries = list.len() / 5;
        if entries == 0 && globs.is_empty() {
            return Ok(Vec::new());
        }
        let string = |i: usize, at: usize| {
            self.str(effort, StrRef { offset: list.get(5 * i + at), len: list.get(5 * i + at + 1) })
        };
        let parsed = self.commands_of(effort, StrRef { offset: 0, len: 0 }, facts, scan)?;
        let mut found = Vec::new();
        // Patterns on globs: a program the text runs matches, and for those on what commands
        // write, some command writes (whichever: found once).
        let mut writes: Option<bool> = None;
        for entry in 0..globs.len() / 4 {
            let glob = StrRef { offset: globs.get(4 * entry), len: globs.get(4 * entry + 1) };
            if !self.glob_runs(effort, scan, (0, 0), glob, &parsed)? {
                continue;
            }
            if globs.get(4 * entry + 2) != 0 {
                let any = match writes {
                    Some(any) => any,
                    None => {
                        let commands = parsed.iter().map(|text| text.parsed.commands().len());
                        effort.spend(commands.sum::<usize>() as u64)?;
                        let any = parsed
                            .iter()
                            .any(|text| text.parsed.commands().any(|c| c.writes().len() > 0));
                        *writes.insert(any)
                    }
                };
                if !any {
                    continue;
                }
            }
            let index = globs.get(4 * entry + 3);
            if self.rule(effort, index as usize)?.events().contains(facts.kind()) {
                found.push(index);
            }
        }
        for text in parsed.iter() {
            for (n, (program, indices)) in text.parsed.by_name().enumerate() {
                let name = program.to_ascii_lowercase();
                // The first entry not before `name` (the list is sorted), then those equal to it.
                let (mut low, mut high) = (0, entries);
                while low < high {
                    let middle = low + (high - low) / 2;
                    if string(middle, 0)? < name.as_str() {
                        low = middle + 1;
                    } else {
                        high = middle;
                    }
                }
                for i in low..entries {
                    if string(i, 0)? != name {
                        break;
                    }
                    let first = string(i, 2)?;
                    effort.spend(first.len() as u64)?;
                    if !first.is_empty()
                        && !text.firsts(n, program, indices).is_some_and(|f| f.contains_key(first))
                    {
                        continue;
                    }
                    let index = list.get(5 * i + 4);
                    if self.rule(effort, index as usize)?.events().contains(facts.kind()) {
                        found.push(index);
                    }
                }
            }
        }
        Ok(found)
    }
}
