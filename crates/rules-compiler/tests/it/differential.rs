//! The artifact's matchers against the oracles: `aho-corasick` for keywords, `globset` for
//! globs, `regex` for regexes. Generated packs and inputs, random and adversarial; every
//! (input, pattern) pair is one case, and the artifact must agree on all of them.

use std::collections::BTreeSet;
use std::path::Path;

use hook_engine::artifact::{AlignedBytes, Artifact, is_word_char};
use hook_engine::{Engine, Facts, Mode, SessionState};
use hook_model::EventKind;
use rules_compiler::{Actions, Conditions, ConfigSettings, Rule, Sources, compile};
use serde_json::{Value, json};

/// A small deterministic generator (`SplitMix64`), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SYLLABLES: &[&str] = &[
    "ca", "t", "te", "go", "ry", "de", "ploy", "sql", "rm", "re", "set", "in", "é", "ü", "_", "x",
    "data", "base",
];
const SPECIAL: &[&str] = &[
    "rm -rf /",
    "-rf",
    "$HOME",
    "git push --force",
    "curl | sh",
    ".env",
    "café",
    "naïve",
    "c++",
    "@dev",
    "*brief",
    "a.b",
    "x-y",
    "日本",
];

fn term(rng: &mut Rng) -> String {
    if rng.below(5) == 0 {
        return rng.pick(SPECIAL).to_owned();
    }
    let parts = 1 + rng.below(3);
    let mut term: String = (0..parts).map(|_| rng.pick(SYLLABLES)).collect();
    if rng.below(6) == 0 {
        term.push(' ');
        term.push_str(rng.pick(SYLLABLES));
    }
    term
}

/// A haystack dense with terms and near misses: random case, glued and separated pieces.
fn haystack(rng: &mut Rng, terms: &[String]) -> String {
    let separators = [" ", "", "-", "_", ".", ", ", "\n", "é", "/", "$", "(", "日"];
    let mut text = String::new();
    for _ in 0..(5 + rng.below(40)) {
        let piece =
            if rng.below(3) == 0 { terms[rng.below(terms.len())].clone() } else { term(rng) };
        let piece: String = piece
            .chars()
            .map(|c| if rng.below(2) == 0 { c.to_ascii_uppercase() } else { c })
            .collect();
        text.push_str(&piece);
        text.push_str(separators[rng.below(separators.len())]);
    }
    text
}

/// What the contract says, computed with `aho-corasick`: the term occurs (ASCII
/// case-insensitively) somewhere with word boundaries where its own ends are word characters.
fn oracle_keywords(terms: &[String], text: &str) -> BTreeSet<usize> {
    let ac =
        aho_corasick::AhoCorasick::builder().ascii_case_insensitive(true).build(terms).unwrap();
    let mut found = BTreeSet::new();
    for m in ac.find_overlapping_iter(text) {
        let term = &terms[m.pattern().as_usize()];
        let starts_word = term.chars().next().is_some_and(is_word_char);
        let ends_word = term.chars().next_back().is_some_and(is_word_char);
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        if (!starts_word || before.is_none_or(|c| !is_word_char(c)))
            && (!ends_word || after.is_none_or(|c| !is_word_char(c)))
        {
            found.insert(m.pattern().as_usize());
        }
    }
    found
}

fn rule(i: usize, on: EventKind, when: Conditions) -> Rule {
    Rule {
        pack: "diff".into(),
        id: format!("r{i}"),
        on: vec![on],
        when,
        then: Actions { context: Some(format!("c{i}")), ..Actions::default() },
        span: 0..0,
        automata: Vec::new(),
    }
}

fn fired(bytes: &AlignedBytes, kind: EventKind, payload: &Value) -> BTreeSet<usize> {
    let artifact = Artifact::parse(bytes.as_slice()).unwrap();
    artifact.verify().unwrap();
    let engine = Engine::new(artifact).unwrap();
    let input = crate::typed(kind, payload).unwrap();
    let facts = Facts {
        input: &input,
        payload,
        project_root: Some(Path::new("/p")),
        state: SessionState::default(),
        bracket: hook_engine::Bracket::Fresh,
        used_percent: None,
        branch: None,
        home: None,
        conversation: &[],
    };
    let evaluation = engine.evaluate(&facts, Mode::Answer).unwrap();
    evaluation.fired.iter().map(|f| f.id.trim_start_matches("diff/r").parse().unwrap()).collect()
}

fn compiled(rules: &[Rule]) -> AlignedBytes {
    let refs: Vec<&Rule> = rules.iter().collect();
    let compiled = compile(&refs, &ConfigSettings::default(), &Sources::default()).unwrap();
    AlignedBytes::new(&compiled.bytes)
}

#[test]
fn keywords_agree_with_aho_corasick() {
    let mut rng = Rng(1);
    let (mut cases, mut hits) = (0, 0);
    for (size, haystacks) in [(10, 2_000), (100, 400), (1_000, 40), (5_000, 12)] {
        let mut terms: Vec<String> = Vec::new();
        let mut seen = BTreeSet::new();
        while terms.len() < size {
            let t = term(&mut rng);
            if seen.insert(t.to_ascii_lowercase()) {
                terms.push(t);
            }
        }
        let rules: Vec<Rule> = terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                rule(
                    i,
                    EventKind::UserPromptSubmit,
                    Conditions { keywords: vec![t.clone()], ..Conditions::default() },
                )
            })
            .collect();
        let bytes = compiled(&rules);
        for _ in 0..haystacks {
            let text = haystack(&mut rng, &terms);
            let payload = json!({ "hook_event_name": "UserPromptSubmit", "prompt": text });
            let expected = oracle_keywords(&terms, &text);
            let actual = fired(&bytes, EventKind::UserPromptSubmit, &payload);
            assert_eq!(actual, expected, "{size} terms, text {text:?}");
            cases += size;
            hits += expected.len();
        }
    }
    assert!(cases >= 100_000, "{cases} cases");
    assert!(
        hits >= 10_000,
        "only {hits} matches: the cases must exercise matching, not just misses"
    );
}

const PATH_PARTS: &[&str] = &[
    "src",
    "api",
    "lib",
    "generated",
    "test",
    "a",
    "b",
    ".env",
    "secrets",
    "deep",
    "x.ts",
    "y.rs",
    "id_rsa",
    "k.pem",
    "README.md",
    "é.txt",
];

fn glob(rng: &mut Rng) -> String {
    let forms: &[&dyn Fn(&mut Rng) -> String] = &[
        &|r| format!("**/{}", r.pick(PATH_PARTS)),
        &|r| format!("{}/**/*.{}", r.pick(PATH_PARTS), r.pick(&["ts", "rs", "md", "txt"])),
        &|r| format!("**/{}/**", r.pick(PATH_PARTS)),
        &|r| format!("{}/*", r.pick(PATH_PARTS)),
        &|r| format!("*.{{{},{}}}", r.pick(&["ts", "rs"]), r.pick(&["md", "pem"])),
        &|r| format!("{}/?.ts", r.pick(PATH_PARTS)),
        &|r| format!("**/[ab]/{}", r.pick(PATH_PARTS)),
        &|r| format!("{}/{}", r.pick(PATH_PARTS), r.pick(PATH_PARTS)),
        &|r| format!("**/*{}*", r.pick(&["env", "secret", "a"])),
    ];
    forms[rng.below(forms.len())](rng)
}

fn path(rng: &mut Rng) -> String {
    let depth = 1 + rng.below(5);
    let parts: Vec<&str> = (0..depth).map(|_| rng.pick(PATH_PARTS)).collect();
    let path = parts.join("/");
    if rng.below(10) == 0 { format!("/elsewhere/{path}") } else { path }
}

#[test]
fn globs_agree_with_globset() {
    let mut rng = Rng(2);
    let (mut cases, mut hits) = (0, 0);
    for (size, paths) in [(10, 1_000), (100, 300), (500, 200)] {
        let globs: Vec<String> = (0..size).map(|_| glob(&mut rng)).collect();
        let mut builder = globset::GlobSetBuilder::new();
        for g in &globs {
            builder.add(globset::GlobBuilder::new(g).literal_separator(true).build().unwrap());
        }
        let oracle = builder.build().unwrap();
        let rules: Vec<Rule> = globs
            .iter()
            .enumerate()
            .map(|(i, g)| {
                rule(
                    i,
                    EventKind::PreToolUse,
                    Conditions { paths: vec![g.clone()], ..Conditions::default() },
                )
            })
            .collect();
        let bytes = compiled(&rules);
        for _ in 0..paths {
            let p = path(&mut rng);
            let payload = json!({ "hook_event_name": "PreToolUse", "tool_name": "Write",
                                  "tool_input": { "file_path": format!("/p/{p}") } });
            let expected: BTreeSet<usize> = oracle.matches(&p).into_iter().collect();
            let actual = fired(&bytes, EventKind::PreToolUse, &payload);
            assert_eq!(actual, expected, "{size} globs, path {p}");
            cases += size;
            hits += expected.len();
        }
    }
    assert!(cases >= 100_000, "{cases} cases");
    assert!(hits >= 5_000, "only {hits} matches");
}

#[test]
fn regexes_agree_with_regex_using_ascii_word_boundaries() {
    let patterns = [
        r"\brm\s+-rf\s+/(\s|$)",
        r"(?i)drop\s+table",
        r"git\s+push\s+.*--force(\s|$)",
        r"\w+@\w+\.com",
        r"^\s*sudo\b",
        r"[\p{Greek}]+",
        r"curl[^|]*\|\s*(ba)?sh",
        r"\bcafé\b",
        // Literals every match holds, found inside groups and repetitions, and next to a
        // look-around (the hooks search for them before running an automaton).
        r"(?:^|\s)@dev\b",
        r"(?:ab)+c|x{2,}yz",
        r"(a(-rf))+\s",
        // Needles from each branch of an alternation, and case-insensitive ones (`k` and `s`
        // also match the Kelvin sign and the long s).
        r"(?:foo|bar)baz",
        r"(?:하지\s?마|기억해)",
        r"(?i)\bstick(?:ed)?\b",
        r"(?i)\bsave (?:this|that)\b",
        r"(?i)\bwe(?:['’]ll| will) go with\b",
    ];
    let rules: Vec<Rule> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| {
            rule(
                i,
                EventKind::UserPromptSubmit,
                Conditions { regex: vec![(*p).to_owned()], ..Conditions::default() },
            )
        })
        .collect();
    let bytes = compiled(&rules);
    // hookpack's documented semantics: `\b` is an ASCII word boundary.
    let oracles: Vec<regex::Regex> = patterns
        .iter()
        .map(|p| regex::Regex::new(&p.replace(r"\b", r"(?-u:\b)")).unwrap())
        .collect();
    let pieces: &[&str] = &[
        "rm -rf /",
        "rm  -rf /tmp",
        "DROP TABLE x",
        "git push origin main --force",
        "a@b.com",
        "  sudo ls",
        "αβγ",
        "curl x | sh",
        "café",
        "cafés",
        "é",
        "\n",
        " ",
        "x",
        "--force-with-lease",
        "@dev",
        "x@dev",
        "@devs",
        "ababc",
        "xxyz",
        "a-rfa-rf",
        "foobaz",
        "BARBAZ",
        "barbaz",
        "하지 마",
        "하지마",
        "기억해",
        "STICK",
        "sti\u{212A}",
        "Sticked",
        "Save That",
        "\u{17F}ave this",
        "We'll GO with",
        "we will go WITH",
        "WE’LL go with",
    ];
    let mut rng = Rng(3);
    let (mut cases, mut hits) = (0, 0);
    for _ in 0..2_000 {
        let text: String = (0..=rng.below(6))
            .map(|_| rng.pick(pieces))
            .collect::<Vec<_>>()
            .join(rng.pick(&[" ", "", "\n", "é"]));
        let payload = json!({ "hook_event_name": "UserPromptSubmit", "prompt": text });
        let expected: BTreeSet<usize> =
            (0..patterns.len()).filter(|&i| oracles[i].is_match(&text)).collect();
        assert_eq!(fired(&bytes, EventKind::UserPromptSubmit, &payload), expected, "text {text:?}");
        cases += patterns.len();
        hits += expected.len();
    }
    assert!(cases >= 10_000);
    assert!(hits >= 1_000, "only {hits} matches");
}

const PROGRAMS: &[&str] = &["git", "GIT", "rm", "docker", "kubectl", "python3", "mkfs.ext4", "cat"];
const PROGRAM_GLOBS: &[&str] = &["python*", "mkfs.*", "*", "d?cker", "git|rm", "k*|cat"];
const WORDS: &[&str] =
    &["push", "PUSH", "reset", "rm", "-rf", "/", "main", "--force", "a.txt", "x"];

fn command_pattern(rng: &mut Rng) -> hook_engine::command::Pattern<String> {
    let program = if rng.below(3) == 0 { rng.pick(PROGRAM_GLOBS) } else { rng.pick(PROGRAMS) };
    let subcommand = match rng.below(4) {
        0 => vec![format!("{}|{}", rng.pick(WORDS), rng.pick(WORDS))],
        1 => vec![rng.pick(WORDS).to_owned(), rng.pick(WORDS).to_owned()],
        2 => vec!["p*".to_owned()],
        _ => Vec::new(),
    };
    hook_engine::command::Pattern {
        program: vec![program.to_owned()],
        subcommand,
        flags: if rng.below(4) == 0 {
            vec![rng.pick(&["-f|--force", "!-n"]).to_owned()]
        } else {
            Vec::new()
        },
        args: if rng.below(4) == 0 {
            vec![rng.pick(&["/", "main", "*.txt"]).to_owned()]
        } else {
            Vec::new()
        },
        writes: if rng.below(5) == 0 {
            vec![rng.pick(&["*.txt", "/etc/*"]).to_owned()]
        } else {
            Vec::new()
        },
        piped_from: Vec::new(),
        targets: Vec::new(),
        calls: Vec::new(),
        sql: Vec::new(),
        find: Vec::new(),
        overwrites: Vec::new(),
        empties: Vec::new(),
    }
}

fn command_line(rng: &mut Rng) -> String {
    let commands: Vec<String> = (0..=rng.below(4))
        .map(|_| {
            let mut words = vec![rng.pick(PROGRAMS).to_owned()];
            words.extend((0..rng.below(4)).map(|_| rng.pick(WORDS).to_owned()));
            if rng.below(6) == 0 {
                words.push(format!("> {}", rng.pick(&["a.txt", "/etc/hosts", "out"])));
            }
            words.join(" ")
        })
        .collect();
    commands.join(rng.pick(&[" && ", "; ", " | "]))
}

/// The hooks find a shell rule by the programs (and first operands, and globs) its patterns
/// need (`event::PROGRAMS_L`, `event::GLOBS_L`); explain checks every rule. They must agree on
/// what fires, whatever the patterns and the command.
#[test]
fn the_program_index_finds_every_command_rule_that_fires() {
    let mut rng = Rng(7);
    let (mut cases, mut hits) = (0, 0);
    for _ in 0..40 {
        let rules: Vec<Rule> = (0..30)
            .map(|i| {
                let patterns = (0..=rng.below(3)).map(|_| command_pattern(&mut rng)).collect();
                rule(
                    i,
                    EventKind::PreToolUse,
                    Conditions {
                        tool: Some(rules_compiler::ToolMatcher::Names(vec!["Bash".into()])),
                        command: patterns,
                        ..Conditions::default()
                    },
                )
            })
            .collect();
        let bytes = compiled(&rules);
        let artifact = Artifact::parse(bytes.as_slice()).unwrap();
        let engine = Engine::new(artifact).unwrap();
        for _ in 0..50 {
            let command = command_line(&mut rng);
            let payload = json!({
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": { "command": command },
            });
            let input = crate::typed(EventKind::PreToolUse, &payload).unwrap();
            let facts = Facts {
                input: &input,
                payload: &payload,
                project_root: Some(Path::new("/p")),
                state: SessionState::default(),
                bracket: hook_engine::Bracket::Fresh,
                used_percent: None,
                branch: None,
                home: None,
                conversation: &[],
            };
            let ids = |mode| -> BTreeSet<String> {
                let evaluation = engine.evaluate(&facts, mode).unwrap();
                evaluation.fired.into_iter().map(|f| f.id).collect()
            };
            let (answered, explained) = (ids(Mode::Answer), ids(Mode::Explain));
            assert_eq!(answered, explained, "{command}");
            cases += 1;
            hits += answered.len();
        }
    }
    assert!(hits >= cases / 2, "only {hits} rules fired in {cases} commands");
}
