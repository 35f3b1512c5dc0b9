//! Stale profiles (`profile_from`): a variant trained on revision 1 of
//! the `stale` fixture and built from revision 2 (whose `walk` gained a
//! branch and which added `scale`), beside the fresh profile and none. The
//! report has the three, the compiler's mismatch warnings for the changed
//! function, the stale profile's share of the fresh one's gain (the fresh
//! variant is the default reference), and the two profiles are keyed apart.

use std::path::PathBuf;

use crate::support::{only_run_dir, read_json, tools_or_skip, Sandbox};

/// none / fresh / stale on revision 2, the stale one trained on revision 1.
fn experiment(compiler: &str) -> String {
    format!(
        r#"
[target]
name = "walk"
source = {{ path = "src/rev2" }}
build = "make"
binaries = {{ walk = "walk" }}
compiler = "{compiler}"

[[variant]]
name = "none"

[[variant]]
name = "fresh"
optimize = ["pgo"]

[[variant]]
name = "stale"
optimize = ["pgo"]
profile_from = {{ source = {{ path = "src/rev1" }} }}

[[workload]]
name = "loop"
role = "both"
run = "{{bin.walk}} 300000"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 2
seed = 29
"#
    )
}

/// The training marker of each round of `variant`'s profile.
fn training_keys(sandbox: &Sandbox, variant: &str) -> Vec<String> {
    let profile = sandbox
        .path()
        .join(".afterburner/variants")
        .join(variant)
        .join("profile");
    let mut keys: Vec<String> = std::fs::read_dir(&profile)
        .unwrap()
        .map(|e| e.unwrap().path().join(".afterburner-trained"))
        .filter(|p| p.is_file())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    keys.sort();
    keys
}

fn variant<'a>(results: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name} in {results:#}"))
}

fn instrumented_source(sandbox: &Sandbox, variant: &str) -> String {
    let record: PathBuf = sandbox
        .path()
        .join(".afterburner/variants")
        .join(variant)
        .join("instrumented.json");
    read_json(&record)["inputs"]["source"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Run the three variants with `compiler` and check what both compilers
/// must show; returns the results and the report for the compiler's own
/// checks.
fn run_stale(compiler: &str) -> (Sandbox, serde_json::Value, String) {
    let sandbox = Sandbox::with_fixture("stale");
    sandbox.write("afterburner.toml", &experiment(compiler));
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));

    // Trained apart: the stale profile's key names the other revision.
    let (fresh, stale) = (
        training_keys(&sandbox, "fresh"),
        training_keys(&sandbox, "stale"),
    );
    assert_eq!(fresh.len(), 1, "{fresh:?}");
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert_ne!(fresh, stale);
    assert!(instrumented_source(&sandbox, "stale").contains("rev1"));
    assert!(instrumented_source(&sandbox, "fresh").contains("rev2"));

    let stale_info = variant(&results, "stale");
    assert!(
        stale_info["profile_from"]
            .as_str()
            .is_some_and(|f| f.contains("src/rev1")),
        "{stale_info:#}"
    );
    assert!(variant(&results, "fresh").get("profile_from").is_none());
    assert!(variant(&results, "none").get("profile_mismatch").is_none());
    let changed = stale_info["profile_mismatch"]["changed"].as_u64().unwrap();
    assert!(changed > 0, "{stale_info:#}");
    let names = &stale_info["profile_mismatch"]["changed_names"];
    assert!(
        names.as_array().unwrap().iter().any(|n| n == "walk"),
        "{stale_info:#}"
    );
    let fresh_changed = variant(&results, "fresh")["profile_mismatch"]["changed"]
        .as_u64()
        .unwrap();
    assert_eq!(fresh_changed, 0, "{results:#}");

    // The fresh variant is the gain reference without a [report] table.
    assert_eq!(
        results["gain_shares"][0]["reference"], "fresh",
        "{results:#}"
    );
    assert!(results["gain_shares"][0]["shares"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["variant"] == "stale" && s["metric"] == "instructions"));

    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains("## Stale profiles"), "{report}");
    for row in [
        "| `none` | none |",
        "| `fresh` | fresh |",
        "| `stale` | stale |",
    ] {
        assert!(report.contains(row), "{row} missing:\n{report}");
    }
    (sandbox, results, report)
}

#[test]
fn gcc_stale_profile_is_trained_on_the_other_revision_and_its_mismatch_counted() {
    if !tools_or_skip(&["gcc", "make", "valgrind"]) {
        return;
    }
    let (_sandbox, results, _) = run_stale("gcc");
    // gcc names the function it has no profile for (-Wmissing-profile).
    let stale = variant(&results, "stale");
    assert!(
        stale["profile_mismatch"]["missing"].as_u64().unwrap() > 0,
        "{stale:#}"
    );
    // The hot loop is in `walk`, whose profile gcc dropped: the stale
    // profile keeps little of the fresh one's gain in instructions.
    let share = results["gain_shares"][0]["shares"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["variant"] == "stale" && s["metric"] == "instructions")
        .unwrap();
    assert!(share["share"].as_f64().unwrap() < 0.5, "{share:#}");
}

#[test]
fn clang_stale_profile_reports_the_hash_mismatch() {
    if !tools_or_skip(&["clang", "make", "valgrind"]) {
        return;
    }
    run_stale("clang");
}

#[test]
fn profile_from_on_a_variant_that_trains_nothing_is_refused() {
    let sandbox = Sandbox::with_fixture("stale");
    sandbox.write(
        "afterburner.toml",
        &experiment("gcc").replace(
            "name = \"none\"",
            "name = \"none\"\nprofile_from = { source = { path = \"src/rev1\" } }",
        ),
    );
    sandbox
        .afterburner(&["build"])
        .assert_fails_with("none of its optimizations trains a profile");
}
