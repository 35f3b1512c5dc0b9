//! Bad input gets a clear error naming the file, the line and what to do;
//! failures keep their logs; nothing hangs.

use crate::support::{only_run_dir, Sandbox};

const BASE: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[workload]]
name = "loop"
run = "{bin.hotpath} 1000"

[bench]
repetitions = 2
warmup = 0
"#;

#[test]
fn unknown_key_names_file_line_and_key() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &BASE.replace("build = \"make\"", "build = \"make\"\nbuild_comand = \"x\""),
    );
    let run = sandbox.afterburner(&["build"]);
    run.assert_fails_with("afterburner.toml")
        .assert_fails_with("line 6")
        .assert_fails_with("build_comand");
}

#[test]
fn missing_experiment_file_is_named() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox
        .afterburner(&["run", "nope.toml"])
        .assert_fails_with("nope.toml");
}

#[test]
fn failing_build_shows_compiler_error_and_log() {
    let sandbox = Sandbox::with_fixture("fails");
    let text = BASE
        .replace("hotpath = \"hotpath\"", "broken = \"broken\"")
        .replace("{bin.hotpath}", "{bin.broken}");
    sandbox.write("afterburner.toml", &text);
    let run = sandbox.afterburner(&["build"]);
    run.assert_fails_with("building variant `baseline` (final stage) failed with exit code")
        .assert_fails_with("missing_symbol_here")
        .assert_fails_with("build-final.log");
}

#[test]
fn failing_workload_is_recorded_and_reported() {
    let sandbox = Sandbox::with_fixture("hotpath");
    let text = BASE.replace(
        "run = \"{bin.hotpath} 1000\"",
        "run = \"sh -c 'echo boom >&2; exit 3'\"",
    );
    sandbox.write("afterburner.toml", &text);
    let run = sandbox.afterburner(&["run"]);
    run.assert_fails_with("workload `loop` failed on variant `baseline` with exit code 3")
        .assert_fails_with("boom");
    let raw = std::fs::read_to_string(only_run_dir(&sandbox).join("raw.jsonl")).unwrap();
    assert_eq!(raw.lines().count(), 1, "the failed run is kept: {raw}");
    assert!(raw.contains("\"success\":false"));
}

#[test]
fn hanging_workload_is_killed_at_its_timeout() {
    let sandbox = Sandbox::with_fixture("hotpath");
    let text = BASE.replace(
        "run = \"{bin.hotpath} 1000\"",
        "run = \"sleep 60\"\ntimeout = \"1s\"",
    );
    sandbox.write("afterburner.toml", &text);
    let start = std::time::Instant::now();
    sandbox
        .afterburner(&["run"])
        .assert_fails_with("did not finish within 1s");
    assert!(start.elapsed().as_secs() < 30);
}

#[test]
fn kill_9_mid_bench_loses_no_finished_run_and_resume_completes_it() {
    let sandbox = Sandbox::with_fixture("hotpath");
    let text = BASE
        .replace("run = \"{bin.hotpath} 1000\"", "run = \"sleep 0.2\"")
        .replace("repetitions = 2", "repetitions = 20");
    sandbox.write("afterburner.toml", &text);
    sandbox.afterburner(&["build"]).assert_ok();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let runs = sandbox.path().join(".afterburner/runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let lines = loop {
        let raw = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path().join("raw.jsonl"));
        let count = raw
            .and_then(|r| std::fs::read_to_string(r).ok())
            .map_or(0, |t| t.lines().count());
        if count >= 3 || std::time::Instant::now() > deadline {
            break count;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(lines >= 3, "bench never got going");
    let run_dir = only_run_dir(&sandbox);
    let raw = std::fs::read_to_string(run_dir.join("raw.jsonl")).unwrap();
    let kept = raw.lines().count();
    assert!(kept >= lines && kept < 20, "{kept} lines");
    for line in raw.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    // The report redraws from what was kept.
    sandbox.afterburner(&["report"]).assert_ok();
    let results = crate::support::read_json(&run_dir.join("results.json"));
    assert_eq!(results["runs"]["total"].as_u64().unwrap(), kept as u64);

    // Resume: the same run directory fills up to one run per round, and the
    // runs kept before the kill are still there, unchanged.
    sandbox.afterburner(&["bench", "--resume"]).assert_ok();
    assert_eq!(
        only_run_dir(&sandbox),
        run_dir,
        "resume must not start a new run"
    );
    let after = std::fs::read_to_string(run_dir.join("raw.jsonl")).unwrap();
    assert!(after.starts_with(&raw), "finished runs were rewritten");
    let mut rounds: Vec<u64> = after
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["success"] == true)
        .map(|r| r["round"].as_u64().unwrap())
        .collect();
    rounds.sort_unstable();
    assert_eq!(rounds, (0..20).collect::<Vec<u64>>());
    let results = crate::support::read_json(&run_dir.join("results.json"));
    assert_eq!(results["measurements"][0]["summary"]["n"], 20);
}

#[test]
fn every_recipe_is_a_valid_experiment() {
    let recipes = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    let mut seen = 0;
    for entry in std::fs::read_dir(&recipes).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            for quick in [false, true] {
                afterburner::experiment::load(&path, quick).unwrap_or_else(|e| panic!("{e}"));
            }
            seen += 1;
        }
    }
    assert!(seen >= 2, "recipes/ should hold sqlite and redis");
}

/// Valgrind knows no AVX-512 (which `-march=native` emits on CPUs that
/// have it): callgrind dies on such a binary, and the error says why
/// instead of "run it by hand". The instruction runs only under valgrind
/// (whose preload library is in `LD_PRELOAD`), never natively: a CPU without
/// AVX-512 would die of SIGILL on the bench's timed runs (issue 13, an AMD
/// EPYC).
#[test]
fn callgrind_on_an_instruction_valgrind_lacks_says_so() {
    let has_counters = std::process::Command::new("perf")
        .args(["stat", "-x", ",", "-e", "instructions:u", "--", "true"])
        .output()
        .is_ok_and(|o| {
            let err = String::from_utf8_lossy(&o.stderr);
            o.status.success() && !err.contains("not supported") && !err.contains("not counted")
        });
    if has_counters {
        crate::support::skip(crate::support::Lack::Machine(
            "perf counts instructions here, callgrind is not used",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    // vmovups zmm0, [rax]: an EVEX-encoded AVX-512 instruction.
    sandbox.write(
        "src/avx.c",
        concat!(
            "#include <stdlib.h>\n#include <string.h>\n",
            "int main(void) { const char *p = getenv(\"LD_PRELOAD\");\n",
            "  if (p && strstr(p, \"vgpreload\")) __asm__ volatile(\".byte 0x62,0xf1,0x7c,0x48,0x10,0x00\");\n",
            "  return 0; }\n"
        ),
    );
    sandbox.write(
        "afterburner.toml",
        &BASE
            .replace("build = \"make\"", "build = \"cc -O2 -o avx avx.c\"")
            .replace("{ hotpath = \"hotpath\" }", "{ avx = \"avx\" }")
            .replace("{bin.hotpath} 1000", "{bin.avx} go")
            .replace("warmup = 0", "warmup = 0\nmetrics = [\"instructions\"]"),
    );
    sandbox
        .afterburner(&["run"])
        .assert_fails_with("valgrind cannot run an instruction in this binary")
        .assert_fails_with("march = \"x86-64-v3\"");
}

/// What afterburner decides from the CPU's flags, on CPUs this machine is
/// not: `AFTERBURNER_CPUINFO` stands in for /proc/cpuinfo. With AVX-512
/// (x86-64-v4) and no counters, doctor says callgrind cannot run
/// `-march=native` builds; without it, that they run.
#[test]
fn cpu_features_are_detected_not_assumed() {
    let sandbox = Sandbox::with_fixture("hotpath");
    let v3 = "avx avx2 bmi1 bmi2 f16c fma abm movbe xsave";
    let base = "fpu sse sse2 cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3";
    for (name, flags, level) in [
        ("v3.txt", format!("{base} {v3}"), "v3"),
        (
            "v4.txt",
            format!("{base} {v3} avx512f avx512bw avx512cd avx512dq avx512vl"),
            "v4",
        ),
    ] {
        let cpuinfo = sandbox.write(
            name,
            &format!("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: {flags}\n\n"),
        );
        let env = sandbox.afterburner_with_env(&["env"], &[("AFTERBURNER_CPUINFO", &cpuinfo)]);
        env.assert_ok();
        assert!(
            env.stdout()
                .contains(&format!("x86-64 level:        {level}")),
            "{}",
            env.stdout()
        );
        let doctor =
            sandbox.afterburner_with_env(&["doctor"], &[("AFTERBURNER_CPUINFO", &cpuinfo)]);
        let said = doctor.stdout() + &doctor.stderr();
        if !env.stdout().contains("perf counters:       no") {
            crate::support::skip_part("this machine has counters: the AVX-512 hint does not apply");
        } else if level == "v4" {
            assert!(said.contains("this CPU has AVX-512"), "{said}");
        } else {
            assert!(
                said.contains("callgrind runs -march=native builds"),
                "{said}"
            );
        }
    }
}
