//! Summary parts that fit the summary model as it counts (SPEC §13, issue 35), against loopback
//! servers that answer as the Anthropic Messages and OpenAI Chat Completions APIs do: each
//! counts the request it gets as o200k × its own factor (1.0, 1.3, 1.55, …), refuses with the
//! API's status, error body and text when the prompt and `max_tokens` exceed its window, cuts
//! the summary at `max_tokens` when it needs more room, and reports what it counted as usage.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use context_compact_core::base::error::ErrorCode;
use context_compact_core::compact;
use context_compact_core::model::encoding::Encoding;
use context_compact_core::model::tokens::{count_messages, count_text};
use context_compact_core::pipeline::{CompactOptions, CompactOutcome};
use context_compact_core::summary::summarize::{NoObserver, Summarizer};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Api {
    Anthropic,
    OpenAi,
}

/// One request the server saw.
#[derive(Debug, Clone)]
struct Seen {
    /// The prompt as the server counts it (o200k × its factor, system included).
    tokens: u64,
    max_tokens: u64,
    /// 200, or the refusal's status.
    status: u16,
    /// The prompt text, to tell requests apart.
    prompt: String,
    /// The summary was cut at `max_tokens`.
    cut: bool,
}

/// A server that counts like a model whose tokenizer yields `factor` × o200k.
#[derive(Clone)]
struct CountingServer {
    api: Api,
    window: u64,
    factor: f64,
    /// The model's output limit: a larger `max_tokens` is refused, as the APIs do.
    output_limit: u64,
    /// The summary needs this share of the prompt as output: a smaller `max_tokens` cuts it.
    output_share: f64,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl CountingServer {
    fn new(api: Api, window: u64, factor: f64, output_limit: u64) -> Self {
        CountingServer {
            api,
            window,
            factor,
            output_limit,
            output_share: 0.0,
            seen: Arc::default(),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    async fn start(&self) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(self.clone())
            .mount(&server)
            .await;
        server
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl Respond for CountingServer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).expect("a JSON body");
        let mut prompt = String::new();
        if let Some(system) = body.get("system") {
            prompt.push_str(&text_of(system));
        }
        for m in body["messages"].as_array().expect("messages") {
            prompt.push_str(&text_of(&m["content"]));
            prompt.push('\n');
        }
        let raw = count_text(Encoding::O200kBase, &prompt) + 8;
        let tokens = (raw as f64 * self.factor).ceil() as u64;
        let max_tokens = body
            .get("max_tokens")
            .or(body.get("max_completion_tokens"))
            .and_then(Value::as_u64)
            .expect("max_tokens");
        let mut seen = Seen {
            tokens,
            max_tokens,
            status: 200,
            prompt,
            cut: false,
        };
        let (w, n, out) = (self.window, tokens, max_tokens);
        let refusal = if out > self.output_limit {
            Some(match self.api {
                Api::Anthropic => format!("max_tokens: {out} > {}, which is the maximum allowed number of output tokens", self.output_limit),
                Api::OpenAi => format!("max_tokens is too large: {out}. This model supports at most {} completion tokens, whereas you provided {out}.", self.output_limit),
            })
        } else if n + out > w {
            Some(match (self.api, n > w) {
                (Api::Anthropic, true) => format!("prompt is too long: {n} tokens > {w} maximum"),
                (Api::Anthropic, false) => format!("input length and `max_tokens` exceed context limit: {n} + {out} > {w}, decrease input length or `max_tokens` and try again"),
                (Api::OpenAi, true) => format!("This model's maximum context length is {w} tokens. However, your messages resulted in {n} tokens. Please reduce the length of the messages."),
                (Api::OpenAi, false) => format!("This model's maximum context length is {w} tokens. However, you requested {} tokens ({n} in the messages, {out} in the completion). Please reduce the length of the messages or completion.", n + out),
            })
        } else {
            None
        };
        if let Some(message) = refusal {
            seen.status = 400;
            self.seen.lock().unwrap().push(seen);
            return ResponseTemplate::new(400).set_body_json(match self.api {
                Api::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}, "request_id": "req_test"}),
                Api::OpenAi => json!({"error": {"message": message, "type": "invalid_request_error", "param": "messages", "code": if message.starts_with("max_tokens") { "invalid_value" } else { "context_length_exceeded" }}}),
            });
        }
        let needed = (tokens as f64 * self.output_share) as u64;
        let cut = max_tokens < needed;
        seen.cut = cut;
        let index = {
            let mut all = self.seen.lock().unwrap();
            all.push(seen);
            all.len()
        };
        let text = format!("## Goal\nsummary written by request {index}");
        let output = if cut { max_tokens } else { 20 };
        ResponseTemplate::new(200).set_body_json(match self.api {
            Api::Anthropic => json!({
                "id": format!("msg_{index}"), "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": text}],
                "stop_reason": if cut { "max_tokens" } else { "end_turn" },
                "usage": {"input_tokens": tokens, "output_tokens": output}
            }),
            Api::OpenAi => json!({
                "id": format!("chatcmpl-{index}"), "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null}, "finish_reason": if cut { "length" } else { "stop" }}],
                "usage": {"prompt_tokens": tokens, "completion_tokens": output}
            }),
        })
    }
}

fn summarizer(api: Api, server: &MockServer, model: &str) -> Box<dyn Summarizer> {
    let provider = match api {
        Api::Anthropic => "anthropic",
        Api::OpenAi => "openai",
    };
    let options = json!({ "provider": provider, "apiKey": "sk-test", "baseUrl": server.uri(), "model": model });
    context_compact_core::options::providers::from_options_with_env(&options, &|_| None)
        .expect("valid options")
}

/// A coding session of `turns` turns, each message about `words` words of varied prose and
/// paths (about 1.3 tokens a word).
fn prose_session(turns: usize, words: usize) -> Vec<Value> {
    let vocabulary = [
        "refactor",
        "the",
        "parser",
        "module",
        "handles",
        "nested",
        "expressions",
        "src/lib.rs",
        "failing",
        "test",
        "cargo",
        "build",
        "returns",
        "error",
        "because",
        "lifetime",
        "borrow",
        "checker",
        "fixed",
        "by",
        "cloning",
        "value",
        "before",
        "loop",
        "index",
        "42",
        "branch",
    ];
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for t in 0..turns {
        for role in ["user", "assistant"] {
            let text: Vec<String> = (0..words)
                .map(|w| {
                    let word = vocabulary[(t * 7 + w * 13 + role.len()) % vocabulary.len()];
                    if w % 17 == 0 {
                        format!("{word}_{t}_{w}")
                    } else {
                        word.to_string()
                    }
                })
                .collect();
            messages.push(
                json!({"role": role, "content": format!("{role} turn {t}: {}", text.join(" "))}),
            );
        }
    }
    messages
}

/// A session dense with ids and hashes: tool output of commit hashes and UUIDs, about two
/// characters a token.
fn hash_session(turns: usize, hashes: usize) -> Vec<Value> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for t in 0..turns {
        messages.push(json!({"role": "user", "content": format!("list the objects of step {t}")}));
        let lines: Vec<String> = (0..hashes)
            .map(|_| {
                format!(
                    "{:016x}{:016x} {:08x}-{:04x}",
                    next(),
                    next(),
                    next() as u32,
                    next() as u16
                )
            })
            .collect();
        messages.push(json!({"role": "assistant", "content": lines.join("\n")}));
    }
    messages
}

fn options(dir: &std::path::Path, model: &str) -> CompactOptions {
    CompactOptions {
        force: true,
        model: Some(model.to_string()),
        context_token_limit: 200_000,
        max_retries: 2,
        retry_base_delay: Duration::ZERO,
        output_dir: dir.into(),
        ..Default::default()
    }
}

async fn compact_with(
    messages: &[Value],
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
) -> CompactOutcome {
    compact(
        messages,
        None,
        options,
        summarizer,
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .expect("valid input")
}

/// What every test asserts: the compaction succeeded; every request the server accepted was
/// within its window; no request was sent twice; the usage counts every accepted request; and
/// the refusals are at most `max_refusals`, each told in the warnings.
fn assert_fits(
    outcome: &CompactOutcome,
    server: &CountingServer,
    max_refusals: usize,
) -> Vec<Seen> {
    assert!(
        outcome.compacted,
        "{:?} {:?}",
        outcome.error, outcome.warnings
    );
    let seen = server.seen();
    for (i, s) in seen.iter().enumerate() {
        if s.status == 200 {
            assert!(
                s.tokens + s.max_tokens <= server.window,
                "request {i}: {} + {} > {}",
                s.tokens,
                s.max_tokens,
                server.window
            );
        }
        for (j, other) in seen.iter().enumerate().take(i) {
            assert!(
                !(other.prompt == s.prompt && other.max_tokens == s.max_tokens),
                "request {i} is request {j} again"
            );
        }
    }
    let refused = seen.iter().filter(|s| s.status != 200).count();
    assert!(
        refused <= max_refusals,
        "{refused} refusals: {:?}",
        outcome.warnings
    );
    let told = outcome
        .warnings
        .iter()
        .filter(|w| w.contains("the summary model refused a part of"))
        .count();
    assert_eq!(told, refused, "{:?}", outcome.warnings);
    let accepted = seen.iter().filter(|s| s.status == 200).count() as u64;
    let usage = outcome.summary_usage.expect("usage");
    assert_eq!(usage.requests, accepted);
    assert_eq!(
        usage.input_tokens,
        seen.iter()
            .filter(|s| s.status == 200)
            .map(|s| s.tokens)
            .sum::<u64>()
    );
    seen
}

fn middle_tokens(messages: &[Value], outcome: &CompactOutcome) -> usize {
    let plan = outcome.partition.as_ref().expect("a partition");
    count_messages(
        Encoding::O200kBase,
        &messages[plan.head_len..plan.tail_start],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_700k_middle_on_a_200k_claude_that_counts_1_3x() {
    let server = CountingServer::new(Api::Anthropic, 200_000, 1.3, 64_000);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(360, 750);
    let s = summarizer(Api::Anthropic, &mock, "claude-sonnet-4-5");
    let outcome = compact_with(
        &messages,
        &options(dir.path(), "claude-sonnet-4-5"),
        s.as_ref(),
    )
    .await;
    assert!(middle_tokens(&messages, &outcome) > 700_000);
    // Claude's factor (1.35) covers a model counting 1.3×: no refusal.
    let seen = assert_fits(&outcome, &server, 0);
    assert!(seen.len() >= 5, "{} parts", seen.len());
    // Each part but the last fills most of the window: as few parts as fit.
    for s in &seen[..seen.len() - 1] {
        assert!(s.tokens > 150_000, "a part of {} tokens", s.tokens);
    }
    let learnt = outcome.summary_model_learnt.expect("usage taught a factor");
    assert_eq!(learnt.model, "claude-sonnet-4-5");
    let factor = learnt.factor.unwrap();
    assert!((1.25..=1.31).contains(&factor), "{factor}");
    assert_eq!(learnt.window, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_700k_middle_on_a_200k_claude_that_counts_1_55x() {
    let server = CountingServer::new(Api::Anthropic, 200_000, 1.55, 64_000);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(360, 750);
    let s = summarizer(Api::Anthropic, &mock, "claude-sonnet-4-5");
    let outcome = compact_with(
        &messages,
        &options(dir.path(), "claude-sonnet-4-5"),
        s.as_ref(),
    )
    .await;
    assert!(middle_tokens(&messages, &outcome) > 700_000);
    // The first part, sized for 1.35×, is refused; its count and maximum size the rest.
    let seen = assert_fits(&outcome, &server, 1);
    assert_eq!(seen[0].status, 400);
    let warning = outcome
        .warnings
        .iter()
        .find(|w| w.contains("refused"))
        .unwrap();
    assert!(
        warning.contains(&format!(
            "a part of {} tokens (maximum 200000)",
            seen[0].tokens
        )) && warning.contains("it was split into 2 parts"),
        "{warning}"
    );
    // Split by about M/N: the next request is under the window.
    assert_eq!(seen[1].status, 200);
    let learnt = outcome.summary_model_learnt.unwrap();
    assert_eq!(learnt.window, Some(200_000));
    assert!(learnt.factor.unwrap() > 1.5, "{learnt:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middle_that_fits_by_o200k_but_not_as_the_model_counts() {
    // gpt-4o-mini reads 128K tokens; the middle is ~100K by o200k, ~130K as this server counts.
    let server = CountingServer::new(Api::OpenAi, 128_000, 1.3, 16_384);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(66, 750);
    let s = summarizer(Api::OpenAi, &mock, "gpt-4o-mini");
    let outcome = compact_with(&messages, &options(dir.path(), "gpt-4o-mini"), s.as_ref()).await;
    let middle = middle_tokens(&messages, &outcome);
    assert!((90_000..120_000).contains(&middle), "{middle}");
    let seen = assert_fits(&outcome, &server, 1);
    // Sent whole (it fits by our count), refused with `context_length_exceeded`, then in parts.
    assert_eq!(seen[0].status, 400);
    assert!(seen.len() >= 3);
    let warning = outcome
        .warnings
        .iter()
        .find(|w| w.contains("refused"))
        .unwrap();
    assert!(warning.contains("(maximum 128000)"), "{warning}");
    assert!(outcome.summary_model_learnt.unwrap().factor.unwrap() > 1.25);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hash_dense_middle_on_gpt_4o_mini() {
    // ~2 characters a token: characters would undercount it by a third. Counted exactly, every
    // part fits at once.
    let server = CountingServer::new(Api::OpenAi, 128_000, 1.0, 16_384);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = hash_session(60, 230);
    let s = summarizer(Api::OpenAi, &mock, "gpt-4o-mini");
    let outcome = compact_with(&messages, &options(dir.path(), "gpt-4o-mini"), s.as_ref()).await;
    let plan = outcome.partition.as_ref().unwrap();
    let middle = &messages[plan.head_len..plan.tail_start];
    let tokens = count_messages(Encoding::O200kBase, middle);
    let chars: usize = middle
        .iter()
        .map(|m| m["content"].as_str().unwrap().len())
        .sum();
    assert!(tokens > 250_000, "{tokens}");
    assert!(
        (chars as f64 / tokens as f64) < 2.6,
        "{chars} chars, {tokens} tokens"
    );
    let seen = assert_fits(&outcome, &server, 0);
    assert!(seen.len() >= 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_request_refused_as_too_long_falls_back_to_parts() {
    // The loop's own request fits by the agent's estimate (1.35×) but this model counts 1.6×.
    let server = CountingServer::new(Api::Anthropic, 200_000, 1.6, 64_000);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(64, 750);
    let mut opts = options(dir.path(), "claude-sonnet-4-5");
    opts.agent_model = Some("claude-sonnet-4-5".into());
    let mut agent = Map::new();
    agent.insert("model".into(), json!("claude-sonnet-4-5"));
    agent.insert("max_tokens".into(), json!(8192));
    agent.insert("system".into(), json!("You are a coding agent."));
    opts.agent_request = Some(Arc::new(agent));
    opts.summary_request = context_compact_core::options::SummaryRequestMode::Shared;
    let anthropic_messages: Vec<Value> = messages[1..].to_vec();
    let s = summarizer(Api::Anthropic, &mock, "claude-sonnet-4-5");
    let outcome = compact_with(&anthropic_messages, &opts, s.as_ref()).await;
    assert!(
        outcome.compacted,
        "{:?} {:?}",
        outcome.error, outcome.warnings
    );
    let seen = server.seen();
    assert_eq!(seen[0].status, 400, "the shared request is refused");
    assert!(
        outcome.warnings.iter().any(|w| w
            .contains("the shared summary request failed (BAD_REQUEST")
            && w.contains("prompt is too long")),
        "{:?}",
        outcome.warnings
    );
    assert_eq!(
        outcome.summary_request,
        Some(context_compact_core::summary::summarize::SummaryRequestKind::Transcript)
    );
    // The transcript parts, sized with the count and maximum the shared refusal stated: none
    // is refused.
    for (i, s) in seen.iter().enumerate().skip(1) {
        assert_eq!(s.status, 200, "request {i}");
        assert!(s.tokens + s.max_tokens <= 200_000, "request {i}");
    }
    assert!(seen.len() >= 2);
    let learnt = outcome.summary_model_learnt.unwrap();
    assert_eq!(learnt.window, Some(200_000));
    assert!(learnt.factor.unwrap() > 1.5, "{learnt:?}");
    let usage = outcome.summary_usage.unwrap();
    assert_eq!(
        usage.requests,
        seen.iter().filter(|s| s.status == 200).count() as u64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_summary_is_asked_again_with_more_room() {
    // The summary needs a tenth of the prompt: ~6K tokens for a 60K part.
    let mut server = CountingServer::new(Api::Anthropic, 200_000, 1.0, 64_000);
    server.output_share = 0.1;
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(40, 750);
    let s = summarizer(Api::Anthropic, &mock, "claude-sonnet-4-5");
    let mut opts = options(dir.path(), "claude-sonnet-4-5");
    opts.summary_max_tokens = 2048;
    let outcome = compact_with(&messages, &opts, s.as_ref()).await;
    let seen = assert_fits(&outcome, &server, 0);
    assert!(seen[0].cut && !seen.last().unwrap().cut);
    let sequence: Vec<u64> = seen.iter().map(|s| s.max_tokens).collect();
    assert!(sequence.windows(2).all(|w| w[0] < w[1]), "{sequence:?}");
    assert_eq!(sequence[0], 2048);
    assert_eq!(*sequence.last().unwrap(), 8192, "{sequence:?}");
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("cut at max_tokens 2048; it was asked again with max_tokens 4096")),
        "{:?}",
        outcome.warnings
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_summary_at_the_output_limit_is_split() {
    // claude-3-5-haiku writes at most 8 192 tokens; a summary needs a fifth of its part.
    let mut server = CountingServer::new(Api::Anthropic, 200_000, 1.0, 8_192);
    server.output_share = 0.2;
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(60, 750);
    let s = summarizer(Api::Anthropic, &mock, "claude-3-5-haiku");
    let mut opts = options(dir.path(), "claude-3-5-haiku");
    opts.summary_max_tokens = 8_192;
    let outcome = compact_with(&messages, &opts, s.as_ref()).await;
    let seen = assert_fits(&outcome, &server, 0);
    assert!(seen.iter().all(|s| s.max_tokens == 8_192));
    assert!(
        outcome.warnings.iter().any(|w| w.contains(
            "cut at the summary model's output limit (8192 tokens); it was split in two"
        )),
        "{:?}",
        outcome.warnings
    );
    // Cut, then split until each part's summary fits what the model can write.
    assert!(seen.iter().any(|s| s.cut));
    for s in seen.iter().filter(|s| !s.cut) {
        assert!((s.tokens as f64 * 0.2) as u64 <= 8_192, "{}", s.tokens);
    }
    assert!(!seen.last().unwrap().cut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_refusals_of_a_part_fail_with_a_clear_error() {
    // A server whose window is far below what it states: every request is refused, with a
    // count and a maximum that never make the part fit.
    struct Liar(Arc<Mutex<u32>>);
    impl Respond for Liar {
        fn respond(&self, _request: &Request) -> ResponseTemplate {
            *self.0.lock().unwrap() += 1;
            ResponseTemplate::new(400).set_body_json(json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}))
        }
    }
    let count = Arc::new(Mutex::new(0));
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Liar(count.clone()))
        .mount(&mock)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(30, 300);
    let s = summarizer(Api::Anthropic, &mock, "claude-sonnet-4-5");
    let outcome = compact_with(
        &messages,
        &options(dir.path(), "claude-sonnet-4-5"),
        s.as_ref(),
    )
    .await;
    assert!(!outcome.compacted);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ErrorCode::BadRequest);
    assert!(
        error.message.contains("refused a part as too long 3 times"),
        "{}",
        error.message
    );
    assert_eq!(*count.lock().unwrap(), 3);
    assert_eq!(outcome.summary_model_learnt.unwrap().window, Some(200_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_without_numbers_halves_the_part() {
    // Bedrock's text states neither the count nor the maximum.
    #[derive(Clone)]
    struct Bedrockish(Arc<Mutex<Vec<u64>>>);
    impl Respond for Bedrockish {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let prompt = text_of(&body["messages"][0]["content"]);
            let tokens = count_text(Encoding::O200kBase, &prompt) as u64;
            self.0.lock().unwrap().push(tokens);
            if tokens > 30_000 {
                return ResponseTemplate::new(400)
                    .set_body_json(json!({"message": "Input is too long for requested model."}));
            }
            ResponseTemplate::new(200).set_body_json(json!({
                "type": "message", "role": "assistant", "content": [{"type": "text", "text": "## Goal\nok"}],
                "stop_reason": "end_turn", "usage": {"input_tokens": tokens, "output_tokens": 5}
            }))
        }
    }
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Bedrockish(sizes.clone()))
        .mount(&mock)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(40, 500);
    let s = summarizer(Api::Anthropic, &mock, "claude-sonnet-4-5");
    let mut opts = options(dir.path(), "claude-sonnet-4-5");
    // The window as configured is larger than the model's real one.
    opts.summary_context_tokens = Some(100_000);
    let outcome = compact_with(&messages, &opts, s.as_ref()).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    let sizes = sizes.lock().unwrap().clone();
    // Halved until under 30K: 2 refusals at most for the first part, none after (the ceiling
    // holds for the later parts).
    let refused: Vec<u64> = sizes.iter().copied().filter(|t| *t > 30_000).collect();
    assert!((1..=2).contains(&refused.len()), "{sizes:?}");
    for pair in refused.windows(2) {
        assert!(pair[1] < pair[0] * 6 / 10, "{sizes:?}");
    }
    assert!(
        sizes[refused.len()..].iter().all(|t| *t <= 30_000),
        "{sizes:?}"
    );
    assert!(outcome
        .warnings
        .iter()
        .any(|w| w.contains("tokens by our count") && w.contains("split into")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn learnt_facts_size_the_first_part() {
    // A window and a factor learnt earlier (the session store's) are used before any usage.
    let server = CountingServer::new(Api::OpenAi, 64_000, 1.5, 16_384);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let messages = prose_session(40, 750);
    let s = summarizer(Api::OpenAi, &mock, "gpt-4o-mini");
    let mut opts = options(dir.path(), "gpt-4o-mini");
    opts.summary_window_learnt = Some(64_000);
    opts.summary_factor_learnt = Some(1.5);
    let outcome = compact_with(&messages, &opts, s.as_ref()).await;
    assert_fits(&outcome, &server, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_message_larger_than_the_window_is_clipped_to_fit() {
    // A user message of ~150K tokens on a model that reads 128K: its part is rendered with its
    // text clipped (head and tail kept), never sent as it is.
    let server = CountingServer::new(Api::OpenAi, 128_000, 1.0, 16_384);
    let mock = server.start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut messages = prose_session(4, 200);
    let huge = prose_session(100, 750)
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    messages.insert(
        2,
        json!({"role": "user", "content": format!("HEAD-MARKER {huge} TAIL-MARKER")}),
    );
    messages.extend(prose_session(60, 200).into_iter().skip(1));
    let s = summarizer(Api::OpenAi, &mock, "gpt-4o-mini");
    let outcome = compact_with(&messages, &options(dir.path(), "gpt-4o-mini"), s.as_ref()).await;
    let seen = assert_fits(&outcome, &server, 0);
    let clipped = seen
        .iter()
        .find(|s| s.prompt.contains("HEAD-MARKER"))
        .expect("the message's part");
    assert!(
        clipped.prompt.contains("TAIL-MARKER") && clipped.prompt.contains("characters omitted")
    );
}
