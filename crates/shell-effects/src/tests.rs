use super::*;
use crate::effects::normalize;
use proptest::prelude::*;
use FileOp::*;

fn files(command: &str) -> Vec<(FileOp, String)> {
    scan(command, &mut KnownContents::default()).files
}

fn written(command: &str) -> Vec<(FileOp, String)> {
    files(command)
        .into_iter()
        .filter(|(op, _)| *op != Read)
        .collect()
}

fn pairs(items: &[(FileOp, &str)]) -> Vec<(FileOp, String)> {
    items.iter().map(|(op, p)| (*op, p.to_string())).collect()
}

// From mini-gemini3-pytest-6197 (call_2): the heredoc's body is a script, not commands of
// this line, and the file it writes is remembered.
#[test]
fn heredoc_to_file_creates_the_file_and_not_what_its_body_mentions() {
    let command = "cat <<'EOF' > reproduce_issue.sh\n#!/bin/bash\nmkdir -p foobar\necho 'assert False' > foobar/__init__.py\necho 'def test_foo(): pass' > test_foo.py\n\n# Run pytest\npytest\nEOF\nchmod +x reproduce_issue.sh";
    assert_eq!(written(command), pairs(&[(Create, "reproduce_issue.sh")]));
}

// call_2 then call_3 of the same session: running the script the session wrote reports
// what the script writes.
#[test]
fn running_a_script_the_session_wrote_scans_its_body() {
    let mut known = KnownContents::default();
    scan(
            "cat <<'EOF' > reproduce_issue_isolated.sh\n#!/bin/bash\nmkdir -p reproduction\ncd reproduction\nmkdir -p foobar\necho 'assert False' > foobar/__init__.py\necho 'def test_foo(): pass' > test_foo.py\npytest -c /dev/null\nEOF\nchmod +x reproduce_issue_isolated.sh",
            &mut known,
        );
    let effects = scan("./reproduce_issue_isolated.sh", &mut known);
    assert_eq!(
        effects.files,
        pairs(&[
            (Create, "reproduction/foobar/__init__.py"),
            (Create, "reproduction/test_foo.py")
        ])
    );
    // The same within one command line (call_67), and through `bash x.sh`.
    let effects = scan(
            "cat <<'EOF' > check_dupes.sh\nmkdir -p dupetests\necho \"def test_a(): pass\" > dupetests/test_a.py\nEOF\nchmod +x check_dupes.sh\nbash check_dupes.sh",
            &mut known,
        );
    assert_eq!(
        effects.files,
        pairs(&[(Create, "check_dupes.sh"), (Create, "dupetests/test_a.py")])
    );
}

// From mini-gemini3-requests-1142 (call_29): `&&` chains and quoting with newlines.
#[test]
fn sed_in_place_in_an_and_chain() {
    let command = r#"sed -i 's/import collections/import collections\ntry:\n    from collections.abc import MutableMapping\nexcept ImportError:\n    from collections import MutableMapping/' requests/cookies.py && sed -i 's/collections.MutableMapping/MutableMapping/g' requests/cookies.py"#;
    assert_eq!(
        files(command),
        pairs(&[
            (Modify, "requests/cookies.py"),
            (Modify, "requests/cookies.py")
        ])
    );
}

#[test]
fn sed_forms() {
    // pytest-6197 call_35: an `i\` command in single quotes with a backslash.
    assert_eq!(
        files(
            r#"sed -i '521i\                                    print(f"DEBUG: pkginit={pkginit}, new_col={new_col}")' src/_pytest/main.py"#
        ),
        pairs(&[(Modify, "src/_pytest/main.py")])
    );
    // pytest-6197 call_49: escaped slashes and a `\\n` inside the script.
    assert_eq!(
        files(
            r#"sed -i 's/import sys; print(f"DEBUG: Package.collect {self.fspath}", file=sys.stderr)/with open("\/tmp\/debug.txt", "a") as f: f.write(f"DEBUG: Package.collect {self.fspath}\\n")/' src/_pytest/python.py"#
        ),
        pairs(&[(Modify, "src/_pytest/python.py")])
    );
    assert_eq!(
        files("sed -i.bak -e 's/a/b/' -e 's/c/d/' a.txt b.txt"),
        pairs(&[(Modify, "a.txt"), (Modify, "b.txt")])
    );
    assert_eq!(
        files("sed -i '' 's/a/b/' mac.txt"),
        pairs(&[(Modify, "mac.txt")])
    );
    assert_eq!(
        files("sed --in-place=.orig 's/a/b/' x.c"),
        pairs(&[(Modify, "x.c")])
    );
    // pytest-6197 call_12: `sed -n` in a pipeline reads nothing of its own; `nl` reads.
    assert_eq!(
        files("nl -ba src/_pytest/python.py | sed -n '559,650p'"),
        pairs(&[(Read, "src/_pytest/python.py")])
    );
    assert_eq!(files("sed -n '1,20p' a.py"), pairs(&[(Read, "a.py")]));
}

#[test]
fn cd_makes_relative_paths_relative_to_it() {
    assert_eq!(
        files("cd /testbed && sed -i 's/a/b/' src/x.py && cd sub && rm ../old.py"),
        pairs(&[(Modify, "/testbed/src/x.py"), (Delete, "/testbed/old.py")])
    );
    assert_eq!(
        files("cd reproduction; touch a.py"),
        pairs(&[(Create, "reproduction/a.py")])
    );
    // Unknown targets leave paths as written.
    assert_eq!(files("cd $REPO && touch a.py"), pairs(&[(Create, "a.py")]));
    // A subshell's cd ends with it.
    assert_eq!(
        files("(cd /tmp && touch t.txt) && touch here.txt"),
        pairs(&[(Create, "/tmp/t.txt"), (Create, "here.txt")])
    );
}

#[test]
fn redirections() {
    assert_eq!(
        files(
            "echo hi > out.txt 2>&1; echo more >> log.txt; cmd &> /dev/null; cmd 2>/dev/null >&2"
        ),
        pairs(&[(Create, "out.txt"), (Modify, "log.txt")])
    );
    assert_eq!(
        files("make >build.log 2>err.log"),
        pairs(&[(Create, "build.log"), (Create, "err.log")])
    );
    assert_eq!(files("cmd &>all.log"), pairs(&[(Create, "all.log")]));
    assert_eq!(files("echo \"a > b\" 'c > d'"), vec![]);
    assert_eq!(files("echo $OUT > \"$FILE\""), vec![]);
    assert_eq!(files("python - <<EOF\nprint('> not.a.file')\nEOF"), vec![]);
}

#[test]
fn tee_touch_rm_mv_cp() {
    assert_eq!(
        files("echo x | tee -a notes.md other.md >/dev/null"),
        pairs(&[(Modify, "notes.md"), (Modify, "other.md")])
    );
    assert_eq!(
        files("touch -d yesterday a b"),
        pairs(&[(Create, "a"), (Create, "b")])
    );
    // requests-1142 call_51.
    assert_eq!(
        files("rm reproduce_issue.py check_overwrite.py apply_fix.py"),
        pairs(&[
            (Delete, "reproduce_issue.py"),
            (Delete, "check_overwrite.py"),
            (Delete, "apply_fix.py")
        ])
    );
    assert_eq!(
        files("rm -rf build/ -- -odd"),
        pairs(&[(Delete, "build"), (Delete, "-odd")])
    );
    assert_eq!(
        files("mv old.py new.py"),
        pairs(&[(Delete, "old.py"), (Create, "new.py")])
    );
    assert_eq!(
        files("mv a.py b.py pkg/"),
        pairs(&[
            (Delete, "a.py"),
            (Create, "pkg/a.py"),
            (Delete, "b.py"),
            (Create, "pkg/b.py")
        ])
    );
    assert_eq!(
        files("cp -r src/a.py /tmp/a.py"),
        pairs(&[(Create, "/tmp/a.py")])
    );
    assert_eq!(
        files("git mv -f x.rs y.rs && git rm -q z.rs && git rm --cached keep.rs"),
        pairs(&[(Delete, "x.rs"), (Create, "y.rs"), (Delete, "z.rs")])
    );
}

#[test]
fn git_restores_and_diffs() {
    // requests-1142 call_56.
    assert_eq!(
        files("git checkout requests/packages/urllib3/connectionpool.py"),
        pairs(&[(Modify, "requests/packages/urllib3/connectionpool.py")])
    );
    assert_eq!(files("git checkout main"), vec![]);
    assert_eq!(
        files("git checkout -- Makefile"),
        pairs(&[(Modify, "Makefile")])
    );
    assert_eq!(files("git restore --staged a.py"), vec![]);
    assert_eq!(files("git restore a.py"), pairs(&[(Modify, "a.py")]));
    let mut known = KnownContents::default();
    // requests-1142 call_69.
    assert!(
        scan(
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
            &mut known
        )
        .prints_worktree_diff
    );
    assert!(scan("git diff", &mut known).prints_worktree_diff);
    assert!(scan("git diff HEAD -- src/", &mut known).prints_worktree_diff);
    assert!(!scan("git diff main..feature", &mut known).prints_worktree_diff);
    assert!(!scan("git log -p", &mut known).prints_worktree_diff);
}

#[test]
fn patches_from_heredocs_and_files() {
    let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/src/new.rs\n@@ -0,0 +1 @@\n+x\n";
    assert_eq!(
        files(&format!("patch -p1 <<'EOF'\n{patch}EOF")),
        pairs(&[(Modify, "src/lib.rs"), (Create, "src/new.rs")])
    );
    assert_eq!(
        files(&format!("cd /repo && git apply <<'EOF'\n{patch}EOF")),
        pairs(&[(Modify, "/repo/src/lib.rs"), (Create, "/repo/src/new.rs")])
    );
    // A patch file written earlier, applied later.
    let mut known = KnownContents::default();
    scan(&format!("cat > fix.diff <<'EOF'\n{patch}EOF"), &mut known);
    assert_eq!(
        scan("patch -p1 < fix.diff", &mut known).files,
        pairs(&[
            (Read, "fix.diff"),
            (Modify, "src/lib.rs"),
            (Create, "src/new.rs")
        ])
    );
    assert_eq!(scan("git apply --check fix.diff", &mut known).files, vec![]);
    assert_eq!(
        files("patch src/x.c < x.patch"),
        pairs(&[(Read, "x.patch"), (Modify, "src/x.c")])
    );
}

#[test]
fn codex_apply_patch_heredoc() {
    let command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n-a\n+b\n*** Update File: README.md\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\nEOF\n";
    assert_eq!(
        files(command),
        pairs(&[
            (Create, "hello.txt"),
            (Delete, "src/app.py"),
            (Create, "src/main.py"),
            (Modify, "README.md"),
            (Delete, "old.txt")
        ])
    );
    // Codex's command array, as a command line.
    let argv = [
        "bash",
        "-lc",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: gone.rs\n*** End Patch\nEOF",
    ];
    assert_eq!(
        files(&command_line_of_argv(&argv)),
        pairs(&[(Delete, "gone.rs")])
    );
    let argv = [
        "apply_patch",
        "*** Begin Patch\n*** Add File: a.md\n+x\n*** End Patch",
    ];
    assert_eq!(
        files(&command_line_of_argv(&argv)),
        pairs(&[(Create, "a.md")])
    );
}

#[test]
fn ed_perl_python_and_nested_shells() {
    // pytest-6197 call_29.
    assert_eq!(
        files("ed src/_pytest/main.py <<EOF\n514a\n    if not col:\n.\nw\nq\nEOF"),
        pairs(&[(Modify, "src/_pytest/main.py")])
    );
    assert_eq!(
        files("perl -pi -e 's/a/b/' x.pl y.pl && perl -i.bak -pe 's/c/d/g' z.txt"),
        pairs(&[(Modify, "x.pl"), (Modify, "y.pl"), (Modify, "z.txt")])
    );
    assert_eq!(files("perl -ne 'print' r.txt"), vec![]);
    // pytest-6197 call_30 (shortened): python writes by a literal name.
    assert_eq!(
            files("python3 -c '\nlines = open(\"src/_pytest/main.py\").readlines()\nwith open(\"src/_pytest/main.py\", \"w\") as f:\n    f.writelines(lines)\n' < src/_pytest/main.py"),
            pairs(&[(Read, "src/_pytest/main.py"), (Modify, "src/_pytest/main.py")])
        );
    assert_eq!(
        files("sh -c 'touch inner.txt' && bash -lc \"rm -f gone.txt\""),
        pairs(&[(Create, "inner.txt"), (Delete, "gone.txt")])
    );
    assert_eq!(
        files("sudo -u root env FOO=1 timeout 10 touch wrapped.txt"),
        pairs(&[(Create, "wrapped.txt")])
    );
}

#[test]
fn comments_keywords_and_continuations() {
    assert_eq!(
            files("# rm -rf everything\nif true; then touch yes.txt; fi # > no.txt\nfor f in *.py; do rm \"$f\"; done"),
            pairs(&[(Create, "yes.txt")])
        );
    assert_eq!(
        files("rm \\\n  a.txt \\\n  b.txt"),
        pairs(&[(Delete, "a.txt"), (Delete, "b.txt")])
    );
    assert_eq!(
        files("rm 'my file.txt' my\\ other.txt"),
        pairs(&[(Delete, "my file.txt"), (Delete, "my other.txt")])
    );
    assert_eq!(files("echo $(rm x) `touch y`"), vec![]);
}

#[test]
fn git_diff_output_names_changed_files() {
    let output = "diff --git a/build/lib/x.py b/build/lib/x.py\nnew file mode 100644\nindex 0000000..7ea7e62\n--- /dev/null\n+++ b/build/lib/x.py\n@@ -0,0 +1 @@\n+x\ndiff --git a/requests/models.py b/requests/models.py\nindex 1..2 100644\n--- a/requests/models.py\n+++ b/requests/models.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/old.txt b/old.txt\ndeleted file mode 100644\ndiff --git a/a b.txt b/c.txt\nsimilarity index 90%\nrename from a b.txt\nrename to c.txt\n";
    assert_eq!(
        diff_files(output, None),
        pairs(&[
            (Create, "build/lib/x.py"),
            (Modify, "requests/models.py"),
            (Delete, "old.txt"),
            (Delete, "a b.txt"),
            (Create, "c.txt")
        ])
    );
}

#[test]
fn normalizes_paths() {
    assert_eq!(normalize("./a/./b/../c/"), "a/c");
    assert_eq!(normalize("/x/../../y"), "/y");
    assert_eq!(normalize("../up"), "../up");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn never_panics_on_any_text(text in any::<String>()) {
        let mut known = KnownContents::default();
        let _ = scan(&text, &mut known);
        let _ = diff_files(&text, Some(1));
        let _ = codex_patch_files(&text);
    }

    #[test]
    fn never_panics_on_shell_like_text(
        text in proptest::collection::vec(
            proptest::sample::select(vec![
                " ", "\n", "'", "\"", "\\", "$", "$(", "`", "(", ")", "{", "}", ";", "&", "&&",
                "|", "||", ">", ">>", "<", "<<", "<<-", "<<<", "2>&1", "&>", ">&", "EOF", "cat",
                "sed", "-i", "mv", "cp", "rm", "cd", "git", "apply", "patch", "-p1", "bash",
                "-c", "./x.sh", "x.sh", "a/b", "..", "#", "tee", "python3", "-", "perl", "-pi",
                "-e", "ed", "w", "*** Add File: f", "--- a/f", "+++ b/f", "diff --git a/f b/f",
            ]),
            0..40,
        ).prop_map(|parts| parts.concat())
    ) {
        let mut known = KnownContents::default();
        // Twice, so the second scan runs scripts the first one wrote.
        let _ = scan(&text, &mut known);
        let _ = scan(&text, &mut known);
    }
}
