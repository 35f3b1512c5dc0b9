//! The headline is time: a variant that executes more instructions in less
//! time heads its report with the clock and says that work and time
//! disagree; a server that answers more requests in a fixed-duration load
//! is judged per request, never "slower" for the CPU and context switches
//! its extra work costs.

use crate::support::{busy, comparison, exclusive, only_run_dir, read_json, Sandbox};

/// The divide fixture, plain (a 64-bit division per step) against
/// `-DADDS` (shift-adds: ~3× the instructions in about half the time).
const DIVIDE: &str = r#"
[target]
name = "divide"
source = { path = "src" }
build = "make"
binaries = { divide = "divide" }

[[variant]]
name = "divides"

[[variant]]
name = "adds"
cflags = "-DADDS"

[[workload]]
name = "loop"
role = "bench"
run = "{bin.divide} 4000000 7"

[bench]
repetitions = 8
warmup = 1
metrics = ["wall", "user", "instructions"]
instruction_repetitions = 1
seed = 11
"#;

#[test]
fn more_work_in_less_time_heads_with_time_and_says_they_disagree() {
    let _alone = exclusive();
    let sandbox = Sandbox::with_fixture("divide");
    sandbox.write("afterburner.toml", DIVIDE);
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    assert_eq!(results["judging"]["loop"]["primary"], "wall", "{results:#}");
    let wall = comparison(&results, "loop", "wall", "adds");
    assert_eq!(wall["primary"], true, "{wall:#}");
    let instructions = comparison(&results, "loop", "instructions", "adds");
    assert!(
        instructions["ratio"].as_f64().unwrap() > 1.5,
        "{instructions:#}"
    );
    let stdout = run.stdout();
    let headline = stdout
        .lines()
        .skip_while(|l| !l.starts_with("summary"))
        .nth(1)
        .unwrap_or_default();
    assert!(headline.contains(" wall "), "{stdout}");
    assert!(headline.contains("more instructions"), "{stdout}");
    let report = std::fs::read_to_string(only_run_dir(&sandbox).join("report.md")).unwrap();
    assert!(report.contains("| loop | wall | adds |"), "{report}");
    if wall["verdict"] == "faster" {
        assert!(
            headline.contains("faster, but") && headline.contains("work and time disagree"),
            "{stdout}"
        );
    } else {
        // Time called nothing on a machine this busy: the headline still
        // leads with it, undecided, the work beside it.
        assert_eq!(wall["verdict"], "undecided", "{wall:#}");
        assert!(headline.contains("wall undecided"), "{stdout}");
        crate::support::skip_part(&format!(
            "the disagreement sentence (wall time undecided here; {})",
            busy().unwrap_or_else(|| "machine not idle".to_owned())
        ));
    }
}

/// The slowserver fixture busy-waits `{params.us}` µs per request: the
/// "fast" variant answers about twice the requests of the baseline in the
/// same second, with the server busy all the time in both.
const SERVED: &str = r#"
[target]
name = "slowserver"
source = { path = "src" }
build = "make"
binaries = { server = "slowserver" }

[[target.service]]
name = "web"
start = "{bin.server} {port} {params.us}"
ready = "http:/"

[params]
us = 400

[[variant]]
name = "baseline"

[[variant]]
name = "fast"
params = { us = 200 }

[[workload]]
name = "second"
role = "bench"
[workload.load]
driver = "http"
clients = 2
duration = "1s"
warmup = "100ms"

[bench]
repetitions = 6
warmup = 0
metrics = ["wall"]
seed = 5
"#;

#[test]
fn a_server_serving_more_in_the_same_time_is_judged_per_request() {
    let _alone = exclusive();
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write("afterburner.toml", SERVED);
    sandbox.afterburner(&["run"]).assert_ok();
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    assert_eq!(results["judging"]["second"]["fixed_duration"], true);
    // The totals over a fixed second are shown, not judged.
    for total in ["web.cpu", "web.ctx_switches"] {
        assert!(
            results["measurements"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["metric"]["name"] == total),
            "{total} not shown"
        );
        assert!(
            !results["comparisons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["metric"] == total),
            "{total} was judged"
        );
    }
    let throughput = comparison(&results, "second", "throughput", "fast");
    assert!(
        throughput["ratio"].as_f64().unwrap() > 1.2,
        "{throughput:#}"
    );
    for per_request in ["web.cpu_per_request", "web.ctx_switches_per_request"] {
        let c = comparison(&results, "second", per_request, "fast");
        assert_ne!(c["verdict"], "slower", "{c:#}");
        assert!(c["level"].as_f64().unwrap() < 0.05, "secondary: {c:#}");
    }
    let cpu = comparison(&results, "second", "web.cpu_per_request", "fast");
    assert!(cpu["ratio"].as_f64().unwrap() < 1.0, "{cpu:#}");
}
