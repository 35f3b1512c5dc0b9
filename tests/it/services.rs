//! Targets with services: the fixture's slowserver started per run with
//! a free port, trained under load and stopped cleanly (so gcc writes its
//! profile), benchmarked with afterburner's own load, instructions counted
//! in the server under callgrind.

use crate::support::{
    busy, comparison, exclusive, only_run_dir, read_json, Bench, Experiment, Sandbox, Service,
    Variant, Workload,
};

/// The slowserver fixture as the service `web` (answering at once),
/// `baseline` against `second`, under two loads: `closed`, whose
/// `[workload.load]` is `closed_load`, and `paced` (bench only, 300/s for
/// a second).
fn served(second: Variant, closed_load: &str) -> Experiment {
    Experiment::new("slowserver")
        .binaries(&[("server", "slowserver")])
        .service(web("{bin.server} {port} 0"))
        .variant(second)
        .workload(Workload::new("closed").load(closed_load))
        .workload(Workload::new("paced").role("bench").load(
            r#"
            driver = "http"
            model = "rate"
            rate = 300
            duration = "1s"
            clients = 2
            warmup = "200ms"
            "#,
        ))
        .bench(SERVED_BENCH)
}

/// The service `web`, started by `start`, ready when it answers HTTP.
fn web(start: &str) -> Service {
    Service::new("web", start).ready("http:/")
}

/// 1000 requests from 2 clients, no warmup.
const CLOSED: &str = r#"
    driver = "http"
    clients = 2
    requests = 1000
    warmup = "0s"
"#;

const SERVED_BENCH: Bench = Bench {
    repetitions: 3,
    metrics: &["wall", "instructions"],
    instruction_repetitions: Some(1),
    seed: Some(7),
    ..Bench::QUICK
};

/// With two CPUs or more, services and the load ran on disjoint CPUs.
fn pinned_apart(results: &serde_json::Value) {
    let cpus = afterburner::pinning::allowed();
    if cpus.len() >= 2 {
        let p = &results["pinning"];
        let (services, workload) = (
            p["services"].as_array().unwrap(),
            p["workload"].as_array().unwrap(),
        );
        assert!(!services.is_empty() && !workload.is_empty(), "{p}");
        assert!(services.iter().all(|c| !workload.contains(c)), "{p}");
    } else {
        crate::support::skip_part("one CPU here: nothing to pin, pinning");
        assert!(results["pinning"].is_null());
    }
}

fn raw_runs(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let raw = std::fs::read_to_string(only_run_dir(sandbox).join("raw.jsonl")).unwrap();
    raw.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A load of fixed duration: its service totals are shown, not judged.
fn totals_unjudged(results: &serde_json::Value, workload: &str) {
    for total in ["web.cpu", "web.ctx_switches"] {
        assert!(!results["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["workload"] == workload && c["metric"] == total));
    }
}

#[test]
fn a_service_target_trains_benches_and_counts_the_servers_instructions() {
    let _serial = exclusive();
    let pgo = Variant::new("pgo").optimize(&["pgo"]);
    let sandbox = Sandbox::with_experiment("slowserver", &served(pgo, CLOSED));
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let afterburner = sandbox.path().join(".afterburner");
    // SIGTERM let the instrumented server exit and write its profile.
    let gcda = afterburner.join("variants/pgo/profile/gcc-pgo/slowserver.gcda");
    assert!(
        std::fs::metadata(&gcda).unwrap().len() > 0,
        "{}",
        run.stderr()
    );
    assert!(afterburner
        .join("variants/pgo/logs/train-closed-web.log")
        .exists());

    let runs = raw_runs(&sandbox);
    assert!(runs.iter().all(|r| r["success"] == true), "{runs:#?}");
    let counted: Vec<_> = runs
        .iter()
        .filter(|r| r["kind"] == "instructions")
        .collect();
    // Only the fixed-count workload is counted: one run per variant.
    assert_eq!(counted.len(), 2, "{counted:#?}");
    assert!(counted.iter().all(|r| r["workload"] == "closed"));
    if counted
        .iter()
        .all(|r| r["instruction_source"] == "callgrind")
    {
        assert!(counted
            .iter()
            .all(|r| r["instructions"].as_u64().unwrap() > 100_000));
    } else {
        // Known gap: the service's stop signal reaches perf stat too, which
        // then writes no count.
        crate::support::skip_part("perf counts instructions here: the server's count");
    }
    for r in runs.iter().filter(|r| r["workload"] == "paced") {
        let rps = r["figures"]["throughput"].as_f64().unwrap();
        // Never above the rate asked; below it only on a busy machine.
        assert!(rps > 0.0 && rps <= 320.0, "asked 300/s, got {rps}");
        paced_floor(rps);
        assert!(r["figures"]["web.cpu"].as_f64().unwrap() > 0.0);
    }

    let results = sandbox.results();
    pinned_apart(&results);
    for (workload, metric) in [
        ("closed", "throughput"),
        ("closed", "instructions"),
        ("paced", "p99"),
        ("paced", "web.cpu_per_request"),
        ("paced", "web.ctx_switches_per_request"),
        ("closed", "web.cpu"),
        ("closed", "web.cpu_per_request"),
    ] {
        comparison(&results, workload, metric, "pgo");
    }
    totals_unjudged(&results, "paced");
    // CPU per request is the server's CPU time over the requests answered:
    // 1000 requests of the closed workload, so µs = cpu × 1000.
    for r in runs
        .iter()
        .filter(|r| r["workload"] == "closed" && r["kind"] != "instructions")
    {
        let (cpu, per) = (
            r["figures"]["web.cpu"].as_f64().unwrap(),
            r["figures"]["web.cpu_per_request"].as_f64().unwrap(),
        );
        assert!(
            (per - cpu * 1e6 / 1000.0).abs() < 1e-6 * per.max(1.0),
            "{r:#}"
        );
    }
    // Summary first: per workload its time — throughput for the
    // fixed-count closed load (the counted instructions beside it), p99 for
    // the paced one (whose throughput is the rate asked).
    let md = std::fs::read_to_string(only_run_dir(&sandbox).join("report.md")).unwrap();
    let summary = md
        .split("## Summary")
        .nth(1)
        .expect("report.md opens with a summary");
    let summary = summary.split("\n## ").next().unwrap();
    assert!(
        summary.contains("| closed | throughput (higher") && summary.contains("instructions"),
        "{summary}"
    );
    assert!(summary.contains("| paced | p99 (lower"), "{summary}");
    assert!(
        run.stdout().contains("summary (time per workload"),
        "{}",
        run.stdout()
    );
    // The HTML report draws each load workload's latency curve and series.
    let html = std::fs::read_to_string(only_run_dir(&sandbox).join("report.html")).unwrap();
    for heading in [
        "paced / latency by percentile",
        "closed / per interval: p99 latency",
    ] {
        assert!(html.contains(heading), "report.html lacks {heading:?}");
    }
    assert!(
        html.matches("<polyline").count() >= 12,
        "2 workloads × 3 charts × 2 variants"
    );
    let logs = only_run_dir(&sandbox).join("logs");
    let series = std::fs::read_to_string(logs.join("r000-paced-pgo-time.series.csv")).unwrap();
    assert!(
        series.starts_with("time_s,requested_rps,achieved_rps"),
        "{series}"
    );
    assert!(logs.join("r000-paced-pgo-time-web.log").exists());
}

#[test]
fn a_service_that_dies_fails_its_run_and_the_bench_goes_on() {
    let _serial = exclusive();
    let crashy = Variant::new("crashy").line("env = { DIE = \"1\" }");
    let dies = Service::new(
        "web",
        "sh -c 'if [ -n \"$DIE\" ]; then timeout -s KILL 0.3 {bin.server} {port} 100; exit 3; fi; exec {bin.server} {port} 100'",
    );
    let text = served(
        crashy,
        &CLOSED.replace("requests = 1000", "duration = \"1s\""),
    )
    .service(dies)
    .bench(Bench {
        repetitions: 2,
        ..SERVED_BENCH
    });
    let sandbox = Sandbox::with_experiment("slowserver", &text);
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    assert!(
        run.stderr()
            .contains("service `web` exited during the run with exit code 3"),
        "{}",
        run.stderr()
    );
    let runs = raw_runs(&sandbox);
    let timing = |variant: &str| -> Vec<bool> {
        runs.iter()
            .filter(|r| r["variant"] == variant && r["kind"] == "timing")
            .map(|r| r["success"].as_bool().unwrap())
            .collect()
    };
    assert_eq!(timing("crashy"), [false, false, false, false]);
    assert_eq!(timing("baseline"), [true, true, true, true]);
    assert!(only_run_dir(&sandbox).join("report.md").exists());
}

#[test]
fn instances_run_copies_side_by_side_and_add_their_rates() {
    let _serial = exclusive();
    let two_copies = r#"
        driver = "http"
        clients = 2
        model = "rate"
        rate = 200
        duration = "2s"
        warmup = "200ms"
        instances = 2
    "#;
    let text = served(Variant::new("same"), two_copies)
        .service(web("{bin.server} {port} 2000"))
        .bench(Bench {
            repetitions: 2,
            metrics: &["wall"],
            ..SERVED_BENCH
        });
    let sandbox = Sandbox::with_experiment("slowserver", &text);
    sandbox
        .afterburner(&["bench"])
        .assert_fails_with("afterburner build");
    sandbox.afterburner(&["run"]).assert_ok();
    let runs = raw_runs(&sandbox);
    let logs = only_run_dir(&sandbox).join("logs");
    for r in runs.iter().filter(|r| r["workload"] == "closed") {
        let rps = r["figures"]["throughput"].as_f64().unwrap();
        // Two copies, each asked 200/s; together they did what each did,
        // added (how close each came to 200/s depends on how busy this
        // machine is, so that is not asserted).
        let copies: Vec<serde_json::Value> = ["i0", "i1"]
            .iter()
            .map(|copy| {
                read_json(&logs.join(format!(
                    "r{:03}-closed-{}-time-{copy}.load.json",
                    r["round"].as_u64().unwrap(),
                    r["variant"].as_str().unwrap()
                )))
            })
            .collect();
        let mut sum = 0.0;
        for copy in &copies {
            assert_eq!(
                copy["summary"]["requested_rps"].as_f64(),
                Some(200.0),
                "{copy}"
            );
            sum += copy["summary"]["achieved_rps"].as_f64().unwrap();
        }
        assert!(
            rps > 0.0 && (rps - sum).abs() <= 0.01 * sum,
            "two copies at 200/s gave {rps}, their sum {sum}"
        );
    }
    for copy in ["i0", "i1"] {
        assert!(logs
            .join(format!("r000-closed-same-time-{copy}-web.log"))
            .exists());
        assert!(logs
            .join(format!("r000-closed-same-time-{copy}.load.json"))
            .exists());
    }
}

/// A paced load asked 300/s got near it, unless the machine is busy.
fn paced_floor(rps: f64) {
    match busy() {
        None => assert!(rps >= 280.0, "asked 300/s, got {rps}"),
        Some(why) => {
            crate::support::skip_part(&format!("{why}: {rps}/s of 300/s asked, the floor"));
        }
    }
}

/// Processes whose command line mentions `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(needle) {
                found.push(text);
            }
        }
    }
    found
}

#[test]
fn ctrl_c_stops_the_services_keeps_finished_runs_and_resume_finishes() {
    let _serial = exclusive();
    let other = Variant::new("other").cflags("-O1");
    let text = served(
        other,
        &CLOSED.replace("requests = 1000", "duration = \"1s\""),
    )
    .bench(Bench {
        repetitions: 4,
        metrics: &["wall"],
        ..SERVED_BENCH
    });
    let sandbox = Sandbox::with_experiment("slowserver", &text);
    sandbox.afterburner(&["build"]).assert_ok();
    let out = std::fs::File::create(sandbox.path().join("bench.err")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .stdout(std::process::Stdio::null())
        .stderr(out)
        .spawn()
        .unwrap();
    let runs = sandbox.path().join(".afterburner/runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    // Wait for the first finished run, then interrupt the next one.
    while std::fs::read_dir(&runs)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| std::fs::read_to_string(e.unwrap().path().join("raw.jsonl")).ok())
        .is_none_or(|raw| raw.lines().count() < 1)
    {
        assert!(std::time::Instant::now() < deadline, "no run finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(sandbox.path().join("bench.err")).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let build = sandbox.path().join(".afterburner/variants");
    assert_eq!(
        processes_with(&build.to_string_lossy()),
        Vec::<String>::new(),
        "services left running"
    );
    let kept = raw_runs(&sandbox);
    assert!(
        !kept.is_empty() && kept.len() < 16,
        "{} runs kept",
        kept.len()
    );
    assert!(kept.iter().all(|r| r["success"] == true));
    sandbox.afterburner(&["bench", "--resume"]).assert_ok();
    let all = raw_runs(&sandbox);
    assert_eq!(all.len(), 16, "2 variants × 2 workloads × 4 rounds");
    assert!(all.iter().all(|r| r["success"] == true));
}

#[test]
fn several_services_start_in_order_and_see_each_others_ports() {
    let _serial = exclusive();
    let other = Variant::new("other").cflags("-O1");
    let closed = CLOSED.replace(
        "requests = 1000",
        "requests = 200\naddress = \"127.0.0.1:{port.web}\"",
    );
    let text = served(other, &closed)
        .services([
            Service::new("db", "{bin.server} {port} 0").ready("log:ready on port [0-9]+"),
            web("sh -c 'echo {port.db} > web-saw-db-port; exec {bin.server} {port} 0'"),
        ])
        .bench(Bench {
            repetitions: 1,
            metrics: &["wall"],
            ..SERVED_BENCH
        });
    let sandbox = Sandbox::with_experiment("slowserver", &text);
    sandbox.afterburner(&["run"]).assert_ok();
    let runs = raw_runs(&sandbox);
    assert!(runs.iter().all(|r| r["success"] == true), "{runs:#?}");
    for r in &runs {
        for service in ["db", "web"] {
            assert!(r["figures"][format!("{service}.cpu")].is_number(), "{r:#}");
        }
    }
    // The last run's web service was told the db's port, and db listened
    // there; web wrote it in a directory of its own, not the experiment's.
    let logs = only_run_dir(&sandbox).join("logs");
    let last = runs.last().unwrap();
    let stem = format!(
        "r{:03}-{}-{}-time",
        last["round"].as_u64().unwrap(),
        last["workload"].as_str().unwrap(),
        last["variant"].as_str().unwrap()
    );
    assert!(!sandbox.path().join("web-saw-db-port").exists());
    let seen = std::fs::read_to_string(
        only_run_dir(&sandbox)
            .join("services")
            .join(format!("{stem}-web"))
            .join("web-saw-db-port"),
    )
    .unwrap();
    let db_log = std::fs::read_to_string(logs.join(format!("{stem}-db.log"))).unwrap();
    assert!(
        db_log.contains(&format!("ready on port {}", seen.trim())),
        "{db_log} vs {seen}"
    );
}

/// Debian's memcached sets `RLIMIT_NOFILE` to its 1024 connections and exits
/// when it cannot; under valgrind it could not (valgrind allows only the
/// hard limit it started with), so every counted run failed (issue 14).
/// Debian's memcached as the service `mc`, run twice (`debian`, `again`).
fn debian_memcached() -> Experiment {
    // As root memcached wants a user to run as; callgrind (which opened its
    // output file before the switch) could not write its counts as another.
    // SAFETY: getuid has no preconditions.
    let user = if unsafe { libc::getuid() } == 0 {
        " -u root"
    } else {
        ""
    };
    let prebuilt =
        |name| Variant::new(name).line("prebuilt = { memcached = \"/usr/bin/memcached\" }");
    Experiment::new("memcached")
        .binaries(&[("memcached", "slowserver")])
        .service(
            Service::new(
                "mc",
                &format!("{{bin.memcached}} -p {{port}} -U 0 -l 127.0.0.1{user}"),
            )
            .ready("memcached"),
        )
        .variants([prebuilt("debian"), prebuilt("again")])
}

const MEMCACHED_BENCH: Bench = Bench {
    metrics: &["wall", "instructions"],
    instruction_repetitions: Some(1),
    ..Bench::QUICK
};

#[test]
fn debian_memcached_runs_and_is_counted_under_callgrind() {
    let _serial = exclusive();
    if !std::path::Path::new("/usr/bin/memcached").exists() {
        crate::support::skip(crate::support::Lack::Installed(
            "/usr/bin/memcached is not installed (.ci/run installs it)",
        ));
        return;
    }
    let sandbox = Sandbox::with_fixture("slowserver");
    let set = Workload::new("set").load(
        r#"
        driver = "memcached"
        request = "set key:{k} value-{k}"
        vars = { k = "seq:1:500" }
        clients = 2
        requests = 500
        warmup = "0s"
        "#,
    );
    sandbox.write_experiment(&debian_memcached().workload(set).bench(Bench {
        seed: Some(3),
        ..MEMCACHED_BENCH
    }));
    let run = sandbox.afterburner(&["bench"]);
    run.assert_ok();
    let runs = raw_runs(&sandbox);
    assert!(runs.iter().all(|r| r["success"] == true), "{runs:#?}");
    let counted: Vec<&serde_json::Value> = runs
        .iter()
        .filter(|r| r["kind"] == "instructions")
        .collect();
    assert_eq!(counted.len(), 2, "{runs:#?}");
    if counted
        .iter()
        .all(|r| r["instruction_source"] == "callgrind")
    {
        assert!(
            counted
                .iter()
                .all(|r| r["instructions"].as_u64().unwrap() > 1_000_000),
            "{counted:?}"
        );
    } else {
        crate::support::skip_part(
            "perf counts instructions here: valgrind's limits do not apply, the count",
        );
    }
}

/// A service under callgrind is counted over the load's measured window
/// only: started with instrumentation off, switched on after the warmup and
/// off before the stop. 100 gets and 400 gets then cost about the same per
/// request (memcached's start-up and stop alone count 4.3 M instructions
/// under callgrind here, 40 k per request of the 100), a closed load of a
/// set duration becomes countable, and each counted run gets its
/// instructions per request, the headline metric. (Not exactly the same:
/// memcached's background threads run during the window, so per-request
/// counts of identical short runs differ by up to ~20% here, which the
/// verdict's resolution, their measured spread, takes in.)
#[test]
fn a_service_is_counted_over_the_measured_window_only() {
    let _serial = exclusive();
    if !std::path::Path::new("/usr/bin/memcached").exists() {
        crate::support::skip(crate::support::Lack::Installed(
            "/usr/bin/memcached is not installed (.ci/run installs it)",
        ));
        return;
    }
    let workload = |name: &str, model: &str| {
        Workload::new(name).load(&format!(
            "driver = \"memcached\"\nrequest = \"get key:{{k}}\"\nvars = {{ k = \"uniform:1:100\" }}\n{model}\nwarmup = \"300ms\""
        ))
    };
    let text = debian_memcached()
        .workload(workload("get100", "clients = 1\nrequests = 100"))
        .workload(workload("get400", "clients = 1\nrequests = 400"))
        .workload(workload("timed", "clients = 2\nduration = \"1s\""))
        .bench(Bench {
            repetitions: 1,
            seed: Some(5),
            ..MEMCACHED_BENCH
        });
    let sandbox = Sandbox::with_experiment("slowserver", &text);
    sandbox.afterburner(&["run"]).assert_ok();
    let runs = raw_runs(&sandbox);
    let counted: Vec<&serde_json::Value> = runs
        .iter()
        .filter(|r| r["kind"] == "instructions")
        .collect();
    if !counted
        .iter()
        .all(|r| r["instruction_source"] == "callgrind")
    {
        crate::support::skip_part("perf counts instructions here: it cannot be switched on and off from outside, so the window");
        return;
    }
    assert_eq!(
        counted.len(),
        6,
        "every workload counted, the timed one too: {runs:#?}"
    );
    let per_request = |workload: &str, variant: &str| {
        let r = counted
            .iter()
            .find(|r| r["workload"] == workload && r["variant"] == variant)
            .unwrap();
        assert_eq!(r["success"], true, "{r}");
        // A load of a set duration keeps its total aside: only the count
        // per request compares.
        let n = if workload == "timed" {
            assert!(r["instructions"].is_null(), "{r}");
            r["figures"]["window_instructions"].as_f64().unwrap()
        } else {
            r["instructions"].as_f64().unwrap()
        };
        let per = r["figures"]["instructions_per_request"].as_f64().unwrap();
        let requests = r["figures"]["requests"].as_f64().unwrap();
        assert!(n > 0.0 && (per - n / requests).abs() < 1e-6 * per, "{r}");
        per
    };
    for variant in ["debian", "again"] {
        let ratio = per_request("get100", variant) / per_request("get400", variant);
        assert!(
            (0.5..=2.0).contains(&ratio),
            "per request, 100 gets / 400 gets = {ratio} ({variant}): start-up counted?"
        );
        assert!(per_request("timed", variant) > 0.0);
    }
    let results = sandbox.results();
    let c = comparison(&results, "get400", "instructions_per_request", "again");
    assert!(c["verdict"].is_string(), "{c}");
    let report = std::fs::read_to_string(only_run_dir(&sandbox).join("report.md")).unwrap();
    assert!(report.contains("instructions_per_request"), "{report}");
    explains_the_window_per_request(&sandbox);
}

/// `explain` reads the window's callgrind files, per request answered.
fn explains_the_window_per_request(sandbox: &Sandbox) {
    let explain = sandbox.afterburner(&["explain", "--workload", "timed"]);
    explain.assert_ok();
    let out = explain.stdout();
    assert!(out.contains("instructions per request"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("memcached ")),
        "the server's own object: {out}"
    );
    assert!(!out.contains("add up to"), "{out}");
}

/// A workload's mix of requests (`request = [A, B]`, `mix = [3, 1]`)
/// reaches the server by weight and is counted per request in the load's
/// JSON and in `results.json`'s `loads[]`.
#[test]
fn a_mixed_load_is_counted_per_request_in_the_results() {
    let _serial = exclusive();
    let mixed = r#"
        driver = "http"
        request = ["GET /a", "GET /b"]
        mix = [3, 1]
        clients = 2
        requests = 1000
        warmup = "0s"
    "#;
    let text = served(Variant::new("same"), mixed).bench(Bench {
        repetitions: 1,
        metrics: &["wall"],
        ..SERVED_BENCH
    });
    let (_sandbox, results) = crate::support::run_experiment("slowserver", &text);
    let loads = results["loads"].as_array().unwrap();
    let closed: Vec<&serde_json::Value> =
        loads.iter().filter(|l| l["workload"] == "closed").collect();
    assert_eq!(closed.len(), 2, "{loads:#?}");
    for load in closed {
        let mix = load["mix"].as_array().unwrap_or_else(|| panic!("{load}"));
        let requests: Vec<u64> = mix
            .iter()
            .map(|m| m["requests"].as_u64().unwrap())
            .collect();
        assert_eq!(
            (mix[0]["request"].as_str(), mix[0]["weight"].as_u64()),
            (Some("GET /a"), Some(3)),
            "{load}"
        );
        // 1000 requests, 750 of /a expected (standard deviation ≈ 13.7).
        assert_eq!(requests.iter().sum::<u64>(), 1000, "{load}");
        assert!((680..=820).contains(&requests[0]), "{load}");
    }
    // The paced workload sends its one default request: no mix.
    assert!(loads
        .iter()
        .filter(|l| l["workload"] == "paced")
        .all(|l| l.get("mix").is_none()));
}
