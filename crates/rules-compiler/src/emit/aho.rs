//! Building the keyword automaton (layout: `format::keywords`).

use std::collections::VecDeque;

use hook_engine::artifact::ListRef;
use hook_engine::artifact::format::keywords::{BOUNDARY_END, BOUNDARY_START, NONE};
use hook_engine::artifact::is_word_char;

use super::writer::{push_words, to_u32};

/// The keyword section for `patterns` (distinct, ASCII-lowercased terms) with their postings.
pub(crate) fn keyword_section(patterns: &[String], postings: &[ListRef]) -> Vec<u8> {
    if patterns.is_empty() {
        return Vec::new();
    }
    let trie = Trie::build(patterns);
    let n = trie.children.len();

    let mut root = vec![0u32; 256];
    for &(byte, child) in &trie.children[0] {
        root[byte as usize] = child;
    }
    let mut states = Vec::with_capacity((n + 1) * 4);
    let (mut trans_targets, mut trans_bytes, mut outs) = (Vec::new(), Vec::new(), Vec::new());
    for node in 0..n {
        states.extend_from_slice(&[
            to_u32(trans_bytes.len()),
            to_u32(outs.len()),
            trie.fail[node],
            trie.dict[node],
            trie.depth[node],
        ]);
        // The root's transitions are in the dense root table.
        if node != 0 {
            for &(byte, child) in &trie.children[node] {
                trans_bytes.push(byte);
                trans_targets.push(child);
            }
        }
        outs.extend_from_slice(&trie.outputs[node]);
    }
    states.extend_from_slice(&[to_u32(trans_bytes.len()), to_u32(outs.len()), 0, NONE, 0]);

    let mut section = Vec::new();
    push_words(
        &mut section,
        &[to_u32(n), to_u32(patterns.len()), to_u32(trans_bytes.len()), to_u32(outs.len())],
    );
    push_words(&mut section, &root);
    push_words(&mut section, &states);
    push_words(&mut section, &trans_targets);
    section.extend_from_slice(&trans_bytes);
    while section.len() % 4 != 0 {
        section.push(0);
    }
    push_words(&mut section, &outs);
    for (pattern, posting) in patterns.iter().zip(postings) {
        let mut bits = 0;
        if pattern.chars().next().is_some_and(is_word_char) {
            bits |= BOUNDARY_START;
        }
        if pattern.chars().next_back().is_some_and(is_word_char) {
            bits |= BOUNDARY_END;
        }
        push_words(&mut section, &[to_u32(pattern.len()), bits, posting.offset, posting.len]);
    }
    section
}

/// A trie of the patterns with Aho-Corasick failure and dictionary links.
struct Trie {
    /// Per node: its children, sorted by byte.
    children: Vec<Vec<(u8, u32)>>,
    /// Per node: the patterns ending there.
    outputs: Vec<Vec<u32>>,
    /// Per node: the longest proper suffix that is also a node.
    fail: Vec<u32>,
    /// Per node: the nearest node along the failure chain with outputs, or `NONE`.
    dict: Vec<u32>,
    /// Per node: its distance from the root (the length of the text it stands for).
    depth: Vec<u32>,
}

impl Trie {
    fn build(patterns: &[String]) -> Trie {
        let mut children: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut outputs: Vec<Vec<u32>> = vec![Vec::new()];
        let mut depth: Vec<u32> = vec![0];
        for (id, pattern) in patterns.iter().enumerate() {
            let mut node = 0usize;
            for &byte in pattern.as_bytes() {
                node = match children[node].binary_search_by_key(&byte, |&(b, _)| b) {
                    Ok(i) => children[node][i].1 as usize,
                    Err(i) => {
                        let child = children.len();
                        children[node].insert(i, (byte, to_u32(child)));
                        children.push(Vec::new());
                        outputs.push(Vec::new());
                        depth.push(depth[node] + 1);
                        child
                    }
                };
            }
            outputs[node].push(to_u32(id));
        }

        let n = children.len();
        let mut fail = vec![0u32; n];
        let mut dict = vec![NONE; n];
        let mut queue = VecDeque::new();
        for &(_, child) in &children[0] {
            queue.push_back(child);
        }
        let step = |children: &[Vec<(u8, u32)>], node: u32, byte: u8| {
            children[node as usize]
                .binary_search_by_key(&byte, |&(b, _)| b)
                .ok()
                .map(|i| children[node as usize][i].1)
        };
        while let Some(node) = queue.pop_front() {
            for &(byte, child) in &children[node as usize] {
                let mut f = fail[node as usize];
                let target = loop {
                    if let Some(t) = step(&children, f, byte) {
                        break t;
                    }
                    if f == 0 {
                        break 0;
                    }
                    f = fail[f as usize];
                };
                fail[child as usize] = target;
                dict[child as usize] = if outputs[target as usize].is_empty() {
                    dict[target as usize]
                } else {
                    target
                };
                queue.push_back(child);
            }
        }
        Trie { children, outputs, fail, dict, depth }
    }
}
