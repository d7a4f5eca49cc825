//! What hooks need to know of Claude's models: their context windows.

/// The window assumed when a model is not in [`context_window`]'s table.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// The context windows hookpack knows, by model id prefix (Claude Code's names; a dated id keeps
/// its prefix), the first match winning; as Claude Code 2.1.330 reports them
/// (`modelUsage.<model>.contextWindow`). Kept here, in one place, with the test below.
const WINDOWS: &[(&str, u64)] = &[
    ("claude-opus-5", 1_000_000),
    ("claude-sonnet-5", 1_000_000),
    ("claude-opus-4-7", 1_000_000),
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-haiku-4", 200_000),
    ("claude-3", 200_000),
];

/// The context window of `model` (as the transcript or a payload names it), if known: a
/// `[1m]` or `[2m]` suffix (Claude Code's extended windows) says it, else the table.
pub fn context_window(model: &str) -> Option<u64> {
    if model.ends_with("[1m]") {
        return Some(1_000_000);
    }
    if model.ends_with("[2m]") {
        return Some(2_000_000);
    }
    WINDOWS.iter().find(|(prefix, _)| model.starts_with(prefix)).map(|&(_, window)| window)
}

/// The window a context of `tokens` tokens lies in, given the window `assumed`: a context
/// already larger than the assumed window means the window is larger (the next known size; at
/// least the context), so nothing is ever more than full.
pub fn window_holding(tokens: u64, assumed: u64) -> u64 {
    if tokens < assumed {
        return assumed;
    }
    [1_000_000, 2_000_000].into_iter().find(|&w| w > tokens).unwrap_or(tokens.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_of_current_models() {
        for (model, window) in [
            ("claude-opus-5-5", Some(1_000_000)),
            ("claude-opus-4-7", Some(1_000_000)),
            ("claude-sonnet-5", Some(1_000_000)),
            ("claude-sonnet-4-5", Some(200_000)),
            ("claude-sonnet-4-5-20250929", Some(200_000)),
            ("claude-sonnet-4-5[1m]", Some(1_000_000)),
            ("claude-haiku-4-5", Some(200_000)),
            ("claude-opus-4-1", Some(200_000)),
            ("some-other-model", None),
        ] {
            assert_eq!(context_window(model), window, "{model}");
        }
    }

    #[test]
    fn a_context_is_never_more_than_its_window() {
        assert_eq!(window_holding(130_000, 200_000), 200_000);
        assert_eq!(window_holding(250_000, 200_000), 1_000_000);
        assert_eq!(window_holding(1_200_000, 1_000_000), 2_000_000);
        assert_eq!(window_holding(3_000_000, 2_000_000), 3_000_001);
    }
}
