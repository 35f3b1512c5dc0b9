//! A run on a real Slurm cluster (Debian's slurmctld, slurmd and munge):
//! the one `.ci/run` starts and names in `SLURM_CONF`, else one this test
//! starts itself with `scripts/slurm-cluster.sh` (as root, with the
//! packages installed), else the test says why it is skipped.
//!
//! One test, in steps, since one cluster serves them in turn: a 2-block
//! run (builds and training as jobs, the bench as a job array) whose
//! block 1 fails is reported with its Slurm log and the finished block's
//! report; `bench --resume` resubmits block 1 alone and the merged report
//! has two blocks and the per-node table; Ctrl-C during a bench cancels
//! its array and leaves no job behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{read_json, Sandbox};

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
nodes = 2
"#;

/// A cluster for the test: `SLURM_CONF` from the environment when it
/// answers, else one started here (stopped on drop).
struct TestCluster {
    conf: PathBuf,
    started: Option<tempfile::TempDir>,
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if let Some(dir) = &self.started {
            let _ = Command::new(script()).arg("stop").arg(dir.path()).status();
        }
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster.sh")
}

fn answers(conf: &Path) -> bool {
    Command::new("sinfo")
        .arg("-h")
        .env("SLURM_CONF", conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn cluster() -> Result<TestCluster, String> {
    if let Some(conf) = std::env::var_os("SLURM_CONF").map(PathBuf::from) {
        if answers(&conf) {
            return Ok(TestCluster {
                conf,
                started: None,
            });
        }
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root, and no SLURM_CONF names a running cluster".into());
    }
    for tool in ["slurmctld", "slurmd", "munged", "sbatch"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Err(format!(
                "{tool} is not installed (apt-get install slurmctld slurmd munge slurm-client)"
            ));
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("afterburner-slurm-")
        .tempdir()
        .unwrap();
    let out = Command::new(script())
        .arg("start")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/slurm-cluster.sh start failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(TestCluster {
        conf: dir.path().join("slurm.conf"),
        started: Some(dir),
    })
}

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

#[test]
fn a_two_block_run_on_slurm_fails_resumes_merges_and_cancels_cleanly() {
    let cluster = match cluster() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: no Slurm cluster here: {why}");
            return;
        }
    };
    let conf: &dyn AsRef<std::ffi::OsStr> = &cluster.conf;
    let env = [("SLURM_CONF", conf)];
    let sandbox = Sandbox::with_fixture("hotpath");
    let marker = sandbox.path().join("block-1-may-run");
    // Block 1's runs fail until the marker exists.
    let run = format!(
        "sh -c 'test \"$SLURM_ARRAY_TASK_ID\" != 1 || test -f {} && exec {{bin.hotpath}} 20000'",
        marker.display()
    );
    sandbox.write("afterburner.toml", &EXPERIMENT.replace("RUN", &run));

    // 1. The whole pipeline as jobs: block 1 fails, named with its log.
    let first = sandbox.afterburner_with_env(&["run"], &env);
    first.assert_fails_with("block 1: FAILED");
    let stderr = first.stderr();
    assert!(stderr.contains("slurm/bench-1.log"), "{stderr}");
    assert!(stderr.contains("bench --resume"), "{stderr}");
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
    assert!(run_dir.join("blocks/0/raw.jsonl").is_file());
    let partial = read_json(&run_dir.join("results.json"));
    assert_eq!(partial["nodes"].as_array().unwrap().len(), 2, "{partial:#}");

    // 2. Resume: block 1 alone is resubmitted; the merged report has both.
    std::fs::write(&marker, "").unwrap();
    let resumed = sandbox.afterburner_with_env(&["bench", "--resume"], &env);
    resumed.assert_ok();
    let out = resumed.stdout() + &resumed.stderr();
    assert!(out.contains("resubmitted block(s) 1 "), "{out}");
    let results = read_json(&run_dir.join("results.json"));
    let nodes = results["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
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
    // Six counted rounds merged: three per block, pairs within blocks.
    let wall = results["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"]["name"] == "wall" && m["variant"] == "pgo")
        .unwrap();
    assert_eq!(wall["samples"].as_array().unwrap().len(), 6, "{wall:#}");
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains("## Per node"), "{report}");
    assert!(report.contains("node type(s)"), "{report}");
    let status = sandbox.afterburner_with_env(&["status"], &env);
    status.assert_ok();
    assert!(
        status.stdout().contains("block 1 on "),
        "{}",
        status.stdout()
    );
    assert!(
        status.stdout().contains("(finished)"),
        "{}",
        status.stdout()
    );

    // 3. Ctrl-C while the array runs: every job of the run is cancelled.
    ctrl_c_cancels_every_job(&sandbox, &cluster.conf, &run_dir);
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
