//! `import synapse <.synapse>`: SYNAPSE's manifest and domain files as a layered pack. The
//! constitution (L0), the global and context rules (L1, the context file's rules split by the
//! bracket their key names: `CONTEXT_RULE_FRESH_0`), the agents (L2, switched on by `@id` as
//! in the builtin `context` pack), the workflows (L3, switched on by `*id`), the keyword domains
//! (L6, `_RECALL` and `_EXCLUDE` with `GLOBAL_EXCLUDE`) and the star-commands (L7, the
//! `[*name]` blocks of `commands`, headers in comments included, which SYNAPSE itself never
//! matched). What SYNAPSE parsed and never used is said; squads and `DEVMODE` are not
//! translated.

use std::path::Path;

use super::{Pack, Translation, read, rule_id, toml_list, toml_str, unique};

/// One domain of the manifest.
#[derive(Debug, Default)]
struct Domain {
    name: String,
    state: Option<String>,
    agent: Option<String>,
    workflow: Option<String>,
    non_negotiable: bool,
    recall: Vec<String>,
    exclude: Vec<String>,
}

impl Domain {
    /// Its file: the name in lower case, `_` as `-`.
    fn file(&self) -> String {
        self.name.to_ascii_lowercase().replace('_', "-")
    }
}

const SUFFIXES: [&str; 7] = [
    "_WORKFLOW_TRIGGER",
    "_AGENT_TRIGGER",
    "_NON_NEGOTIABLE",
    "_ALWAYS_ON",
    "_EXCLUDE",
    "_RECALL",
    "_STATE",
];

fn comma_list(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned).collect()
}

/// The manifest: its domains in order, `GLOBAL_EXCLUDE`, `DEVMODE`; lines it does not read.
fn manifest(text: &str, out: &mut Translation) -> (Vec<Domain>, Vec<String>, bool) {
    let mut domains: Vec<Domain> = Vec::new();
    let mut global_exclude = Vec::new();
    let mut devmode = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            out.untranslated.push(format!("manifest:{}: `{line}` is no KEY=VALUE line", n + 1));
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "DEVMODE" => devmode = value.eq_ignore_ascii_case("true"),
            "GLOBAL_EXCLUDE" => global_exclude = comma_list(value),
            _ => {
                let Some((name, suffix)) =
                    SUFFIXES.iter().find_map(|s| key.strip_suffix(s).map(|n| (n, *s)))
                else {
                    out.untranslated
                        .push(format!("manifest:{}: `{key}` has no suffix SYNAPSE reads", n + 1));
                    continue;
                };
                // A domain names a file of the folder: plain names only, never a path.
                let plain = name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                if !plain {
                    out.untranslated.push(format!(
                        "manifest:{}: `{}` is no domain name (A-Z, 0-9, _)",
                        n + 1,
                        crate::commands::printable(name)
                    ));
                    continue;
                }
                let at = match domains.iter().position(|d| d.name == name) {
                    Some(at) => at,
                    None => {
                        domains.push(Domain { name: name.to_owned(), ..Domain::default() });
                        domains.len() - 1
                    }
                };
                let domain = &mut domains[at];
                match suffix {
                    "_STATE" => domain.state = Some(value.to_ascii_lowercase()),
                    "_AGENT_TRIGGER" => domain.agent = Some(value.to_owned()),
                    "_WORKFLOW_TRIGGER" => domain.workflow = Some(value.to_owned()),
                    "_NON_NEGOTIABLE" => domain.non_negotiable = value.eq_ignore_ascii_case("true"),
                    "_RECALL" => domain.recall = comma_list(value),
                    "_EXCLUDE" => domain.exclude = comma_list(value),
                    _ => {}
                }
            }
        }
    }
    (domains, global_exclude, devmode)
}

/// A domain file's rules, each with its key (empty for a plain line), as SYNAPSE reads them:
/// KEY=VALUE lines when the file has one, else every line; `#` lines are comments, kept apart
/// for the `[*name]` headers of `commands`.
fn domain_rules(text: &str) -> Vec<(String, String)> {
    let is_key = |line: &str| {
        line.split_once('=').is_some_and(|(k, v)| {
            !v.trim().is_empty()
                && k.starts_with(|c: char| c.is_ascii_uppercase())
                && k.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
    };
    let lines: Vec<&str> =
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    if lines.iter().any(|l| is_key(l)) {
        lines
            .into_iter()
            .filter(|l| is_key(l))
            .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_owned(), v.trim().to_owned())))
            .collect()
    } else {
        lines.into_iter().map(|l| (String::new(), l.to_owned())).collect()
    }
}

/// The star-command blocks of `commands`: a `[*name]` header (a rule, or a `#` comment line as
/// SYNAPSE's own file writes them) opens a block; the rules after it belong to it.
fn star_blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let header = |line: &str| -> Option<(String, String)> {
        let rest = line.trim_start_matches('#').trim().strip_prefix("[*")?;
        let (name, after) = rest.split_once(']')?;
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        let after = after.trim();
        valid.then(|| {
            (
                name.to_ascii_lowercase(),
                if after.ends_with(':') { String::new() } else { after.to_owned() },
            )
        })
    };
    let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let value = line
            .split_once('=')
            .filter(|(k, _)| {
                k.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            })
            .map_or(line, |(_, v)| v.trim());
        if let Some((name, inline)) = header(line).or_else(|| header(value)) {
            blocks.push((name, if inline.is_empty() { Vec::new() } else { vec![inline] }));
        } else if !line.starts_with('#')
            && let Some((_, rules)) = blocks.last_mut()
        {
            rules.push(value.to_owned());
        }
    }
    blocks.retain(|(_, rules)| !rules.is_empty());
    blocks
}

const BRACKETS: [&str; 4] = ["FRESH", "MODERATE", "DEPLETED", "CRITICAL"];

/// A test to write once every rule is known: its rules are those it names and every rule a
/// prompt gets anyway (the constitution, the global rules, the bracket's).
struct Pending {
    name: String,
    prompt: String,
    rules: Vec<String>,
    given: String,
    bracket: &'static str,
    /// Instead of `rules`: what the context must not hold.
    excludes: Option<String>,
}

fn pending(name: &str, prompt: &str, rules: &[&str]) -> Pending {
    Pending {
        name: name.to_owned(),
        prompt: prompt.to_owned(),
        rules: rules.iter().map(|r| (*r).to_owned()).collect(),
        given: String::new(),
        bracket: "fresh",
        excludes: None,
    }
}

/// What the translation has gathered so far.
struct Importer<'d> {
    dir: &'d Path,
    out: Translation,
    pack: Pack,
    ids: Vec<String>,
    tests: Vec<Pending>,
    /// Rules every prompt gets: the constitution, the global rules.
    always: Vec<String>,
    /// The context rules of each bracket.
    by_bracket_ids: Vec<(String, String)>,
    /// The files of the folder a layer reads.
    used_files: Vec<String>,
    domains: Vec<Domain>,
    global_exclude: Vec<String>,
}

fn lines(rules: &[(String, String)]) -> String {
    rules.iter().map(|(_, r)| format!("- {r}")).collect::<Vec<_>>().join("\n")
}

fn inactive(domain: &Domain) -> bool {
    domain.state.as_deref().is_some_and(|s| s != "active")
}

pub(super) fn translate(dir: &Path) -> Translation {
    let mut import = Importer {
        dir,
        out: Translation::default(),
        pack: Pack::new(
            "synapse",
            "SYNAPSE's layers: constitution, global and context rules by bracket, agents, \
             workflows, keyword domains, star-commands",
        ),
        ids: Vec::new(),
        tests: Vec::new(),
        always: Vec::new(),
        by_bracket_ids: Vec::new(),
        used_files: vec!["manifest".to_owned(), "commands".to_owned()],
        domains: Vec::new(),
        global_exclude: Vec::new(),
    };
    let manifest_text = import.file("manifest").unwrap_or_default();
    let (domains, global_exclude, devmode) = manifest(&manifest_text, &mut import.out);
    import.domains = domains;
    import.global_exclude = global_exclude;
    if devmode {
        import.out.untranslated.push(
            "manifest: `DEVMODE=true` (SYNAPSE's debug section) has no counterpart; `hookpack \
             explain` shows what fired and why"
                .to_owned(),
        );
    }
    if dir.parent().is_some_and(|p| p.join("squads").is_dir()) {
        import.out.untranslated.push(
            "squads/: squad domains (L5) are not translated; import each squad's .synapse as its \
             own pack"
                .to_owned(),
        );
    }
    import.out.notes.push(
        "SYNAPSE as shipped gave only the constitution and the global rules (its hook never \
         passed the manifest to the engine): the agents, workflows, keyword domains and \
         star-commands imported take effect now"
            .to_owned(),
    );
    import.constitution();
    import.global_and_context();
    import.domains();
    import.star_commands();
    import.strays();
    import.finish()
}

impl Importer<'_> {
    /// File `name` of the folder; `None` when there is none (or it cannot be read: said).
    fn file(&mut self, name: &str) -> Option<String> {
        let path = self.dir.join(name);
        if !path.exists() {
            return None;
        }
        match read(&path) {
            Ok(text) => Some(text),
            Err(err) => {
                self.out.untranslated.push(format!("{name}: {err:#}"));
                None
            }
        }
    }

    /// The rules of domain file `name`, as SYNAPSE reads them; the lines it drops are said.
    fn rules(&mut self, name: &str) -> Option<Vec<(String, String)>> {
        let text = self.file(name)?;
        let rules = domain_rules(&text);
        let lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        let dropped = lines.count() - rules.len();
        if dropped > 0 {
            self.out.untranslated.push(format!(
                "{name}: {dropped} line(s) that are not KEY=VALUE left out, as SYNAPSE read the file"
            ));
        }
        Some(rules)
    }

    /// L0.
    fn constitution(&mut self) {
        let constitution = self.domains.iter().find(|d| d.name == "CONSTITUTION");
        let constitution_file =
            constitution.map_or_else(|| "constitution".to_owned(), Domain::file);
        let non_negotiable = constitution.is_some_and(|d| d.non_negotiable);
        self.used_files.push(constitution_file.clone());
        if let Some(rules) = self.rules(&constitution_file)
            && !rules.is_empty()
        {
            // SYNAPSE never dropped the constitution for the budget, non-negotiable or not.
            let keys = vec![
                ("id", toml_str(&unique("constitution", &mut self.ids))),
                ("on", toml_str("UserPromptSubmit")),
                ("layer", toml_str("constitution")),
                ("pinned", "true".to_owned()),
                (
                    "context",
                    toml_str(&format!(
                        "{}\n{}",
                        if non_negotiable {
                            "Constitution (non-negotiable):"
                        } else {
                            "Constitution:"
                        },
                        lines(&rules)
                    )),
                ),
            ];
            self.pack.rule(&format!("L0, from {constitution_file}."), &keys);
            self.always.push("constitution".to_owned());
            self.tests.push(pending("the constitution is given with every prompt", "hello", &[]));
        }
    }

    /// L1: the global rules, and the context file's rules by bracket.
    fn global_and_context(&mut self) {
        for (name, source) in [("global", "GLOBAL"), ("context", "CONTEXT")] {
            let domain = self.domains.iter().find(|d| d.name == source);
            let file_name = domain.map_or_else(|| name.to_owned(), Domain::file);
            self.used_files.push(file_name.clone());
            let Some(rules) = self.rules(&file_name) else { continue };
            let mut by_bracket: Vec<(&str, Vec<(String, String)>)> = Vec::new();
            let mut plain = Vec::new();
            for (key, rule) in rules {
                match BRACKETS
                    .iter()
                    .find(|b| key.contains(&format!("_{b}_")) || key.ends_with(&format!("_{b}")))
                {
                    Some(bracket) if source == "CONTEXT" => {
                        match by_bracket.iter_mut().find(|(b, _)| b == bracket) {
                            Some((_, list)) => list.push((key, rule)),
                            None => by_bracket.push((bracket, vec![(key, rule)])),
                        }
                    }
                    _ => plain.push((key, rule)),
                }
            }
            if !plain.is_empty() {
                let id = unique(name, &mut self.ids);
                self.pack.rule(
                    &format!("L1, from {file_name}."),
                    &[
                        ("id", toml_str(&id)),
                        ("on", toml_str("UserPromptSubmit")),
                        ("layer", toml_str("global")),
                        ("context", toml_str(&lines(&plain))),
                    ],
                );
                self.always.push(id.clone());
            }
            for (bracket, rules) in &by_bracket {
                let lower = bracket.to_ascii_lowercase();
                let id = unique(&format!("context-{lower}"), &mut self.ids);
                self.pack.rule(&format!("L1, from {file_name}: the rules of the {bracket} bracket (SYNAPSE gave every bracket's at once)."), &[
                ("id", toml_str(&id)),
                ("on", toml_str("UserPromptSubmit")),
                ("layer", toml_str("global")),
                ("bracket", toml_str(&lower)),
                ("pinned", "true".to_owned()),
                ("context", toml_str(&format!("[{bracket}] context rules:\n{}", lines(rules)))),
            ]);
                self.by_bracket_ids.push((lower.clone(), id.clone()));
                let bracket = ["fresh", "moderate", "depleted", "critical"]
                    .into_iter()
                    .find(|b| *b == lower)
                    .unwrap_or("fresh");
                let name = format!("the {lower} bracket's rules");
                self.tests.push(Pending {
                    given: format!("bracket = {}", toml_str(&lower)),
                    bracket,
                    ..pending(&name, "hello", &[])
                });
            }
            if !by_bracket.is_empty() {
                self.out.notes.push(format!("{file_name}: each bracket's rules are given in that bracket only (SYNAPSE gave all four every time)"));
            }
        }
    }

    /// L2, L3, L6: the domains.
    fn domains(&mut self) {
        let domains = std::mem::take(&mut self.domains);
        let mut keyword_note = false;
        for domain in &domains {
            if matches!(domain.name.as_str(), "CONSTITUTION" | "GLOBAL" | "CONTEXT") {
                continue;
            }
            let file_name = domain.file();
            self.used_files.push(file_name.clone());
            if inactive(domain) {
                self.out.untranslated.push(format!(
                    "manifest: {} is `_STATE={}`; SYNAPSE loaded it anyway, hookpack leaves it out",
                    domain.name,
                    domain.state.as_deref().unwrap_or("")
                ));
                continue;
            }
            let rules = self.rules(&file_name).unwrap_or_default();
            if rules.is_empty() {
                self.out.untranslated.push(format!(
                    "{file_name}: domain {} has no rules (no file, or an empty one)",
                    domain.name
                ));
                continue;
            }
            let id = unique(&rule_id(&file_name), &mut self.ids);
            if (domain.agent.is_some() || domain.workflow.is_some()) && !domain.recall.is_empty() {
                self.out.untranslated.push(format!(
                    "manifest: {}'s `_RECALL` keywords left out: its agent or workflow trigger \
                     comes first, as in SYNAPSE",
                    domain.name
                ));
            }
            if let Some(agent) = &domain.agent {
                self.agent(agent, &id, &file_name, &rules);
                continue;
            }
            if let Some(workflow) = &domain.workflow {
                let activate = unique(&format!("start-{}", rule_id(workflow)), &mut self.ids);
                let star = rule_id(workflow);
                self.pack.rule(
                    &format!("`*{star}` starts workflow {workflow}."),
                    &[
                        ("id", toml_str(&activate)),
                        ("on", toml_str("UserPromptSubmit")),
                        ("star", toml_str(&star)),
                        ("set", format!("{{ workflow = {} }}", toml_str(workflow))),
                    ],
                );
                self.pack.rule(
                    &format!("L3, from {file_name}."),
                    &[
                        ("id", toml_str(&id)),
                        ("on", toml_str("UserPromptSubmit")),
                        ("workflow", toml_str(workflow)),
                        ("layer", toml_str("workflow")),
                        (
                            "context",
                            toml_str(&format!("Active workflow {workflow}:\n{}", lines(&rules))),
                        ),
                    ],
                );
                let name = format!("workflow {workflow} gives its rules");
                self.tests.push(Pending {
                    given: format!("workflow = {}", toml_str(workflow)),
                    ..pending(&name, "next step", &[&id])
                });
                continue;
            }
            if !domain.recall.is_empty() {
                let keywords: Vec<String> = domain.recall.clone();
                let mut exclude: Vec<String> = domain.exclude.clone();
                exclude.extend(self.global_exclude.iter().cloned());
                let mut keys = vec![
                    ("id", toml_str(&id)),
                    ("on", toml_str("UserPromptSubmit")),
                    ("keywords", toml_list(&keywords)),
                ];
                if !exclude.is_empty() {
                    keys.push(("exclude", toml_list(&exclude)));
                }
                keys.push(("layer", toml_str("keyword")));
                keys.push(("context", toml_str(&format!("{}:\n{}", domain.name, lines(&rules)))));
                self.pack.rule(&format!("L6, from {file_name}."), &keys);
                let name = format!("a prompt about {} gives {}", keywords[0], domain.name);
                self.tests.push(pending(&name, &format!("help with {}", keywords[0]), &[&id]));
                let name = format!("other prompts do not give {}", domain.name);
                self.tests.push(Pending {
                    excludes: Some(format!("{}:", domain.name)),
                    ..pending(&name, "zzz", &[])
                });
                keyword_note = true;
                continue;
            }
            self.out.untranslated.push(format!("manifest: domain {} has no trigger (`_AGENT_TRIGGER`, `_WORKFLOW_TRIGGER` or `_RECALL`); SYNAPSE never loaded it", domain.name));
        }
        if keyword_note {
            self.out.notes.push("keyword domains match whole words, case-insensitively (SYNAPSE matched any substring: `test` in \"latest\")".to_owned());
        }

        self.domains = domains;
    }

    /// L2: agent `agent`'s rules, and the rule that makes it active on `@agent`.
    fn agent(&mut self, agent: &str, id: &str, file_name: &str, rules: &[(String, String)]) {
        let agent_id = rule_id(agent);
        let activate = unique(&format!("activate-{agent_id}"), &mut self.ids);
        self.pack.rule(&format!("`@{agent}` makes agent {agent} active (SYNAPSE read the active agent from its session file, which nothing set)."), &[
                ("id", toml_str(&activate)),
                ("on", toml_str("UserPromptSubmit")),
                ("regex", toml_list(&[format!(r"(?:^|\s)@{}\b", regex::escape(agent))])),
                ("set", format!("{{ agent = {} }}", toml_str(agent))),
            ]);
        self.pack.rule(
            &format!("L2, from {file_name}."),
            &[
                ("id", toml_str(id)),
                ("on", toml_str("UserPromptSubmit")),
                ("agent", toml_str(agent)),
                ("layer", toml_str("agent")),
                ("pinned", "true".to_owned()),
                ("context", toml_str(&format!("Active agent @{agent}:\n{}", lines(rules)))),
            ],
        );
        let name = format!("@{agent} makes the agent active and gives its rules");
        self.tests.push(pending(&name, &format!("@{agent} start"), &[&activate, id]));
    }

    /// L7.
    fn star_commands(&mut self) {
        if let Some(text) = self.file("commands") {
            for (name, rules) in star_blocks(&text) {
                let id = unique(&format!("star-{}", rule_id(&name)), &mut self.ids);
                self.pack.rule(
                    &format!("L7, `*{name}` from commands."),
                    &[
                        ("id", toml_str(&id)),
                        ("on", toml_str("UserPromptSubmit")),
                        ("star", toml_str(&name)),
                        ("layer", toml_str("command")),
                        (
                            "context",
                            toml_str(&format!(
                                "*{name}:\n{}",
                                rules
                                    .iter()
                                    .map(|r| format!("- {r}"))
                                    .collect::<Vec<_>>()
                                    .join("\n")
                            )),
                        ),
                    ],
                );
                self.tests.push(pending(
                    &format!("*{name} gives its rules"),
                    &format!("*{name} the change"),
                    &[&id],
                ));
                self.out.notes.push(format!("commands: `[*{name}]` is matched by `*{name}` in a prompt (SYNAPSE never matched headers written as comments)"));
            }
        }
    }

    /// The files no layer reads.
    fn strays(&mut self) {
        if let Ok(entries) = std::fs::read_dir(self.dir) {
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            for name in
                names.into_iter().filter(|n| !self.used_files.contains(n) && !n.starts_with('.'))
            {
                self.out.untranslated.push(format!(
                    "{name}: no manifest domain names this file; SYNAPSE never read it"
                ));
            }
        }
    }

    /// The tests, every rule known; the translation.
    fn finish(mut self) -> Translation {
        for test in std::mem::take(&mut self.tests) {
            let mut rules: Vec<String> = self.always.iter().chain(&test.rules).cloned().collect();
            rules.extend(
                self.by_bracket_ids
                    .iter()
                    .filter(|(b, _)| b == test.bracket)
                    .map(|(_, id)| id.clone()),
            );
            rules.sort();
            let rules: Vec<String> = rules.iter().map(|r| format!("synapse/{r}")).collect();
            let expect = match &test.excludes {
                Some(text) => format!("{{ context_excludes = {} }}", toml_str(text)),
                None => format!("{{ rules = {} }}", toml_list(&rules)),
            };
            let given =
                if test.given.is_empty() { String::new() } else { format!("{{ {} }}", test.given) };
            let event = format!(
                "{{ hook_event_name = \"UserPromptSubmit\", prompt = {} }}",
                toml_str(&test.prompt)
            );
            self.pack.test(&test.name, &event, &expect, &given);
        }
        if self.pack.rule_count() > 0 {
            self.out.packs.push(self.pack);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_and_domain_files_read_as_synapse_reads_them() {
        let mut out = Translation::default();
        let (domains, exclude, devmode) = manifest(
            "DEVMODE=false\nGLOBAL_EXCLUDE=skip, wip\nAGENT_DEV_STATE=active\nAGENT_DEV_AGENT_TRIGGER=dev\nNO_SUFFIX=1\n",
            &mut out,
        );
        assert_eq!(domains.len(), 1);
        assert_eq!(domains[0].file(), "agent-dev");
        assert_eq!(domains[0].agent.as_deref(), Some("dev"));
        assert_eq!(exclude, ["skip", "wip"]);
        assert!(!devmode);
        assert_eq!(out.untranslated.len(), 1);
        assert_eq!(
            domain_rules("# c\nA_0=one\nplain line\nB_1= two \n"),
            [("A_0".to_owned(), "one".to_owned()), ("B_1".to_owned(), "two".to_owned())]
        );
        assert_eq!(
            domain_rules("one\n\ntwo\n"),
            [(String::new(), "one".to_owned()), (String::new(), "two".to_owned())]
        );
        let blocks = star_blocks(
            "# [*brief] COMMAND:\nCOMMANDS_RULE_BRIEF_0=Use bullet points only\n# [*quick] COMMAND inline\n# [*empty] COMMAND:\n",
        );
        assert_eq!(
            blocks,
            [
                ("brief".to_owned(), vec!["Use bullet points only".to_owned()]),
                ("quick".to_owned(), vec!["COMMAND inline".to_owned()])
            ]
        );
    }
}
