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
