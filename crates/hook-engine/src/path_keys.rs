//! The literal a path rule's glob requires of every path it matches, so that a tool call is
//! checked only against the path rules that can match its path: its extension (`*.rs`,
//! `**/*.{ts,tsx}`), its file name (`Cargo.toml`, `**/Makefile`), or its first folder
//! (`src/**`, `docs/*.md`). The compiler indexes each rule whose every include glob has such a
//! key ([`glob_keys`]); a hook looks up the keys of the call's path ([`path_keys`]). A glob
//! without one (`**/test_*`, `{src,lib}/**`) leaves its rule checked on every call.
//!
//! Each key is conservative: every path the glob matches (globset, `*` not crossing `/`) has
//! that key among its [`path_keys`]. A key never decides a match; the glob still does.

/// A key's kind, its first byte: the extension after the last `.` of the file name.
const EXTENSION: char = 'e';
/// The file name (the last component).
const NAME: char = 'n';
/// The first component.
const FIRST: char = 'f';

/// The keys of the paths `glob` matches, one of which every such path has; `None` when the
/// glob requires no literal this index knows.
pub fn glob_keys(glob: &str) -> Option<Vec<String>> {
    let last = glob.rsplit('/').next().unwrap_or(glob);
    // The file name, literal: `Cargo.toml`, `**/Makefile`, `src/main.rs`.
    if is_literal(last) && !last.is_empty() && last != "." && last != ".." {
        return Some(vec![key(NAME, last)]);
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
            return Some(extensions);
        }
    }
    // A first folder: `src/**`, `docs/*.md`.
    let (first, rest) = glob.split_once('/')?;
    (is_literal(first) && !first.is_empty() && first != "." && first != ".." && !rest.is_empty())
        .then(|| vec![key(FIRST, first)])
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
        let keys = |glob: &str| glob_keys(glob);
        let some = |keys: &[&str]| Some(keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>());
        assert_eq!(keys("**/*.rs"), some(&["e:rs"]));
        assert_eq!(keys("src/**/*.test.ts"), some(&["e:ts"]));
        assert_eq!(keys("**/*.{ts,tsx}"), some(&["e:ts", "e:tsx"]));
        assert_eq!(keys("Cargo.toml"), some(&["n:Cargo.toml"]));
        assert_eq!(keys("**/Makefile"), some(&["n:Makefile"]));
        assert_eq!(keys("src/**"), some(&["f:src"]));
        assert_eq!(keys("docs/*.md*"), some(&["f:docs"]));
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

    #[test]
    fn paths_have_their_extension_name_and_first_folder() {
        assert_eq!(path_keys("src/api/x.test.ts"), ["n:x.test.ts", "f:src", "e:ts"]);
        assert_eq!(path_keys("Makefile"), ["n:Makefile", "f:Makefile"]);
        assert_eq!(path_keys("/etc/hosts"), ["n:hosts", "f:"]);
    }
}
