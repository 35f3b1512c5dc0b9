//! The same blocks on Kubernetes, on paper: `afterburner cluster --engine
//! kubernetes --dry-run` prints the manifests a Kubernetes engine would
//! apply (docs/kubernetes.md explains them). The phases are Slurm's
//! ([`super::plan::phases`]): one Indexed Job per phase, the completion
//! index naming the variant (build, train) or the block (bench); a phase
//! waits for the one before through marker files on the shared volume (an
//! init container polls for them, under a deadline); bench pods repel each
//! other (one block per node) and ask for whole CPUs with limits equal to
//! requests (Guaranteed `QoS`, so the static CPU manager pins them).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::plan::Phases;

/// Where the shared volume is mounted in every pod; the project (the
/// experiment file and its sources) is copied there once.
pub const MOUNT: &str = "/work";

/// How long a pod waits for the phase before it (seconds).
const WAIT_S: u64 = 24 * 3600;

/// What the manifests need beyond the experiment's blocks.
#[derive(Debug, Clone)]
pub struct Options {
    /// The run's id (its directory under `runs/`).
    pub run_id: String,
    /// The experiment file's name, relative to the project on the volume.
    pub file: String,
    /// The container image holding afterburner and the toolchains.
    pub image: String,
    /// Whole CPUs per pod (requests = limits: Guaranteed `QoS`).
    pub cpus: u32,
    /// Memory per pod, as Kubernetes writes it ("8Gi").
    pub memory: String,
    /// The `[cluster] partition`, as a node selector's machine class.
    pub machine_class: Option<String>,
    /// `--quick`.
    pub quick: bool,
    /// The run's seed (each block's is derived from it).
    pub seed: u64,
}

/// The manifests, in the order they are applied.
pub fn manifests(phases: &Phases, o: &Options) -> Vec<Value> {
    let mut out = vec![volume_claim(), config_map(phases, o)];
    if !phases.builds.is_empty() {
        out.push(job(o, "build", &phases.builds, &[]));
    }
    if !phases.trains.is_empty() {
        let after: Vec<String> = phases.trains.iter().map(|v| format!("build-{v}")).collect();
        out.push(job(o, "train", &phases.trains, &after));
    }
    let blocks: Vec<String> = (0..phases.blocks).map(|k| k.to_string()).collect();
    let mut after: Vec<String> = phases.builds.iter().map(|v| format!("build-{v}")).collect();
    after.extend(phases.trains.iter().map(|v| format!("train-{v}")));
    out.push(job(o, "bench", &blocks, &after));
    out
}

/// The manifests as one YAML stream.
pub fn yaml(manifests: &[Value]) -> String {
    let mut out = String::new();
    for m in manifests {
        out.push_str("---\n");
        emit(&mut out, m, 0);
    }
    out
}

fn labels(o: &Options, step: &str) -> Value {
    json!({ "app.kubernetes.io/name": "afterburner", "afterburner/run": o.run_id, "afterburner/step": step })
}

/// The work directory every pod shares: `ReadWriteMany`, so that builds on
/// one node are read by blocks on the others.
fn volume_claim() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": { "name": "afterburner-work" },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": { "requests": { "storage": "50Gi" } }
        }
    })
}

/// The run's record (`cluster.json`), which every pod's init container
/// puts into the run directory if it is not there yet.
fn config_map(phases: &Phases, o: &Options) -> Value {
    let record = json!({
        "engine": "kubernetes",
        "run_id": o.run_id,
        "experiment": format!("{MOUNT}/{}", o.file),
        "workdir": format!("{MOUNT}/.afterburner"),
        "quick": o.quick,
        "seed": o.seed,
        "blocks": phases.blocks,
        "jobs": []
    });
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": format!("afterburner-{}", o.run_id), "labels": labels(o, "record") },
        "data": { "cluster.json": serde_json::to_string_pretty(&record).unwrap_or_default() }
    })
}

fn run_dir(o: &Options) -> String {
    format!("{MOUNT}/.afterburner/runs/{}", o.run_id)
}

/// The afterburner command of `step` for the item `$ITEM` (a variant, or
/// a block), then its marker: `k8s/<step>-<item>.done`, or `.failed`.
fn command(o: &Options, step: &str) -> String {
    let mut words = vec![
        "afterburner".to_owned(),
        step.to_owned(),
        format!("{MOUNT}/{}", o.file),
        "--workdir".to_owned(),
        format!("{MOUNT}/.afterburner"),
        "--local".to_owned(),
    ];
    if o.quick {
        words.push("--quick".to_owned());
    }
    match step {
        "bench" => words.extend([
            "--run".to_owned(),
            o.run_id.clone(),
            "--block".to_owned(),
            "\"$ITEM\"".to_owned(),
        ]),
        _ => words.extend(["--variant".to_owned(), "\"$ITEM\"".to_owned()]),
    }
    let marks = format!("{}/k8s/{step}-$ITEM", run_dir(o));
    format!(
        "{pick}\n{} && touch \"{marks}.done\" || {{ touch \"{marks}.failed\"; exit 1; }}",
        words.join(" "),
        pick = pick_item()
    )
}

/// `ITEM`: word `JOB_COMPLETION_INDEX` (from 0) of `ITEMS`.
fn pick_item() -> &'static str {
    "set -- $ITEMS; shift \"$JOB_COMPLETION_INDEX\"; ITEM=$1"
}

/// The init container's script: put `cluster.json` in place, then wait
/// for every marker of `after` (failing at once on a `.failed` one).
fn wait_script(o: &Options, after: &[String]) -> String {
    let dir = run_dir(o);
    let mut s = format!(
        "mkdir -p {dir}/k8s && {{ [ -f {dir}/cluster.json ] || cp /record/cluster.json {dir}/cluster.json; }}"
    );
    for a in after {
        let _ = write!(
            s,
            "\nuntil [ -f {dir}/k8s/{a}.done ]; do [ ! -f {dir}/k8s/{a}.failed ] || {{ echo '{a} failed' >&2; exit 1; }}; sleep 5; done"
        );
    }
    s
}

/// One Indexed Job over `items` (variants, or block numbers).
fn job(o: &Options, step: &str, items: &[String], after: &[String]) -> Value {
    let bench = step == "bench";
    let resources = json!({ "cpu": o.cpus.to_string(), "memory": o.memory });
    let mut pod = json!({
        "restartPolicy": "Never",
        // SIGTERM first (afterburner stops the run and keeps every finished
        // one), SIGKILL after this.
        "terminationGracePeriodSeconds": 60,
        "initContainers": [{
            "name": "wait",
            "image": o.image,
            "command": ["timeout", WAIT_S.to_string(), "sh", "-c", wait_script(o, after)],
            "volumeMounts": [
                { "name": "work", "mountPath": MOUNT },
                { "name": "record", "mountPath": "/record" }
            ]
        }],
        "containers": [{
            "name": step,
            "image": o.image,
            "command": ["sh", "-c", command(o, step)],
            "env": [
                { "name": "ITEMS", "value": items.join(" ") },
                // The node, not the pod's host name, names where a block ran.
                { "name": "NODE_NAME", "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } }
            ],
            "resources": { "requests": resources, "limits": resources },
            "volumeMounts": [{ "name": "work", "mountPath": MOUNT }]
        }],
        "volumes": [
            { "name": "work", "persistentVolumeClaim": { "claimName": "afterburner-work" } },
            { "name": "record", "configMap": { "name": format!("afterburner-{}", o.run_id) } }
        ]
    });
    if let Some(class) = &o.machine_class {
        pod["nodeSelector"] = json!({ "afterburner/machine-class": class });
    }
    if bench {
        // One block per node: pairs never cross nodes, blocks never share one.
        pod["affinity"] = json!({
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": { "matchLabels": { "afterburner/run": o.run_id, "afterburner/step": "bench" } },
                    "topologyKey": "kubernetes.io/hostname"
                }]
            }
        });
    }
    let count = items.len();
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": format!("afterburner-{}-{step}", o.run_id), "labels": labels(o, step) },
        "spec": {
            "completionMode": "Indexed",
            "completions": count,
            "parallelism": count,
            // A failed block is not run again by itself: `bench --resume` decides.
            "backoffLimit": 0,
            "template": { "metadata": { "labels": labels(o, step) }, "spec": pod }
        }
    })
}

/// Block-style YAML of a JSON value: maps and lists by indentation, every
/// scalar as its JSON text (a JSON string is a YAML double-quoted string).
fn emit(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                match x {
                    Value::Object(m) if !m.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}:");
                        emit(out, x, indent + 2);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}:");
                        emit(out, x, indent);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{k}: {}", scalar(x));
                    }
                }
            }
        }
        Value::Array(items) => {
            for x in items {
                match x {
                    Value::Object(m) if !m.is_empty() => {
                        // The map's first key on the dash's line.
                        let mut inner = String::new();
                        emit(&mut inner, x, indent + 2);
                        let _ = write!(out, "{pad}- {}", &inner[indent + 2..]);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}-");
                        emit(out, x, indent + 2);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", scalar(x));
                    }
                }
            }
        }
        _ => {
            let _ = writeln!(out, "{pad}{}", scalar(v));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of the YAML [`emit`] writes (block maps and lists, JSON
    /// scalars), enough to check the printed stream as data.
    fn parse(text: &str) -> Vec<Value> {
        text.split("---\n")
            .filter(|d| !d.trim().is_empty())
            .map(|d| {
                let lines: Vec<&str> = d.lines().collect();
                let mut at = 0;
                node(&lines, &mut at, 0)
            })
            .collect()
    }

    fn indent_of(line: &str) -> usize {
        line.len() - line.trim_start().len()
    }

    fn node(lines: &[&str], at: &mut usize, indent: usize) -> Value {
        if lines[*at][indent..].starts_with("- ") || lines[*at][indent..].starts_with('-') {
            let mut items = Vec::new();
            while *at < lines.len()
                && indent_of(lines[*at]) == indent
                && lines[*at][indent..].starts_with('-')
            {
                let rest = lines[*at][indent + 1..].trim_start();
                if rest.is_empty() {
                    *at += 1;
                    items.push(node(lines, at, indent + 2));
                } else if rest.starts_with('"') || !rest.contains(": ") && !rest.ends_with(':') {
                    items.push(serde_json::from_str(rest).unwrap());
                    *at += 1;
                } else {
                    // A map whose first key shares the dash's line.
                    let mut owned: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
                    owned[*at] = format!("{}  {rest}", " ".repeat(indent));
                    let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
                    items.push(node(&refs, at, indent + 2));
                }
            }
            return Value::Array(items);
        }
        let mut map = serde_json::Map::new();
        while *at < lines.len() && indent_of(lines[*at]) == indent {
            let line = &lines[*at][indent..];
            if line.starts_with('-') {
                break;
            }
            let (key, value) = line.split_once(':').unwrap();
            *at += 1;
            let value = value.trim();
            let v = if value.is_empty() {
                let deeper = indent_of(lines[*at]);
                node(lines, at, deeper)
            } else {
                serde_json::from_str(value).unwrap()
            };
            map.insert(key.to_owned(), v);
        }
        Value::Object(map)
    }

    fn options() -> Options {
        Options {
            run_id: "20261126-010000".into(),
            file: "afterburner.toml".into(),
            image: "registry.example/afterburner:1".into(),
            cpus: 4,
            memory: "8Gi".into(),
            machine_class: Some("epyc".into()),
            quick: false,
            seed: 7,
        }
    }

    #[test]
    fn the_printed_manifests_read_back_with_an_index_per_variant_and_block() {
        let phases = Phases {
            builds: vec!["baseline".into(), "pgo".into()],
            trains: vec!["pgo".into()],
            blocks: 3,
        };
        let built = manifests(&phases, &options());
        let text = yaml(&built);
        let read = parse(&text);
        assert_eq!(read, built, "{text}");
        let kinds: Vec<&str> = read.iter().map(|m| m["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            ["PersistentVolumeClaim", "ConfigMap", "Job", "Job", "Job"]
        );
        assert_eq!(read[0]["spec"]["accessModes"][0], "ReadWriteMany");
        let jobs = &read[2..];
        for (job, (step, items)) in jobs.iter().zip([
            ("build", "baseline pgo"),
            ("train", "pgo"),
            ("bench", "0 1 2"),
        ]) {
            let spec = &job["spec"];
            assert_eq!(spec["completionMode"], "Indexed");
            let n = items.split(' ').count();
            assert_eq!(spec["completions"], n, "{step}");
            assert_eq!(spec["parallelism"], n, "{step}");
            let pod = &spec["template"]["spec"];
            let main = &pod["containers"][0];
            assert_eq!(main["env"][0]["value"], items, "{step}");
            let script = main["command"][2].as_str().unwrap();
            assert!(
                script.contains("shift \"$JOB_COMPLETION_INDEX\"; ITEM=$1"),
                "{script}"
            );
            assert!(
                script.contains(&format!(
                    "afterburner {step} /work/afterburner.toml --workdir /work/.afterburner --local"
                )),
                "{script}"
            );
            assert_eq!(
                pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
                "afterburner-work"
            );
            assert_eq!(main["volumeMounts"][0]["mountPath"], "/work");
            assert_eq!(
                main["resources"]["requests"], main["resources"]["limits"],
                "Guaranteed QoS"
            );
            assert_eq!(main["resources"]["limits"]["cpu"], "4");
            assert_eq!(pod["nodeSelector"]["afterburner/machine-class"], "epyc");
        }
        let bench = &jobs[2]["spec"]["template"]["spec"];
        let script = bench["containers"][0]["command"][2].as_str().unwrap();
        assert!(
            script.contains("--run 20261126-010000 --block \"$ITEM\""),
            "{script}"
        );
        let anti = &bench["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"][0];
        assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
        assert_eq!(
            anti["labelSelector"]["matchLabels"]["afterburner/step"],
            "bench"
        );
        // The bench waits for every build and training; training for its build.
        let wait = bench["initContainers"][0]["command"][4].as_str().unwrap();
        for marker in ["build-baseline.done", "build-pgo.done", "train-pgo.done"] {
            assert!(wait.contains(marker), "{wait}");
        }
        let train_wait = jobs[1]["spec"]["template"]["spec"]["initContainers"][0]["command"][4]
            .as_str()
            .unwrap();
        assert!(train_wait.contains("build-pgo.done"), "{train_wait}");
        assert!(!train_wait.contains("baseline"), "{train_wait}");
        assert!(jobs[0]["spec"]["template"]["spec"]["affinity"].is_null());
    }

    #[test]
    fn prebuilt_variants_leave_the_bench_alone() {
        let phases = Phases {
            builds: Vec::new(),
            trains: Vec::new(),
            blocks: 2,
        };
        let read = parse(&yaml(&manifests(&phases, &options())));
        assert_eq!(read.len(), 3);
        assert_eq!(
            read[2]["metadata"]["name"],
            "afterburner-20261126-010000-bench"
        );
    }
}
