//! A `path` source rebuilds only when a file the build reads changes, and the
//! rebuild line says which (issue 13): logs, exports, `perf.data` and editor
//! files written into the project are not sources.

use std::process::Command;

use crate::support::Sandbox;

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src", exclude = ["perf.data*", "notes/"] }
build = "make"
binaries = { hotpath = "hotpath" }

[[workload]]
name = "loop"
run = "{bin.hotpath} 1000"

[bench]
repetitions = 2
warmup = 0
"#;

fn git(sandbox: &Sandbox, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(sandbox.path().join("src"))
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Build once, write what a user's tools leave behind, build again (up to
/// date), then edit the source: the rebuild names the file.
fn files_written_into_the_tree_are_not_sources(sandbox: &Sandbox) {
    sandbox.write("afterburner.toml", EXPERIMENT);
    let first = sandbox.afterburner(&["build"]);
    first.assert_ok();
    assert!(first.stderr().contains("first build"), "{}", first.stderr());

    std::fs::create_dir_all(sandbox.path().join("src/notes")).unwrap();
    for (name, text) in [
        ("src/bench.log", "a log\n"),
        ("src/results.csv~", "an editor's backup\n"),
        ("src/perf.data", "samples\n"),
        ("src/notes/todo.txt", "excluded by the experiment\n"),
    ] {
        sandbox.write(name, text);
    }
    let again = sandbox.afterburner(&["build"]);
    again.assert_ok();
    assert!(again.stderr().contains("up to date"), "{}", again.stderr());
    assert!(!again.stderr().contains("done in"), "{}", again.stderr());

    let source = sandbox.path().join("src/hotpath.c");
    let mut text = std::fs::read_to_string(&source).unwrap();
    text.push_str("/* edited */\n");
    std::fs::write(&source, text).unwrap();
    let rebuilt = sandbox.afterburner(&["build"]);
    rebuilt.assert_ok();
    assert!(
        rebuilt.stderr().contains("hotpath.c changed"),
        "{}",
        rebuilt.stderr()
    );
}

#[test]
fn outside_git_ignore_files_and_exclude_keep_the_build_up_to_date() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("src/.gitignore", "*.log\n*~\n");
    files_written_into_the_tree_are_not_sources(&sandbox);
}

#[test]
fn in_a_git_work_tree_only_what_git_sees_is_a_source() {
    let sandbox = Sandbox::with_fixture("hotpath");
    git(&sandbox, &["init", "-q"]);
    sandbox.write("src/.gitignore", "*.log\n*~\n");
    git(&sandbox, &["add", "-A"]);
    git(&sandbox, &["commit", "-q", "-m", "fixture"]);
    files_written_into_the_tree_are_not_sources(&sandbox);
    // An untracked file git does not ignore is a source: a new header a
    // build may include.
    sandbox.write("src/extra.h", "#define EXTRA 1\n");
    let rebuilt = sandbox.afterburner(&["build"]);
    rebuilt.assert_ok();
    assert!(
        rebuilt.stderr().contains("extra.h added"),
        "{}",
        rebuilt.stderr()
    );
}

#[test]
fn exclude_on_a_fetched_source_is_refused() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &EXPERIMENT.replace(
            "source = { path = \"src\", exclude = [\"perf.data*\", \"notes/\"] }",
            "source = { apt = \"sqlite3\", exclude = [\"x\"] }",
        ),
    );
    sandbox
        .afterburner(&["build"])
        .assert_fails_with("`exclude` only applies to a path source")
        .assert_fails_with("afterburner.toml:4");
}
