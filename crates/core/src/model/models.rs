//! What the library knows about models: context windows and output limits (for the trigger
//! and for bounding the summary input).

/// A model family's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// Context window in tokens.
    pub context_window: usize,
    /// The most output tokens one response may have.
    pub max_output_tokens: u32,
}

/// Model name prefixes and their limits; the longest matching prefix wins, so specific
/// entries can sit beside family defaults.
const MODELS: &[(&str, ModelInfo)] = &[
    // The families with the newer tokenizer (Opus 4.7, the Claude 5 generation): 200K is the
    // window every Claude model has by default (longer ones are opt-in); a window the API
    // states in a refusal replaces it (`learnt-models.json`).
    (
        "claude-opus-4-7",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 128_000,
        },
    ),
    (
        "claude-opus-5",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 128_000,
        },
    ),
    (
        "claude-sonnet-5",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 64_000,
        },
    ),
    (
        "claude-haiku-5",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 64_000,
        },
    ),
    (
        "claude-opus-4",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 32_000,
        },
    ),
    (
        "claude-sonnet-4",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 64_000,
        },
    ),
    (
        "claude-haiku-4",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 64_000,
        },
    ),
    (
        "claude-3-7-sonnet",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 64_000,
        },
    ),
    (
        "claude-3-5-haiku",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "claude-3-5-sonnet",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "claude-3",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 4_096,
        },
    ),
    (
        "claude",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "gpt-5",
        ModelInfo {
            context_window: 400_000,
            max_output_tokens: 128_000,
        },
    ),
    (
        "gpt-4.1",
        ModelInfo {
            context_window: 1_047_576,
            max_output_tokens: 32_768,
        },
    ),
    (
        "gpt-4o",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 16_384,
        },
    ),
    (
        "gpt-4-turbo",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 4_096,
        },
    ),
    (
        "gpt-4",
        ModelInfo {
            context_window: 8_192,
            max_output_tokens: 4_096,
        },
    ),
    (
        "gpt-3.5-turbo",
        ModelInfo {
            context_window: 16_385,
            max_output_tokens: 4_096,
        },
    ),
    (
        "o1",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 100_000,
        },
    ),
    (
        "o3",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 100_000,
        },
    ),
    (
        "o4-mini",
        ModelInfo {
            context_window: 200_000,
            max_output_tokens: 100_000,
        },
    ),
    (
        "gemini-2.5",
        ModelInfo {
            context_window: 1_048_576,
            max_output_tokens: 65_536,
        },
    ),
    (
        "gemini-2.0",
        ModelInfo {
            context_window: 1_048_576,
            max_output_tokens: 8_192,
        },
    ),
    (
        "gemini-1.5-pro",
        ModelInfo {
            context_window: 2_097_152,
            max_output_tokens: 8_192,
        },
    ),
    (
        "gemini",
        ModelInfo {
            context_window: 1_048_576,
            max_output_tokens: 8_192,
        },
    ),
    (
        "deepseek-chat",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "deepseek-reasoner",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 65_536,
        },
    ),
    (
        "deepseek",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "qwen3",
        ModelInfo {
            context_window: 131_072,
            max_output_tokens: 32_768,
        },
    ),
    (
        "qwen2.5",
        ModelInfo {
            context_window: 131_072,
            max_output_tokens: 8_192,
        },
    ),
    (
        "qwen-max",
        ModelInfo {
            context_window: 32_768,
            max_output_tokens: 8_192,
        },
    ),
    (
        "qwen-plus",
        ModelInfo {
            context_window: 131_072,
            max_output_tokens: 8_192,
        },
    ),
    (
        "qwen-turbo",
        ModelInfo {
            context_window: 1_000_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "qwen",
        ModelInfo {
            context_window: 131_072,
            max_output_tokens: 8_192,
        },
    ),
    (
        "llama-3",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 4_096,
        },
    ),
    (
        "mistral-large",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 8_192,
        },
    ),
    (
        "grok-4",
        ModelInfo {
            context_window: 256_000,
            max_output_tokens: 32_768,
        },
    ),
    (
        "grok",
        ModelInfo {
            context_window: 131_072,
            max_output_tokens: 16_384,
        },
    ),
    (
        "kimi-k2",
        ModelInfo {
            context_window: 131_072,
            max_output_tokens: 16_384,
        },
    ),
    (
        "glm-4",
        ModelInfo {
            context_window: 128_000,
            max_output_tokens: 8_192,
        },
    ),
];

/// The limits of a model, matched by name prefix (case-insensitive; a provider prefix such as
/// `anthropic/` or `openai/` is ignored).
pub fn model_info(model: &str) -> Option<ModelInfo> {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    MODELS
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, info)| *info)
}

/// The context window of a model, when it is in the table.
pub fn context_window(model: &str) -> Option<usize> {
    model_info(model).map(|info| info.context_window)
}

/// The output limit of a model, when it is in the table.
pub fn max_output_tokens(model: &str) -> Option<u32> {
    model_info(model).map(|info| info.max_output_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_provider_prefixes_are_ignored() {
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(context_window("gpt-4"), Some(8_192));
        assert_eq!(context_window("openai/gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(context_window("DeepSeek-Chat"), Some(128_000));
        assert_eq!(context_window("my-local-model"), None);
        // The families the seeds' agents talk to.
        assert_eq!(context_window("gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(context_window("deepseek-reasoner"), Some(128_000));
        assert_eq!(context_window("qwen3-coder-plus"), Some(131_072));
        assert_eq!(context_window("xai/grok-4-0709"), Some(256_000));
        assert_eq!(context_window("claude-opus-4-5"), Some(200_000));
        assert_eq!(max_output_tokens("claude-opus-4-7"), Some(128_000));
        assert_eq!(max_output_tokens("claude-opus-4-5"), Some(32_000));
        assert_eq!(
            context_window("anthropic/claude-sonnet-5-20270101"),
            Some(200_000)
        );
        assert_eq!(max_output_tokens("claude-haiku-5"), Some(64_000));
    }
}
