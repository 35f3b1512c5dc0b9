//! A run on a real Slurm cluster of three nodes (Debian's slurmctld,
//! slurmd and munge; each node a slurmd in a network namespace of its own,
//! with its own host name): the one `.ci/run` starts and names in
//! `SLURM_CONF`, else one this test starts itself with
//! `scripts/slurm-cluster.sh start DIR --nodes 3` (as root, with the
//! packages installed), else the test says why it is skipped.
//!
//! One test, in steps, since one cluster serves them in turn: a 3-block
//! run (builds and training as jobs, the bench as a job array) lands on 3
//! distinct nodes and merges with a per-node table of three; Ctrl-C during
//! a bench cancels its array and leaves no job behind; then a bench in
//! which block 1's workload fails and block 2's node is lost mid-run
//! (every process on it killed) reports both, merges block 0, and `bench
//! --resume` runs blocks 1 and 2 again, block 2 on a surviving node from
//! its start, into a report of every block.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{read_json, slurm_cluster, Sandbox, TestCluster};

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "loop"
role = "both"
run = '''RUN'''

[bench]
repetitions = 3
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
seed = 5

[cluster]
engine = "slurm"
nodes = 3
# The test cluster's nodes share this machine's file system.
shared = true
"#;

/// Nodes the test needs.
const NODES: usize = 3;

fn latest_run(sandbox: &Sandbox) -> PathBuf {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(sandbox.path().join(".afterburner/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.pop().unwrap()
}

fn job_ids(run_dir: &Path) -> Vec<String> {
    let cluster = read_json(&run_dir.join("cluster.json"));
    cluster["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect()
}

fn queued(conf: &Path, ids: &[String]) -> Vec<String> {
    let out = Command::new("squeue")
        .args(["-h", "-r", "-o", "%F %K %T"])
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| ids.iter().any(|i| l.split_whitespace().next() == Some(i)))
        .map(str::to_owned)
        .collect()
}

/// Each block's node, from its own `meta.json`.
fn block_nodes(run_dir: &Path) -> Vec<String> {
    (0..NODES)
        .map(|k| block_node(run_dir, u32::try_from(k).unwrap()))
        .collect()
}

/// Block `k`'s node.
fn block_node(run_dir: &Path, k: u32) -> String {
    let meta = read_json(&run_dir.join(format!("blocks/{k}/meta.json")));
    meta["environment"]["hostname"].as_str().unwrap().to_owned()
}

/// Every block of `run_dir` merged, each with all its rounds; the counted
/// wall samples of `pgo` are `rounds` per block.
fn assert_merged(run_dir: &Path) -> serde_json::Value {
    let results = read_json(&run_dir.join("results.json"));
    let nodes = results["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), NODES, "{results:#}");
    for (k, node) in nodes.iter().enumerate() {
        assert_eq!(node["block"], k);
        assert!(
            node["node"].as_str().is_some_and(|n| !n.is_empty()),
            "{node:#}"
        );
        assert_eq!(node["complete_rounds"], 3, "{node:#}");
        assert!(node["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["metric"] == "instructions"));
    }
    // Three counted rounds a block, merged; pairs within blocks.
    let wall = results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "wall" && m["variant"] == "pgo")
        .unwrap();
    assert_eq!(
        wall["samples"].as_array().unwrap().len(),
        3 * NODES,
        "{wall:#}"
    );
    results
}

#[test]
fn three_blocks_on_three_slurm_nodes_merge_cancel_and_survive_a_lost_node() {
    let cluster = match slurm_cluster(NODES) {
        Ok(c) => c,
        Err(why) => {
            crate::support::skip(crate::support::Lack::Installed(&format!(
                "no Slurm cluster here: {why}"
            )));
            return;
        }
    };
    let started = Instant::now();
    let conf: &dyn AsRef<std::ffi::OsStr> = &cluster.conf;
    let env = [("SLURM_CONF", conf)];
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write(
        "afterburner.toml",
        &EXPERIMENT.replace("RUN", "{bin.hotpath} 20000"),
    );

    // 1. The whole pipeline as jobs; the 3 blocks on 3 nodes, merged.
    sandbox.afterburner_with_env(&["run"], &env).assert_ok();
    let run_dir = latest_run(&sandbox);
    let cluster_json = read_json(&run_dir.join("cluster.json"));
    let steps: Vec<&str> = cluster_json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["step"].as_str().unwrap())
        .collect();
    // baseline's build, pgo's instrumented build and its training, the array.
    assert_eq!(steps, ["build", "build", "train", "bench"]);
    let mut nodes = block_nodes(&run_dir);
    let results = assert_merged(&run_dir);
    let reported: Vec<&str> = results["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(reported, nodes);
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), NODES, "blocks shared a node: {reported:?}");
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    let section = &report[report.find("## Per node").expect("a Per node section")..];
    for node in &nodes {
        assert!(section.contains(&format!("| {node} |")), "{section}");
    }
    eprintln!("step 1 (run, 3 blocks): {:?}", started.elapsed());

    // 2. Ctrl-C while the array runs: every job of the run is cancelled.
    let step = Instant::now();
    ctrl_c_cancels_every_job(&sandbox, &cluster.conf, &run_dir);
    eprintln!("step 2 (Ctrl-C): {:?}", step.elapsed());

    // 3. Block 1's workload fails, block 2's node is lost mid-run.
    let step = Instant::now();
    a_lost_node_and_a_failed_block_resume_elsewhere(&sandbox, &cluster);
    eprintln!("step 3 (lost node, resume): {:?}", step.elapsed());
    eprintln!("cluster test: {:?}", started.elapsed());
}

/// A bench whose block 1 fails (its workload exits 1 until a marker
/// exists) and whose block 2 loses its node after its first run: both are
/// reported (the node with its state), block 0 is merged; `bench
/// --resume` runs both again, block 2 on a surviving node from its start
/// (its runs on the lost node set aside), into a report of every block.
fn a_lost_node_and_a_failed_block_resume_elsewhere(sandbox: &Sandbox, cluster: &TestCluster) {
    let marker = sandbox.path().join("block-1-may-run");
    let run = format!(
        "sh -c 'test \"$SLURM_ARRAY_TASK_ID\" != 1 || test -f {} && sleep 1 && exec {{bin.hotpath}} 20000'",
        marker.display()
    );
    sandbox.write("afterburner.toml", &EXPERIMENT.replace("RUN", &run));
    let before = latest_run(sandbox);
    let mut bench = Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .env("SLURM_CONF", &cluster.conf)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_mins(3);
    let run_dir = loop {
        let run = latest_run(sandbox);
        let raw = run.join("blocks/2/raw.jsonl");
        if run != before && std::fs::read_to_string(&raw).is_ok_and(|t| t.lines().count() >= 1) {
            break run;
        }
        assert!(Instant::now() < deadline, "block 2 never finished a run");
        std::thread::sleep(Duration::from_millis(200));
    };
    let lost = block_node(&run_dir, 2);
    cluster.kill_node(&lost);
    // Slurm sets the node DOWN and the task NODE_FAIL within about 30 s.
    let deadline = Instant::now() + Duration::from_mins(5);
    let status = loop {
        if let Some(status) = bench.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = bench.kill();
            panic!("the bench did not end within 5 minutes of losing {lost}");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut bench.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("block 1: FAILED"), "{stderr}");
    assert!(stderr.contains("slurm/bench-1.log"), "{stderr}");
    assert!(
        stderr.contains(&format!("block 2: NODE_FAIL on {lost}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("node {lost} is now down")),
        "{stderr}"
    );
    assert!(stderr.contains("bench --resume"), "{stderr}");
    // The blocks that finished are reported; block 0 among them.
    let partial = read_json(&run_dir.join("results.json"));
    let finished: Vec<&serde_json::Value> = partial["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["complete_rounds"] == 3)
        .collect();
    assert_eq!(finished.len(), 1, "{partial:#}");
    assert_eq!(finished[0]["block"], 0, "{partial:#}");

    std::fs::write(&marker, "").unwrap();
    let conf: &dyn AsRef<std::ffi::OsStr> = &cluster.conf;
    let resumed = sandbox.afterburner_with_env(&["bench", "--resume"], &[("SLURM_CONF", conf)]);
    resumed.assert_ok();
    let out = resumed.stdout() + &resumed.stderr();
    assert!(out.contains("resubmitted block(s) 1,2 "), "{out}");
    let now = block_node(&run_dir, 2);
    assert_ne!(now, lost, "block 2 ran again on the lost node");
    assert!(
        run_dir
            .join(format!("blocks/2.on-{lost}/raw.jsonl"))
            .is_file(),
        "block 2's runs on {lost} were not set aside"
    );
    assert_merged(&run_dir);
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        report.contains("block 2 started over on another node"),
        "{report}"
    );
}

/// Ctrl-C during a cluster bench: afterburner cancels the array and exits
/// 130, and no job of the run stays queued.
fn ctrl_c_cancels_every_job(sandbox: &Sandbox, conf: &Path, run_dir: &Path) {
    sandbox.write(
        "afterburner.toml",
        &EXPERIMENT.replace("RUN", "sh -c 'sleep 1; exec {bin.hotpath} 20000'"),
    );
    let mut bench = Command::new(env!("CARGO_BIN_EXE_afterburner"))
        .arg("bench")
        .current_dir(sandbox.path())
        .env("SLURM_CONF", conf)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_mins(2);
    let second = loop {
        let run = latest_run(sandbox);
        if run != run_dir && run.join("blocks/0/raw.jsonl").is_file() {
            break run;
        }
        assert!(
            Instant::now() < deadline,
            "block 0 of the second run never started"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let ids = job_ids(&second);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(i32::try_from(bench.id()).unwrap(), libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_mins(2);
    let status = loop {
        if let Some(status) = bench.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "afterburner did not stop after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut bench.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("cancelled Slurm job(s)"), "{stderr}");
    assert_eq!(queued(conf, &ids), Vec::<String>::new(), "jobs left behind");
}

const SEPARATE: &str = r#"
[target]
name = "redis"
source = { path = "src" }
build = "make"
binaries = { redis = "slowserver" }

[[target.service]]
name = "db"
# Redis answers only loopback clients in protected mode; the load comes
# from the other node's address.
start = "{bin.redis} --port {port} --bind BIND --protected-mode no --save '' --appendonly no"
ready = "redis"
ready_timeout = "5s"

[[variant]]
name = "debian"
prebuilt = { redis = "/usr/bin/redis-server" }

[[variant]]
name = "again"
prebuilt = { redis = "/usr/bin/redis-server" }

[[workload]]
name = "get"
[workload.load]
driver = "redis"
request = "GET key:{k}"
vars = { k = "uniform:1:1000" }
clients = 4
requests = 2000
warmup = "0s"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]

[cluster]
engine = "slurm"
nodes = 1
# The test cluster's nodes share this machine's file system.
shared = true
load = "separate"
"#;

/// `[cluster] load = "separate"`: Debian's redis-server on one node of the
/// namespace cluster, bound to that node's 198.18 address (`{host}`),
/// driven by afterburner's load as a job step on another node; throughput
/// and latency are recorded with both node names and the path between
/// them, and the load's own log says it ran on the other node. Then a
/// service that binds loopback only is never ready at the node's address:
/// the block fails, naming the node.
#[test]
fn a_service_on_one_slurm_node_is_driven_by_a_load_on_another() {
    if !crate::support::tools_or_skip(&["redis-server"]) {
        return;
    }
    let cluster = match slurm_cluster(2) {
        Ok(c) => c,
        Err(why) => {
            crate::support::skip(crate::support::Lack::Installed(&format!(
                "no Slurm cluster here: {why}"
            )));
            return;
        }
    };
    let started = Instant::now();
    let conf: &dyn AsRef<std::ffi::OsStr> = &cluster.conf;
    let env = [("SLURM_CONF", conf)];
    let sandbox = Sandbox::with_fixture("slowserver");
    sandbox.write("afterburner.toml", &SEPARATE.replace("BIND", "{host}"));
    sandbox.afterburner_with_env(&["bench"], &env).assert_ok();
    let run_dir = latest_run(&sandbox);
    let results = read_json(&run_dir.join("results.json"));
    let node = &results["nodes"][0];
    let path = &node["load_path"];
    let (service, load) = (
        path["service_node"].as_str().unwrap(),
        path["load_node"].as_str().unwrap(),
    );
    assert_eq!(node["node"], service, "{node:#}");
    assert_ne!(service, load, "{path:#}");
    for address in ["service_address", "load_address"] {
        let ip: std::net::Ipv4Addr = path[address].as_str().unwrap().parse().unwrap();
        let [a, b, _, _] = ip.octets();
        assert!(a == 198 && (b == 18 || b == 19), "{path:#}");
    }
    assert_ne!(path["service_address"], path["load_address"]);
    for metric in ["throughput", "p50", "p99"] {
        for variant in ["debian", "again"] {
            let m = results["measurements"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["metric"]["name"] == metric && m["variant"] == variant)
                .unwrap_or_else(|| panic!("no {metric} of {variant}: {results:#}"));
            let samples = m["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 2, "{m:#}");
            assert!(samples.iter().all(|v| v.as_f64().unwrap() > 0.0), "{m:#}");
        }
    }
    let line = format!("load on {load} → service on {service} over ");
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains(&line), "{report}");
    // Each run's load ran as a job step on the load node.
    let logs = run_dir.join("blocks/0/logs");
    let steps: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".remote.log"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(
        steps.len(),
        4,
        "one load step per run in {}",
        logs.display()
    );
    let address = path["service_address"].as_str().unwrap();
    for text in &steps {
        assert!(
            text.contains(&format!("load on {load} → {address}:")),
            "{text}"
        );
    }
    eprintln!("separate load: {:?}", started.elapsed());

    // A service bound to loopback only is never ready at the node's address.
    let step = Instant::now();
    sandbox.write("afterburner.toml", &SEPARATE.replace("BIND", "127.0.0.1"));
    let failed = sandbox.afterburner_with_env(&["bench"], &env);
    failed.assert_fails_with("block 0: FAILED");
    let run_dir = latest_run(&sandbox);
    let log = std::fs::read_to_string(run_dir.join("slurm/bench-0.log")).unwrap();
    assert!(
        log.contains("the services did not become ready on node"),
        "{log}"
    );
    eprintln!("a service never ready: {:?}", step.elapsed());
    eprintln!("separate load test: {:?}", started.elapsed());
}
