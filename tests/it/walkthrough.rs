//! The README's walk from production to CI, run as one: a process
//! profiled while it runs (`afterburner profile --out prod.afdo`: the
//! samples converted there, against the binary that ran), the file carried
//! to another checkout, a build there that brings it (`profile =`, its
//! match figures in the report), and the CI gate on that run.

use std::process::{Command, Stdio};

use crate::support::{
    comparison, make_fixture, only_run_dir, perf_timer_or_skip, read_json, served_gcc_or_skip,
    Sandbox,
};

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }
compiler = "gcc"

[[variant]]
name = "baseline"

[[variant]]
name = "autofdo-prod"
optimize = ["autofdo"]
profile = "prod/prod.afdo"

[[workload]]
name = "loop"
run = "{bin.hotpath} 300000"

[bench]
repetitions = 4
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
primary = "instructions"
"#;

#[test]
fn a_running_process_profiled_there_builds_here_and_the_gate_reads_its_gain() {
    if !served_gcc_or_skip() || !perf_timer_or_skip() {
        return;
    }
    // 1. Production: hotpath as the experiment's baseline builds it, busy.
    let production = Sandbox::with_fixture("hotpath");
    let binary = make_fixture(&production, "hotpath", &[("CFLAGS", "-O2 -g")]);
    let mut running = Command::new(&binary)
        .arg("4000000000")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let out = production.path().join("prod.afdo");
    let profiled = production.afterburner(&[
        "profile",
        "--pid",
        &running.id().to_string(),
        "--duration",
        "2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let _ = running.kill();
    let _ = running.wait();
    profiled.assert_ok();
    assert!(
        profiled.stdout().contains("gcc AutoFDO profile of"),
        "{}",
        profiled.stdout()
    );
    // The recording stays beside it.
    assert!(production.path().join("prod.perf.data").is_file());

    // 2. Carried to another checkout.
    let ci = Sandbox::with_fixture("hotpath");
    std::fs::create_dir_all(ci.path().join("prod")).unwrap();
    std::fs::copy(&out, ci.path().join("prod/prod.afdo")).unwrap();

    // 3. Built there with it: checked against this build's binary first.
    ci.write("afterburner.toml", EXPERIMENT);
    let run = ci.afterburner(&["run"]);
    run.assert_ok();
    assert!(
        run.stdout()
            .contains("autofdo-prod: gcc-autofdo (brought):"),
        "{}",
        run.stdout()
    );
    let results = read_json(&only_run_dir(&ci).join("results.json"));
    let figures = &results["variants"][1]["profiles"][0];
    assert_eq!(figures["method"], "symbols", "{figures}");
    let hot = figures["hot"].as_u64().unwrap();
    assert!(
        hot > 0 && figures["hot_found"].as_u64() == Some(hot),
        "{figures}"
    );
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(cflags.contains("-fauto-profile="), "{cflags}");

    // 4. The gate: this run against itself passes; a gain floor 10 points
    // above what the profile gained fails.
    let own = only_run_dir(&ci).join("results.json");
    ci.afterburner(&["check", "--against", own.to_str().unwrap()])
        .assert_status(0);
    let ratio = comparison(&results, "loop", "instructions", "autofdo-prod")["ratio"]
        .as_f64()
        .unwrap();
    let floor = ((1.0 - ratio) * 100.0 + 10.0).ceil().max(10.0);
    ci.afterburner(&["check", "--keep-gain", &format!("autofdo-prod:{floor:.0}%")])
        .assert_status(1);
}
