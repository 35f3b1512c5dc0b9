//! Validation tests: good files load, bad ones name file, line and fix.

use super::*;

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
        vec![Optimization::Pgo, Optimization::Lto]
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
