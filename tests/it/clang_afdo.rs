//! clang AutoFDO on timer samples, converted by afterburner itself (no
//! `create_llvm_prof`): the LLVM sample profile it writes is read by
//! `llvm-profdata` and used by clang, which gives the hot function an
//! entry count and weighs its branches from it.

use std::process::Command;

use crate::support::{tools_or_skip, Sandbox};

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }
compiler = "clang"

[[variant]]
name = "baseline"

[[variant]]
name = "afdo"
optimize = ["autofdo"]
sample_event = "cpu-clock"

[[workload]]
name = "loop"
run = "{bin.hotpath} 1000000"
train_run = "{bin.hotpath} 200000000"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#;

#[test]
fn clang_autofdo_on_timer_samples_writes_a_profile_llvm_profdata_reads_and_clang_uses() {
    if !tools_or_skip(&["clang", "llvm-symbolizer"]) || !crate::support::perf_timer_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    sandbox.afterburner(&["train"]).assert_ok();
    let dir = sandbox
        .path()
        .join(".afterburner/variants/afdo/profile/autofdo");
    let merged = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("merged-") && name.ends_with(".afdo")
        })
        .unwrap_or_else(|| panic!("no merged profile in {}", dir.display()));
    let profdata = afterburner::toolchain::find_llvm_profdata().unwrap();
    let shown = Command::new(&profdata)
        .args(["show", "--sample", "--function=main"])
        .arg(&merged)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.status.success() && text.contains("Function: main:"),
        "{text}"
    );

    // clang reads it: main gets an entry count (its head + 1) and its
    // loop's branch weights from the samples.
    let ir = Command::new("clang")
        .current_dir(sandbox.path().join("src"))
        .args([
            "-O2",
            "-gline-tables-only",
            "-gdwarf-4",
            "-fdebug-info-for-profiling",
        ])
        .arg(format!("-fprofile-sample-use={}", merged.display()))
        .args(["-S", "-emit-llvm", "-o", "-", "hotpath.c"])
        .output()
        .unwrap();
    let ir = String::from_utf8_lossy(&ir.stdout);
    let main = ir
        .lines()
        .find(|l| l.starts_with("define") && l.contains("@main("))
        .unwrap_or_else(|| panic!("no main in\n{ir}"));
    let prof = main
        .split("!prof ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("main has no !prof: {main}"));
    let entry = ir
        .lines()
        .find(|l| l.starts_with(&format!("{prof} = ")))
        .and_then(|l| l.split("i64 ").nth(1))
        .and_then(|c| c.trim_end_matches('}').trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no entry count {prof} in the IR"));
    assert!(entry >= 2, "main's entry count {entry}: its head was 0");
    assert!(
        ir.contains("branch_weights"),
        "no branch weights from the samples"
    );
}
