//! Writing the artifact (layout: `hook_engine::artifact::format`).

mod aho;
mod dfa;
mod writer;

pub(crate) use aho::keyword_section;
pub(crate) use dfa::{
    MatcherSection, encode_prefilter, glob_dfa, regex_dfa, regex_prefilter, regex_reverse_dfa,
};
pub(crate) use writer::Writer;

pub(crate) use hook_engine::artifact::sources::fnv1a;
