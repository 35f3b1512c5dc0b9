//! The README's "Your own program" works as written: its experiment file,
//! copied from the README, on `tests/fixtures/readme` (a Makefile that
//! assigns its own `CC` and `CFLAGS`, as many do), then its two commands,
//! `afterburner run` and `afterburner explain`.

use crate::support::{only_run_dir, read_json, Sandbox};

/// The first TOML block under the README's "## Your own program".
fn readme_experiment() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## Your own program\n")
        .nth(1)
        .expect("the README has a \"Your own program\" section");
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a ```toml block in that section");
    block.to_owned()
}

#[test]
fn the_readme_own_program_example_runs_then_explains() {
    let sandbox = Sandbox::with_fixture("readme");
    // The README's file sits beside the code: move the fixture up.
    let moved = std::process::Command::new("cp")
        .args(["-a", "src/.", "."])
        .current_dir(sandbox.path())
        .status()
        .unwrap();
    assert!(moved.success());
    sandbox.write("afterburner.toml", &readme_experiment());

    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    // The flags were passed through: the pgo+lto build was verified.
    let verified = results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "pgo+lto")
        .map(|v| v["verified"].clone())
        .unwrap();
    assert!(!verified.is_null(), "pgo+lto not verified: {results}");
    let comparisons = results["comparisons"].as_array().unwrap();
    assert!(
        comparisons
            .iter()
            .any(|c| c["metric"] == "wall" && c["variant"] == "pgo+lto"),
        "no wall comparison: {comparisons:?}"
    );

    let meta = read_json(&run_dir.join("meta.json"));
    let explain = sandbox.afterburner(&["explain"]);
    if meta["instruction_counter"] == "callgrind" {
        explain.assert_ok();
        // The hot loop (its `score` inlined) heads the function table.
        let out = explain.stdout();
        let first = out
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("function"))
            .nth(1)
            .unwrap_or_default();
        assert!(
            first.trim_start().starts_with("main ") || first.trim_start().starts_with("score "),
            "explain names the hot function first: {out}"
        );
    } else {
        // perf counted totals only: explain says what it needs.
        explain.assert_fails_with("callgrind");
    }
}
