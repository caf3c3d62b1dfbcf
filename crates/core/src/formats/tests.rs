//! Unit tests of the format readers: detection, views, grouping and writing back.

use serde_json::{json, Value};

use super::*;

fn items(value: Value) -> Vec<Value> {
    value.as_array().unwrap().clone()
}

#[test]
fn detection_names_each_format_and_refuses_mixed_lists() {
    let cases = [
        (
            json!([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]),
            Format::Responses,
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "f", "output": {"type": "text", "value": "x"}}]}]),
            Format::AiSdk,
        ),
        (
            json!([{"role": "model", "parts": [{"text": "hi"}]}]),
            Format::Gemini,
        ),
        (
            json!([{"role": "user", "content": [{"text": "hi"}]}]),
            Format::Bedrock,
        ),
        (
            json!([{"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {"content": "hi"}}]),
            Format::LangChain,
        ),
        (json!([{"role": "user", "content": "hi"}]), Format::Native),
        (
            json!([{"role": "developer", "content": "d"}, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]),
            Format::Responses,
        ),
        // Anthropic's own response objects are `type: 'message'` too.
        (
            json!([{"type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]),
            Format::Native,
        ),
    ];
    for (list, expected) in cases {
        assert_eq!(
            detect(&items(list.clone()), None).unwrap(),
            expected,
            "{list}"
        );
    }
    let mixed = items(json!([
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}
    ]));
    let error = detect(&mixed, None).unwrap_err();
    assert_eq!(error.index, Some(1));
    assert!(
        error
            .to_string()
            .contains("messages[0] is a Gemini content"),
        "{error}"
    );
    // The option overrides detection.
    assert_eq!(
        detect(&mixed, Some(Format::Gemini)).unwrap(),
        Format::Gemini
    );
}

#[test]
fn a_responses_turn_is_one_view_message_and_its_outputs_another() {
    let list = items(json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "plan"}]},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{\"path\":\"x\"}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
    ]));
    let view = view(Format::Responses, &list).unwrap();
    assert_eq!(view.groups, vec![0..1, 1..4, 4..6, 6..7]);
    assert_eq!(view.messages[0]["content"], "go");
    assert_eq!(
        view.messages[1]["content"][1]["input"],
        json!({"path": "x"})
    );
    assert_eq!(view.messages[2]["content"][1]["tool_use_id"], "b");
    assert!(crate::model::check::check_conversation(&view.messages).is_empty());
}

#[test]
fn gemini_responses_without_ids_answer_the_calls_in_order() {
    let list = items(json!([
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "b", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "b", "response": {"output": "2"}}}, {"functionResponse": {"name": "a", "response": {"output": "1"}}}]}
    ]));
    let view = view(Format::Gemini, &list).unwrap();
    let calls = &view.messages[1]["content"];
    let results = &view.messages[2]["content"];
    assert_eq!(results[0]["tool_use_id"], calls[1]["id"]);
    assert_eq!(results[1]["tool_use_id"], calls[0]["id"]);
    assert!(crate::model::check::check_conversation(&view.messages).is_empty());
}

#[test]
fn errors_name_the_item_and_field() {
    let list = items(
        json!([{"role": "assistant", "content": [{"type": "tool-call", "toolName": "f", "input": {}}]}]),
    );
    let error = view(Format::AiSdk, &list).unwrap_err();
    assert_eq!(
        error.to_string(),
        "messages[0].content[0].toolCallId is missing"
    );
    let list = items(json!([{"type": "function_call_output", "output": "x"}]));
    let error = view(Format::Responses, &list).unwrap_err();
    assert_eq!(error.to_string(), "messages[0].call_id is missing");
}

#[test]
fn an_unchanged_view_message_writes_back_its_items_and_a_changed_one_edits_them() {
    let list = items(json!([
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "hmm", "providerOptions": {"anthropic": {"signature": "s"}}},
            {"type": "tool-call", "toolCallId": "t", "toolName": "f", "input": {}}
        ]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t", "toolName": "f", "output": {"type": "text", "value": "long"}}]}
    ]));
    let view = view(Format::AiSdk, &list).unwrap();
    assert_eq!(
        to_format(Format::AiSdk, &view.messages[0]),
        vec![list[0].clone()]
    );
    // Thinking removed: the reasoning part goes, the rest of the item stays.
    let mut stripped = view.messages[0].clone();
    stripped["content"].as_array_mut().unwrap().remove(0);
    let written = to_format(Format::AiSdk, &stripped);
    assert_eq!(written[0]["content"].as_array().unwrap().len(), 1);
    assert_eq!(written[0]["content"][0]["type"], "tool-call");
    // A shortened result: the item's output says the new text.
    let mut shortened = view.messages[1].clone();
    shortened["content"][0]["content"] = json!("short");
    let written = to_format(Format::AiSdk, &shortened);
    assert_eq!(
        written[0]["content"][0]["output"],
        json!({"type": "text", "value": "short"})
    );
    assert_eq!(written[0]["content"][0]["toolCallId"], "t");
}

#[test]
fn our_summary_is_written_in_each_format_and_read_back_as_a_summary() {
    let text = format!(
        "{}Earlier conversation (3 messages) was compacted.",
        crate::model::added::SUMMARY_PREFIX
    );
    let summary = json!({"role": "user", "content": text});
    for format in [
        Format::Responses,
        Format::AiSdk,
        Format::Gemini,
        Format::Bedrock,
        Format::LangChain,
    ] {
        let written = to_format(format, &summary);
        assert_eq!(written.len(), 1);
        assert_eq!(
            signature_of(&written[0]).unwrap_or(format),
            format,
            "{format:?}"
        );
        let view = view(format, &written).unwrap();
        assert!(
            crate::model::added::is_summary_message(&view.messages[0]),
            "{format:?}: {}",
            view.messages[0]
        );
    }
}

#[test]
fn item_counts_add_up_to_the_view_counts() {
    let list = items(json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "count these words please"}]},
        {"type": "function_call", "call_id": "a", "name": "read_file", "arguments": "{\"path\":\"src/main.rs\"}"},
        {"type": "function_call", "call_id": "b", "name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"},
        {"type": "function_call_output", "call_id": "a", "output": "fn main() {}"},
        {"type": "function_call_output", "call_id": "b", "output": "pub mod x;"}
    ]));
    let encoding = crate::model::tokens::Encoding::default();
    let mut counter = ItemCounter::new(None);
    for (i, item) in list.iter().enumerate() {
        counter.push(encoding, i, item.clone()).unwrap();
    }
    let per_item = counter.finish();
    let input = Input::read(list, None).unwrap();
    let view_counts = crate::model::tokens::count_each(encoding, input.messages());
    assert_eq!(input.counts(per_item), view_counts);
}

#[test]
fn a_summary_before_a_kept_user_turn_gets_a_model_turn_where_roles_must_alternate() {
    let summary = json!({"role": "user", "content": format!("{}summary", crate::model::added::SUMMARY_PREFIX)});
    for (format, list) in [
        (
            Format::Bedrock,
            json!([
                {"role": "user", "content": [{"text": "old"}]}, {"role": "assistant", "content": [{"text": "a"}]},
                {"role": "user", "content": [{"text": "new"}]}, {"role": "assistant", "content": [{"text": "b"}]}
            ]),
        ),
        (
            Format::Gemini,
            json!([
                {"role": "user", "parts": [{"text": "old"}]}, {"role": "model", "parts": [{"text": "a"}]},
                {"role": "user", "parts": [{"text": "new"}]}, {"role": "model", "parts": [{"text": "b"}]}
            ]),
        ),
    ] {
        let list = items(list);
        let input = Input::read(list.clone(), None).unwrap();
        let pieces = vec![
            Piece::New(summary.clone()),
            Piece::Original(2),
            Piece::Original(3),
        ];
        let (out, positions) = input.view.as_ref().unwrap().to_items(&list, pieces);
        assert_eq!(out.len(), 4, "{format:?}");
        assert_eq!(positions, vec![0, 2, 3]);
        let Piece::New(ack) = &out[1] else {
            panic!("{format:?}: no acknowledgement")
        };
        assert!(!is_user(ack) && first_text(ack) == SUMMARY_ACK, "{ack}");
        // No acknowledgement before a model turn, nor in formats that accept two user turns.
        let (out, _) = input
            .view
            .as_ref()
            .unwrap()
            .to_items(&list, vec![Piece::New(summary.clone()), Piece::Original(3)]);
        assert_eq!(out.len(), 2);
    }
}

#[test]
fn the_model_turn_after_a_summary_is_part_of_the_summary_in_the_view() {
    let summary = json!({"role": "user", "content": format!("{}summary", crate::model::added::SUMMARY_PREFIX)});
    let list = items(json!([{"role": "user", "content": [{"text": "new"}]}]));
    let input = Input::read(list.clone(), None).unwrap();
    let (out, _) = input
        .view
        .as_ref()
        .unwrap()
        .to_items(&list, vec![Piece::New(summary), Piece::Original(0)]);
    let compacted: Vec<Value> = out
        .into_iter()
        .map(|piece| match piece {
            Piece::New(item) => item,
            Piece::Original(i) => list[i].clone(),
        })
        .collect();
    assert_eq!(compacted.len(), 3);
    let view = view(Format::Bedrock, &compacted).unwrap();
    assert_eq!(view.groups, vec![0..2, 2..3]);
    assert!(crate::model::added::is_summary_message(&view.messages[0]));
    // Written back unchanged, the summary's message is both items.
    assert_eq!(
        to_format(Format::Bedrock, &view.messages[0]),
        compacted[..2].to_vec()
    );
    // The turn starts with the marker, as every message the library adds; a list compacted
    // before it did, whose turn has no marker, reads the same.
    assert!(first_text(&compacted[1]).starts_with(crate::model::added::SUMMARY_PREFIX));
    let mut legacy = compacted.clone();
    legacy[1] = json!({"role": "assistant", "content": [{"text": "Understood; continuing from the summary."}]});
    let legacy_view = super::view(Format::Bedrock, &legacy).unwrap();
    assert_eq!(legacy_view.groups, vec![0..2, 2..3]);
}

#[test]
fn a_responses_image_counts_as_the_openai_image_it_is_billed_as() {
    // OpenAI bills a Responses `input_image` (and a computer call's screenshot) by the same
    // tile rule as a Chat Completions `image_url`, not by Anthropic's pixel rule.
    let url = "https://example.com/cat.jpg";
    let encoding = crate::model::tokens::Encoding::default();
    let count = |item: Value| {
        let mut counter = ItemCounter::new(None);
        counter.push(encoding, 0, item).unwrap();
        counter.finish()[0]
    };
    for detail in ["low", "high", "auto"] {
        let responses = count(json!({"type": "message", "role": "user",
            "content": [{"type": "input_image", "image_url": url, "detail": detail}]}));
        let chat = count(json!({"role": "user",
            "content": [{"type": "image_url", "image_url": {"url": url, "detail": detail}}]}));
        assert_eq!(responses, chat, "{detail}");
    }
    let screenshot = count(json!({"type": "computer_call_output", "call_id": "c",
        "output": {"type": "computer_screenshot", "image_url": url}}));
    let chat = count(json!({"role": "user",
        "content": [{"type": "image_url", "image_url": {"url": url, "detail": "auto"}}]}));
    assert_eq!(screenshot, chat);
}

#[test]
fn a_block_of_a_view_message_is_found_in_the_item_that_holds_it() {
    // Three parallel outputs are one view message of three blocks, one per item.
    let list = items(json!([
        {"type": "message", "role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"},
        {"type": "function_call_output", "call_id": "c", "output": "3"}
    ]));
    let view = view(Format::Responses, &list).unwrap();
    assert_eq!(view.groups[2], 4..7);
    for block in 0..3 {
        assert_eq!(view.item_of_block(&list, 2, block), 4 + block);
    }
    assert_eq!(view_block_of_path("messages.2.content.1.content"), 1);
    assert_eq!(view_block_of_path("messages.2.content"), 0);
}

#[test]
fn a_changed_run_gives_back_the_items_it_left_alone_as_the_callers_own() {
    let list = items(json!([
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "small"},
        {"type": "function_call_output", "call_id": "b", "output": "very long output"}
    ]));
    let view = view(Format::Responses, &list).unwrap();
    // The second output shortened, as the fit step does.
    let mut changed = view.messages[1].clone();
    changed["content"][1]["content"] = json!("short");
    let (pieces, positions) = view.to_items(&list, vec![Piece::Original(0), Piece::New(changed)]);
    assert_eq!(positions, vec![0, 2]);
    assert_eq!(
        pieces,
        vec![
            Piece::Original(0),
            Piece::Original(1),
            Piece::Original(2),
            Piece::New(json!({"type": "function_call_output", "call_id": "b", "output": "short"})),
        ]
    );
}

#[test]
fn counting_item_by_item_refuses_what_reading_the_whole_list_refuses() {
    let encoding = crate::model::tokens::Encoding::default();
    // A `system` message has no place in a Bedrock list, which only its third item reveals.
    let list = items(json!([
        {"role": "system", "content": "x"},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": [{"text": ""}]}
    ]));
    let whole = Input::read(list.clone(), None).unwrap_err();
    let mut counter = ItemCounter::new(None);
    let error = list
        .into_iter()
        .enumerate()
        .try_for_each(|(i, item)| counter.push(encoding, i, item))
        .unwrap_err();
    assert_eq!(error, whole);
    assert_eq!(error.index, Some(0));
}

/// A view's messages without the items they stand for: what counting, pairing and the
/// summarizer read.
fn view_blocks(view: &View) -> Vec<Value> {
    view.messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.as_object_mut().unwrap().remove(SOURCE_KEY);
            m
        })
        .collect()
}

/// The OpenAI Agents SDK's items (`AgentInputItem`, as its sessions store them) and the
/// Responses items its model class sends for them (`getInputItems` of `@openai/agents-openai`).
fn agents_sdk_and_wire() -> (Vec<Value>, Vec<Value>) {
    let png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let sdk = items(json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "input_text", "text": "What is in this picture and in notes.pdf?"},
            {"type": "input_image", "image": png, "detail": "low"},
            {"type": "input_file", "file": {"id": "file_123"}, "filename": "notes.pdf"}
        ]},
        {"type": "reasoning", "id": "rs_1", "content": [{"type": "input_text", "text": "Read the file first."}],
         "rawContent": [{"type": "reasoning_text", "text": "raw chain of thought, never sent"}],
         "providerData": {"encryptedContent": "gAAAAB-encrypted"}},
        {"type": "function_call", "id": "fc_1", "callId": "call_a", "name": "read_file",
         "arguments": "{\"path\":\"src/main.rs\"}", "status": "completed", "providerData": {"x": 1}},
        {"type": "shell_call", "callId": "call_b", "status": "completed",
         "action": {"commands": ["ls -la", "cat Cargo.toml"], "timeoutMs": 1000}},
        {"type": "function_call_result", "callId": "call_a", "name": "read_file", "status": "completed",
         "output": {"type": "text", "text": "fn main() { println!(\"hi\"); }"}},
        {"type": "shell_call_output", "callId": "call_b",
         "output": [{"stdout": "total 8\nCargo.toml", "stderr": "", "outcome": {"type": "exit", "exitCode": 0}},
                    {"stdout": "[package]", "stderr": "warning", "outcome": {"type": "exit", "exitCode": 0}}]},
        {"type": "apply_patch_call", "callId": "call_c", "status": "completed",
         "operation": {"type": "update_file", "path": "src/main.rs", "diff": "-hi\n+hello"}},
        {"type": "apply_patch_call_output", "callId": "call_c", "status": "completed", "output": "Done"},
        {"type": "function_call", "callId": "call_d", "name": "screenshot", "arguments": "{}"},
        {"type": "function_call_result", "callId": "call_d", "name": "screenshot", "status": "completed",
         "output": [{"type": "input_text", "text": "here"}, {"type": "input_image", "image": png}]},
        {"type": "message", "role": "assistant", "status": "completed", "id": "msg_1",
         "content": [{"type": "output_text", "text": "A one-pixel image and a short file."}]}
    ]));
    let wire = items(json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "input_text", "text": "What is in this picture and in notes.pdf?"},
            {"type": "input_image", "image_url": png, "detail": "low"},
            {"type": "input_file", "file_id": "file_123", "filename": "notes.pdf"}
        ]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Read the file first."}],
         "encrypted_content": "gAAAAB-encrypted"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "read_file",
         "arguments": "{\"path\":\"src/main.rs\"}", "status": "completed"},
        {"type": "shell_call", "call_id": "call_b", "status": "completed",
         "action": {"commands": ["ls -la", "cat Cargo.toml"], "timeout_ms": 1000, "max_output_length": null}},
        {"type": "function_call_output", "call_id": "call_a", "output": "fn main() { println!(\"hi\"); }"},
        {"type": "shell_call_output", "call_id": "call_b",
         "output": [{"stdout": "total 8\nCargo.toml", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
                    {"stdout": "[package]", "stderr": "warning", "outcome": {"type": "exit", "exit_code": 0}}]},
        {"type": "apply_patch_call", "call_id": "call_c", "status": "completed",
         "operation": {"type": "update_file", "path": "src/main.rs", "diff": "-hi\n+hello"}},
        {"type": "apply_patch_call_output", "call_id": "call_c", "status": "completed", "output": "Done"},
        {"type": "function_call", "call_id": "call_d", "name": "screenshot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_d",
         "output": [{"type": "input_text", "text": "here"}, {"type": "input_image", "image_url": png}]},
        {"type": "message", "role": "assistant", "status": "completed", "id": "msg_1",
         "content": [{"type": "output_text", "text": "A one-pixel image and a short file."}]}
    ]));
    (sdk, wire)
}

#[test]
fn the_agents_sdk_items_read_as_the_responses_items_they_are_sent_as() {
    let (sdk, wire) = agents_sdk_and_wire();
    assert_eq!(detect(&sdk, None).unwrap(), Format::Responses);
    let sdk_view = view(Format::Responses, &sdk).unwrap();
    let wire_view = view(Format::Responses, &wire).unwrap();
    assert_eq!(sdk_view.groups, wire_view.groups);
    assert_eq!(view_blocks(&sdk_view), view_blocks(&wire_view));
    // Every call is answered: the calls of one turn and their outputs are one view message each.
    assert!(crate::model::check::check_conversation(&sdk_view.messages).is_empty());
    assert_eq!(sdk_view.groups[2], 2..5);
    assert_eq!(sdk_view.groups[3], 5..7);
    // The same tokens as what the API is sent, item by item.
    let encoding = crate::model::tokens::Encoding::default();
    for (index, (a, b)) in sdk.iter().zip(&wire).enumerate() {
        assert_eq!(
            count_item(encoding, Format::Responses, index, a).unwrap(),
            count_item(encoding, Format::Responses, index, b).unwrap(),
            "item {index}: {a}"
        );
    }
    // An unchanged view message writes back the SDK's very items.
    for (message, range) in sdk_view.messages.iter().zip(&sdk_view.groups) {
        assert_eq!(
            to_format(Format::Responses, message),
            sdk[range.clone()].to_vec()
        );
    }
}

#[test]
fn an_agents_sdk_result_without_its_call_is_reported_and_one_without_call_id_refused() {
    let orphan = items(json!([
        {"role": "user", "content": "go"},
        {"type": "function_call_result", "callId": "nope", "name": "f", "status": "completed", "output": "x"}
    ]));
    let view = view(Format::Responses, &orphan).unwrap();
    assert!(!crate::model::check::check_conversation(&view.messages).is_empty());
    let nameless = items(
        json!([{"type": "function_call_result", "name": "f", "status": "completed", "output": "x"}]),
    );
    let error = super::view(Format::Responses, &nameless).unwrap_err();
    assert_eq!(error.to_string(), "messages[0].callId is missing");
}

#[test]
fn a_shortened_agents_sdk_output_keeps_the_shape_of_its_type() {
    let (sdk, _) = agents_sdk_and_wire();
    let view = view(Format::Responses, &sdk).unwrap();
    // The results of the first turn: a function's structured output and a shell's outputs.
    let mut shortened = view.messages[3].clone();
    shortened["content"][0]["content"] = json!("fn main… [shortened]");
    shortened["content"][1]["content"] = json!("total 8… [shortened]");
    let written = to_format(Format::Responses, &shortened);
    assert_eq!(written.len(), 2);
    assert_eq!(written[0]["type"], "function_call_result");
    assert_eq!(written[0]["callId"], "call_a");
    assert_eq!(written[0]["output"], "fn main… [shortened]");
    assert_eq!(written[1]["type"], "shell_call_output");
    assert_eq!(
        written[1]["output"],
        json!([{"stdout": "total 8… [shortened]", "stderr": "", "outcome": {"type": "exit", "exitCode": 0}}])
    );
    // Reasoning removed by the thinking policy: the item goes, the calls stay.
    let mut stripped = view.messages[2].clone();
    stripped["content"].as_array_mut().unwrap().drain(0..2);
    let written = to_format(Format::Responses, &stripped);
    assert_eq!(written, sdk[3..5].to_vec());
}

#[test]
fn a_hosted_mcp_approval_and_its_answer_stay_a_pair() {
    let list = items(json!([
        {"role": "user", "content": "deploy"},
        {"type": "hosted_tool_call", "name": "mcp_approval_request", "id": "mcpr_1",
         "providerData": {"type": "mcp_approval_request", "id": "mcpr_1", "name": "deploy",
                          "arguments": "{\"env\":\"prod\"}", "server_label": "ops"}},
        {"type": "hosted_tool_call", "name": "mcp_approval_response",
         "providerData": {"approve": true, "approval_request_id": "mcpr_1"}},
        {"type": "hosted_tool_call", "name": "web_search_call", "status": "completed",
         "providerData": {"type": "web_search_call", "action": {"type": "search", "query": "weather"}}}
    ]));
    assert_eq!(detect(&list, None).unwrap(), Format::Responses);
    let view = view(Format::Responses, &list).unwrap();
    assert_eq!(view.groups, vec![0..1, 1..2, 2..3, 3..4]);
    assert_eq!(view.messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(view.messages[2]["content"][0]["tool_use_id"], "mcpr_1");
    assert_eq!(view.messages[2]["content"][0]["content"], "approved");
    assert!(crate::model::check::check_conversation(&view.messages).is_empty());
    // Without its request, the answer is reported.
    let orphan = vec![list[0].clone(), list[2].clone()];
    let view = super::view(Format::Responses, &orphan).unwrap();
    assert!(!crate::model::check::check_conversation(&view.messages).is_empty());
}
