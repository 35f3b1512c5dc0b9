//! Validation tests: good files load, bad ones name file, line and fix.

use super::*;
use crate::experiment::{Ready, ReportSettings};
use crate::toolchain::Optimization;

const GOOD: &str = r#"
[target]
name = "fixture"
source = { path = "src" }
build = "make"
binaries = { app = "app" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo+lto"
optimize = ["pgo", "lto"]

[[workload]]
name = "hot"
run = "{bin.app} {params.n}"

[params]
n = 1000

[quick]
repetitions = 3
params = { n = 10 }
variants = ["baseline"]
"#;

fn load_text(text: &str, quick: bool) -> Result<Experiment, ExperimentError> {
    load_str(Path::new("/exp/afterburner.toml"), text, quick)
}

#[test]
fn loads_a_good_file_with_defaults() {
    let e = load_text(GOOD, false).unwrap();
    assert_eq!(e.target.cflags, "-O2");
    assert_eq!(e.target.source, Source::Path(PathBuf::from("/exp/src")));
    assert_eq!(e.variants.len(), 2);
    assert_eq!(
        e.variants[1].optimize,
        vec![Optimization::PGO, Optimization::LTO]
    );
    assert!(e.variants[1].needs_profile());
    assert_eq!(e.bench.repetitions, 10);
    assert_eq!(e.params["n"], "1000");
    assert_eq!(e.workloads[0].role, Role::Both);
}

#[test]
fn quick_overrides_repetitions_params_and_variants() {
    let e = load_text(GOOD, true).unwrap();
    assert_eq!(e.bench.repetitions, 3);
    assert_eq!(e.params["n"], "10");
    assert_eq!(e.variants.len(), 1);
}

#[test]
fn quick_keeps_only_the_workloads_it_names_and_refuses_an_unknown_one() {
    let two = GOOD.replace(
        "[params]",
        "[[workload]]\nname = \"cold\"\nrun = \"{bin.app} 1\"\n\n[params]",
    );
    let only_cold = two.replace("[quick]\n", "[quick]\nworkloads = [\"cold\"]\n");
    let names = |e: &Experiment| {
        e.workloads
            .iter()
            .map(|w| w.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&load_text(&only_cold, true).unwrap()), ["cold"]);
    assert_eq!(
        names(&load_text(&only_cold, false).unwrap()),
        ["hot", "cold"]
    );
    let unknown = two.replace("[quick]\n", "[quick]\nworkloads = [\"warm\"]\n");
    let err = load_text(&unknown, true).unwrap_err().to_string();
    for words in [
        "workload `warm`",
        "not defined",
        "hint: list names of [[workload]]",
    ] {
        assert!(err.contains(words), "no {words:?} in: {err}");
    }
}

fn error_of(text: &str) -> String {
    load_text(text, false).unwrap_err().to_string()
}

/// The error loading `text`, which must say each of `says` (its line as
/// `:N:`, its hint as `hint: …`); returned for what else a test checks.
#[track_caller]
fn error_saying(text: &str, says: &[&str]) -> String {
    let err = error_of(text);
    for words in says {
        assert!(err.contains(words), "no {words:?} in: {err}");
    }
    err
}

/// `GOOD` with `line` added to the `pgo+lto` variant, as line 14.
fn good_pgo_lto_with(line: &str) -> String {
    good_optimizing(&format!("optimize = [\"pgo\", \"lto\"]\n{line}"))
}

/// `GOOD` with the `pgo+lto` variant's `optimize` line (13) replaced by `lines`.
fn good_optimizing(lines: &str) -> String {
    GOOD.replace("optimize = [\"pgo\", \"lto\"]", lines)
}

/// `GOOD` with the `hot` workload's `run` line (17) followed by `lines`.
fn good_hot_with(lines: &str) -> String {
    GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        &format!("run = \"{{bin.app}} {{params.n}}\"\n{lines}"),
    )
}

/// `GOOD` and then the section `[name]` with `body`.
fn good_and(name: &str, body: &str) -> String {
    format!("{GOOD}\n[{name}]\n{body}\n")
}

/// The 1-based line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

#[test]
fn unknown_key_names_file_and_line() {
    let text = GOOD.replace("build = \"make\"", "build = \"make\"\nbuidl = \"x\"");
    error_saying(&text, &["/exp/afterburner.toml", "line 6", "buidl"]);
}

#[test]
fn unknown_optimization_names_line_and_hint() {
    let err = error_saying(
        &good_optimizing("optimize = [\"pgo\", \"turbo\"]"),
        &["hint:"],
    );
    assert!(
        err.starts_with("/exp/afterburner.toml:13: unknown or unsupported optimization `turbo`"),
        "{err}"
    );
}

#[test]
fn unknown_placeholder_is_rejected_with_known_ones() {
    let text = GOOD.replace("{bin.app} {params.n}", "{bin.ap}");
    error_saying(&text, &[":17: unknown placeholder `{bin.ap}`", "{bin.app}"]);
}

#[test]
fn duplicate_variant_and_bad_source_and_duration() {
    let dup = GOOD.replace("name = \"pgo+lto\"", "name = \"baseline\"");
    error_saying(&dup, &["defined twice"]);
    let two = GOOD.replace("{ path = \"src\" }", "{ path = \"src\", apt = \"x\" }");
    error_saying(&two, &[":4: source must name exactly one"]);
    let t = GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "run = \"{bin.app}\"\ntimeout = \"ten\"",
    );
    error_saying(&t, &["`ten` is not a duration"]);
}

/// `GOOD` with its source replaced by `source` (line 4).
fn good_from(source: &str) -> String {
    GOOD.replace("{ path = \"src\" }", source)
}

#[test]
fn a_crate_source_takes_one_exact_version() {
    for version in ["14.1.1", "1.0.0-rc.1", "0.3.2+build.7"] {
        let text = good_from(&format!(
            "{{ crate = \"ripgrep\", version = \"{version}\" }}"
        ));
        let e = load_text(&text, false).unwrap();
        assert_eq!(
            e.target.source,
            Source::Crate {
                name: "ripgrep".to_owned(),
                version: version.to_owned()
            }
        );
    }
    error_saying(
        &good_from("{ crate = \"ripgrep\" }"),
        &[
            ":4: the crate source `ripgrep` needs its version",
            "hint: find the version with `cargo search ripgrep` or on https://crates.io/crates/ripgrep",
        ],
    );
    for range in ["^14", "14.1", ">=14.1.1", "14.1.*", "14.1.1 ", "v14.1.1"] {
        let text = good_from(&format!("{{ crate = \"ripgrep\", version = \"{range}\" }}"));
        error_saying(
            &text,
            &[
                &format!(":4: version `{range}` of crate `ripgrep` is not one exact version"),
                "hint: find the version with `cargo search ripgrep`",
            ],
        );
    }
    error_saying(
        &good_from("{ crate = \"ripgrep\", version = \"14.1.1\", path = \"src\" }"),
        &[
            ":4: source must name exactly one of path, apt, git, url, crate",
            "hint:",
        ],
    );
    error_saying(
        &good_from("{ path = \"src\", version = \"14.1.1\" }"),
        &[":4: `version` only applies to a crate source", "hint:"],
    );
    error_saying(
        &good_from("{ crate = \"rip/grep\", version = \"14.1.1\" }"),
        &[":4: `rip/grep` is not a crates.io package name"],
    );
}

#[test]
fn durations_parse() {
    assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
    assert_eq!(parse_duration("2m"), Some(Duration::from_mins(2)));
    assert_eq!(parse_duration("7"), Some(Duration::from_secs(7)));
    assert_eq!(parse_duration("1 h"), Some(Duration::from_hours(1)));
    assert_eq!(parse_duration("x"), None);
    assert_eq!(parse_duration("-1s"), None);
}

const SERVED: &str = r#"
[target]
name = "fixture"
source = { path = "src" }
build = "make"
binaries = { server = "server" }

[[target.service]]
name = "db"
start = "{bin.server} --port {port}"
ready = "redis"
stop_signal = "INT"

[[target.service]]
name = "web"
start = "{bin.server} --port {port} --db {port.db}"

[[variant]]
name = "baseline"

[[workload]]
name = "get"
[workload.load]
driver = "redis"
address = "127.0.0.1:{port.db}"
request = "GET key:{k}"
vars = { k = "zipf:1:1000" }
model = "sla"
sla = "p99<5ms"
"#;

#[test]
fn services_and_loads_resolve() {
    let e = load_text(SERVED, false).unwrap();
    let services = &e.target.services;
    assert_eq!(services.len(), 2);
    assert_eq!(services[0].stop_signal, (libc::SIGINT, "INT".to_owned()));
    assert!(matches!(services[0].ready, Ready::Ping { .. }));
    assert!(matches!(services[1].ready, Ready::Tcp));
    let load = e.workloads[0].load.as_ref().unwrap();
    assert_eq!(load.address.text, "127.0.0.1:{port.db}");
    assert_eq!(load.model.pacing.name(), "sla");
    let sla = load.model.sla.as_ref().unwrap();
    assert_eq!(
        (sla.percentile, sla.max_ms, load.model.clients),
        (99.0, 5.0, 10)
    );
    assert!(e.workloads[0].run.is_none());
}

#[test]
fn service_and_load_mistakes_name_their_line() {
    let served = |from: &str, to: &str| SERVED.replace(from, to);
    error_saying(
        &served("--db {port.db}", "--db {port.cache}"),
        &[":16: unknown placeholder `{port.cache}`", "{port.db}"],
    );
    error_saying(
        &served("ready = \"redis\"", "ready = \"ping\""),
        &[":11: unknown readiness check `ping`"],
    );
    error_saying(
        &served("GET key:{k}", "GET key:{key}"),
        &[":26: request `GET key:{key}` uses `{key}`"],
    );
    error_saying(
        &served("model = \"sla\"", "model = \"burst\""),
        &[":28: unknown load model `burst`"],
    );
    error_saying(
        &served("name = \"get\"", "name = \"get\"\nrun = \"x\""),
        &["has both run and load"],
    );
    let no_service = GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "[workload.load]\ndriver = \"http\"",
    );
    error_saying(&no_service, &["the target starts no service"]);
    error_saying(&served("p99<5ms", "p97<5ms"), &[":29: percentile 97"]);
}

/// `model = "poisson"` (a model of the load's `models!` list) reads its
/// rate, and refuses at the `model` line without one, as `rate` does; an
/// unknown model's hint lists the models.
#[test]
fn a_poisson_load_reads_its_rate_and_names_its_line_without_one() {
    let poisson = SERVED.replace("model = \"sla\"\nsla = \"p99<5ms\"", "model = \"poisson\"");
    let with_rate = poisson.replace("model = \"poisson\"", "model = \"poisson\"\nrate = 400");
    let e = load_text(&with_rate, false).unwrap();
    let model = &e.workloads[0].load.as_ref().unwrap().model;
    assert_eq!(model.pacing.name(), "poisson");
    assert_eq!((model.rate, model.clients), (Some(400.0), 10));
    assert!(model.open_loop() && model.fixed_duration());
    error_saying(&poisson, &[":28: the poisson model needs rate"]);
    error_saying(
        &poisson.replace("\"poisson\"", "\"burst\""),
        &[":28: unknown load model `burst`", "\"poisson\""],
    );
}

/// A list of requests with `mix` weights resolves to a mix; a count that
/// differs, a weight below 1, and a mix for a SQL driver name the line of
/// `mix` or `request`.
#[test]
fn a_request_mix_resolves_and_its_mistakes_name_their_line() {
    let mixed = SERVED.replace(
        "request = \"GET key:{k}\"",
        "request = [\"GET key:{k}\", \"SET key:{k} v\"]\nmix = [9, 1]",
    );
    let e = load_text(&mixed, false).unwrap();
    let load = e.workloads[0].load.as_ref().unwrap();
    let entries: Vec<(&str, u32)> = load.request.entries().collect();
    assert_eq!(entries, [("GET key:{k}", 9), ("SET key:{k} v", 1)]);
    assert_eq!(
        serde_json::to_value(load).unwrap()["request"][1]["weight"],
        1
    );
    // Equal weights without mix; one request stays one.
    let even = mixed.replace("mix = [9, 1]\n", "");
    let e = load_text(&even, false).unwrap();
    let weights: Vec<u32> = e.workloads[0]
        .load
        .as_ref()
        .unwrap()
        .request
        .entries()
        .map(|(_, w)| w)
        .collect();
    assert_eq!(weights, [1, 1]);
    let mix = |weights: &str| mixed.replace("mix = [9, 1]", weights);
    error_saying(
        &mix("mix = [9, 1, 1]"),
        &[":27: 3 weights for 2 requests", "mix = [9, 1]"],
    );
    error_saying(&mix("mix = [9, 0]"), &[":27: weight 0, the 2nd of the mix"]);
    error_saying(&mix("mix = [-3, 1]"), &[":27: weight -3, the 1st"]);
    error_saying(
        &mixed.replace("SET key:{k} v", "SET key:{key} v"),
        &[":26: request `SET key:{key} v` uses `{key}`"],
    );
    let sql = mixed
        .replace("driver = \"redis\"", "driver = \"postgres\"")
        .replace("GET key:{k}", "SELECT {k}")
        .replace("SET key:{k} v", "SELECT 2");
    error_saying(
        &sql,
        &[
            ":26: the postgres driver prepares one statement",
            "hint: run one load per statement",
        ],
    );
}

#[test]
fn prebuilt_variants_and_variant_params() {
    let text = GOOD.replace(
        "[[variant]]\nname = \"baseline\"",
        "[[variant]]\nname = \"baseline\"\n\n[[variant]]\nname = \"distro\"\nprebuilt = { app = \"/usr/bin/app\" }\nparams = { n = 7 }",
    );
    let e = load_text(&text, false).unwrap();
    let distro = e.variant("distro").unwrap();
    assert!(distro.is_prebuilt());
    assert_eq!(
        distro.prebuilt.as_ref().unwrap()["app"],
        PathBuf::from("/usr/bin/app")
    );
    assert_eq!(distro.params["n"], "7");
    let optimized = text.replace("prebuilt = {", "optimize = [\"lto\"]\nprebuilt = {");
    error_saying(&optimized, &["a prebuilt variant cannot also be optimized"]);
    let wrong = text.replace("{ app = \"/usr/bin/app\" }", "{ ap = \"/usr/bin/app\" }");
    error_saying(&wrong, &["missing [\"app\"], unknown [\"ap\"]"]);
    let param = text.replace("params = { n = 7 }", "params = { m = 7 }");
    error_saying(&param, &["sets `m`, which [params] does not define"]);
}

#[test]
fn partial_training_is_for_gcc_pgo() {
    let text = good_pgo_lto_with("partial_training = true");
    let e = load_text(&text, false).unwrap();
    assert!(e.variants[1].partial_training);
    let dirs = crate::toolchain::VariantDirs {
        build: "/w/b".into(),
        profiles: "/w/p".into(),
    };
    let final_flags =
        crate::build::compose_flags(&e, &e.variants[1], crate::toolchain::Stage::Final, &dirs);
    assert!(
        final_flags.cflags.contains("-fprofile-partial-training"),
        "{}",
        final_flags.cflags
    );
    let instrumented =
        crate::build::compose_flags(&e, &e.variants[1], crate::toolchain::Stage::FIRST, &dirs);
    assert!(!instrumented.cflags.contains("-fprofile-partial-training"));
    let clang = text.replace("build = \"make\"", "build = \"make\"\ncompiler = \"clang\"");
    error_saying(&clang, &["partial_training is an option of gcc's PGO"]);
    let no_pgo = text.replace("[\"pgo\", \"lto\"]", "[\"lto\"]");
    error_saying(&no_pgo, &[":14: partial_training"]);
}

/// `call_chains` is AutoFDO's alone, one of its three words.
#[test]
fn call_chains_only_on_autofdo_and_only_its_words() {
    let autofdo = |line: &str| {
        good_optimizing(&format!(
            "optimize = [\"autofdo\"]\nsample_event = \"cpu-clock\"\n{line}"
        ))
    };
    let e = load_text(&autofdo("call_chains = \"dwarf\""), false).unwrap();
    assert_eq!(
        e.variants[1].call_chains,
        Some(crate::toolchain::sampling::Unwind::Dwarf)
    );
    let e = load_text(&autofdo("call_chains = \"fp\""), false).unwrap();
    assert_eq!(
        e.variants[1].call_chains,
        Some(crate::toolchain::sampling::Unwind::FramePointers)
    );
    let e = load_text(&autofdo("call_chains = \"none\""), false).unwrap();
    assert_eq!(e.variants[1].call_chains, None);
    error_saying(
        &autofdo("call_chains = \"lbr\""),
        &[":15: call_chains = \"lbr\" is not", "\"dwarf\""],
    );
    error_saying(
        &good_pgo_lto_with("call_chains = \"dwarf\""),
        &[":14: call_chains is how AutoFDO", "optimize = [\"autofdo\""],
    );
}

#[test]
fn one_compiler_profile_per_variant_and_sample_event_only_for_sampled_training() {
    error_saying(
        &good_optimizing("optimize = [\"pgo\", \"cspgo\"]\ncompiler = \"clang\""),
        &["pgo and cspgo each make the compiler's profile"],
    );
    let stacked = good_optimizing("optimize = [\"pgo\", \"lto\", \"bolt\"]");
    let e = load_text(&stacked, false).unwrap();
    assert_eq!(e.variants[1].rounds().len(), 2);
    error_saying(
        &good_pgo_lto_with("sample_event = \"cpu-clock\""),
        &[":14: sample_event is the perf event"],
    );
    let sampled_bolt = good_optimizing(
        "optimize = [\"bolt\"]\nbolt_profile = \"sampled\"\nsample_event = \"cpu-clock\"",
    );
    let e = load_text(&sampled_bolt, false).unwrap();
    assert_eq!(e.variants[1].sample_event.as_deref(), Some("cpu-clock"));
    assert_eq!(
        e.variants[1]
            .rounds()
            .iter()
            .map(|r| r.name())
            .collect::<Vec<_>>(),
        ["bolt-perf"]
    );
    error_saying(
        &good_optimizing(
            "optimize = [\"bolt\"]\nbolt_profile = \"instrumented\"\nsample_event = \"cpu-clock\"",
        ),
        &[":15: sample_event is the perf event"],
    );
    error_saying(
        &good_optimizing("optimize = [\"bolt\"]\nbolt_profile = \"lbr\""),
        &[":14: unknown bolt_profile `lbr`", "\"sampled\""],
    );
    error_saying(
        &good_optimizing("optimize = [\"pgo\"]\nbolt_profile = \"sampled\""),
        &[":14: bolt_profile says where"],
    );
    // gcc's autofdo is read (its gcc version is checked before building).
    let gcc = good_optimizing("optimize = [\"autofdo\"]");
    assert!(load_text(&gcc, false).is_ok());
}

#[test]
fn march_takes_a_level_and_builds_every_stage_with_it() {
    let dirs = crate::toolchain::VariantDirs {
        build: "/w/b".into(),
        profiles: "/w/p".into(),
    };
    let flags = |text: &str, stage| {
        let e = load_text(text, false).unwrap();
        crate::build::compose_flags(&e, &e.variants[1], stage, &dirs).cflags
    };
    let native = good_optimizing("optimize = [\"pgo\", \"march\"]");
    let final_native = flags(&native, crate::toolchain::Stage::Final);
    assert!(
        final_native.contains("-march=native -mtune=native"),
        "{final_native}"
    );
    // valgrind 3.19 cannot run AVX-512, so a counted build names a level.
    let level = native.replace("\"march\"]", "\"march\"]\nmarch = \"x86-64-v3\"");
    for stage in [
        crate::toolchain::Stage::FIRST,
        crate::toolchain::Stage::Final,
    ] {
        let f = flags(&level, stage);
        assert!(f.contains("-march=x86-64-v3"), "{f}");
        assert!(!f.contains("native"), "{f}");
    }
    error_saying(
        &good_pgo_lto_with("march = \"x86-64-v3\""),
        &[":14: march is the -march level"],
    );
    let bad = level.replace("x86-64-v3", "x86 64");
    error_saying(&bad, &["`x86 64` is not a -march level"]);
}

#[test]
fn repetitions_auto_reads_budget_min_and_max() {
    let auto = |extra: &str| good_and("bench", &format!("repetitions = \"auto\"\n{extra}"));
    let e = load_text(&auto("budget = \"2m\"\nmin = 12\nmax = 40"), false).unwrap();
    let s = e.bench.sequential.as_ref().unwrap();
    assert_eq!((s.budget, s.min, s.max), (Duration::from_mins(2), 12, 40));
    assert_eq!(e.bench.repetitions, 40);
    let e = load_text(&auto(""), false).unwrap();
    let s = e.bench.sequential.as_ref().unwrap();
    assert_eq!((s.budget, s.min, s.max), (Duration::from_mins(15), 10, 50));
    // --quick keeps its fixed count.
    let e = load_text(&auto(""), true).unwrap();
    assert!(e.bench.sequential.is_none());
    assert_eq!(e.bench.repetitions, 3);
}

#[test]
fn repetitions_auto_refuses_what_it_cannot_plan() {
    let bench = |body: &str, says: &[&str]| error_saying(&good_and("bench", body), says);
    bench(
        "repetitions = \"many\"",
        &["neither a count nor \"auto\"", "hint:"],
    );
    bench(
        "repetitions = 10\nbudget = \"5m\"",
        &["budget applies to repetitions = \"auto\" only"],
    );
    bench("budget = \"5m\"", &["budget applies"]);
    bench(
        "repetitions = \"auto\"\nmin = 3",
        &["min = 3 is too few", "set min = 8"],
    );
    bench(
        "repetitions = \"auto\"\nmin = 20\nmax = 10",
        &["max = 10 must lie between min (20)"],
    );
    bench(
        "repetitions = \"auto\"\nbudget = \"soon\"",
        &["`soon` is not a duration"],
    );
    // The line is named.
    let line = format!("{GOOD}\n[bench]\n").lines().count() + 2;
    bench(
        "repetitions = \"auto\"\nbudget = \"0s\"",
        &[
            "budget must be more than 0",
            &format!("afterburner.toml:{line}"),
        ],
    );
}

/// `binaries = { app = "../../app" }` or an absolute path pointed a
/// variant's binary out of its build tree, where BOLT rewrote it in place
/// for every variant at once.
#[test]
fn a_binary_outside_the_build_tree_is_refused_with_line_and_hint() {
    for path in ["../../app", "/usr/bin/app", "out/../../app", ""] {
        let text = GOOD.replace(
            "binaries = { app = \"app\" }",
            &format!("binaries = {{ app = \"{path}\" }}"),
        );
        error_saying(
            &text,
            &[
                "afterburner.toml:6",
                &format!("binary `app` = \"{path}\" is not inside the build directory"),
                "hint: give its path relative to the build directory",
            ],
        );
    }
    let inside = GOOD.replace(
        "binaries = { app = \"app\" }",
        "binaries = { app = \"./out/app\" }",
    );
    assert_eq!(
        load_text(&inside, false).unwrap().target.binaries["app"],
        PathBuf::from("./out/app")
    );
}

/// Seed 003's shape: a build option × runtime settings, written once.
const MATRIX: &str = r#"
[target]
name = "fixture"
source = { path = "src" }
build = "make"
binaries = { app = "app" }

[[variant]]
name = "baseline"

[[matrix]]
compiler = ["gcc", "clang"]
optimize = [[], ["pgo", "lto"]]
params.threads = [1, 4]
exclude = [{ compiler = "clang", optimize = [], params = { threads = 4 } }]

[[workload]]
name = "hot"
run = "{bin.app} --threads {params.threads}"

[params]
threads = 2
"#;

#[test]
fn a_matrix_expands_to_every_combination_but_the_excluded() {
    let e = load_text(MATRIX, false).unwrap();
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "baseline",
            "gcc-base-threads_1",
            "gcc-base-threads_4",
            "gcc-pgo+lto-threads_1",
            "gcc-pgo+lto-threads_4",
            "clang-base-threads_1",
            "clang-pgo+lto-threads_1",
            "clang-pgo+lto-threads_4",
        ]
    );
    let v = &e.variants[7];
    assert_eq!(v.compiler, Compiler::Clang);
    assert_eq!(v.optimize, [Optimization::PGO, Optimization::LTO]);
    assert_eq!(v.params["threads"], "4");
    assert_eq!(v.axes["compiler"], "clang");
    assert_eq!(v.axes["optimize"], "pgo+lto");
    assert_eq!(v.axes["params.threads"], "4");
    assert!(e.variants[0].axes.is_empty());
}

#[test]
fn a_matrix_names_its_variants_from_a_template() {
    let text = MATRIX.replace(
        "[[matrix]]\n",
        "[[matrix]]\nname = \"{compiler}-{optimize}-t{params.threads}\"\n",
    );
    let e = load_text(&text, false).unwrap();
    assert_eq!(e.variants[4].name, "gcc-pgo+lto-t4");
    let bad = MATRIX.replace("[[matrix]]\n", "[[matrix]]\nname = \"{compiler}-{cpu}\"\n");
    error_saying(
        &bad,
        &[
            ":12:",
            "`{cpu}`",
            "{compiler}, {optimize}, {params.threads}",
        ],
    );
    // Names that collide are refused like hand-written ones.
    let same = MATRIX.replace("[[matrix]]\n", "[[matrix]]\nname = \"{compiler}\"\n");
    error_saying(&same, &["defined twice"]);
}

#[test]
fn a_matrix_exclude_that_names_no_axis_or_matches_nothing_is_refused() {
    error_saying(
        &MATRIX.replace("compiler = \"clang\", optimize", "cpu = 3, optimize"),
        &[
            ":15:",
            "`cpu`",
            "the axes: compiler, optimize, params.threads",
        ],
    );
    error_saying(
        &MATRIX.replace("threads = 4 }", "threads = \"4\" }"),
        &["matches no combination"],
    );
    let fast = MATRIX
        .replace(
            "optimize = [[], [\"pgo\", \"lto\"]]",
            "optimize = [[\"fast\"]]",
        )
        .replace(", optimize = []", "");
    error_saying(&fast, &["unknown or unsupported optimization `fast`"]);
}

/// A race over axes: stacks written either way, and the combinations that
/// cannot be built left out with the reason and the line.
const RACE: &str = r#"
[target]
name = "fixture"
source = { path = "src" }
build = "make"
binaries = { app = "app" }

[[workload]]
name = "hot"
run = "{bin.app}"

[race]
compiler = ["gcc", "clang"]
optimize = ["none", "pgo+lto", ["lto"], "cspgo", "pgo+autofdo"]
exclude = [{ compiler = "clang", optimize = "none" }]
budget = "10m"
"#;

#[test]
fn a_race_over_axes_leaves_out_what_cannot_be_built_and_says_why() {
    let e = load_text(RACE, false).unwrap();
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gcc-none",
            "gcc-pgo+lto",
            "gcc-lto",
            "clang-pgo+lto",
            "clang-lto",
            "clang-cspgo"
        ]
    );
    assert_eq!(
        e.variants[1].optimize,
        [Optimization::PGO, Optimization::LTO]
    );
    assert_eq!(e.variants[5].compiler, Compiler::Clang);
    let left: Vec<(&str, usize)> = e
        .race
        .left_out
        .iter()
        .map(|l| (l.candidate.as_str(), l.line.unwrap()))
        .collect();
    assert_eq!(
        left,
        [
            ("gcc-cspgo", 14),
            ("gcc-pgo+autofdo", 14),
            ("clang-pgo+autofdo", 14)
        ]
    );
    assert!(e.race.left_out[0].reason.contains("not available with gcc"));
    assert!(e.race.left_out[1].reason.contains("a build reads one"));
    assert!(!e.race.left_out[1].hint.is_empty());
}

/// Issue 47: `[race] max` defaulted to 40 rounds whatever the file's
/// repetitions, so a race of a 20-round file could cost more than the full
/// design it stands in for. It defaults to the repetitions now (10 when the
/// file gives none), and a `max` written in the file still wins.
#[test]
fn the_race_runs_at_most_the_files_repetitions_unless_asked() {
    let max = |text: &str| load_text(text, false).unwrap().race.max;
    assert_eq!(max(RACE), 10);
    let twenty = RACE.replace("[race]\n", "[bench]\nrepetitions = 20\n\n[race]\n");
    assert_eq!(max(&twenty), 20);
    assert_eq!(max(&twenty.replace("budget = \"10m\"", "max = 30")), 30);
    let no_race =
        twenty[..twenty.find("[race]").unwrap()].to_owned() + "[[variant]]\nname = \"a\"\n";
    assert_eq!(max(&no_race), 20);
    let one = RACE.replace("[race]\n", "[bench]\nrepetitions = 1\n\n[race]\n");
    assert_eq!(max(&one), 2, "at least min");
}

#[test]
fn stacks_that_instrument_alike_share_the_first_profile_never_across_compilers() {
    let text = RACE
        .replace(
            "optimize = [\"none\", \"pgo+lto\", [\"lto\"], \"cspgo\", \"pgo+autofdo\"]",
            "optimize = [\"none\", \"pgo\", \"pgo+lto\", \"pgo+bolt\", \"pgo+o3\", \"pgo+march\", \"pgo+o3+lto\", \"cspgo\"]",
        )
        .replace("exclude = [{ compiler = \"clang\", optimize = \"none\" }]\n", "");
    let e = load_text(&text, false).unwrap();
    let donor = |name: &str| {
        e.variants
            .iter()
            .find(|v| v.name == name)
            .unwrap()
            .profile_donor
            .clone()
    };
    for compiler in ["gcc", "clang"] {
        let named = |stack: &str| format!("{compiler}-{stack}");
        let pgo = Some(named("pgo"));
        assert_eq!(donor(&named("none")), None);
        assert_eq!(donor(&named("pgo")), None, "the first trains");
        assert_eq!(donor(&named("pgo+lto")), pgo);
        assert_eq!(donor(&named("pgo+bolt")), pgo);
        // -O3 and -march shape the instrumented build: their own.
        assert_eq!(donor(&named("pgo+o3")), None);
        assert_eq!(donor(&named("pgo+march")), None);
        assert_eq!(donor(&named("pgo+o3+lto")), Some(named("pgo+o3")));
    }
    // CSPGO's first round is clang's IR PGO.
    assert_eq!(donor("clang-cspgo"), Some("clang-pgo".to_owned()));
    // A runtime difference the training sees is another profile.
    let env = text.replace("[race]\n", "[race]\nenv.MODE = [\"a\", \"b\"]\n");
    let e = load_text(&env, false).unwrap();
    let v = e
        .variants
        .iter()
        .find(|v| v.name == "gcc-pgo-MODE_b")
        .unwrap();
    assert_eq!(v.profile_donor, None);
}

#[test]
fn a_race_axis_with_a_typo_is_refused_not_left_out() {
    error_saying(
        &RACE.replace("\"pgo+lto\"", "\"pgo+lot\""),
        &[
            ":14:",
            "unknown optimization `lot` in stack `pgo+lot`",
            "joined by `+`",
        ],
    );
    error_saying(
        &RACE.replace("\"clang\"]", "\"icc\"]"),
        &[":13:", "unknown compiler `icc`"],
    );
    // Keys that shape the axes' candidates, with no axis: not ignored.
    let no_axes = RACE
        .replace("compiler = [\"gcc\", \"clang\"]\n", "")
        .replace(
            "optimize = [\"none\", \"pgo+lto\", [\"lto\"], \"cspgo\", \"pgo+autofdo\"]\n",
            "",
        )
        .replace(
            "exclude = [{ compiler = \"clang\", optimize = \"none\" }]\n",
            "cflags = \"-g\"\n",
        );
    error_saying(
        &no_axes,
        &[
            ":13:",
            "[race] cflags applies to the candidates of its axes",
        ],
    );
    error_saying(
        &RACE
            .replace(
                "optimize = [\"none\", \"pgo+lto\", [\"lto\"], ",
                "optimize = [",
            )
            .replace(
                "exclude = [{ compiler = \"clang\", optimize = \"none\" }]\n",
                "",
            )
            .replace("[\"gcc\", \"clang\"]", "[\"gcc\"]"),
        &[
            "every combination of [race]'s axes is left out",
            "gcc-cspgo",
        ],
    );
}

/// Regression (issue 27): `recipes/mariadb.toml` failed to validate on a
/// machine without mariadb-server (`no user mysql`), which broke
/// `cargo test` there. A missing user is an error when the service starts,
/// still naming the file's line.
#[test]
fn a_service_user_is_looked_up_when_the_service_starts_not_when_the_file_loads() {
    let text = SERVED.replace(
        "stop_signal = \"INT\"",
        "stop_signal = \"INT\"\nuser = \"afterburner-no-such-user\"",
    );
    let e = load_text(&text, false).unwrap();
    let user = e.target.services[0].user.as_ref().unwrap();
    let err = user.ids().unwrap_err().to_string();
    assert!(
        err.contains(":13:") && err.contains("no user `afterburner-no-such-user`"),
        "{err}"
    );
    assert!(err.contains("useradd"), "{err}");
    // root may run a service as anyone; `root` itself always exists.
    let e = load_text(
        &SERVED.replace(
            "stop_signal = \"INT\"",
            "stop_signal = \"INT\"\nuser = \"root\"",
        ),
        false,
    )
    .unwrap();
    let ids = e.target.services[0].user.as_ref().unwrap().ids();
    if crate::toolchain::tools::is_root() {
        assert_eq!(ids.unwrap(), (0, 0));
    } else {
        assert!(ids
            .unwrap_err()
            .to_string()
            .contains("needs afterburner to run as root"));
    }
}

#[test]
fn state_placeholders_name_services_and_steps_resolve() {
    let text = SERVED
        .replace(
            "stop_signal = \"INT\"",
            "stop_signal = \"INT\"\nsetup = \"init {state}\"",
        )
        .replace(
            "name = \"get\"\n",
            "name = \"get\"\nbefore = \"load {state.db} {port}\"\n",
        );
    let e = load_text(&text, false).unwrap();
    assert_eq!(
        e.target.services[0].setup.as_ref().unwrap().text,
        "init {state}"
    );
    assert_eq!(
        e.workloads[0].before.as_ref().unwrap().text,
        "load {state.db} {port}"
    );
    error_saying(
        &text.replace("{state.db}", "{state.cache}"),
        &["unknown placeholder `{state.cache}`", "{state.db}"],
    );
}

#[test]
fn a_cluster_section_loads_with_defaults_and_its_settings() {
    let cluster = good_and(
        "cluster",
        "engine = \"slurm\"\npartition = \"perf\"\ntime = \"1:00:00\"\nsbatch = [\"--constraint=epyc\"]\nafterburner = \"bin/afterburner\"",
    );
    let e = load_text(&cluster, false).unwrap();
    let c = e.cluster.unwrap();
    assert_eq!(c.nodes, 2);
    assert_eq!(c.partition.as_deref(), Some("perf"));
    assert_eq!(c.time.as_deref(), Some("1:00:00"));
    assert_eq!(c.sbatch, ["--constraint=epyc"]);
    assert_eq!(c.afterburner, Some(PathBuf::from("/exp/bin/afterburner")));
    assert!(c.exclusive && !c.shared);
    assert!(load_text(GOOD, false).unwrap().cluster.is_none());
}

#[test]
fn a_bad_cluster_section_names_its_line() {
    let cluster = |body: &str| good_and("cluster", body);
    let text = cluster("engine = \"kubernetes\"");
    let line = line_of(&text, "engine");
    let after = format!(":{}:", line + 1);
    error_saying(
        &text,
        &[&format!(":{line}:"), "unknown cluster engine `kubernetes`"],
    );
    error_saying(
        &cluster("engine = \"slurm\"\nnodes = 0"),
        &[&after, "nodes = 0 is out of range"],
    );
    error_saying(
        &cluster("engine = \"slurm\"\ntime = \"2h\""),
        &["not a Slurm time limit"],
    );
    let auto = GOOD.replace(
        "[quick]",
        "[bench]\nrepetitions = \"auto\"\nbudget = \"10m\"\n\n[quick]",
    );
    error_saying(
        &format!("{auto}\n[cluster]\nengine = \"slurm\"\n"),
        &["a cluster run needs a fixed number of rounds"],
    );
    error_saying(
        &cluster("engine = \"slurm\"\nload = \"elsewhere\""),
        &[&after, "load = \"elsewhere\" is not a load placement"],
    );
    // A separate load needs services to drive over the network.
    error_saying(
        &cluster("engine = \"slurm\"\nload = \"separate\""),
        &["[target] has no services"],
    );
}

#[test]
fn a_training_workloads_weight_is_read_and_bounded() {
    let e = load_text(&good_hot_with("weight = 3"), false).unwrap();
    assert_eq!(e.workloads[0].weight, 3);
    assert_eq!(load_text(GOOD, false).unwrap().workloads[0].weight, 1);

    let err = error_saying(&good_hot_with("weight = 0"), &["from 1 to 100"]);
    assert!(
        err.starts_with("/exp/afterburner.toml:18: weight = 0 is out of range"),
        "{err}"
    );

    error_saying(
        &good_hot_with("role = \"bench\"\nweight = 2"),
        &[":19: workload `hot` has a weight but does not train"],
    );
}

#[test]
fn a_gain_reference_names_a_variant_other_than_the_baseline() {
    let with = |name: &str| good_and("report", &format!("gain_reference = \"{name}\""));
    let e = load_text(&with("pgo+lto"), false).unwrap();
    assert_eq!(e.report.gain_reference.as_deref(), Some("pgo+lto"));
    // `--quick` runs the baseline alone, yet the file stays valid.
    assert!(load_text(&with("pgo+lto"), true).is_ok());
    assert_eq!(
        load_text(GOOD, false).unwrap().report,
        ReportSettings::default()
    );
    let text = with("pgo");
    let line = line_of(&text, "gain_reference");
    error_saying(
        &text,
        &[
            &format!("/exp/afterburner.toml:{line}:"),
            "gain_reference = \"pgo\" names no variant",
            "hint: name one of the variants other than the baseline: `pgo+lto`",
        ],
    );
    error_saying(
        &with("baseline"),
        &[&format!(":{line}:"), "is the baseline", "hint:"],
    );
    error_saying(
        &good_and("report", "gain_refrence = \"pgo+lto\""),
        &["gain_refrence"],
    );
}

/// `afterburner report` reads `[report]` alone again, against the run's
/// variants: the rest of the file may have changed since.
#[test]
fn report_settings_are_read_alone_against_a_runs_variants() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("afterburner.toml");
    let text = "[target]\nname = \"changed since\"\n\n[report]\ngain_reference = \"pgo\"\n";
    fs_err::write(&path, text).unwrap();
    let settings = report_settings(&path, ["baseline", "pgo", "o3"].into_iter(), &[]).unwrap();
    assert_eq!(settings.gain_reference.as_deref(), Some("pgo"));
    let missing = report_settings(&path, ["baseline", "o3"].into_iter(), &[])
        .unwrap_err()
        .to_string();
    assert!(missing.contains("afterburner.toml:5:"), "{missing}");
    assert!(missing.contains("names no variant"), "{missing}");
    let gone = report_settings(&dir.path().join("nope.toml"), std::iter::empty(), &[]);
    assert!(matches!(gone, Err(ExperimentError::Read { .. })));
}

const GO: &str = r#"
[target]
name = "gohot"
source = { path = "src" }
build = "go build -o gohot ."
binaries = { gohot = "gohot" }
compiler = "go"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "loop"
run = "{bin.gohot} -n 1000"
"#;

/// `GO` with `line` added to its `pgo` variant, as line 12.
fn go_pgo_with(line: &str) -> String {
    GO.replace(
        "optimize = [\"pgo\"]",
        &format!("optimize = [\"pgo\"]\n{line}"),
    )
}

fn round_names(e: &Experiment) -> Vec<&'static str> {
    e.variants[0].rounds().iter().map(|r| r.name()).collect()
}

#[test]
fn go_pgo_samples_with_perf_unless_a_training_run_writes_its_own_profile() {
    use crate::toolchain::GoPgoSource;
    // No {profile} anywhere: perf samples.
    let e = load_text(GO, false).unwrap();
    assert_eq!(e.variants[0].go_pgo, GoPgoSource::Perf);
    assert_eq!(round_names(&e), ["go-pgo-perf"]);
    // A training run that writes its own CPU profile: go tool pprof.
    let own = GO.replace(
        "run = \"{bin.gohot} -n 1000\"",
        "run = \"{bin.gohot} -n 1000\"\ntrain_run = \"{bin.gohot} -cpuprofile {profile}\"",
    );
    let e = load_text(&own, false).unwrap();
    assert_eq!(e.variants[0].go_pgo, GoPgoSource::Cpuprofile);
    assert_eq!(round_names(&e), ["go-pgo"]);
    // A bench-only workload's {profile} trains nothing.
    let bench_only = GO.replace(
        "run = \"{bin.gohot} -n 1000\"",
        "run = \"{bin.gohot} -cpuprofile {profile}\"\nrole = \"bench\"\n\n[[workload]]\nname = \"t\"\nrole = \"train\"\nrun = \"{bin.gohot}\"",
    );
    assert_eq!(
        load_text(&bench_only, false).unwrap().variants[0].go_pgo,
        GoPgoSource::Perf
    );
    // Said explicitly, perf wins over {profile}, and takes a sample_event.
    let perf = own.replace(
        "optimize = [\"pgo\"]",
        "optimize = [\"pgo\"]\npgo_source = \"perf\"\nsample_event = \"task-clock\"",
    );
    let e = load_text(&perf, false).unwrap();
    assert_eq!(round_names(&e), ["go-pgo-perf"]);
    assert_eq!(e.variants[0].sample_event.as_deref(), Some("task-clock"));
}

#[test]
fn pgo_source_errors_name_the_line_and_what_to_do() {
    error_saying(
        &go_pgo_with("pgo_source = \"cpuprofile\""),
        &[
            ":12: pgo_source = \"cpuprofile\" reads the CPU profiles",
            "pgo_source = \"perf\"",
        ],
    );
    error_saying(
        &go_pgo_with("pgo_source = \"pprof\""),
        &[":12: unknown pgo_source `pprof`"],
    );
    error_saying(
        &good_pgo_lto_with("pgo_source = \"perf\""),
        &[":14: pgo_source says where Go PGO's profile comes from"],
    );
    // Go's own CPU profiles take no perf event.
    let stray = go_pgo_with("sample_event = \"cpu-clock\"").replace(
        "run = \"{bin.gohot} -n 1000\"",
        "run = \"{bin.gohot} -cpuprofile {profile}\"",
    );
    error_saying(&stray, &[":12: sample_event is the perf event"]);
}

#[test]
fn train_stop_dump_is_for_instrumented_variants_and_is_stop_by_default() {
    let e = load_text(GOOD, false).unwrap();
    assert!(e.variants.iter().all(|v| v.train_stop.is_stop()));
    let dump = good_pgo_lto_with("train_stop = \"dump\"");
    let e = load_text(&dump, false).unwrap();
    assert_eq!(e.variants[1].train_stop, super::super::TrainStop::Dump);
    error_saying(
        &good_pgo_lto_with("train_stop = \"flush\""),
        &[":14: unknown train_stop `flush`"],
    );
    error_saying(
        &good_optimizing("optimize = [\"autofdo\"]\ntrain_stop = \"dump\""),
        &["dumps the counters of an instrumented build"],
    );
}

/// A figure named as a built-in metric would read as the built-in (its
/// runs' peak RSS, say, not the number it prints): refused at its line;
/// `[bench] metrics` names the registry's built-ins, and no other.
#[test]
fn figures_named_as_built_in_metrics_and_unknown_metrics_are_refused() {
    let text = good_hot_with(r#"figures = [{ name = "max_rss", regex = "rss: ([0-9]+)" }]"#);
    error_saying(&text, &[":18:", "`max_rss`", "hint: name the figure"]);
    let text = good_and("bench", r#"metrics = ["wall", "faults"]"#);
    let err = error_saying(&text, &["unknown metric `faults`"]);
    assert!(err.contains(&crate::metric::Builtin::names()), "{err}");
}

/// `GOOD` with its target's build and binaries replaced by `cargo`.
fn cargo_target(target_lines: &str, variant_lines: &str) -> String {
    GOOD.replace(
        "build = \"make\"\nbinaries = { app = \"app\" }",
        target_lines,
    )
    .replace("optimize = [\"pgo\", \"lto\"]", variant_lines)
}

#[test]
fn a_cargo_target_is_built_by_cargo_with_rustc() {
    let text = cargo_target(
        "cargo = { package = \"app\", bins = [\"app\"], features = [\"fast\", \"simd\"] }",
        "optimize = [\"pgo\", \"lto\"]",
    );
    let e = load_text(&text, false).unwrap();
    assert_eq!(e.target.compiler, Compiler::Rustc);
    assert_eq!(e.variants[1].compiler, Compiler::Rustc);
    assert_eq!(
        e.target.build,
        "cargo build --release --verbose --package app --bin app --features fast,simd"
    );
    assert_eq!(e.target.binaries["app"], PathBuf::from("release/app"));
}

#[test]
fn a_cargo_target_refuses_what_would_bypass_cargo_or_rustc() {
    let cases = [
        (
            cargo_target(
                "cargo = { bins = [\"app\"] }\nbuild = \"make\"",
                "optimize = [\"pgo\"]",
            ),
            "a cargo target has no `build`",
        ),
        (
            cargo_target("cargo = { bins = [] }", "optimize = [\"pgo\"]"),
            "names no binary",
        ),
        (
            cargo_target(
                "cargo = { bins = [\"app\"] }",
                "optimize = [\"pgo\"]\ncompiler = \"gcc\"",
            ),
            "compiler = \"gcc\" on a cargo target",
        ),
        (
            cargo_target("cargo = { bins = [\"app\"] }", "optimize = [\"autofdo\"]"),
            "only on nightly",
        ),
        (
            GOOD.replace(
                "build = \"make\"",
                "build = \"cd x && cargo build --release\"",
            ),
            "the build command runs cargo",
        ),
        (
            GOOD.replace(
                "binaries = { app = \"app\" }",
                "binaries = { app = \"app\" }\ncompiler = \"rustc\"",
            ),
            "compiler = \"rustc\" is a cargo target's",
        ),
    ];
    for (text, said) in cases {
        let err = load_text(&text, false).unwrap_err().to_string();
        assert!(err.contains(said), "{said}: {err}");
        assert!(err.contains("/exp/afterburner.toml:"), "{err}");
    }
}

/// Found by the ripgrep case study: a profile trained on cargo's 16 codegen
/// units matched little of the `lto` build in one, so `pgo`+`lto` kept 0.969
/// of the baseline's instructions where `pgo` kept 0.854. On a cargo target
/// `lto` partitions the instrumented build too, so it trains its own
/// profile; BOLT still acts after instrumentation and shares.
#[test]
fn a_cargo_targets_pgo_and_lto_trains_its_own_profile_partitioned_alike() {
    let variants = "optimize = [\"pgo\"]\n\n[[variant]]\nname = \"pgo-lto\"\noptimize = [\"pgo\", \"lto\"]\n\n[[variant]]\nname = \"pgo-bolt\"\noptimize = [\"pgo\", \"bolt\"]";
    let donors = |text: &str| -> Vec<Option<String>> {
        let e = load_text(text, false).unwrap();
        e.variants.iter().map(|v| v.profile_donor.clone()).collect()
    };
    let pgo = Some("pgo+lto".to_owned());
    assert_eq!(
        donors(&GOOD.replace("optimize = [\"pgo\", \"lto\"]", variants)),
        [None, None, pgo.clone(), pgo.clone()],
        "a C target's LTO acts after instrumentation"
    );
    let cargo = cargo_target("cargo = { bins = [\"app\"] }", variants);
    assert_eq!(donors(&cargo), [None, None, None, pgo]);
    let e = load_text(&cargo, false).unwrap();
    let instrumented = crate::toolchain::optimization_flags(
        Compiler::Rustc,
        &e.variants[2].optimize,
        e.variants[2].profile_sources(),
        crate::toolchain::Stage::Instrumented(0),
        &crate::toolchain::VariantDirs {
            build: PathBuf::from("b"),
            profiles: PathBuf::from("p"),
        },
    );
    assert!(
        instrumented
            .cargo
            .contains(&"CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1".to_owned()),
        "{instrumented:?}"
    );
}

/// `GOOD` with a `pgo` variant before `pgo+lto`, which gets `line`: the
/// two would share `pgo`'s profile (the same instrumented build).
fn good_pgo_and_pgo_lto_with(line: &str) -> String {
    GOOD.replace(
        "[[variant]]\nname = \"pgo+lto\"\noptimize = [\"pgo\", \"lto\"]",
        &format!(
            "[[variant]]\nname = \"pgo\"\noptimize = [\"pgo\"]\n\n[[variant]]\nname = \"pgo+lto\"\noptimize = [\"pgo\", \"lto\"]\n{line}"
        ),
    )
}

#[test]
fn recordings_make_a_variant_per_recording_each_with_its_own_profile() {
    let e = load_text(&good_pgo_and_pgo_lto_with("recordings = 3"), false).unwrap();
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["baseline", "pgo", "pgo+lto.1", "pgo+lto.2", "pgo+lto.3"]
    );
    for (i, v) in e.variants[2..].iter().enumerate() {
        let r = v.recording.as_ref().unwrap();
        assert_eq!((r.of.as_str(), r.index as usize), ("pgo+lto", i + 1));
        // Not `pgo`'s profile, nor another recording's.
        assert_eq!(v.profile_donor, None, "{}", v.name);
    }
    let plain = load_text(&good_pgo_and_pgo_lto_with(""), false).unwrap();
    assert_eq!(plain.variants[2].profile_donor.as_deref(), Some("pgo"));
    assert_eq!(plain.variants[2].recording, None);
}

#[test]
fn recordings_need_two_or_more_and_a_profile_trained_here() {
    let text = good_pgo_lto_with("recordings = 1");
    let line = line_of(&text, "recordings");
    error_saying(
        &text,
        &[
            &format!(":{line}:"),
            "recordings = 1 is not 2 to 20",
            "hint:",
        ],
    );
    let baseline = GOOD.replace(
        "name = \"baseline\"\n",
        "name = \"baseline\"\nrecordings = 3\n",
    );
    let line = line_of(&baseline, "recordings");
    error_saying(
        &baseline,
        &[
            &format!(":{line}:"),
            "variant `baseline`: recordings, but its optimize list trains no profile",
        ],
    );
    let clash = good_pgo_lto_with("recordings = 2").replace(
        "[[workload]]",
        "[[variant]]\nname = \"pgo+lto.2\"\n\n[[workload]]",
    );
    error_saying(&clash, &["variant `pgo+lto.2` is defined twice"]);
}

#[test]
fn a_report_gain_group_names_its_base_reference_and_variants() {
    let with = |body: &str| {
        format!(
            "{}\n[[report.gain]]\n{body}\n",
            good_pgo_and_pgo_lto_with("recordings = 3")
        )
    };
    let e = load_text(
        &with("base = \"baseline\"\nreference = \"pgo\"\nvariants = [\"pgo+lto\"]"),
        false,
    )
    .unwrap();
    let group = &e.report.gains[0];
    assert_eq!(
        (group.base.as_str(), group.reference.as_str()),
        ("baseline", "pgo")
    );
    assert!(group.measures("pgo+lto.2", Some("pgo+lto")));
    assert!(!group.measures("pgo", None));
    for (body, says) in [
        (
            "base = \"o2\"\nreference = \"pgo\"\nvariants = [\"pgo+lto\"]",
            "base = \"o2\" names no variant",
        ),
        (
            "base = \"pgo\"\nreference = \"pgo\"\nvariants = [\"pgo+lto\"]",
            "reference = \"pgo\" is its base",
        ),
        (
            "base = \"baseline\"\nreference = \"pgo\"\nvariants = [\"pgo\"]",
            "measures `pgo`, its own base or reference",
        ),
        (
            "base = \"baseline\"\nreference = \"pgo\"\nvariants = [\"lto\"]",
            "variants: \"lto\" names no variant",
        ),
    ] {
        let text = with(body);
        error_saying(&text, &["/exp/afterburner.toml:", says, "hint:"]);
    }
}
