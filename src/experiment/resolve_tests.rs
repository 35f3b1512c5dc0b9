//! Validation tests: good files load, bad ones name file, line and fix.

use super::*;
use crate::experiment::{LoadModel, Ready, ReportSettings};
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

fn error_of(text: &str) -> String {
    load_text(text, false).unwrap_err().to_string()
}

#[test]
fn unknown_key_names_file_and_line() {
    let text = GOOD.replace("build = \"make\"", "build = \"make\"\nbuidl = \"x\"");
    let err = error_of(&text);
    assert!(err.contains("/exp/afterburner.toml"), "{err}");
    assert!(err.contains("line 6"), "{err}");
    assert!(err.contains("buidl"), "{err}");
}

#[test]
fn unknown_optimization_names_line_and_hint() {
    let text = GOOD.replace("[\"pgo\", \"lto\"]", "[\"pgo\", \"turbo\"]");
    let err = error_of(&text);
    assert!(
        err.starts_with("/exp/afterburner.toml:13: unknown or unsupported optimization `turbo`"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn unknown_placeholder_is_rejected_with_known_ones() {
    let text = GOOD.replace("{bin.app} {params.n}", "{bin.ap}");
    let err = error_of(&text);
    assert!(err.contains(":17: unknown placeholder `{bin.ap}`"), "{err}");
    assert!(err.contains("{bin.app}"), "{err}");
}

#[test]
fn duplicate_variant_and_bad_source_and_duration() {
    let dup = GOOD.replace("name = \"pgo+lto\"", "name = \"baseline\"");
    assert!(error_of(&dup).contains("defined twice"));
    let two = GOOD.replace("{ path = \"src\" }", "{ path = \"src\", apt = \"x\" }");
    assert!(error_of(&two).contains(":4: source must name exactly one"));
    let t = GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "run = \"{bin.app}\"\ntimeout = \"ten\"",
    );
    assert!(error_of(&t).contains("`ten` is not a duration"));
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
    match &load.model {
        LoadModel::Sla { sla, clients, .. } => {
            assert_eq!((sla.percentile, sla.max_ms, *clients), (99.0, 5.0, 10));
        }
        other @ LoadModel::Run(_) => panic!("{other:?}"),
    }
    assert!(e.workloads[0].run.is_none());
}

#[test]
fn service_and_load_mistakes_name_their_line() {
    let port = SERVED.replace("--db {port.db}", "--db {port.cache}");
    let err = error_of(&port);
    assert!(
        err.contains(":16: unknown placeholder `{port.cache}`"),
        "{err}"
    );
    assert!(err.contains("{port.db}"), "{err}");
    let ready = SERVED.replace("ready = \"redis\"", "ready = \"ping\"");
    assert!(error_of(&ready).contains(":11: unknown readiness check `ping`"));
    let var = SERVED.replace("GET key:{k}", "GET key:{key}");
    let err = error_of(&var);
    assert!(
        err.contains(":26: request `GET key:{key}` uses `{key}`"),
        "{err}"
    );
    let model = SERVED.replace("model = \"sla\"", "model = \"burst\"");
    assert!(error_of(&model).contains(":28: unknown load model `burst`"));
    let both = SERVED.replace("name = \"get\"", "name = \"get\"\nrun = \"x\"");
    assert!(error_of(&both).contains("has both run and load"));
    let no_service = GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "[workload.load]\ndriver = \"http\"",
    );
    assert!(error_of(&no_service).contains("the target starts no service"));
    let sla = SERVED.replace("p99<5ms", "p97<5ms");
    assert!(error_of(&sla).contains(":29: percentile 97"));
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
    let err = error_of(&mixed.replace("mix = [9, 1]", "mix = [9, 1, 1]"));
    assert!(err.contains(":27: 3 weights for 2 requests"), "{err}");
    assert!(err.contains("mix = [9, 1]"), "{err}");
    let err = error_of(&mixed.replace("mix = [9, 1]", "mix = [9, 0]"));
    assert!(err.contains(":27: weight 0, the 2nd of the mix"), "{err}");
    let err = error_of(&mixed.replace("mix = [9, 1]", "mix = [-3, 1]"));
    assert!(err.contains(":27: weight -3, the 1st"), "{err}");
    let err = error_of(&mixed.replace("SET key:{k} v", "SET key:{key} v"));
    assert!(
        err.contains(":26: request `SET key:{key} v` uses `{key}`"),
        "{err}"
    );
    let sql = mixed
        .replace("driver = \"redis\"", "driver = \"postgres\"")
        .replace("GET key:{k}", "SELECT {k}")
        .replace("SET key:{k} v", "SELECT 2");
    let err = error_of(&sql);
    assert!(
        err.contains(":26: the postgres driver prepares one statement"),
        "{err}"
    );
    assert!(err.contains("hint: run one load per statement"), "{err}");
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
    assert!(error_of(&optimized).contains("a prebuilt variant cannot also be optimized"));
    let wrong = text.replace("{ app = \"/usr/bin/app\" }", "{ ap = \"/usr/bin/app\" }");
    let err = error_of(&wrong);
    assert!(err.contains("missing [\"app\"], unknown [\"ap\"]"), "{err}");
    let param = text.replace("params = { n = 7 }", "params = { m = 7 }");
    assert!(error_of(&param).contains("sets `m`, which [params] does not define"));
}

#[test]
fn partial_training_is_for_gcc_pgo() {
    let text = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\", \"lto\"]\npartial_training = true",
    );
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
    assert!(error_of(&clang).contains("partial_training is an option of gcc's PGO"));
    let no_pgo = text.replace("[\"pgo\", \"lto\"]", "[\"lto\"]");
    assert!(
        error_of(&no_pgo).contains(":14: partial_training"),
        "{}",
        error_of(&no_pgo)
    );
}

#[test]
fn one_compiler_profile_per_variant_and_sample_event_only_for_sampled_training() {
    let two = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\", \"cspgo\"]\ncompiler = \"clang\"",
    );
    let err = error_of(&two);
    assert!(
        err.contains("pgo and cspgo each make the compiler's profile"),
        "{err}"
    );
    let stacked = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\", \"lto\", \"bolt\"]",
    );
    let e = load_text(&stacked, false).unwrap();
    assert_eq!(e.variants[1].rounds().len(), 2);
    let stray = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\", \"lto\"]\nsample_event = \"cpu-clock\"",
    );
    assert!(
        error_of(&stray).contains(":14: sample_event is the perf event"),
        "{}",
        error_of(&stray)
    );
    let sampled_bolt = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
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
    let unsampled_bolt = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"bolt\"]\nbolt_profile = \"instrumented\"\nsample_event = \"cpu-clock\"",
    );
    assert!(error_of(&unsampled_bolt).contains(":15: sample_event is the perf event"));
    let typo = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"bolt\"]\nbolt_profile = \"lbr\"",
    );
    let err = error_of(&typo);
    assert!(
        err.contains(":14: unknown bolt_profile `lbr`") && err.contains("\"sampled\""),
        "{err}"
    );
    let no_bolt = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\"]\nbolt_profile = \"sampled\"",
    );
    assert!(error_of(&no_bolt).contains(":14: bolt_profile says where"));
    // gcc's autofdo is read (its gcc version is checked before building).
    let gcc = GOOD.replace("optimize = [\"pgo\", \"lto\"]", "optimize = [\"autofdo\"]");
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
    let native = GOOD.replace("[\"pgo\", \"lto\"]", "[\"pgo\", \"march\"]");
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
    let without = GOOD.replace(
        "[\"pgo\", \"lto\"]",
        "[\"pgo\", \"lto\"]\nmarch = \"x86-64-v3\"",
    );
    assert!(
        error_of(&without).contains(":14: march is the -march level"),
        "{}",
        error_of(&without)
    );
    let bad = level.replace("x86-64-v3", "x86 64");
    assert!(error_of(&bad).contains("`x86 64` is not a -march level"));
}

#[test]
fn repetitions_auto_reads_budget_min_and_max() {
    let auto = |extra: &str| format!("{GOOD}\n[bench]\nrepetitions = \"auto\"\n{extra}");
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
    let bench = |body: &str| error_of(&format!("{GOOD}\n[bench]\n{body}"));
    let err = bench("repetitions = \"many\"");
    assert!(
        err.contains("neither a count nor \"auto\"") && err.contains("hint:"),
        "{err}"
    );
    let err = bench("repetitions = 10\nbudget = \"5m\"");
    assert!(
        err.contains("budget applies to repetitions = \"auto\" only"),
        "{err}"
    );
    let err = bench("budget = \"5m\"");
    assert!(err.contains("budget applies"), "{err}");
    let err = bench("repetitions = \"auto\"\nmin = 3");
    assert!(
        err.contains("min = 3 is too few") && err.contains("set min = 8"),
        "{err}"
    );
    let err = bench("repetitions = \"auto\"\nmin = 20\nmax = 10");
    assert!(err.contains("max = 10 must lie between min (20)"), "{err}");
    let err = bench("repetitions = \"auto\"\nbudget = \"soon\"");
    assert!(err.contains("`soon` is not a duration"), "{err}");
    let err = bench("repetitions = \"auto\"\nbudget = \"0s\"");
    assert!(err.contains("budget must be more than 0"), "{err}");
    // The line is named.
    let line = format!("{GOOD}\n[bench]\n").lines().count() + 2;
    assert!(err.contains(&format!("afterburner.toml:{line}")), "{err}");
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
        let err = load_text(&text, false).unwrap_err().to_string();
        assert!(err.contains("afterburner.toml:6"), "{path}: {err}");
        assert!(
            err.contains(&format!(
                "binary `app` = \"{path}\" is not inside the build directory"
            )),
            "{err}"
        );
        assert!(
            err.contains("hint: give its path relative to the build directory"),
            "{err}"
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
    let err = error_of(&bad);
    assert!(err.contains(":12:") && err.contains("`{cpu}`"), "{err}");
    assert!(
        err.contains("{compiler}, {optimize}, {params.threads}"),
        "{err}"
    );
    // Names that collide are refused like hand-written ones.
    let same = MATRIX.replace("[[matrix]]\n", "[[matrix]]\nname = \"{compiler}\"\n");
    assert!(
        error_of(&same).contains("defined twice"),
        "{}",
        error_of(&same)
    );
}

#[test]
fn a_matrix_exclude_that_names_no_axis_or_matches_nothing_is_refused() {
    let err = error_of(&MATRIX.replace("compiler = \"clang\", optimize", "cpu = 3, optimize"));
    assert!(err.contains(":15:") && err.contains("`cpu`"), "{err}");
    assert!(
        err.contains("the axes: compiler, optimize, params.threads"),
        "{err}"
    );
    let err = error_of(&MATRIX.replace("threads = 4 }", "threads = \"4\" }"));
    assert!(err.contains("matches no combination"), "{err}");
    let err = error_of(
        &MATRIX
            .replace(
                "optimize = [[], [\"pgo\", \"lto\"]]",
                "optimize = [[\"fast\"]]",
            )
            .replace(", optimize = []", ""),
    );
    assert!(
        err.contains("unknown or unsupported optimization `fast`"),
        "{err}"
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
    let err = error_of(&text.replace("{state.db}", "{state.cache}"));
    assert!(
        err.contains("unknown placeholder `{state.cache}`") && err.contains("{state.db}"),
        "{err}"
    );
}

#[test]
fn a_cluster_section_loads_with_defaults_and_its_settings() {
    let e = load_text(
        &format!(
            "{GOOD}\n[cluster]\nengine = \"slurm\"\npartition = \"perf\"\ntime = \"1:00:00\"\nsbatch = [\"--constraint=epyc\"]\nafterburner = \"bin/afterburner\"\n"
        ),
        false,
    )
    .unwrap();
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
    let text = format!("{GOOD}\n[cluster]\nengine = \"kubernetes\"\n");
    let line = text.lines().position(|l| l.starts_with("engine")).unwrap() + 1;
    let engine = error_of(&text);
    assert!(engine.contains(&format!(":{line}:")), "{engine}");
    assert!(
        engine.contains("unknown cluster engine `kubernetes`"),
        "{engine}"
    );
    let nodes = error_of(&format!(
        "{GOOD}\n[cluster]\nengine = \"slurm\"\nnodes = 0\n"
    ));
    assert!(nodes.contains(&format!(":{}:", line + 1)), "{nodes}");
    assert!(nodes.contains("nodes = 0 is out of range"), "{nodes}");
    let time = error_of(&format!(
        "{GOOD}\n[cluster]\nengine = \"slurm\"\ntime = \"2h\"\n"
    ));
    assert!(time.contains("not a Slurm time limit"), "{time}");
    let auto = GOOD.replace(
        "[quick]",
        "[bench]\nrepetitions = \"auto\"\nbudget = \"10m\"\n\n[quick]",
    );
    let auto = error_of(&format!("{auto}\n[cluster]\nengine = \"slurm\"\n"));
    assert!(
        auto.contains("a cluster run needs a fixed number of rounds"),
        "{auto}"
    );
    let placement = error_of(&format!(
        "{GOOD}\n[cluster]\nengine = \"slurm\"\nload = \"elsewhere\"\n"
    ));
    assert!(
        placement.contains(&format!(":{}:", line + 1)),
        "{placement}"
    );
    assert!(
        placement.contains("load = \"elsewhere\" is not a load placement"),
        "{placement}"
    );
    // A separate load needs services to drive over the network.
    let alone = error_of(&format!(
        "{GOOD}\n[cluster]\nengine = \"slurm\"\nload = \"separate\"\n"
    ));
    assert!(alone.contains("[target] has no services"), "{alone}");
}

#[test]
fn a_training_workloads_weight_is_read_and_bounded() {
    let weighted = GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "run = \"{bin.app} {params.n}\"\nweight = 3",
    );
    let e = load_text(&weighted, false).unwrap();
    assert_eq!(e.workloads[0].weight, 3);
    assert_eq!(load_text(GOOD, false).unwrap().workloads[0].weight, 1);

    let err = error_of(&GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "run = \"{bin.app} {params.n}\"\nweight = 0",
    ));
    assert!(
        err.starts_with("/exp/afterburner.toml:18: weight = 0 is out of range"),
        "{err}"
    );
    assert!(err.contains("from 1 to 100"), "{err}");

    let bench_only = GOOD.replace(
        "run = \"{bin.app} {params.n}\"",
        "run = \"{bin.app} {params.n}\"\nrole = \"bench\"\nweight = 2",
    );
    let err = error_of(&bench_only);
    assert!(
        err.contains(":19: workload `hot` has a weight but does not train"),
        "{err}"
    );
}

#[test]
fn a_gain_reference_names_a_variant_other_than_the_baseline() {
    let with = |name: &str| format!("{GOOD}\n[report]\ngain_reference = \"{name}\"\n");
    let e = load_text(&with("pgo+lto"), false).unwrap();
    assert_eq!(e.report.gain_reference.as_deref(), Some("pgo+lto"));
    // `--quick` runs the baseline alone, yet the file stays valid.
    assert!(load_text(&with("pgo+lto"), true).is_ok());
    assert_eq!(
        load_text(GOOD, false).unwrap().report,
        ReportSettings::default()
    );
    let text = with("pgo");
    let line = text
        .lines()
        .position(|l| l.starts_with("gain_reference"))
        .unwrap()
        + 1;
    let unknown = error_of(&text);
    assert!(
        unknown.contains(&format!("/exp/afterburner.toml:{line}:")),
        "{unknown}"
    );
    assert!(
        unknown.contains("gain_reference = \"pgo\" names no variant"),
        "{unknown}"
    );
    assert!(
        unknown.contains("hint: name one of the variants other than the baseline: `pgo+lto`"),
        "{unknown}"
    );
    let baseline = error_of(&with("baseline"));
    assert!(baseline.contains(&format!(":{line}:")), "{baseline}");
    assert!(baseline.contains("is the baseline"), "{baseline}");
    assert!(baseline.contains("hint:"), "{baseline}");
    let typo = error_of(&format!("{GOOD}\n[report]\ngain_refrence = \"pgo+lto\"\n"));
    assert!(typo.contains("gain_refrence"), "{typo}");
}

/// `afterburner report` reads `[report]` alone again, against the run's
/// variants: the rest of the file may have changed since.
#[test]
fn report_settings_are_read_alone_against_a_runs_variants() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("afterburner.toml");
    let text = "[target]\nname = \"changed since\"\n\n[report]\ngain_reference = \"pgo\"\n";
    fs_err::write(&path, text).unwrap();
    let settings = report_settings(&path, ["baseline", "pgo", "o3"].into_iter()).unwrap();
    assert_eq!(settings.gain_reference.as_deref(), Some("pgo"));
    let missing = report_settings(&path, ["baseline", "o3"].into_iter())
        .unwrap_err()
        .to_string();
    assert!(missing.contains("afterburner.toml:5:"), "{missing}");
    assert!(missing.contains("names no variant"), "{missing}");
    let gone = report_settings(&dir.path().join("nope.toml"), std::iter::empty());
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
    let no_profile = GO.replace(
        "optimize = [\"pgo\"]",
        "optimize = [\"pgo\"]\npgo_source = \"cpuprofile\"",
    );
    let err = error_of(&no_profile);
    assert!(
        err.contains(":12: pgo_source = \"cpuprofile\" reads the CPU profiles"),
        "{err}"
    );
    assert!(err.contains("pgo_source = \"perf\""), "{err}");
    let typo = GO.replace(
        "optimize = [\"pgo\"]",
        "optimize = [\"pgo\"]\npgo_source = \"pprof\"",
    );
    let err = error_of(&typo);
    assert!(err.contains(":12: unknown pgo_source `pprof`"), "{err}");
    let not_go = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\", \"lto\"]\npgo_source = \"perf\"",
    );
    let err = error_of(&not_go);
    assert!(
        err.contains(":14: pgo_source says where Go PGO's profile comes from"),
        "{err}"
    );
    // Go's own CPU profiles take no perf event.
    let stray = GO
        .replace(
            "optimize = [\"pgo\"]",
            "optimize = [\"pgo\"]\nsample_event = \"cpu-clock\"",
        )
        .replace(
            "run = \"{bin.gohot} -n 1000\"",
            "run = \"{bin.gohot} -cpuprofile {profile}\"",
        );
    assert!(
        error_of(&stray).contains(":12: sample_event is the perf event"),
        "{}",
        error_of(&stray)
    );
}

#[test]
fn train_stop_dump_is_for_instrumented_variants_and_is_stop_by_default() {
    let e = load_text(GOOD, false).unwrap();
    assert!(e.variants.iter().all(|v| v.train_stop.is_stop()));
    let dump = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"pgo\", \"lto\"]\ntrain_stop = \"dump\"",
    );
    let e = load_text(&dump, false).unwrap();
    assert_eq!(e.variants[1].train_stop, super::super::TrainStop::Dump);
    let unknown = dump.replace("\"dump\"", "\"flush\"");
    assert!(
        error_of(&unknown).contains(":14: unknown train_stop `flush`"),
        "{}",
        error_of(&unknown)
    );
    let sampled = GOOD.replace(
        "optimize = [\"pgo\", \"lto\"]",
        "optimize = [\"autofdo\"]\ntrain_stop = \"dump\"",
    );
    assert!(
        error_of(&sampled).contains("dumps the counters of an instrumented build"),
        "{}",
        error_of(&sampled)
    );
}
