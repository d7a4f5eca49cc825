//! The path index (`hook_engine::path_keys`) against globset, which builds the globs' automata:
//! every path a glob matches has one of the keys of each of the glob's requirements, so indexing
//! a rule under any of them never hides it from a call it matches.

use hook_engine::path_keys::{glob_requirements, path_keys};

const GLOBS: &[&str] = &[
    "**/*.rs",
    "*.rs",
    "src/**/*.ts",
    "src/**",
    "src/*",
    "docs/*.md*",
    "**/*.{ts,tsx}",
    "**/*.d.ts",
    "**/Makefile",
    "Cargo.toml",
    "crates/*/Cargo.toml",
    "**/.env",
    "*.env",
    "**/.env.*",
    ".github/workflows/*.yml",
    "migrations/**/*.sql",
    "**/*.test.*",
    "**/test_*",
    "{src,lib}/**",
    "**",
    "a/b",
    "**/node_modules/**",
];

const PATHS: &[&str] = &[
    "src/main.rs",
    "main.rs",
    ".rs",
    "src/api/x.ts",
    "src/api/x.test.ts",
    "src/api/x.tsx",
    "src/types.d.ts",
    "src",
    "src/",
    "docs/a.md",
    "docs/a.mdx",
    "Makefile",
    "tools/Makefile",
    "Cargo.toml",
    "crates/hook-engine/Cargo.toml",
    ".env",
    "app/.env",
    ".env.local",
    "app/.env.production",
    ".github/workflows/ci.yml",
    "migrations/2024/01_init.sql",
    "lib/test_x.py",
    "a/b",
    "a/b/c",
    "x/node_modules/y/z.js",
    "/etc/hosts",
    "/home/dev/src/main.rs",
    "weird name.rs",
    "dotted.dir/file",
    "no_extension",
];

#[test]
fn every_path_a_glob_matches_has_one_of_its_keys() {
    let mut indexed = 0;
    for glob in GLOBS {
        let matcher = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .unwrap()
            .compile_matcher();
        let requirements = glob_requirements(glob);
        indexed += usize::from(!requirements.is_empty());
        for keys in &requirements {
            for path in PATHS {
                if matcher.is_match(path) {
                    let found = path_keys(path);
                    assert!(
                        keys.iter().any(|k| found.contains(k)),
                        "`{glob}` matches `{path}`, which has {found:?}, none of {keys:?}"
                    );
                }
            }
        }
    }
    assert!(indexed >= 15, "most globs are indexed ({indexed})");
}
