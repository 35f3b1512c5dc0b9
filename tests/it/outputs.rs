//! The seeds' own outputs: benchpress's JSON and instance health.

use crate::support::{exclusive, only_run_dir, read_json, Sandbox};

/// Three copies of the slowserver fixture, the third made slow on purpose
/// through `{instance}` (4 ms a request against 0.5 ms), each driven by a
/// closed load of its own.
const INSTANCES: &str = r#"
[target]
name = "slowserver"
source = { path = "src" }
build = "make"
binaries = { server = "slowserver" }

[[target.service]]
name = "web"
start = "sh -c 'exec {bin.server} {port} $(( {instance} == 3 ? 4000 : 500 ))'"
ready = "http:/"

[[variant]]
name = "baseline"

[[workload]]
name = "feed"
[workload.load]
driver = "http"
clients = 2
duration = "1s"
warmup = "0s"
instances = 3

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#;

#[test]
fn a_slow_instance_is_flagged_and_benchpress_json_has_the_seeds_keys() {
    let _serial = exclusive();
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write("afterburner.toml", INSTANCES);
    sandbox
        .afterburner(&["run", "--export-benchpress", "bp.json"])
        .assert_ok();
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let set = &results["instances"][0];
    let healthy: Vec<bool> = set["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["healthy"].as_bool().unwrap())
        .collect();
    assert_eq!(healthy, [true, true, false], "{set:#}");
    let warned = results["warnings"].to_string();
    assert!(warned.contains("instance 3 of 3"), "{warned}");

    // CPU utilization during the run: every interval's shares add up to
    // 100%, the machine's and each CPU's.
    let cpu = results["loads"][0]["cpu"].as_array().unwrap();
    assert!(!cpu.is_empty(), "no CPU samples");
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    for row in cpu {
        let sum = |s: &serde_json::Value| {
            ["user", "system", "iowait", "steal", "idle"]
                .iter()
                .map(|k| s[*k].as_f64().unwrap())
                .sum::<f64>()
        };
        assert!((sum(&row["total"]) - 100.0).abs() < 1e-6, "{row}");
        let each = row["cpus"].as_array().unwrap();
        assert!(
            each.len() >= cpus,
            "{} CPUs in /proc/stat, {cpus} usable",
            each.len()
        );
        assert!(each.iter().all(|c| (sum(c) - 100.0).abs() < 1e-6), "{row}");
    }
    let report = std::fs::read_to_string(only_run_dir(&sandbox).join("report.md")).unwrap();
    assert!(
        report.contains("## CPU utilization during the loads"),
        "{report}"
    );
    let html = std::fs::read_to_string(only_run_dir(&sandbox).join("report.html")).unwrap();
    assert!(html.contains("CPU busy per interval"));

    let bp = read_json(&sandbox.path().join("bp.json"));
    let one = &bp[0];
    for key in [
        "benchmark_args",
        "benchmark_desc",
        "benchmark_hooks",
        "benchmark_name",
        "machines",
        "metadata",
        "metrics",
        "run_id",
        "timestamp",
    ] {
        assert!(!one[key].is_null(), "{key} missing: {one:#}");
    }
    let machine = &one["machines"][0];
    for key in [
        "cpu_architecture",
        "cpu_model",
        "hostname",
        "kernel_version",
        "mem_total_kib",
        "num_logical_cpus",
        "os_distro",
        "os_release_name",
    ] {
        assert!(machine[key].is_string(), "{key}: {machine:#}");
    }
    assert!(machine["mem_total_kib"].as_str().unwrap().ends_with(" KiB"));
    let m = &one["metrics"];
    assert_eq!(m["spawned_instances"], "3");
    assert_eq!(m["successful_instances"], 2);
    let mut sum = 0.0;
    for k in ["1", "2", "3"] {
        for key in [
            "final_achieved_qps",
            "final_latency_msec",
            "final_requested_qps",
        ] {
            assert!(m[k][key].is_number(), "{k}.{key}: {m:#}");
        }
        sum += m[k]["final_achieved_qps"].as_f64().unwrap();
    }
    let overall = m["overall"]["final_achieved_qps"].as_f64().unwrap();
    assert!(
        (overall - sum).abs() < 0.05,
        "overall {overall} is the sum {sum}"
    );
    assert!(m["overall"]["average_latency_msec"].is_number());
    assert!(one["timestamp"].as_i64().unwrap() > 1_700_000_000);
}

/// Debian's redis-server loaded with GETs: its own time per command (INFO
/// commandstats, before and after each run) is recorded beside the
/// client's latency, and is a small part of it (no network, no queue).
#[test]
fn redis_server_side_latency_is_read_and_shown_beside_the_clients() {
    let _serial = exclusive();
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write(
        "afterburner.toml",
        r#"
[target]
name = "redis"
source = { path = "src" }
build = "make"
binaries = { redis = "slowserver" }

[[target.service]]
name = "db"
start = "{bin.redis} --port {port} --bind 127.0.0.1 --save '' --appendonly no"
ready = "redis"

[[variant]]
name = "debian"
prebuilt = { redis = "/usr/bin/redis-server" }

[[workload]]
name = "get"
[workload.load]
driver = "redis"
request = "GET key:{k}"
vars = { k = "uniform:1:1000" }
clients = 4
requests = 3000
warmup = "0s"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
"#,
    );
    sandbox.afterburner(&["bench"]).assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    let mean = |metric: &str| {
        results["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"]["name"] == metric)
            .unwrap_or_else(|| panic!("no {metric}"))["summary"]["mean"]
            .as_f64()
            .unwrap()
    };
    let (server_us, p50_ms) = (mean("server_mean"), mean("p50"));
    assert!(
        server_us > 0.0 && server_us < p50_ms * 1000.0,
        "server {server_us} µs, client p50 {p50_ms} ms"
    );
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Server-side latency beside the client's"),
        "{report}"
    );
    assert!(report.contains("| get | debian |"), "{report}");
}
