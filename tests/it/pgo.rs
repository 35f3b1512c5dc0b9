//! gcc PGO on a fixture whose hot loop PGO must help, and an A/A pair that
//! must not come out as faster or slower (its instructions: "same").

use std::path::Path;

use crate::support::{
    assert_instruction_verdict, comparison, counted_exactly, files_with, go_for_pgo_or_skip,
    go_perf_or_skip, only_run_dir, pgo_go, read_json, run_experiment, tools_or_skip, variant_info,
    Bench, Experiment, Sandbox, Variant, Workload,
};

/// The hotpath fixture: `baseline` against `pgo`, optimized by `optimize`.
fn hotpath(optimize: &str) -> Experiment {
    Experiment::new("hotpath")
        .variant(Variant::new("pgo").optimize(&[optimize]))
        .workload(hot_loop("300000"))
        .bench(HOTPATH_BENCH)
}

const HOTPATH_BENCH: Bench = Bench {
    repetitions: 6,
    warmup: 1,
    metrics: &["wall", "instructions"],
    instruction_repetitions: Some(3),
    seed: Some(42),
    ..Bench::QUICK
};

/// `loop`: the hot path judged at a million steps, trained on `train`.
fn hot_loop(train: &str) -> Workload {
    Workload::new("loop")
        .run("{bin.hotpath} 1000000")
        .train_run(&format!("{{bin.hotpath}} {train}"))
}

/// `rare`: a training workload of its own, `{bin.hotpath} ARGS`.
fn rare(args: &str) -> Workload {
    Workload::new("rare")
        .role("train")
        .run(&format!("{{bin.hotpath}} {args}"))
}

/// One profile for the stacks that read it: `pgo` trains it, `pgo+lto`
/// shares it (LTO acts on the final build only, after instrumentation),
/// `pgo+o3` trains its own (-O3 changes the instrumented build); the share
/// is recorded and the sharer's final build finds every function's
/// counters (the fixture compiles by absolute path: gcc's functions
/// "moved" with the directory and keep their profile). clang names static
/// functions by that path, so its `pgo+lto` is refused the share, saying
/// why, and trains its own.
#[test]
fn a_profile_is_trained_once_and_shared_by_the_stacks_that_read_it() {
    let clang = tools_or_skip(&["clang"]);
    let mut experiment = Experiment::new("hotpath")
        .variant(Variant::new("pgo").optimize(&["pgo"]))
        .variant(Variant::new("pgo+lto").optimize(&["pgo", "lto"]))
        .variant(Variant::new("pgo+o3").optimize(&["pgo", "o3"]))
        // BOLT's round builds the whole stack with the shared profile.
        .variant(
            Variant::new("pgo+bolt")
                .optimize(&["pgo", "bolt"])
                .line("bolt_profile = \"instrumented\""),
        );
    if clang {
        experiment = experiment
            .variant(
                Variant::new("clang-pgo")
                    .compiler("clang")
                    .optimize(&["pgo"]),
            )
            .variant(
                Variant::new("clang-pgo+lto")
                    .compiler("clang")
                    .optimize(&["pgo", "lto"]),
            );
    }
    let experiment = experiment.workload(hot_loop("300000")).bench(Bench {
        metrics: &["instructions"],
        instruction_repetitions: Some(1),
        ..Bench::QUICK
    });
    let sandbox = Sandbox::with_experiment("hotpath", &experiment);
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let out = run.stderr();
    assert!(
        out.contains("training pgo+lto (gcc-pgo): pgo's profile, shared"),
        "{out}"
    );
    assert!(!out.contains("training pgo+o3 (gcc-pgo): pgo's"), "{out}");
    assert!(
        out.contains("training pgo+bolt (gcc-pgo): pgo's profile, shared"),
        "{out}"
    );
    if clang {
        assert!(
            out.contains("training clang-pgo+lto (clang-pgo): its own profile, not clang-pgo's: ")
                && out.contains("names clang-pgo's build directory"),
            "{out}"
        );
    }
    assert!(!sandbox
        .variant_dir("pgo+lto")
        .join("instrumented.json")
        .exists());
    assert!(sandbox
        .variant_dir("pgo+o3")
        .join("instrumented.json")
        .exists());
    let shared = sandbox.variant_dir("pgo+lto").join("profile/gcc-pgo");
    assert!(shared.join("hotpath.gcda").is_file());
    assert!(
        !shared.join("raw").exists(),
        "the donor's raw files stay its own"
    );

    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let variant = |name: &str| variant_info(&results, name);
    assert_eq!(variant("pgo+lto")["profiles"][0]["shared_from"], "pgo");
    assert!(variant("pgo")["profiles"][0].get("shared_from").is_none());
    assert!(variant("pgo+o3")["profiles"][0]
        .get("shared_from")
        .is_none());
    let mismatch = &variant("pgo+lto")["profile_mismatch"];
    assert_eq!(mismatch["missing"], 0, "{mismatch}");
    assert_eq!(mismatch["changed"], 0, "{mismatch}");
    let ratio = comparison(&results, "loop", "instructions", "pgo+lto")["ratio"]
        .as_f64()
        .unwrap();
    assert!(ratio < 0.97, "the shared profile did not apply: {ratio}");
}

#[test]
fn pgo_lowers_instructions_on_the_hot_path() {
    let sandbox = Sandbox::with_experiment("hotpath", &hotpath("pgo"));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let stdout = run.stdout();
    assert!(stdout.contains("report:"), "{stdout}");

    let profile = sandbox.variant_dir("pgo").join("profile/gcc-pgo");
    assert!(
        std::fs::metadata(profile.join("hotpath.gcda"))
            .unwrap()
            .len()
            > 0,
        "profile missing or empty"
    );
    // The training workload's own profile is kept beside the merged one.
    assert!(profile.join("raw/loop/hotpath.gcda").is_file());

    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    assert_eq!(results["schema_version"], 4);
    let instr = comparison(&results, "loop", "instructions", "pgo");
    let ratio = instr["ratio"].as_f64().unwrap();
    assert!(
        ratio < 0.97,
        "PGO should cut instructions by >3%, got ratio {ratio}"
    );
    assert_instruction_verdict(&results, instr, "faster");
    assert!(instr["ci_high"].as_f64().unwrap() < 1.0);

    // Every run is in raw.jsonl: (1 warmup + 6) timing runs and 3 instruction
    // runs per variant.
    let raw = std::fs::read_to_string(run_dir.join("raw.jsonl")).unwrap();
    assert_eq!(raw.lines().count(), 2 * (7 + 3));

    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    for needle in [
        "STDDEVP",
        "Mean",
        "STDDEVP/Mean",
        "Opt/Default",
        "`pgo` vs `baseline`",
        "-fprofile-use",
    ] {
        assert!(
            report.contains(needle),
            "report.md lacks {needle}:\n{report}"
        );
    }

    // A second run rebuilds nothing and retrains nothing.
    let again = sandbox.afterburner(&["build"]);
    again.assert_ok();
    assert!(again.stderr().contains("up to date"), "{}", again.stderr());
    assert!(!again.stderr().contains("done in"), "{}", again.stderr());

    // A changed training command makes the profile stale: train again.
    sandbox.write_experiment(&hotpath("pgo").workload(hot_loop("200000")));
    let retrain = sandbox.afterburner(&["train"]);
    retrain.assert_ok();
    assert!(
        retrain.stderr().contains("training pgo on loop"),
        "{}",
        retrain.stderr()
    );
    sandbox.write_experiment(&hotpath("pgo"));

    // `report` redraws the same results from the raw records alone.
    std::fs::remove_file(run_dir.join("results.json")).unwrap();
    sandbox.afterburner(&["report"]).assert_ok();
    assert_eq!(read_json(&run_dir.join("results.json")), results);
}

/// Two variants built identically (names of equal length, so their paths and
/// hence stack layouts match): the same program twice.
#[test]
fn a_a_pair_is_never_called_faster_or_slower() {
    let aa = Experiment::new("aa")
        .binaries(&[("hotpath", "hotpath")])
        .variants([Variant::new("a1"), Variant::new("a2")])
        .workload(Workload::new("loop").run("{bin.hotpath} 300000"))
        .bench(Bench {
            repetitions: 10,
            seed: None,
            ..HOTPATH_BENCH
        });
    let (sandbox, results) = run_experiment("hotpath", &aa);
    let instr = comparison(&results, "loop", "instructions", "a2");
    assert_eq!(instr["verdict"], "same", "{instr:#}");
    assert!(
        // callgrind: a few instructions in millions; perf's user-mode
        // counts jitter by more.
        (instr["ratio"].as_f64().unwrap() - 1.0).abs()
            < if counted_exactly(&results) {
                1e-6
            } else {
                1e-3
            },
        "{instr:#}"
    );

    // Wall time is noisy: a correct 95% rule still calls a true A/A pair
    // different up to 5% of the time. Two independent false calls in a row
    // happen at most 0.25% of the time, so one retry keeps this test honest
    // without making it flaky.
    let called = |v: &serde_json::Value| v == "faster" || v == "slower";
    let wall = comparison(&results, "loop", "wall", "a2")["verdict"].clone();
    if called(&wall) {
        sandbox.afterburner(&["bench"]).assert_ok();
        let retry = sandbox.results();
        let wall = &comparison(&retry, "loop", "wall", "a2")["verdict"];
        assert!(
            !called(wall),
            "A/A wall verdict twice significant: {retry:#}"
        );
    }
}

#[test]
fn clang_pgo_merges_raw_profiles_and_lowers_instructions() {
    clang_pgo_case("pgo", "clang-pgo", "-fprofile-use=", true);
}

/// Context-sensitive PGO: a second instrumented round on top of the IR
/// profile; the merged profile carries context-sensitive records and the
/// final build uses it alone.
#[test]
fn clang_cspgo_trains_a_second_round_and_merges_both_profiles() {
    clang_pgo_case("cspgo", "cspgo", "-fprofile-use=", true);
}

/// AutoFDO with clang. On a machine without a PMU (this VM) the plain
/// variant is refused before anything is built, saying why and what works;
/// with `sample_event = "cpu-clock"` the whole path runs on timer samples:
/// `perf record` of the profiled build, `create_llvm_prof`, `llvm-profdata
/// merge -sample`, `-fprofile-sample-use=`. The profile must hold samples
/// of the hot function and the optimized binary must still compute the
/// same checksum.
#[test]
fn autofdo_is_refused_without_a_pmu_and_runs_on_timer_samples_when_asked() {
    let autofdo = hotpath("autofdo")
        .compiler("clang")
        .workload(hot_loop("200000000").checksum())
        .bench(Bench {
            repetitions: 2,
            metrics: &["wall"],
            ..HOTPATH_BENCH
        });
    let sandbox = Sandbox::with_experiment("hotpath", &autofdo);
    if !perf_counts_instructions() {
        sandbox
            .afterburner(&["build"])
            .assert_fails_with("no hardware counters")
            .assert_fails_with("optimize = [\"pgo\"]")
            .assert_fails_with("sample_event = \"cpu-clock\"");
        assert!(
            !sandbox.path().join(".afterburner/variants").exists(),
            "something was built before the refusal"
        );
    }
    sandbox.write_experiment(
        &autofdo.variant(
            Variant::new("pgo")
                .optimize(&["autofdo"])
                .line("sample_event = \"cpu-clock\""),
        ),
    );
    if !perf_may_record("cpu-clock") {
        // A container may forbid perf_event_open altogether: refused too.
        sandbox
            .afterburner(&["build"])
            .assert_fails_with("perf cannot record `cpu-clock` here");
        crate::support::skip_part("perf may not record here: the AutoFDO conversion path");
        return;
    }
    sandbox.afterburner(&["run"]).assert_ok();
    let profile = sandbox.variant_dir("pgo").join("profile/autofdo");
    let recordings = std::fs::read_dir(profile.join("raw/loop")).unwrap().count();
    assert!(recordings >= 1, "no perf recording kept");
    let merged: Vec<_> = std::fs::read_dir(&profile)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".afdo"))
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let shown = std::process::Command::new(tool)
        .args(["show", "--sample"])
        .arg(&merged[0])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("Function: main: "), "{shown}");
    let results = sandbox.results();
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(
        cflags.contains("-fprofile-sample-use=") && cflags.contains("-gline-tables-only"),
        "{cflags}"
    );
    let checksum = comparison(&results, "loop", "checksum", "pgo");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");
}

/// Front-end instrumentation: a front-end profile, merged and applied. On
/// this fixture it changes the code (the count moves) without lowering the
/// count measurably, unlike IR-level PGO; the test asserts what it does.
#[test]
fn clang_frontend_pgo_merges_a_frontend_profile_and_changes_the_binary() {
    clang_pgo_case(
        "pgo-frontend",
        "clang-pgo-frontend",
        "-fprofile-instr-use=",
        false,
    );
}

/// clang PGO of kind `word`: raw profiles merged into one in
/// `profile/<round>/`, the final build given `use_flag`, and (`fewer`)
/// fewer instructions on the hot path.
fn clang_pgo_case(word: &str, round: &str, use_flag: &str, fewer: bool) {
    let experiment = hotpath(word).compiler("clang").bench(Bench {
        repetitions: 3,
        metrics: &["instructions"],
        ..HOTPATH_BENCH
    });
    let (sandbox, results) = run_experiment("hotpath", &experiment);
    let profile = sandbox.variant_dir("pgo").join("profile").join(round);
    let raw = std::fs::read_dir(profile.join("raw/loop")).unwrap().count();
    assert!(raw >= 1, "no raw profile");
    let merged: Vec<_> = std::fs::read_dir(&profile)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("merged-") && n.ends_with(".profdata"))
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    let instr = comparison(&results, "loop", "instructions", "pgo");
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let show = |flag: &str| {
        let out = std::process::Command::new(&tool)
            .args(["show", flag])
            .arg(profile.join(&merged[0]))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    if word == "cspgo" {
        // Context-sensitive records, which an IR profile has none of.
        let cs = show("-showcs");
        assert!(!cs.contains("Total functions: 0"), "{cs}");
        assert!(cs.contains("Total functions: "), "{cs}");
    }
    if fewer {
        assert_instruction_verdict(&results, instr, "faster");
        assert!(instr["ratio"].as_f64().unwrap() < 0.97, "{instr:#}");
    } else {
        assert!(
            (instr["ratio"].as_f64().unwrap() - 1.0).abs() > 1e-9,
            "{instr:#}"
        );
        let shown = show("--counts");
        assert!(
            shown.contains("Instrumentation level: Front-end"),
            "{shown}"
        );
    }
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(
        cflags.contains(use_flag) && cflags.contains(&merged[0]),
        "{cflags}"
    );
}

/// clang's machine function splitting on the PGO profile
/// (`optimize = ["split-functions"]`), end to end on a fixture of its own
/// whose hot function holds a branch training never takes.
const SPLIT: &str = r#"
[target]
name = "coldpath"
source = { path = "src" }
build = "make"
binaries = { coldpath = "coldpath" }
compiler = "clang"

[[variant]]
name = "baseline"

[[variant]]
name = "split"
optimize = ["split-functions"]

[[workload]]
name = "loop"
run = "{bin.coldpath} 3000000"
train_run = "{bin.coldpath} 1000000"
figures = [{ name = "checksum", regex = "checksum ([0-9]+)" }]

[bench]
repetitions = 3
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 2
seed = 7
"#;

/// The `.cold` fragments `nm` lists in `binary`.
fn cold_fragments(binary: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("nm")
        .arg(binary)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|name| {
            name.rsplit_once('.')
                .is_some_and(|(_, suffix)| suffix == "cold")
        })
        .map(str::to_owned)
        .collect()
}

/// The profile is trained with IR instrumentation and merged, the final
/// build gets it with `-fsplit-machine-functions`, and the never-run
/// branch of `step` leaves the function for a cold fragment the baseline
/// does not have; the benchmarked program computes the same and is judged.
/// gcc, whose PGO splits already, is refused saying so.
#[test]
fn split_functions_moves_the_blocks_training_never_ran_into_a_cold_fragment() {
    if !tools_or_skip(&["clang", "nm"]) {
        return;
    }
    let sandbox = Sandbox::with_fixture("coldpath");
    sandbox.write(
        "afterburner.toml",
        &SPLIT.replace("compiler = \"clang\"", "compiler = \"gcc\""),
    );
    sandbox
        .afterburner(&["build"])
        .assert_fails_with("`split-functions` is not available with gcc")
        .assert_fails_with("-freorder-blocks-and-partition");
    sandbox.write("afterburner.toml", SPLIT);
    sandbox.afterburner(&["run"]).assert_ok();

    let profile = sandbox
        .path()
        .join(".afterburner/variants/split/profile/clang-pgo-mfs");
    let merged = files_with(&profile, "profdata");
    assert_eq!(merged.len(), 1, "{merged:?}");
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let split = &results["variants"][1];
    for flags in ["cflags", "ldflags"] {
        let flags = split[flags].as_str().unwrap();
        assert!(
            flags.contains("-fsplit-machine-functions")
                && flags.contains(&format!("-fprofile-use={}", merged[0].display())),
            "{flags}"
        );
    }
    let built = |variant: &str| {
        sandbox
            .path()
            .join(".afterburner/variants")
            .join(variant)
            .join("build/coldpath")
    };
    let split_off = cold_fragments(&built("split"));
    assert!(split_off.contains(&"step.cold".to_owned()), "{split_off:?}");
    assert_eq!(cold_fragments(&built("baseline")), Vec::<String>::new());

    let checksum = comparison(&results, "loop", "checksum", "split");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");
    for metric in ["wall", "instructions"] {
        let judged = comparison(&results, "loop", metric, "split");
        let verdict = judged["verdict"].as_str().unwrap_or_default();
        assert!(
            ["faster", "slower", "same", "undecided"].contains(&verdict),
            "{judged:#}"
        );
    }
}

/// Train on one input, judge on another: the report shows the gain on the
/// workload the profile never saw in a section of its own.
#[test]
fn report_shows_gain_on_workloads_the_profile_never_saw() {
    let unseen = Experiment::new("unseen")
        .binaries(&[("hotpath", "hotpath")])
        .variant(Variant::new("pgo").optimize(&["pgo"]))
        .workload(
            Workload::new("teach")
                .role("train")
                .run("{bin.hotpath} 200000 1000"),
        )
        .workload(
            Workload::new("exam")
                .role("bench")
                .run("{bin.hotpath} 500000 700"),
        )
        .bench(INSTRUCTIONS_BENCH);
    let (sandbox, results) = run_experiment("hotpath", &unseen);
    let run_dir = only_run_dir(&sandbox);
    assert_eq!(results["training_workloads"], serde_json::json!(["teach"]));
    assert!(results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["workload"] == "exam"));
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    let section = report
        .split("## Gain on workloads the profile never saw")
        .nth(1)
        .expect(&report);
    assert!(
        section.contains("| `exam` | instructions | `pgo` |"),
        "{section}"
    );
}

/// Three counted runs of instructions alone.
const INSTRUCTIONS_BENCH: Bench = Bench {
    repetitions: 3,
    metrics: &["instructions"],
    ..Bench::QUICK
};

/// The gohot fixture built by `go`: `baseline` against `pgo`, trained by
/// `{bin.gohot} TRAIN`.
fn gohot(train: &str) -> Experiment {
    Experiment::new("gohot")
        .build("go build -o gohot .")
        .compiler("go")
        .variant(Variant::new("pgo").optimize(&["pgo"]))
        .workload(
            Workload::new("loop")
                .run("{bin.gohot} -n 2000000")
                .train_run(&format!("{{bin.gohot}} {train}")),
        )
        .bench(INSTRUCTIONS_BENCH)
}

#[test]
fn go_pgo_merges_cpu_profiles_and_devirtualizes_the_hot_call() {
    if !go_for_pgo_or_skip() {
        return;
    }
    let (_sandbox, results) = run_experiment("gohot", &gohot("-n 50000000 -cpuprofile {profile}"));
    let goflags = results["variants"][1]["goflags"].as_str().unwrap();
    assert!(
        goflags.contains("-pgo=") && goflags.contains("merged-"),
        "{goflags}"
    );
    let instr = comparison(&results, "loop", "instructions", "pgo");
    assert_instruction_verdict(&results, instr, "faster");
    assert!(instr["ratio"].as_f64().unwrap() < 0.9, "{instr:#}");
}

/// Go PGO for a program trained without its profiling flag: the training
/// runs are sampled with `perf record -g` and converted into pprof's
/// format, which `go build -pgo` must accept and which must name the same
/// functions and start lines as the CPU profile Go's own runtime writes.
#[test]
fn go_pgo_from_perf_samples_names_what_gos_profiler_does_and_devirtualizes() {
    if !go_perf_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_experiment("gohot", &gohot("-n 50000000"));
    sandbox.afterburner(&["run"]).assert_ok();
    let dir = sandbox.variant_dir("pgo").join("profile/go-pgo-perf");
    let profile = afterburner::toolchain::find_files(&dir, "pprof")
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("merged-")
        })
        .unwrap_or_else(|| panic!("no merged-*.pprof in {}", dir.display()));
    let pprof = |args: &[&str], file: &Path| {
        let out = std::process::Command::new(pgo_go())
            .args(["tool", "pprof"])
            .args(args)
            .arg(file)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    // The hot function leads the flat profile.
    let top = pprof(&["-top"], &profile);
    let first = top
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap_or_default();
    assert!(first.contains("main."), "{top}");
    // Go's own profiler on the same program: main.run has the same start
    // line (which Go's PGO needs to place call sites) in both.
    let own = sandbox.path().join("own.pprof");
    let binary = sandbox.variant_dir("pgo").join("build/gohot");
    let ran = std::process::Command::new(&binary)
        .args(["-n", "50000000", "-cpuprofile"])
        .arg(&own)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let start_of_run = |raw: &str| {
        raw.lines()
            .find_map(|l| l.split_once(" main.run ").map(|(_, r)| r.to_owned()))
            .and_then(|r| r.split(" s=").nth(1).map(|s| s.trim().to_owned()))
    };
    let ours = start_of_run(&pprof(&["-raw"], &profile));
    let gos = start_of_run(&pprof(&["-raw"], &own));
    assert!(ours.is_some(), "main.run is missing from our profile");
    assert_eq!(ours, gos);
    // The final build read it, and the hot interface call got faster.
    let results = sandbox.results();
    let goflags = results["variants"][1]["goflags"].as_str().unwrap();
    assert!(
        goflags.contains("-pgo=") && goflags.contains("go-pgo-perf/merged-"),
        "{goflags}"
    );
    let instr = comparison(&results, "loop", "instructions", "pgo");
    assert_instruction_verdict(&results, instr, "faster");
    assert!(instr["ratio"].as_f64().unwrap() < 0.9, "{instr:#}");
}

#[test]
fn c_only_optimizations_are_refused_for_go() {
    let go_lto = gohot("-n 50000000 -cpuprofile {profile}")
        .variant(Variant::new("pgo").optimize(&["pgo", "lto"]));
    Sandbox::with_experiment("gohot", &go_lto)
        .afterburner(&["build"])
        .assert_fails_with("`lto` is not available with go");
}

/// The hotpath fixture as `bolt`: `baseline` against `variant`, the loop
/// checked by the checksum the fixture prints.
fn bolt(variant: Variant) -> Experiment {
    Experiment::new("bolt")
        .binaries(&[("hotpath", "hotpath")])
        .variant(variant)
        .workload(hot_loop("300000").checksum())
        .bench(Bench {
            repetitions: 3,
            ..Bench::QUICK
        })
}

/// The variant `bolt`, optimized by `optimize` with BOLT's profile from
/// `profile` (`instrumented`, `sampled`).
fn bolt_variant(optimize: &[&str], profile: &str) -> Variant {
    Variant::new("bolt")
        .optimize(optimize)
        .line(&format!("bolt_profile = \"{profile}\""))
}

/// Whether the binary at `path` is BOLT's rewrite (it carries BOLT's note).
fn bolted(path: &Path) -> bool {
    std::fs::read(path)
        .unwrap()
        .windows(4)
        .any(|w| w == b"BOLT")
}

/// BOLT from an instrumented run; the rewritten binary must still compute
/// what the original does (the fixture prints a checksum).
#[test]
fn bolt_rewrites_the_binary_which_still_passes_its_check() {
    let experiment = bolt(bolt_variant(&["bolt"], "instrumented"));
    let (sandbox, results) = run_experiment("hotpath", &experiment);
    let profile = sandbox
        .variant_dir("bolt")
        .join("profile/bolt/merged-hotpath.fdata");
    assert!(
        std::fs::metadata(&profile).unwrap().len() > 0,
        "no merged BOLT profile"
    );
    let checksum = comparison(&results, "loop", "checksum", "bolt");
    assert_eq!(
        checksum["ratio"], 1.0,
        "BOLT changed the program's result: {checksum:#}"
    );
    let ldflags = results["variants"][1]["ldflags"].as_str().unwrap();
    assert!(ldflags.contains("--emit-relocs"), "{ldflags}");
    // The benchmarked binary is BOLT's: it carries BOLT's note section.
    let binary = sandbox.variant_dir("bolt").join("build/hotpath");
    assert!(bolted(&binary), "binary was not rewritten by BOLT");
    // llvm-bolt's own output is kept beside it, for `explain`.
    let log = std::fs::read_to_string(binary.with_extension("bolt.log")).unwrap();
    assert!(
        log.contains("functions in the binary") && log.contains("non-empty execution profile"),
        "{log}"
    );
    // llvm-bolt writes mode 0777 whatever the umask; no file afterburner
    // leaves is writable by all.
    let all_writable: Vec<String> = walk(&sandbox.path().join(".afterburner"))
        .into_iter()
        .filter(|p| {
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions())
                & 0o002
                != 0
        })
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(all_writable, Vec::<String>::new(), "files writable by all");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            files.extend(walk(&path));
        } else if entry.file_type().unwrap().is_file() {
            files.push(path);
        }
    }
    files
}

/// BOLT from perf samples: refused without a PMU unless the variant names
/// a software event; on timer samples (no LBR here) `perf2bolt -nl` turns
/// each recording into a profile, the profiles of two workloads are summed,
/// and the rewritten binary still computes the same checksum.
#[test]
fn sampled_bolt_is_refused_without_a_pmu_and_runs_on_timer_samples_when_asked() {
    let bolt_from = |profile: &str| {
        bolt(bolt_variant(&["bolt"], profile))
            .workload(hot_loop("100000000").checksum())
            .workload(rare("50000000 3"))
    };
    let sandbox = Sandbox::with_experiment("hotpath", &bolt_from("sampled"));
    if !perf_counts_instructions() {
        sandbox
            .afterburner(&["build"])
            .assert_fails_with("BOLT from perf samples")
            .assert_fails_with("no hardware counters")
            .assert_fails_with("leave bolt_profile unset");
    }
    sandbox.write_experiment(
        &bolt_from("sampled")
            .variant(bolt_variant(&["bolt"], "sampled").line("sample_event = \"cpu-clock\"")),
    );
    if !perf_may_record("cpu-clock") {
        sandbox
            .afterburner(&["build"])
            .assert_fails_with("perf cannot record `cpu-clock` here");
        crate::support::skip_part("perf may not record here: sampled BOLT");
        return;
    }
    sandbox.afterburner(&["run"]).assert_ok();
    let profile = sandbox.variant_dir("bolt").join("profile/bolt-perf");
    for workload in ["loop", "rare"] {
        let recordings = std::fs::read_dir(profile.join("raw").join(workload))
            .unwrap()
            .count();
        assert!(recordings >= 1, "no perf recording of {workload} kept");
    }
    let merged = std::fs::read_to_string(profile.join("merged-hotpath.fdata")).unwrap();
    let mut lines = merged.lines();
    // Not root with perf_event_paranoid 2, perf samples user space only and
    // names the event `cpu-clock:u`.
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("no_lbr cpu-clock")),
        "{merged}"
    );
    // Samples in main's loop, and in `rare`, which only the second
    // workload calls often enough to be sampled.
    assert!(merged.contains(" main "), "{merged}");
    assert!(merged.contains(" rare"), "{merged}");
    let results = sandbox.results();
    let checksum = comparison(&results, "loop", "checksum", "bolt");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");
    let binary = sandbox.variant_dir("bolt").join("build/hotpath");
    assert!(bolted(&binary), "not rewritten by BOLT");

    // Both ways instrument with the same flags, but the binaries differ:
    // switching rebuilds and retrains instead of reusing the other's build.
    sandbox.write_experiment(&bolt_from("instrumented"));
    let switched = sandbox.afterburner(&["train"]);
    switched.assert_ok();
    let stderr = switched.stderr();
    assert!(
        stderr.contains("building bolt (instrumented) … done"),
        "{stderr}"
    );
    assert!(sandbox
        .variant_dir("bolt")
        .join("profile/bolt/merged-hotpath.fdata")
        .is_file());
}

/// A binary training never runs (a multi-binary target's other tool) has
/// no BOLT profile: it is left as linked, with a warning, and the one that
/// ran is rewritten.
#[test]
fn bolt_leaves_a_binary_training_never_ran_as_linked() {
    let two_binaries = bolt(bolt_variant(&["bolt"], "instrumented"))
        .build("make && cp hotpath hotpath-tool")
        .binaries(&[("hotpath", "hotpath"), ("tool", "hotpath-tool")]);
    let sandbox = Sandbox::with_experiment("hotpath", &two_binaries);
    let run = sandbox.afterburner(&["build", "--quiet"]);
    run.assert_ok();
    let train = sandbox.afterburner(&["train"]);
    train.assert_ok();
    assert!(
        train
            .stderr()
            .contains("warning: no BOLT profile for binary `hotpath-tool`"),
        "{}",
        train.stderr()
    );
    let build = sandbox.variant_dir("bolt").join("build");
    assert!(bolted(&build.join("hotpath")));
    assert!(!bolted(&build.join("hotpath-tool")));
}

/// Whether perf counts hardware instructions here (a PMU).
fn perf_counts_instructions() -> bool {
    std::process::Command::new("perf")
        .args(["stat", "-x", ",", "-e", "instructions:u", "--", "true"])
        .output()
        .is_ok_and(|o| {
            let err = String::from_utf8_lossy(&o.stderr);
            o.status.success() && !err.contains("not supported") && !err.contains("not counted")
        })
}

/// Whether perf may record `event` here at all.
fn perf_may_record(event: &str) -> bool {
    std::process::Command::new("perf")
        .args(["record", "-q", "-e", event, "-o", "/dev/null", "--", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// gcc PGO, then BOLT on the PGO-built binary: two training rounds, each
/// on two training workloads whose profiles are kept apart and merged
/// (gcov-tool for gcc, merge-fdata for BOLT). The result is BOLT's rewrite
/// of a PGO build: fewer instructions than the baseline, same checksum.
#[test]
fn pgo_then_bolt_trains_two_rounds_and_stacks_both() {
    let stacked = bolt(bolt_variant(&["pgo", "lto", "bolt"], "instrumented"))
        .workload(rare("100000 3"))
        .bench(INSTRUCTIONS_BENCH);
    let sandbox = Sandbox::with_experiment("hotpath", &stacked);
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let stderr = run.stderr();
    for step in [
        "training bolt (gcc-pgo) on loop",
        "training bolt (gcc-pgo) on rare",
        "training bolt (bolt) on loop",
        "training bolt (bolt) on rare",
    ] {
        assert!(stderr.contains(step), "no `{step}` in:\n{stderr}");
    }
    let profiles = sandbox.variant_dir("bolt").join("profile");
    for kept in [
        "gcc-pgo/raw/loop/hotpath.gcda",
        "gcc-pgo/raw/rare/hotpath.gcda",
        "gcc-pgo/hotpath.gcda",
        "bolt/merged-hotpath.fdata",
    ] {
        assert!(profiles.join(kept).is_file(), "{kept} missing");
    }
    for workload in ["loop", "rare"] {
        let raw = std::fs::read_dir(profiles.join("bolt/raw").join(workload))
            .unwrap()
            .count();
        assert!(raw >= 1, "no BOLT profile of {workload}");
    }
    let results = sandbox.results();
    let checksum = comparison(&results, "loop", "checksum", "bolt");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");
    let instr = comparison(&results, "loop", "instructions", "bolt");
    assert_instruction_verdict(&results, instr, "faster");
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(
        cflags.contains("-fprofile-use") && cflags.contains("-flto=auto"),
        "{cflags}"
    );
    let binary = sandbox.variant_dir("bolt").join("build/hotpath");
    assert!(bolted(&binary), "not rewritten by BOLT");

    // Nothing changed: both rounds and the final build are reused.
    let again = sandbox.afterburner(&["train"]);
    again.assert_ok();
    let stderr = again.stderr();
    assert!(
        stderr.contains("training bolt (gcc-pgo): profile up to date")
            && stderr.contains("training bolt (bolt): profile up to date"),
        "{stderr}"
    );
    assert!(!stderr.contains("done in"), "{stderr}");
}

/// `{params.KEY}` in the build command, per variant (one allocator or
/// feature set per variant): each build runs its own command, and a
/// parameter the build does not use changes no build key.
#[test]
fn the_build_command_takes_each_variants_params() {
    let flavoured = |build: &str, n: &str| {
        bolt(Variant::new("other").params("flavour = \"jemalloc\""))
            .build(&format!("make && echo built with {build}"))
            .param("flavour = \"libc\"")
            .param(&format!("n = {n}"))
    };
    let sandbox = Sandbox::with_experiment("hotpath", &flavoured("{params.flavour}", "1"));
    sandbox.afterburner(&["build"]).assert_ok();
    let log = |variant: &str| {
        std::fs::read_to_string(sandbox.variant_dir(variant).join("logs/build-final.log")).unwrap()
    };
    assert!(
        log("baseline").contains("built with libc"),
        "{}",
        log("baseline")
    );
    assert!(
        log("other").contains("built with jemalloc"),
        "{}",
        log("other")
    );
    sandbox.write_experiment(&flavoured("{params.flavour}", "2"));
    let again = sandbox.afterburner(&["build"]);
    again.assert_ok();
    assert!(!again.stderr().contains("done in"), "{}", again.stderr());

    sandbox.write_experiment(&flavoured("{params.malloc}", "1"));
    sandbox
        .afterburner(&["build"])
        .assert_fails_with(
            "afterburner.toml:5: unknown placeholder `{params.malloc}` in the build command",
        )
        .assert_fails_with("{params.flavour}");
}

#[test]
fn a_variant_may_build_with_another_compiler() {
    let clang = Variant::new("clang-pgo")
        .compiler("clang")
        .optimize(&["pgo"]);
    let (sandbox, results) = run_experiment("hotpath", &bolt(clang).bench(INSTRUCTIONS_BENCH));
    let run_dir = only_run_dir(&sandbox);
    assert!(
        results["variants"][0]["compiler_version"]
            .as_str()
            .unwrap()
            .starts_with("gcc"),
        "{results:#}"
    );
    assert!(
        results["variants"][1]["compiler_version"]
            .as_str()
            .unwrap()
            .contains("clang"),
        "{results:#}"
    );
    assert_eq!(
        comparison(&results, "loop", "checksum", "clang-pgo")["ratio"],
        1.0
    );
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        report.contains("| `clang-pgo` | pgo | Debian clang version"),
        "{report}"
    );
}

/// gcc profiles of two training workloads, where the first ran a binary the
/// second did not: `gcov-tool merge` alone crashes on such a file, so it
/// must be carried over by hand; the merged profile holds both binaries'
/// counters, and the shared binary's are the sum of both workloads'.
#[test]
fn gcc_profiles_of_workloads_that_ran_different_binaries_merge() {
    let two_binaries = hotpath("pgo")
        .build("make && $CC $CFLAGS -o other $(pwd)/hotpath.c $LDFLAGS")
        .binaries(&[("hotpath", "hotpath"), ("other", "other")])
        .workload(hot_loop("300000 && {bin.other} 1000"))
        .workload(rare("100000 3"))
        .bench(Bench {
            repetitions: 2,
            metrics: &["instructions"],
            ..HOTPATH_BENCH
        });
    let (sandbox, results) = run_experiment("hotpath", &two_binaries);
    let profile = sandbox.variant_dir("pgo").join("profile/gcc-pgo");
    let names = |dir: &Path| -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "gcda"))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let in_loop = names(&profile.join("raw/loop"));
    let in_rare = names(&profile.join("raw/rare"));
    assert_eq!(in_loop.len(), 2, "{in_loop:?}");
    assert_eq!(in_rare.len(), 1, "{in_rare:?}");
    assert_eq!(names(&profile), in_loop);
    // The shared binary's merged counters are neither workload's alone.
    let shared = &in_rare[0];
    let merged = std::fs::read(profile.join(shared)).unwrap();
    assert_ne!(
        merged,
        std::fs::read(profile.join("raw/loop").join(shared)).unwrap()
    );
    assert_ne!(
        merged,
        std::fs::read(profile.join("raw/rare").join(shared)).unwrap()
    );
    let instr = comparison(&results, "loop", "instructions", "pgo");
    assert_instruction_verdict(&results, instr, "faster");
}

/// C++: a virtual call whose target is almost always the same. gcc's and
/// clang's PGO promote and inline it (fewer instructions), BOLT rewrites
/// the binary, and every variant computes the same checksum.
#[test]
fn cpp_virtual_calls_get_fewer_instructions_with_pgo_and_survive_bolt() {
    let hotcpp = Experiment::new("hotcpp")
        .variant(Variant::new("pgo").optimize(&["pgo"]))
        .variant(Variant::new("clang").compiler("clang"))
        .variant(
            Variant::new("clang-pgo")
                .compiler("clang")
                .optimize(&["pgo"]),
        )
        .variant(bolt_variant(&["bolt"], "instrumented"))
        .workload(
            Workload::new("virtual")
                .run("{bin.hotcpp} 1000000")
                .train_run("{bin.hotcpp} 300000")
                .checksum(),
        )
        .bench(Bench {
            metrics: &["instructions"],
            instruction_repetitions: Some(2),
            ..Bench::QUICK
        });
    let (sandbox, results) = run_experiment("hotcpp", &hotcpp);
    for variant in ["pgo", "clang", "clang-pgo", "bolt"] {
        let checksum = comparison(&results, "virtual", "checksum", variant);
        assert_eq!(checksum["ratio"], 1.0, "{variant}: {checksum:#}");
    }
    let pgo = comparison(&results, "virtual", "instructions", "pgo");
    assert_instruction_verdict(&results, pgo, "faster");
    // clang's PGO against clang's own build (the baseline is gcc's).
    let mean = |variant: &str| {
        results["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["variant"] == variant && m["metric"]["name"] == "instructions")
            .unwrap()["summary"]["mean"]
            .as_f64()
            .unwrap()
    };
    let clang_ratio = mean("clang-pgo") / mean("clang");
    assert!(clang_ratio < 0.97, "clang-pgo / clang = {clang_ratio}");
    let cxxflags_seen =
        std::fs::read_to_string(sandbox.variant_dir("pgo").join("logs/build-final.log")).unwrap();
    assert!(cxxflags_seen.contains("-fprofile-use"), "{cxxflags_seen}");
    let binary = sandbox.variant_dir("bolt").join("build/hotcpp");
    assert!(bolted(&binary), "not rewritten by BOLT");
}
