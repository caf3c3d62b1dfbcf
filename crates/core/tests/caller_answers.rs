//! What the core answers a caller in another language (the Node binding converts these and
//! nothing more): the measure `shouldCompact` reads, calibrations, a JS store's listing, an
//! error's signals, the check report, the format and encoding names read through the option
//! table.

use context_compact_core::archive::store::{StoreError, StoredObject};
use context_compact_core::formats::{self, Format, Input};
use context_compact_core::model::overflow::{is_context_overflow, ErrorSignals};
use context_compact_core::model::tokens::Encoding;
use context_compact_core::options::table;
use context_compact_core::pipeline::measure;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::plan::partition;
use serde_json::json;

#[test]
fn a_format_or_encoding_argument_is_refused_as_the_option_is() {
    let option = CompactOptions::from_json(&json!({ "format": "yaml" })).unwrap_err();
    let argument = table::format_named("yaml").unwrap_err();
    assert_eq!(argument.to_string(), option.to_string());
    assert!(argument.to_string().contains("\"yaml\""), "{argument}");
    assert_eq!(table::format_named("auto").unwrap(), None);
    assert_eq!(table::format_named("gemini").unwrap(), Some(Format::Gemini));

    let option = CompactOptions::from_json(&json!({ "encoding": "p50k" })).unwrap_err();
    let argument = table::encoding_named("p50k").unwrap_err();
    assert_eq!(argument.to_string(), option.to_string());
    assert_eq!(
        table::encoding_named("cl100k_base").unwrap(),
        Encoding::Cl100kBase
    );
}

#[test]
fn the_measure_says_the_window_and_what_fires_only_when_asked() {
    let options = CompactOptions {
        context_token_limit: 10_000,
        ..CompactOptions::default()
    };
    let quiet = measure::measure_counted(&options, 0, 100, None, None, 0);
    assert_eq!(quiet["window"], 10_000);
    assert!(quiet.get("trigger").is_none(), "{quiet}");

    let below = measure::measure_counted(&options, 0, 100, None, Some(3), 0);
    assert_eq!(below["trigger"], serde_json::Value::Null);
    let over = measure::measure_counted(&options, 0, 50_000, None, Some(3), 0);
    assert_eq!(over["trigger"], "tokens");
    // An empty list fires nothing, whatever its count says.
    let empty = measure::measure_counted(&options, 0, 50_000, None, Some(0), 0);
    assert_eq!(empty["trigger"], serde_json::Value::Null);
}

#[test]
fn a_usage_that_is_not_one_is_refused_and_a_usage_is_observed() {
    let error = measure::calibrate_usage(None, 1_000, "not json").unwrap_err();
    assert!(error.to_string().starts_with("options.usage"), "{error}");
    let error = measure::calibrate_usage(None, 1_000, r#"{"output_tokens": 5}"#).unwrap_err();
    assert!(error.to_string().starts_with("options.usage"), "{error}");

    let calibration = measure::calibrate_usage(None, 1_000, r#"{"input_tokens": 1200}"#).unwrap();
    assert_eq!(calibration.samples, 1);
    assert_eq!(calibration.latest, Some((1_000, 1_200)));
}

#[test]
fn an_overflow_raises_the_floor_to_what_the_error_says_or_past_the_window() {
    let options = CompactOptions {
        context_token_limit: 100_000,
        ..CompactOptions::default()
    };
    let signals = ErrorSignals::from_parts(
        &[400],
        &[],
        &["prompt is too long: 250000 tokens > 200000 maximum".to_string()],
    );
    let said = measure::calibrate_overflow(None, 100_000, &signals, &options);
    assert!(said.floor.is_some_and(|f| f >= 2.5), "{said:?}");

    // No number in the error: the request was billed past the window.
    let silent = ErrorSignals::from_parts(&[], &[], &["context length exceeded".to_string()]);
    let past = measure::calibrate_overflow(None, 50_000, &silent, &options);
    assert!(past.floor.is_some_and(|f| f > 2.0), "{past:?}");
}

#[test]
fn signals_ignore_what_is_no_http_status() {
    let none = ErrorSignals::from_parts(&[70_000 + 413], &[], &[]);
    assert!(none.statuses.is_empty());
    let overflow = ErrorSignals::from_parts(
        &[400],
        &[],
        &["This model's maximum context length is 8192 tokens".to_string()],
    );
    assert!(is_context_overflow(&overflow));
}

#[test]
fn a_listing_keeps_entries_with_a_key_and_refuses_what_is_no_list() {
    let listed = StoredObject::from_listing(
        r#"[{"key": "s/a.json", "size": 3, "lastModified": 1000},
            {"size": 4},
            {"key": "s/b.json", "lastModified": -5}]"#,
        "archiveStore.list",
    )
    .unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].key, "s/a.json");
    assert_eq!(listed[0].size, 3);
    assert!(listed[0].last_modified.is_some());
    assert_eq!(listed[1].size, 0);
    assert_eq!(listed[1].last_modified, None);
    match StoredObject::from_listing("{}", "archiveStore.list") {
        Err(StoreError::Permanent(message)) => {
            assert!(message.starts_with("archiveStore.list returned no valid list"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_check_report_names_the_callers_items() {
    // A Responses list: an output whose call is not in the list.
    let items = vec![
        json!({ "type": "message", "role": "user", "content": "hi" }),
        json!({ "type": "function_call_output", "call_id": "c1", "output": "42" }),
    ];
    let problems = formats::check_items(items, None).unwrap();
    assert!(
        problems.iter().any(|p| p.index == 1),
        "{:?}",
        problems
            .iter()
            .map(|p| (p.index, p.kind))
            .collect::<Vec<_>>()
    );
    // Items that cannot be read are a problem, not an error.
    let unreadable = vec![json!({ "type": "message", "role": "user", "content": 7 })];
    let problems = formats::check_items(unreadable, Some(Format::Responses));
    assert!(problems.is_ok());
}

#[test]
fn per_item_answers_are_said_of_the_callers_items() {
    let messages = vec![
        json!({ "role": "user", "content": "read it" }),
        json!({ "role": "assistant", "content": [
            { "type": "tool_use", "id": "t1", "name": "read", "input": {} }
        ]}),
        json!({ "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t1", "content": "abcdé" }
        ]}),
    ];
    let input = Input::read(messages, None).unwrap();
    assert_eq!(input.tool_output_bytes().unwrap(), vec![0, 0, 6]);
    let rules = partition::TailRules::default();
    let cut = partition::partition_input(&input, Encoding::O200kBase, 0, rules);
    let counts =
        context_compact_core::model::tokens::count_each(Encoding::O200kBase, input.messages());
    let direct = partition::partition(input.messages(), &counts, 0, rules);
    assert_eq!(
        (cut.head_len, cut.tail_start),
        (direct.head_len, direct.tail_start)
    );

    let gemini = vec![json!({ "role": "user", "parts": [{ "text": "hi" }] })];
    let written = formats::summary_message("the summary", &gemini, None).unwrap();
    assert!(written[0].get("parts").is_some(), "{written:?}");
}
