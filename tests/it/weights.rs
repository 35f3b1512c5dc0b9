//! A training workload's `weight`: its profile counts that many times in
//! the merged one, for gcc's counters (`gcov-tool rewrite -s`) and clang's
//! (`llvm-profdata merge --weighted-input`).

use std::path::Path;
use std::process::Command;

use crate::support::Sandbox;

/// Two training workloads on the same binary, `short` weighted 3: each
/// runs `main` once, so the merged entry count of `main` is 3 + 1.
const WEIGHTED: &str = r#"
[target]
name = "weighted"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "gcc-pgo"
optimize = ["pgo"]

[[variant]]
name = "clang-pgo"
compiler = "clang"
optimize = ["pgo"]

[[workload]]
name = "short"
role = "train"
run = "{bin.hotpath} 1000"
weight = 3

[[workload]]
name = "long"
role = "train"
run = "{bin.hotpath} 5000"

[[workload]]
name = "bench"
role = "bench"
run = "{bin.hotpath} 100"
"#;

#[test]
fn a_weighted_workload_counts_its_weight_times_in_the_merged_profile() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", WEIGHTED);
    let train = sandbox.afterburner(&["train"]);
    train.assert_ok();
    assert!(
        train
            .stderr()
            .contains("merged with weights short=3 (others 1)"),
        "{}",
        train.stderr()
    );
    let variants = sandbox.path().join(".afterburner/variants");

    // The hot call runs 999 times in `short` and 4,995 in `long`: 5,994
    // unweighted, 3 × 999 + 4,995 = 7,992 weighted; `rare` 3 × 1 + 5 = 8.
    let round = variants.join("clang-pgo/profile/clang-pgo");
    assert_eq!(
        std::fs::read_to_string(round.join("raw/short/weight")).unwrap(),
        "3\n"
    );
    let merged = only_file(&round, "profdata");
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let shown = output(
        Command::new(&tool)
            .args(["show", "--all-functions", "--counts"])
            .arg(&merged),
    );
    assert!(shown.contains("Block counts: [7992, 8, "), "{shown}");

    // gcc: the merged object's summary counts 3 + 1 runs.
    let gcda = variants.join("gcc-pgo/profile/gcc-pgo/hotpath.gcda");
    let dump = output(Command::new("gcov-dump").arg("-l").arg(&gcda));
    assert!(
        dump.contains("OBJECT_SUMMARY runs=4, sum_max=7992"),
        "{dump}"
    );
    assert!(dump.contains(": 8 512 \n"), "rare's arcs: {dump}");
}

fn only_file(dir: &Path, extension: &str) -> std::path::PathBuf {
    let found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

fn output(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{command:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
