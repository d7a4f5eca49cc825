//! The literal a path rule's glob requires of every path it matches, so that a tool call is
//! checked only against the path rules that can match its path: its extension (`*.rs`,
//! `**/*.{ts,tsx}`), its file name (`Cargo.toml`, `**/Makefile`), or its first folder
//! (`src/**`, `docs/*.md`). The compiler indexes each rule whose every include glob has such a
//! requirement ([`glob_requirements`]), under its rarest one ([`choose`]); a hook looks up the
//! keys of the call's path ([`path_keys`]). A glob without one (`**/test_*`, `{src,lib}/**`)
//! leaves its rule checked on every call.
//!
//! Each key is conservative: every path the glob matches (globset, `*` not crossing `/`) has
//! that key among its [`path_keys`]. A key never decides a match; the glob still does.

/// A key's kind, its first byte: the extension after the last `.` of the file name.
const EXTENSION: char = 'e';
/// The file name (the last component).
const NAME: char = 'n';
/// The first component.
const FIRST: char = 'f';

/// What `glob` requires of every path it matches, each requirement a set of keys one of which
/// the path has: its file name, its extension (one of several, for `*.{ts,tsx}`), its first
/// folder. Any one requirement finds every path the glob matches; none: the glob requires no
/// literal this index knows. `src/**/*.ts` gives two (`f:src`, `e:ts`), and the compiler
/// indexes the glob under the one fewer globs share ([`choose`]).
pub fn glob_requirements(glob: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let last = glob.rsplit('/').next().unwrap_or(glob);
    // The file name, literal: `Cargo.toml`, `**/Makefile`, `src/main.rs`.
    if is_literal(last) && !last.is_empty() && last != "." && last != ".." {
        found.push(vec![key(NAME, last)]);
    }
    // An extension: `*.rs`, `*.test.ts` (`ts`), `*.{ts,tsx}`.
    if let Some(suffix) = last.strip_prefix('*') {
        let alternatives: Vec<String> = match suffix.strip_prefix(".{") {
            Some(inner) => match inner.strip_suffix('}') {
                Some(options) if !options.contains(['{', '}']) => {
                    options.split(',').map(|alt| format!(".{alt}")).collect()
                }
                _ => Vec::new(),
            },
            None => vec![suffix.to_owned()],
        };
        let extensions: Option<Vec<String>> = alternatives
            .iter()
            .map(|alt| {
                let ext = alt.rsplit_once('.')?.1;
                (is_literal(alt) && !ext.is_empty()).then(|| key(EXTENSION, ext))
            })
            .collect();
        if let Some(extensions) = extensions.filter(|e| !e.is_empty()) {
            found.push(extensions);
        }
    }
    // A first folder: `src/**`, `docs/*.md`.
    if let Some((first, rest)) = glob.split_once('/')
        && is_literal(first)
        && !first.is_empty()
        && first != "."
        && first != ".."
        && !rest.is_empty()
    {
        found.push(vec![key(FIRST, first)]);
    }
    found
}

/// For each glob's requirements ([`glob_requirements`]), the keys to index it under: the
/// requirement whose keys the fewest of all these globs' requirements name, so that a common
/// extension or folder does not gather every rule. `None` for a glob without requirements.
pub fn choose(all: &[Vec<Vec<String>>]) -> Vec<Option<Vec<String>>> {
    let mut named: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for requirements in all {
        for key in requirements.iter().flatten() {
            *named.entry(key.as_str()).or_default() += 1;
        }
    }
    let weight = |keys: &Vec<String>| keys.iter().map(|k| named[k.as_str()]).sum::<usize>();
    all.iter()
        .map(|requirements| requirements.iter().min_by_key(|keys| weight(keys)).cloned())
        .collect()
}

/// The keys of `path` (relative to the project, `/`-separated): its extension, its file name
/// and its first component.
pub fn path_keys(path: &str) -> Vec<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let first = path.split('/').next().unwrap_or(path);
    let mut keys = vec![key(NAME, name), key(FIRST, first)];
    if let Some((_, ext)) = name.rsplit_once('.') {
        keys.push(key(EXTENSION, ext));
    }
    keys
}

fn key(kind: char, text: &str) -> String {
    format!("{kind}:{text}")
}

/// Whether `text` holds no glob syntax: every byte stands for itself.
fn is_literal(text: &str) -> bool {
    !text.contains(['*', '?', '[', ']', '{', '}', '\\', '!'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_give_the_literal_every_match_has() {
        let keys = |glob: &str| glob_requirements(glob).into_iter().next();
        let some = |keys: &[&str]| Some(keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>());
        assert_eq!(keys("**/*.rs"), some(&["e:rs"]));
        assert_eq!(keys("src/**/*.test.ts"), some(&["e:ts"]));
        assert_eq!(keys("**/*.{ts,tsx}"), some(&["e:ts", "e:tsx"]));
        assert_eq!(keys("Cargo.toml"), some(&["n:Cargo.toml"]));
        assert_eq!(keys("**/Makefile"), some(&["n:Makefile"]));
        assert_eq!(keys("src/**"), some(&["f:src"]));
        assert_eq!(keys("docs/*.md*"), some(&["f:docs"]));
        assert_eq!(
            glob_requirements("src/**/*.ts"),
            [vec!["e:ts".to_owned()], vec!["f:src".to_owned()]]
        );
        for none in [
            "**/test_*",
            "{src,lib}/**",
            "**",
            "*",
            "**/*",
            "*.{ts,*}",
            "**/*.",
            "/**/x*",
            "[ab]/**",
        ] {
            assert_eq!(keys(none), None, "{none}");
        }
    }

    /// A glob is indexed under its rarest requirement: the folders of many `.ts` globs, the
    /// extension of a glob whose folder every glob names.
    #[test]
    fn each_glob_is_indexed_under_its_rarest_requirement() {
        let globs = ["a/**/*.ts", "b/**/*.ts", "c/**/*.ts", "src/**/*.md", "src/**", "src/x/**"];
        let all: Vec<_> = globs.iter().map(|g| glob_requirements(g)).collect();
        let chosen: Vec<Option<Vec<String>>> = choose(&all);
        let chosen: Vec<&str> = chosen.iter().map(|c| c.as_ref().unwrap()[0].as_str()).collect();
        assert_eq!(chosen, ["f:a", "f:b", "f:c", "e:md", "f:src", "f:src"]);
    }

    #[test]
    fn paths_have_their_extension_name_and_first_folder() {
        assert_eq!(path_keys("src/api/x.test.ts"), ["n:x.test.ts", "f:src", "e:ts"]);
        assert_eq!(path_keys("Makefile"), ["n:Makefile", "f:Makefile"]);
        assert_eq!(path_keys("/etc/hosts"), ["n:hosts", "f:"]);
    }
}
