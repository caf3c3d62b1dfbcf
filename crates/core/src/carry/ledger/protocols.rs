//! The file tools of the agents our users run: for each, which operation it performs and which
//! input field holds the path (or the patch, or the command that selects the operation). Each
//! agent's rows cite the source they were read from. Tool names match case-insensitively, and
//! MCP-style prefixes (`developer__text_editor`, `mcp__server__tool`) are ignored, so one row
//! serves every agent that spells a tool the same way; when several agents share a name (`read`,
//! `read_file`, `write`, `edit`), the first row whose path field is present in the input wins.
//! Tools in no row fall back to name heuristics, as before the table existed.

use serde_json::Value;

use shell_effects::{command_line_of_argv, FileOp};

/// What a tool call does, as far as the ledger is concerned.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ToolUse {
    /// Files the tool itself reads or writes (they stand only if its result is not an error).
    pub files: Vec<(FileOp, String)>,
    /// The patch text the tool applies: Codex `*** Add File:` envelopes or unified diffs.
    pub patch: Option<String>,
    /// The shell command line the tool runs.
    pub command_line: Option<String>,
    /// Whole contents the tool writes to a file, remembered so that a later command that runs
    /// or applies that file can be followed.
    pub contents: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    /// Always the same operation on the path(s) in the first present field.
    Fixed(FileOp),
    /// The `command` field selects the operation (Anthropic's text editor and its offspring).
    EditorCommand,
    /// The files are named inside a patch held by the field (Codex `apply_patch` format or a
    /// unified diff).
    Patch,
    /// Runs the command line in the field.
    Shell,
    /// Touches no single file the ledger should list: `Glob` and `Grep` take patterns and search
    /// roots, and what they match is not read in full.
    Nothing,
}

struct Protocol {
    /// Lower-case tool names.
    names: &'static [&'static str],
    action: Action,
    /// Input fields that may hold the path (a string, an array of strings, or an array of
    /// objects with a `path`), the patch or the command, in order of preference.
    fields: &'static [&'static str],
}

const CONTENT_FIELDS: &[&str] = &["content", "file_text", "contents"];

const PROTOCOLS: &[Protocol] = &[
    // Claude Code: input types of @anthropic-ai/claude-agent-sdk `sdk-tools.d.ts` (e.g.
    // StayBlue/the-coding-sdk sdk-tools.d.ts: FileWriteInput/FileEditInput{file_path},
    // NotebookEditInput{notebook_path, edit_mode}); the real sessions in shared/data/real use
    // exactly these fields. NotebookEdit's `delete` mode deletes a cell, not the file.
    Protocol {
        names: &["write"],
        action: Action::Fixed(FileOp::Create),
        fields: &["file_path"],
    },
    Protocol {
        names: &["edit", "multiedit"],
        action: Action::Fixed(FileOp::Modify),
        fields: &["file_path"],
    },
    Protocol {
        names: &["notebookedit"],
        action: Action::Fixed(FileOp::Modify),
        fields: &["notebook_path"],
    },
    Protocol {
        names: &["read"],
        action: Action::Fixed(FileOp::Read),
        fields: &["file_path"],
    },
    Protocol {
        names: &[
            "glob",
            "grep",
            "ls",
            "list_directory",
            "list_files",
            "search_files",
            "find",
            "grep_search",
        ],
        action: Action::Nothing,
        fields: &[],
    },
    // pi (badlogic/pi-mono packages/coding-agent/src/core/tools/{read,write,edit}.ts): `path`.
    Protocol {
        names: &["write"],
        action: Action::Fixed(FileOp::Create),
        fields: &["path"],
    },
    Protocol {
        names: &["edit"],
        action: Action::Fixed(FileOp::Modify),
        fields: &["path"],
    },
    Protocol {
        names: &["read"],
        action: Action::Fixed(FileOp::Read),
        fields: &["path"],
    },
    // opencode (anomalyco/opencode, formerly sst/opencode, packages/opencode/src/tool/
    // {write,edit,read,apply_patch}.ts): `filePath`; `apply_patch`/`patch` take `patchText` in
    // Codex's format.
    Protocol {
        names: &["write"],
        action: Action::Fixed(FileOp::Create),
        fields: &["filePath"],
    },
    Protocol {
        names: &["edit", "multiedit"],
        action: Action::Fixed(FileOp::Modify),
        fields: &["filePath"],
    },
    Protocol {
        names: &["read"],
        action: Action::Fixed(FileOp::Read),
        fields: &["filePath"],
    },
    // Cline (cline/cline src/core/prompts/system-prompt/tools/{write_to_file,replace_in_file,
    // read_file}.ts: `path`; src/core/task/tools/handlers/WriteToFileToolHandler.ts reads
    // `block.params.path || block.params.absolutePath`). Roo Code (RooCodeInc/Roo-Code
    // src/core/prompts/tools/native-tools/{write_to_file,apply_diff,search_and_replace,
    // read_file}.ts: `path`; older read_file took `files: [{path}]`; insert_content: `path`).
    Protocol {
        names: &["write_to_file", "new_rule"],
        action: Action::Fixed(FileOp::Create),
        fields: &["path", "absolutePath"],
    },
    Protocol {
        names: &[
            "replace_in_file",
            "apply_diff",
            "insert_content",
            "search_and_replace",
            "search_replace",
            "edit_file",
        ],
        action: Action::Fixed(FileOp::Modify),
        fields: &["path", "absolutePath", "file_path"],
    },
    // Gemini CLI (google-gemini/gemini-cli packages/core/src/tools/definitions/
    // base-declarations.ts): write_file/replace/read_file take `file_path` (read_file took
    // `absolute_path`, and `path` before that); read_many_files takes `include` (formerly
    // `paths`); `edit` is replace's older name.
    Protocol {
        names: &["write_file", "create_file"],
        action: Action::Fixed(FileOp::Create),
        fields: &["file_path", "path", "absolute_path"],
    },
    Protocol {
        names: &["replace"],
        action: Action::Fixed(FileOp::Modify),
        fields: &["file_path", "path"],
    },
    Protocol {
        names: &["edit"],
        action: Action::Fixed(FileOp::Modify),
        fields: &["file_path", "absolute_path"],
    },
    Protocol {
        names: &["read_file"],
        action: Action::Fixed(FileOp::Read),
        fields: &[
            "path",
            "absolutePath",
            "file_path",
            "absolute_path",
            "files",
        ],
    },
    Protocol {
        names: &["read_many_files"],
        action: Action::Fixed(FileOp::Read),
        fields: &["paths", "include"],
    },
    // Anthropic's text editor tool (str_replace_based_edit_tool / str_replace_editor, types
    // text_editor_2025xxxx) and the agents built on its schema: OpenHands `str_replace_editor`
    // / `file_editor` (OpenHands/software-agent-sdk openhands-tools/openhands/tools/file_editor/
    // definition.py), SWE-agent `str_replace_editor` (SWE-agent/SWE-agent tools/edit_anthropic/
    // config.yaml): `command` ∈ view/create/str_replace/insert/undo_edit, `path`. goose's
    // `text_editor` (block/goose crates/goose-mcp/src/developer: TextEditorParams) adds `write`
    // and `apply_diff` (a unified diff in `diff`).
    Protocol {
        names: &[
            "str_replace_based_edit_tool",
            "str_replace_editor",
            "file_editor",
            "text_editor",
        ],
        action: Action::EditorCommand,
        fields: &["path"],
    },
    // Codex (openai/codex codex-rs/apply-patch/src/parser.rs): `apply_patch` takes the patch
    // as its freeform input (a bare string), or as `input`; opencode's and Cline's patch tools
    // use `patchText` / `input`.
    Protocol {
        names: &["apply_patch", "patch"],
        action: Action::Patch,
        fields: &["input", "patch", "patchText", "patch_text", "diff"],
    },
    // Shells: Claude Code `Bash`, Cline/Roo `execute_command`, Gemini CLI `run_shell_command`,
    // Codex `shell`/`local_shell` (a `command` array) and `exec_command` (`cmd`), OpenHands
    // `execute_bash`/`terminal`, goose `shell`, pi/opencode `bash`.
    Protocol {
        names: &[
            "bash",
            "shell",
            "local_shell",
            "shell_command",
            "exec_command",
            "execute_command",
            "run_shell_command",
            "execute_bash",
            "terminal",
            "run_command",
        ],
        action: Action::Shell,
        fields: &["command", "cmd", "script", "commandLine"],
    },
];

/// Input fields that name a file in tools the table does not know.
const GENERIC_PATH_FIELDS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "absolutePath",
    "absolute_path",
    "filename",
    "file",
    "notebook_path",
    "target_file",
];
const GENERIC_COMMAND_FIELDS: &[&str] = &["command", "cmd", "script", "commandLine"];

/// `developer__text_editor` → `text_editor`; `mcp__fs__write_file` → `write_file`.
fn base_name(tool_name: &str) -> String {
    tool_name
        .rsplit("__")
        .next()
        .unwrap_or(tool_name)
        .to_ascii_lowercase()
}

/// The strings a field holds: a string, an array of strings, or an array of objects that name
/// a `path` / `file_path`.
fn strings_in(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) if !text.trim().is_empty() => vec![text.trim().to_string()],
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(text) => Some(text.trim().to_string()),
                Value::Object(object) => ["path", "file_path", "filePath"]
                    .iter()
                    .find_map(|key| object.get(*key).and_then(Value::as_str))
                    .map(|text| text.trim().to_string()),
                _ => None,
            })
            .filter(|text| !text.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

fn first_present(input: &Value, fields: &[&str]) -> Option<Vec<String>> {
    fields.iter().find_map(|field| {
        let found = input.get(*field).map(strings_in).unwrap_or_default();
        (!found.is_empty()).then_some(found)
    })
}

/// The command line a tool input runs: a string, or a command array (Codex) made into one.
pub(crate) fn command_line_in(input: &Value, fields: &[&str]) -> Option<String> {
    fields.iter().find_map(|field| match input.get(*field)? {
        Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
        Value::Array(items) => {
            let argv: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            (!argv.is_empty() && argv.len() == items.len()).then(|| command_line_of_argv(&argv))
        }
        _ => None,
    })
}

fn contents_of(input: &Value, paths: &[String]) -> Vec<(String, String)> {
    let content = CONTENT_FIELDS
        .iter()
        .find_map(|field| input.get(*field).and_then(Value::as_str));
    match (content, paths) {
        (Some(content), [path]) => vec![(path.clone(), content.to_string())],
        _ => Vec::new(),
    }
}

fn editor_use(input: &Value, paths: Vec<String>) -> ToolUse {
    let command = input.get("command").and_then(Value::as_str).unwrap_or("");
    let op = match command {
        "view" | "read" => FileOp::Read,
        "create" | "write" => FileOp::Create,
        "apply_diff" => {
            return ToolUse {
                patch: input
                    .get("diff")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                ..ToolUse::default()
            }
        }
        _ => FileOp::Modify,
    };
    let contents = if op == FileOp::Create {
        contents_of(input, &paths)
    } else {
        Vec::new()
    };
    ToolUse {
        files: paths.into_iter().map(|path| (op, path)).collect(),
        contents,
        ..ToolUse::default()
    }
}

/// What a tool call does, from its name and input.
pub(crate) fn interpret(tool_name: &str, input: &Value) -> ToolUse {
    let name = base_name(tool_name);
    for protocol in PROTOCOLS
        .iter()
        .filter(|p| p.names.contains(&name.as_str()))
    {
        match protocol.action {
            Action::Nothing => return ToolUse::default(),
            Action::Shell => {
                if let Some(command_line) = command_line_in(input, protocol.fields) {
                    return ToolUse {
                        command_line: Some(command_line),
                        ..ToolUse::default()
                    };
                }
            }
            Action::Patch => {
                let patch = match input {
                    Value::String(text) => Some(text.clone()),
                    _ => protocol
                        .fields
                        .iter()
                        .find_map(|field| input.get(*field).and_then(Value::as_str))
                        .map(str::to_string),
                };
                if patch.is_some() {
                    return ToolUse {
                        patch,
                        ..ToolUse::default()
                    };
                }
            }
            Action::EditorCommand => {
                if let Some(paths) = first_present(input, protocol.fields) {
                    return editor_use(input, paths);
                }
            }
            Action::Fixed(op) => {
                if let Some(paths) = first_present(input, protocol.fields) {
                    let contents = if op == FileOp::Create {
                        contents_of(input, &paths)
                    } else {
                        Vec::new()
                    };
                    return ToolUse {
                        files: paths.into_iter().map(|path| (op, path)).collect(),
                        contents,
                        ..ToolUse::default()
                    };
                }
            }
        }
    }
    generic_use(&name, input)
}

/// Tools the table does not know: a `command` with an editor verb next to a `path` is a text
/// editor; another `command` is a shell; otherwise the tool's name says what it does to the
/// file its input names.
fn generic_use(name: &str, input: &Value) -> ToolUse {
    let paths = first_present(input, GENERIC_PATH_FIELDS);
    if let (Some(command), Some(paths)) = (input.get("command").and_then(Value::as_str), &paths) {
        if matches!(
            command,
            "view" | "create" | "write" | "str_replace" | "insert" | "undo_edit"
        ) {
            return editor_use(input, paths.clone());
        }
    }
    if let Some(command_line) = command_line_in(input, GENERIC_COMMAND_FIELDS) {
        return ToolUse {
            command_line: Some(command_line),
            ..ToolUse::default()
        };
    }
    let (Some(paths), Some(op)) = (paths, op_from_name(name)) else {
        return ToolUse::default();
    };
    let contents = if op == FileOp::Create {
        contents_of(input, &paths)
    } else {
        Vec::new()
    };
    ToolUse {
        files: paths.into_iter().map(|path| (op, path)).collect(),
        contents,
        ..ToolUse::default()
    }
}

fn op_from_name(name: &str) -> Option<FileOp> {
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if has(&["delete", "remove", "unlink"]) {
        Some(FileOp::Delete)
    } else if has(&["create", "write", "save", "new_file"]) {
        Some(FileOp::Create)
    } else if has(&[
        "edit", "replace", "patch", "modify", "update", "insert", "append",
    ]) {
        Some(FileOp::Modify)
    } else if has(&["read", "view", "open", "cat", "get_file", "show", "load"]) {
        Some(FileOp::Read)
    } else {
        None
    }
}

/// A short description of what a call worked on, for the failed-calls list.
pub(crate) fn subject_of(input: &Value) -> Option<String> {
    command_line_in(input, GENERIC_COMMAND_FIELDS)
        .or_else(|| first_present(input, GENERIC_PATH_FIELDS).map(|paths| paths.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use FileOp::*;

    fn files(name: &str, input: Value) -> Vec<(FileOp, String)> {
        interpret(name, &input).files
    }

    fn one(op: FileOp, path: &str) -> Vec<(FileOp, String)> {
        vec![(op, path.to_string())]
    }

    #[test]
    fn claude_code() {
        // Shapes from cc-spotter-gqc-pre.json.
        assert_eq!(
            files(
                "Write",
                json!({"file_path": "/p/lib/a.ex", "content": "defmodule A do\nend\n"})
            ),
            one(Create, "/p/lib/a.ex")
        );
        assert_eq!(
            files(
                "Edit",
                json!({"file_path": "/p/mix.exs", "old_string": "a", "new_string": "b", "replace_all": false})
            ),
            one(Modify, "/p/mix.exs")
        );
        assert_eq!(
            files(
                "MultiEdit",
                json!({"file_path": "/p/x.ts", "edits": [{"old_string": "a", "new_string": "b"}]})
            ),
            one(Modify, "/p/x.ts")
        );
        assert_eq!(
            files(
                "NotebookEdit",
                json!({"notebook_path": "/p/n.ipynb", "new_source": "x", "edit_mode": "delete", "cell_id": "c1"})
            ),
            one(Modify, "/p/n.ipynb")
        );
        assert_eq!(
            files(
                "Read",
                json!({"file_path": "/p/config/test.exs", "limit": 50, "offset": 10})
            ),
            one(Read, "/p/config/test.exs")
        );
        assert_eq!(
            files("Glob", json!({"pattern": "**/*.ex", "path": "/p/lib"})),
            vec![]
        );
        assert_eq!(
            files(
                "Grep",
                json!({"pattern": "defmodule", "path": "/p/lib/a.ex", "output_mode": "content"})
            ),
            vec![]
        );
        let bash = interpret(
            "Bash",
            &json!({"command": "mix test 2>&1 | tail -5", "description": "Run tests", "timeout": 120000}),
        );
        assert_eq!(
            bash.command_line.as_deref(),
            Some("mix test 2>&1 | tail -5")
        );
        // A tool of an MCP server keeps its own name after the prefix.
        assert_eq!(
            files(
                "mcp__fs__write_file",
                json!({"file_path": "/p/m.md", "content": ""})
            ),
            one(Create, "/p/m.md")
        );
    }

    #[test]
    fn cline_and_roo_code() {
        assert_eq!(
            files(
                "write_to_file",
                json!({"absolutePath": "/repo/src/new.ts", "content": "export {}"})
            ),
            one(Create, "/repo/src/new.ts")
        );
        assert_eq!(
            files(
                "write_to_file",
                json!({"path": "src/new.ts", "content": "x", "line_count": 1})
            ),
            one(Create, "src/new.ts")
        );
        assert_eq!(
            files(
                "replace_in_file",
                json!({"path": "src/app.ts", "diff": "------- SEARCH\na\n=======\nb\n+++++++ REPLACE"})
            ),
            one(Modify, "src/app.ts")
        );
        assert_eq!(
            files(
                "apply_diff",
                json!({"path": "src/app.ts", "diff": "<<<<<<< SEARCH\n:start_line:1\n-------\na\n=======\nb\n>>>>>>> REPLACE"})
            ),
            one(Modify, "src/app.ts")
        );
        assert_eq!(
            files(
                "insert_content",
                json!({"path": "src/app.ts", "line": 0, "content": "// x"})
            ),
            one(Modify, "src/app.ts")
        );
        assert_eq!(
            files(
                "search_and_replace",
                json!({"path": "README.md", "operations": [{"search": "a", "replace": "b"}]})
            ),
            one(Modify, "README.md")
        );
        assert_eq!(
            files("read_file", json!({"path": "src/app.ts"})),
            one(Read, "src/app.ts")
        );
        assert_eq!(
            files(
                "read_file",
                json!({"files": [{"path": "a.ts"}, {"path": "b.ts", "line_ranges": ["1-5"]}]})
            ),
            vec![(Read, "a.ts".to_string()), (Read, "b.ts".to_string())]
        );
        let command = interpret(
            "execute_command",
            &json!({"command": "npm test", "requires_approval": false}),
        );
        assert_eq!(command.command_line.as_deref(), Some("npm test"));
    }

    #[test]
    fn openhands_swe_agent_and_anthropic_text_editor() {
        // Shape from openhands-sdk-sonnet4-hello.json.
        assert_eq!(
            files(
                "str_replace_editor",
                json!({"command": "create", "path": "/workspace/hello.py", "file_text": "print('Hello, World!')", "security_risk": "LOW"})
            ),
            one(Create, "/workspace/hello.py")
        );
        assert_eq!(
            files(
                "str_replace_editor",
                json!({"command": "view", "path": "/testbed/src/a.py", "view_range": [1, 20]})
            ),
            one(Read, "/testbed/src/a.py")
        );
        for command in ["str_replace", "insert", "undo_edit"] {
            assert_eq!(
                files(
                    "file_editor",
                    json!({"command": command, "path": "/testbed/a.py", "old_str": "a", "new_str": "b", "insert_line": 3})
                ),
                one(Modify, "/testbed/a.py")
            );
        }
        assert_eq!(
            files(
                "str_replace_based_edit_tool",
                json!({"command": "str_replace", "path": "src/c.rs", "old_str": "a", "new_str": "b"})
            ),
            one(Modify, "src/c.rs")
        );
        assert_eq!(
            files(
                "text_editor_20250728",
                json!({"command": "create", "path": "n.md", "file_text": ""})
            ),
            one(Create, "n.md")
        );
        // The editor's `command` is not a shell command.
        assert_eq!(
            interpret(
                "str_replace_editor",
                &json!({"command": "view", "path": "/a"})
            )
            .command_line,
            None
        );
        let terminal = interpret(
            "terminal",
            &json!({"command": "pwd && ls -la", "security_risk": "LOW"}),
        );
        assert_eq!(terminal.command_line.as_deref(), Some("pwd && ls -la"));
    }

    #[test]
    fn goose() {
        assert_eq!(
            files(
                "developer__text_editor",
                json!({"command": "write", "path": "/w/a.rs", "file_text": "fn main() {}"})
            ),
            one(Create, "/w/a.rs")
        );
        assert_eq!(
            files(
                "developer__text_editor",
                json!({"command": "str_replace", "path": "/w/a.rs", "old_str": "a", "new_str": "b"})
            ),
            one(Modify, "/w/a.rs")
        );
        let diff = interpret(
            "developer__text_editor",
            &json!({"command": "apply_diff", "path": "/w", "diff": "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\n"}),
        );
        assert!(diff.patch.is_some_and(|p| p.contains("+++ b/x.rs")));
        let shell = interpret("developer__shell", &json!({"command": "cargo build"}));
        assert_eq!(shell.command_line.as_deref(), Some("cargo build"));
    }

    #[test]
    fn codex() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch";
        // Freeform custom tool: the input is the patch itself.
        assert_eq!(
            interpret("apply_patch", &json!(patch)).patch.as_deref(),
            Some(patch)
        );
        assert_eq!(
            interpret("apply_patch", &json!({"input": patch}))
                .patch
                .as_deref(),
            Some(patch)
        );
        let shell = interpret(
            "shell",
            &json!({"command": ["bash", "-lc", "rm -f x.o"], "workdir": "/repo"}),
        );
        assert_eq!(shell.command_line.as_deref(), Some("rm -f x.o"));
        let argv = interpret("shell", &json!({"command": ["rg", "--files"]}));
        assert_eq!(argv.command_line.as_deref(), Some("rg --files"));
        let exec = interpret("exec_command", &json!({"cmd": "ls"}));
        assert_eq!(exec.command_line.as_deref(), Some("ls"));
    }

    #[test]
    fn gemini_cli() {
        assert_eq!(
            files(
                "write_file",
                json!({"file_path": "/w/a.py", "content": "x"})
            ),
            one(Create, "/w/a.py")
        );
        assert_eq!(
            files(
                "replace",
                json!({"file_path": "/w/a.py", "old_string": "x", "new_string": "y", "instruction": "fix"})
            ),
            one(Modify, "/w/a.py")
        );
        assert_eq!(
            files("read_file", json!({"absolute_path": "/w/a.py"})),
            one(Read, "/w/a.py")
        );
        assert_eq!(
            files("read_many_files", json!({"paths": ["/w/a.py", "/w/b.py"]})),
            vec![(Read, "/w/a.py".to_string()), (Read, "/w/b.py".to_string())]
        );
        let shell = interpret(
            "run_shell_command",
            &json!({"command": "npm run build", "description": "build"}),
        );
        assert_eq!(shell.command_line.as_deref(), Some("npm run build"));
    }

    #[test]
    fn pi_and_opencode() {
        assert_eq!(
            files("write", json!({"path": "a.md", "content": "x"})),
            one(Create, "a.md")
        );
        assert_eq!(
            files(
                "edit",
                json!({"path": "a.md", "oldText": "x", "newText": "y"})
            ),
            one(Modify, "a.md")
        );
        assert_eq!(
            files("read", json!({"path": "a.md", "offset": 1})),
            one(Read, "a.md")
        );
        assert_eq!(
            files("write", json!({"filePath": "/r/a.ts", "content": "x"})),
            one(Create, "/r/a.ts")
        );
        assert_eq!(
            files(
                "edit",
                json!({"filePath": "/r/a.ts", "oldString": "x", "newString": "y"})
            ),
            one(Modify, "/r/a.ts")
        );
        assert_eq!(
            files("read", json!({"filePath": "/r/a.ts"})),
            one(Read, "/r/a.ts")
        );
        let patch = interpret(
            "apply_patch",
            &json!({"patchText": "*** Begin Patch\n*** Delete File: x\n*** End Patch"}),
        );
        assert!(patch.patch.is_some());
    }

    #[test]
    fn unknown_tools_fall_back_to_their_names() {
        assert_eq!(
            files("delete_file", json!({"filename": "tmp.log"})),
            one(Delete, "tmp.log")
        );
        assert_eq!(
            files("save_document", json!({"file": "d.txt"})),
            one(Create, "d.txt")
        );
        assert_eq!(files("transmogrify", json!({"path": "x"})), vec![]);
        let custom = interpret("run_tests", &json!({"command": "pytest -q"}));
        assert_eq!(custom.command_line.as_deref(), Some("pytest -q"));
    }
}
