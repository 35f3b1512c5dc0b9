//! A cargo target (`[target] cargo = { … }`): afterburner runs cargo with
//! each word as rustc and cargo take it, checks every build's rustc
//! command lines for them, and refuses what rustc cannot take by name.
//! The fixture crate `rusthot` has no dependencies: nothing is fetched.

use crate::support::{
    assert_instruction_verdict, comparison, files_with, mean_instructions, only_run_dir,
    run_experiment, rust_profdata_or_skip, skip_part, Bench, Experiment, Sandbox, Variant,
    Workload,
};

/// The rusthot crate as a cargo target, with `variants`, on one loop,
/// trained on a shorter one.
fn rusthot(variants: Vec<Variant>) -> Experiment {
    Experiment::new("rusthot")
        .cargo(r#"{ bins = ["rusthot"] }"#)
        .variants(std::iter::once(Variant::new("baseline")).chain(variants))
        .workload(
            Workload::new("loop")
                .run("{bin.rusthot} 3000000")
                .train_run("{bin.rusthot} 1000000 train"),
        )
        .bench(Bench {
            repetitions: 3,
            metrics: &["instructions"],
            ..Bench::QUICK
        })
}

/// What the final build of `variant` recorded of its check.
fn verified(sandbox: &Sandbox, variant: &str) -> serde_json::Value {
    let path = sandbox.variant_dir(variant).join("final.json");
    let record: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    record["verified"].clone()
}

#[test]
fn every_word_of_a_cargo_target_reaches_rustc_and_pgo_cuts_the_work() {
    if !rust_profdata_or_skip() {
        return;
    }
    let bolt = afterburner::toolchain::bolt::find_tool("llvm-bolt").is_ok();
    let mut variants = vec![
        Variant::new("pgo").optimize(&["pgo"]),
        Variant::new("lto").optimize(&["lto", "o3"]),
        Variant::new("pgo-lto").optimize(&["pgo", "lto"]),
        // A level every x86-64 machine runs, so callgrind can count it.
        Variant::new("march")
            .optimize(&["march"])
            .line(r#"march = "x86-64-v2""#),
    ];
    if bolt {
        variants.push(Variant::new("bolt").optimize(&["pgo", "bolt"]));
    } else {
        skip_part("no llvm-bolt here: `bolt` on a cargo target not built");
    }
    let (sandbox, results) = run_experiment("rusthot", &rusthot(variants));
    let flags = |v: usize, key: &str| results["variants"][v][key].as_str().unwrap().to_owned();
    assert!(
        flags(1, "rustflags").starts_with("-Cprofile-use="),
        "{results:#}"
    );
    assert!(flags(2, "cargo").contains("CARGO_PROFILE_RELEASE_LTO=fat"));
    assert!(flags(2, "cargo").contains("CARGO_PROFILE_RELEASE_OPT_LEVEL=3"));
    assert_eq!(flags(4, "rustflags"), "-Ctarget-cpu=x86-64-v2");
    // Every switch a word adds is on the crate's rustc command line.
    let mut names = vec!["pgo", "lto", "pgo-lto", "march"];
    if bolt {
        names.push("bolt");
    }
    for name in names {
        let seen = verified(&sandbox, name);
        assert_eq!(seen["compiler"], "rustc", "{seen:#}");
        assert!(seen["units"].as_u64().unwrap() >= 1, "{name}: {seen:#}");
        let switches = seen["switches"].as_array().unwrap();
        assert!(!switches.is_empty(), "{name}: {seen:#}");
        for s in switches {
            assert_eq!(s["without"], 0, "{name}: {s:#}");
        }
    }
    if bolt {
        let seen = verified(&sandbox, "bolt");
        let said: Vec<&str> = seen["switches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["switch"].as_str().unwrap())
            .collect();
        assert!(said.contains(&"-Clink-arg=-Wl,--emit-relocs"), "{said:?}");
        assert!(
            said.iter().any(|s| s.starts_with("-Cprofile-use=")),
            "{said:?}"
        );
    }
    // The profile is used: the same program does less work.
    let pgo = comparison(&results, "loop", "instructions", "pgo");
    assert_instruction_verdict(&results, pgo, "faster");
    // Without `lto`'s units in the instrumented build too, 0.9998: "same".
    let pgo_lto = comparison(&results, "loop", "instructions", "pgo-lto");
    assert_instruction_verdict(&results, pgo_lto, "faster");
}

#[test]
fn the_instrumented_build_carries_llvms_profile_runtime_partitioned_as_the_final_one() {
    if !rust_profdata_or_skip() {
        return;
    }
    let experiment = rusthot(vec![
        Variant::new("pgo").optimize(&["pgo"]),
        Variant::new("pgo-lto").optimize(&["pgo", "lto"]),
    ]);
    let sandbox = Sandbox::with_experiment("rusthot", &experiment);
    sandbox.afterburner(&["build"]).assert_ok();
    let instrumented = |variant: &str| -> serde_json::Value {
        let path = sandbox.variant_dir(variant).join("instrumented.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let record = instrumented("pgo");
    let runtime = &record["verified"]["instrumentation"][0];
    assert_eq!(runtime["found"], 1, "{record:#}");
    assert!(record["rustflags"]
        .as_str()
        .unwrap()
        .starts_with("-Cprofile-generate="));
    // The build scripts and macros cargo runs on the host are not
    // instrumented: the host target is named, so RUSTFLAGS skip them.
    let log = std::fs::read_to_string(record["log"].as_str().unwrap()).unwrap();
    assert!(log.contains("--target "), "{log}");
    // `lto` partitions the instrumented build as it does the final one
    // (one codegen unit): a profile names internal functions by the unit
    // they were in, so one trained on 16 units matches little of a build
    // in one (the ripgrep case study measured it).
    let lto = instrumented("pgo-lto");
    assert!(
        lto["cargo"]
            .as_str()
            .unwrap()
            .contains("CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1"),
        "{lto:#}"
    );
    let units = lto["verified"]["switches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["switch"] == "-Ccodegen-units=1")
        .unwrap_or_else(|| panic!("{lto:#}"));
    assert_eq!(units["without"], 0, "{units:#}");
}

#[test]
fn words_rustc_cannot_take_are_refused_by_name() {
    for (word, said) in [
        ("autofdo", "only on nightly (-Zprofile-sample-use)"),
        ("cspgo", "which stable rustc does not offer"),
        ("noplt", "rustc has no `noplt`"),
    ] {
        let experiment = rusthot(vec![Variant::new("v").optimize(&[word])]);
        let sandbox = Sandbox::with_experiment("rusthot", &experiment);
        let run = sandbox.afterburner(&["plan"]);
        run.assert_fails_with(said);
        run.assert_fails_with("a cargo target takes `pgo`");
    }
}

#[test]
fn a_build_command_that_runs_cargo_is_refused_with_the_cargo_form() {
    let experiment = Experiment::new("rusthot")
        .build("cargo build --release")
        .binaries(&[("rusthot", "target/release/rusthot")]);
    let sandbox = Sandbox::with_experiment("rusthot", &experiment);
    sandbox
        .afterburner(&["plan"])
        .assert_fails_with("afterburner.toml:5: the build command runs cargo")
        .assert_fails_with("cargo = { bins = [\"NAME\"] }");
}

#[test]
fn a_raw_profile_brought_from_elsewhere_builds_a_cargo_target_and_is_checked() {
    if !rust_profdata_or_skip() {
        return;
    }
    // A profile collected elsewhere: a training of the instrumented build.
    let elsewhere = Sandbox::with_experiment(
        "rusthot",
        &rusthot(vec![Variant::new("pgo").optimize(&["pgo"])]),
    );
    elsewhere.afterburner(&["train"]).assert_ok();
    let raw = files_with(
        &elsewhere.variant_dir("pgo").join("profile/rust-pgo/raw"),
        "profraw",
    )
    .pop()
    .unwrap();
    let experiment = rusthot(vec![Variant::new("brought")
        .optimize(&["pgo"])
        .line(&format!("profile = \"{}\"", raw.display()))]);
    let sandbox = Sandbox::with_experiment("rusthot", &experiment);
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    // Every function of the profile is found in the binaries it builds.
    let stdout = run.stdout();
    let line = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("brought: rust-pgo (brought): "))
        .unwrap_or_else(|| panic!("no profile line: {stdout}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[1], "of", "{line}");
    assert_eq!(words[0], words[2], "{line}");
    assert!(words[0].parse::<u32>().unwrap() > 0, "{line}");
    let seen = verified(&sandbox, "brought");
    assert!(
        seen["switches"][0]["switch"]
            .as_str()
            .unwrap()
            .starts_with("-Cprofile-use="),
        "{seen:#}"
    );
    // Training never ran here: the profile is the brought one.
    assert!(!sandbox
        .variant_dir("brought")
        .join("logs/train-loop.err")
        .exists());
}

#[test]
fn an_llvm_profdata_of_another_release_than_rustcs_is_refused_before_any_build() {
    // A rustc that says it was built on LLVM 99, a release no
    // llvm-profdata here is of: the one the profiles would need.
    let sandbox = Sandbox::with_experiment(
        "rusthot",
        &rusthot(vec![Variant::new("pgo").optimize(&["pgo"])]),
    );
    let bin = sandbox.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v rustc"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrapper = bin.join("rustc");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -vV ]; then {real} -vV | sed 's/^LLVM version: .*/LLVM version: 99.1.0/'; else exec {real} \"$@\"; fi\n",
            real = real.trim()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = sandbox.afterburner_with_env(&["run"], &[("PATH", &path)]);
    run.assert_fails_with("writes LLVM 99's profiles, which only llvm-profdata of LLVM 99 reads");
    run.assert_fails_with("hint:");
    assert!(
        !sandbox.variant_dir("pgo").join("cargo").exists(),
        "nothing is built before the refusal"
    );
}

/// `check --rev` on a cargo target: the committed revision's crate built by
/// cargo beside the working tree's, each variant twice in the same rounds;
/// twice the steps in the tree shows as about twice the instructions.
#[test]
fn check_rev_builds_a_cargo_targets_revision_beside_the_tree() {
    if !rust_profdata_or_skip() {
        return;
    }
    let experiment = rusthot(vec![Variant::new("pgo").optimize(&["pgo"])]);
    let sandbox = Sandbox::with_experiment("rusthot", &experiment);
    sandbox.commit_all("before");
    let main = sandbox.path().join("src/src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    let doubled = text.replace("for i in 0..n {", "for i in 0..2 * n {");
    assert_ne!(doubled, text, "the fixture's loop moved");
    std::fs::write(&main, doubled).unwrap();
    let run = sandbox.afterburner(&["check", "--rev", "HEAD"]);
    run.assert_status(1);
    assert!(run.stdout().contains("slower by"), "{}", run.stdout());
    let names: Vec<String> = sandbox.results()["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_owned())
        .collect();
    let before = names
        .iter()
        .find(|n| n.starts_with("pgo@"))
        .unwrap_or_else(|| panic!("{names:?}"));
    let run_dir = only_run_dir(&sandbox);
    let ratio = mean_instructions(&run_dir, "pgo") / mean_instructions(&run_dir, before);
    assert!((1.8..2.2).contains(&ratio), "{ratio}");
}
