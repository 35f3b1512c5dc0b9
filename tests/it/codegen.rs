//! Flag-only optimizations on a fixture where each must change the code: a
//! PIC shared library whose exported `total` calls its exported `weight`
//! in a loop (tests/fixtures/interpose).

use crate::support::{assert_instruction_verdict, comparison, only_run_dir, read_json, Sandbox};

const INTERPOSE: &str = r#"
[target]
name = "interpose"
source = { path = "src" }
build = "make"
binaries = { interpose = "interpose" }
cflags = "-O2"

[[variant]]
name = "baseline"

[[variant]]
name = "nosi"
optimize = ["nosi"]

[[variant]]
name = "noplt"
optimize = ["noplt"]

[[workload]]
name = "total"
run = "{bin.interpose} 200000"

[bench]
repetitions = 3
warmup = 0
metrics = ["instructions"]
instruction_repetitions = 2
seed = 7
"#;

/// gcc may not inline an exported function into another in PIC code: a
/// preloaded library could replace it. `nosi` says none will, and the
/// inlined loop runs ~40% fewer instructions (1,440,833 → 840,197 at
/// n = 100,000 with gcc 12 -O2, counted by callgrind).
#[test]
fn nosi_inlines_an_exported_call_in_a_shared_library() {
    let sandbox = Sandbox::with_fixture("interpose");
    sandbox.write("afterburner.toml", INTERPOSE);
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    let nosi = comparison(&results, "total", "instructions", "nosi");
    let ratio = nosi["ratio"].as_f64().unwrap();
    assert!(ratio < 0.8, "nosi should inline weight(): ratio {ratio}");
    assert_instruction_verdict(&results, nosi, "faster");
    let meta = read_json(&run_dir.join("meta.json"));
    let cflags = meta["variants"][1]["cflags"].as_str().unwrap();
    assert!(cflags.contains("-fno-semantic-interposition"), "{cflags}");
}

/// Each call of `weight` through the PLT jumps to a stub that jumps on;
/// `noplt` calls through the GOT directly: 1,440,833 → 1,340,479
/// instructions at n = 100,000 with gcc 12 -O2 (callgrind), 7% fewer.
#[test]
fn noplt_calls_an_exported_function_without_the_plt_stub() {
    let sandbox = Sandbox::with_fixture("interpose");
    sandbox.write("afterburner.toml", INTERPOSE);
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    let noplt = comparison(&results, "total", "instructions", "noplt");
    let ratio = noplt["ratio"].as_f64().unwrap();
    assert!((0.85..0.99).contains(&ratio), "noplt ratio {ratio}");
    assert_instruction_verdict(&results, noplt, "faster");
}

/// A `[[matrix]]` expands into variants that build and run like written
/// ones, record their axis values, and report.md groups them by axis.
#[test]
fn a_matrix_runs_and_the_report_groups_by_axis() {
    let sandbox = Sandbox::with_fixture("interpose");
    let text = INTERPOSE.replace(
        "[[variant]]\nname = \"nosi\"\noptimize = [\"nosi\"]\n\n[[variant]]\nname = \"noplt\"\noptimize = [\"noplt\"]\n",
        "[[matrix]]\noptimize = [[\"nosi\"], [\"noplt\"], [\"nosi\", \"noplt\"]]\nenv.LC_ALL = [\"C\"]\n",
    );
    sandbox.write("afterburner.toml", &text);
    sandbox.afterburner(&["run"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    let names: Vec<&str> = results["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "baseline",
            "nosi-LC_ALL_C",
            "noplt-LC_ALL_C",
            "nosi+noplt-LC_ALL_C"
        ]
    );
    assert_eq!(results["variants"][3]["axes"]["optimize"], "nosi+noplt");
    assert_eq!(results["variants"][3]["env"]["LC_ALL"], "C");
    let both = comparison(&results, "total", "instructions", "nosi+noplt-LC_ALL_C");
    assert!(both["ratio"].as_f64().unwrap() < 0.8, "{both:#}");
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains("## By matrix axis"), "{report}");
    let row = report
        .lines()
        .find(|l| l.starts_with("| total | instructions | env.LC_ALL | C | 3 |"))
        .unwrap_or_else(|| panic!("no env.LC_ALL row:\n{report}"));
    assert!(row.ends_with(" |"), "{row}");
}
