//! Every per-request figure counts one window: a service's CPU time and
//! context switches per request are read at the edges of the window whose
//! requests divide them — a load's measured window (not the service's
//! start-up or the warmup), an SLA search's confirming run (not its probes).

use crate::support::{
    busy, exclusive, only_run_dir, skip_part, Bench, Experiment, Sandbox, Service, Workload,
};

/// The figures of every timed run in `raw.jsonl`.
fn timed_figures(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let raw = std::fs::read_to_string(only_run_dir(sandbox).join("raw.jsonl")).unwrap();
    let runs: Vec<serde_json::Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(runs.iter().all(|r| r["success"] == true), "{runs:#?}");
    runs.iter()
        .filter(|r| r["kind"] == "timing")
        .map(|r| r["figures"].clone())
        .collect()
}

fn f(figures: &serde_json::Value, name: &str) -> f64 {
    figures[name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {figures:#}"))
}

/// The per-request figure is the window's CPU over the window's requests.
fn per_request_is_the_windows(figures: &serde_json::Value) -> (f64, f64) {
    let (cpu, requests) = (f(figures, "web.cpu"), f(figures, "requests"));
    let per = f(figures, "web.cpu_per_request");
    assert!(requests > 0.0, "{figures:#}");
    assert!(
        (per - cpu * 1e6 / requests).abs() <= 1e-6 * per.max(1.0),
        "{figures:#}"
    );
    (per, requests)
}

/// The server `fixture` as the service `web` (`{bin.server} {port} ARGS`,
/// ready when `ready` says), its baseline alone run twice under `load`.
fn served(fixture: &str, args: &str, ready: &str, load: Workload) -> Experiment {
    Experiment::new(fixture)
        .binaries(&[("server", fixture)])
        .service(Service::new("web", &format!("{{bin.server}} {{port}}{args}")).ready(ready))
        .workload(load)
        .bench(Bench {
            seed: Some(3),
            ..Bench::QUICK
        })
}

/// Regression: a service's CPU per request divided its whole life (0.5 s of
/// start-up here) by the window's ~100 requests, 5,000 µs a request of
/// which the requests' own were a few hundred.
#[test]
fn per_request_cpu_of_a_fixed_duration_load_leaves_out_the_start_up() {
    let _alone = exclusive();
    // 0.5 s of CPU before it listens, then a few hundred µs per request:
    // 100 requests/s for a second.
    let paced = Workload::new("paced").load(
        r#"
        driver = "http"
        model = "rate"
        rate = 100
        duration = "1s"
        clients = 2
        warmup = "300ms"
        "#,
    );
    let warm = served("warmserver", "", "log:ready on port", paced);
    let sandbox = Sandbox::with_experiment("warmserver", &warm);
    sandbox.afterburner(&["run"]).assert_ok();
    let runs = timed_figures(&sandbox);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    for figures in &runs {
        let (per, requests) = per_request_is_the_windows(figures);
        // ~100 requests of a few hundred µs: the window's CPU is far below
        // the start-up's, and its share per request a fraction of it.
        let start_up_per_request = 0.5e6 / requests;
        assert!(
            per < start_up_per_request / 4.0,
            "{per} µs a request, the start-up alone {start_up_per_request}: {figures:#}"
        );
        // The start-up is in the service's life, recorded beside the window.
        let life = f(figures, "web.life_cpu");
        assert!(life >= 0.45, "0.5 s of start-up: {figures:#}");
        assert!(f(figures, "web.cpu") < life - 0.4, "{figures:#}");
        assert!(f(figures, "web.ctx_switches_per_request") >= 0.0);
    }
}

/// Regression: an SLA workload's CPU per request divided every probe's CPU
/// (seconds of it) by the confirming run's requests; it is the confirming
/// run's alone, about the 2 ms each request busy-waits.
#[test]
fn per_request_cpu_of_an_sla_workload_is_the_confirming_runs() {
    let _alone = exclusive();
    // The slowserver fixture busy-waits 2 ms a request (capacity 500/s);
    // the search probes from 100/s upwards, half a second each, then
    // confirms.
    let capacity = Workload::new("capacity").load(
        r#"
        driver = "http"
        model = "sla"
        sla = "p99<100ms"
        start_rate = 100
        probe = "500ms"
        clients = 8
        duration = "1s"
        warmup = "100ms"
        interval = "250ms"
        "#,
    );
    let sla = served("slowserver", " 2000", "http:/", capacity);
    let sandbox = Sandbox::with_experiment("slowserver", &sla);
    sandbox.afterburner(&["run"]).assert_ok();
    let runs = timed_figures(&sandbox);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    for figures in &runs {
        let (per, _) = per_request_is_the_windows(figures);
        // Never more than the 2 ms busy-wait (and a little parsing): the
        // probes' CPU is not in it.
        assert!(per < 3000.0, "{per} µs a request: {figures:#}");
        // The probes ran first, with several times the confirming run's
        // requests: most of the service's life is outside the window.
        let (cpu, life) = (f(figures, "web.cpu"), f(figures, "web.life_cpu"));
        assert!(cpu < life / 2.0, "{figures:#}");
        match busy() {
            // A busy-wait preempted burns less than its 2 ms.
            None => assert!(per > 1000.0, "{per} µs a request: {figures:#}"),
            Some(why) => skip_part(&format!("{why}: the floor of {per} µs a request")),
        }
    }
}
