//! A cluster run: `runs/<id>/cluster.json` says what was submitted, and
//! each bench block (a task of the job array) writes a whole run directory
//! of its own, `blocks/<k>/` (`meta.json`, `raw.jsonl`, logs), with its
//! own shuffled order, seed and environment. A report reads the blocks
//! merged: block k's rounds are renumbered after block k−1's, so the
//! pairs of a round never cross blocks (nor nodes).
//!
//! A block is named by its task index, not its node: a block resubmitted
//! by `bench --resume` may land on another node, and one node may run two
//! blocks; the node it ran on is in its own `meta.json`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};

use super::{read, Progress, Recorded};
use crate::workdir::META_FILE;

pub use crate::workdir::CLUSTER_FILE;
/// The blocks' run directories, under a cluster run's.
pub const BLOCKS_DIR: &str = "blocks";
/// The jobs' own logs (Slurm's `--output`), under a cluster run's.
pub const JOB_LOGS_DIR: &str = "slurm";

/// `cluster.json`: the jobs of a cluster run and how to rerun its blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRun {
    /// The scheduler ("slurm").
    pub engine: String,
    pub run_id: String,
    /// The experiment file and work directory every job was given.
    pub experiment: PathBuf,
    pub workdir: PathBuf,
    /// Whether the jobs run with `--quick`.
    pub quick: bool,
    /// Seed of the run; block k's is derived from it ([`block_seed`]).
    pub seed: u64,
    /// Bench blocks planned (tasks 0…blocks−1 of the array).
    pub blocks: u32,
    /// Every job submitted, in order (resubmissions appended).
    pub jobs: Vec<Job>,
}

/// One submitted job (or job array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The scheduler's id (an array's id for every task).
    pub id: String,
    /// "build", "train" or "bench".
    pub step: String,
    /// The variant a build or train job is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The array's task indices, as sbatch's `--array` ("0-1", "1,3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// Its log; `%a` stands for the task index of an array.
    pub log: PathBuf,
}

impl Job {
    /// The log of one task (`%a` replaced), or of the job.
    pub fn log_of(&self, task: Option<u32>) -> PathBuf {
        match task {
            Some(k) => PathBuf::from(self.log.to_string_lossy().replace("%a", &k.to_string())),
            None => self.log.clone(),
        }
    }
}

/// Whether `run_dir` is a cluster run.
pub fn is_cluster(run_dir: &Path) -> bool {
    run_dir.join(CLUSTER_FILE).is_file()
}

/// The run directory of block `k`.
pub fn block_dir(run_dir: &Path, k: u32) -> PathBuf {
    run_dir.join(BLOCKS_DIR).join(k.to_string())
}

/// Block `k`'s seed: the run's, mixed (splitmix64) with `k`, so each block
/// has its own order and the same block resumes with the same one.
pub fn block_seed(seed: u64, k: u32) -> u64 {
    let mut z = seed ^ (u64::from(k) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Read `cluster.json`.
pub fn read_cluster(run_dir: &Path) -> Result<ClusterRun> {
    let path = run_dir.join(CLUSTER_FILE);
    serde_json::from_slice(&fs_err::read(&path)?).with_context(|| {
        format!(
            "{} is not a cluster run's record\nhint: it is written by `afterburner run --slurm` (or bench); was it edited?",
            path.display()
        )
    })
}

/// Write `cluster.json` whole (aside, synced, renamed over).
pub fn write_cluster(run_dir: &Path, cluster: &ClusterRun) -> Result<()> {
    fs_err::create_dir_all(run_dir)?;
    let aside = run_dir.join(format!("{CLUSTER_FILE}.new"));
    let mut file = fs_err::File::create(&aside)?;
    file.write_all(&serde_json::to_vec_pretty(cluster)?)?;
    file.sync_all()?;
    fs_err::rename(&aside, run_dir.join(CLUSTER_FILE))?;
    Ok(())
}

/// Set block `k`'s runs on node `host` aside, as `blocks/<k>.on-<host>`
/// (`.2`, `.3`, … after the first), before the block starts over on
/// another node; returns where they went. A report names them, and leaves
/// them out.
pub fn set_aside(run_dir: &Path, k: u32, host: &str) -> Result<PathBuf> {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let blocks = run_dir.join(BLOCKS_DIR);
    let mut aside = blocks.join(format!("{k}.on-{host}"));
    let mut n = 1;
    while aside.exists() {
        n += 1;
        aside = blocks.join(format!("{k}.on-{host}.{n}"));
    }
    fs_err::rename(block_dir(run_dir, k), &aside)?;
    Ok(aside)
}

/// The runs of block `k` set aside ([`set_aside`]), as notes for a report.
fn set_aside_notes(run_dir: &Path, k: u32) -> Vec<String> {
    let prefix = format!("{k}.on-");
    let Ok(entries) = fs_err::read_dir(run_dir.join(BLOCKS_DIR)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|dir| {
            let runs = read(dir).map_or(0, |r| r.runs.len());
            let host = dir.file_name().map_or_else(String::new, |n| {
                n.to_string_lossy()[prefix.len()..].to_owned()
            });
            format!(
                "block {k} started over on another node: its {runs} run(s) on {host} are in {} and not counted (a block's pairs stay on one node)",
                dir.display()
            )
        })
        .collect()
}

/// One block as read back: its index and its own run directory.
#[derive(Debug, Clone)]
pub struct Block {
    pub index: u32,
    pub recorded: Recorded,
}

impl Block {
    /// Whether every round of its plan ran.
    pub fn finished(&self) -> bool {
        !self.recorded.progress.is_partial()
    }
}

/// Each planned block as read back (its progress, its node): `None` for a
/// block with no finished run (never started, or failed before its first).
pub fn block_states(run_dir: &Path, cluster: &ClusterRun) -> Vec<(u32, Option<Recorded>)> {
    (0..cluster.blocks)
        .map(|k| (k, read(&block_dir(run_dir, k)).ok()))
        .collect()
}

/// A cluster run read back for a report: the blocks merged into one
/// record set (rounds renumbered block after block), with every block
/// kept beside it for the per-node table.
pub fn read_merged(run_dir: &Path) -> Result<Recorded> {
    let cluster = read_cluster(run_dir)?;
    let mut blocks = Vec::new();
    let mut notes = Vec::new();
    for k in 0..cluster.blocks {
        notes.extend(set_aside_notes(run_dir, k));
        let dir = block_dir(run_dir, k);
        if !dir.join(META_FILE).is_file() {
            notes.push(format!(
                "block {k} never started: {} has no {META_FILE} (its job's log: {}); `afterburner bench --resume` resubmits it",
                dir.display(),
                cluster
                    .jobs
                    .iter()
                    .rev()
                    .find(|j| j.step == "bench")
                    .map_or_else(|| PathBuf::from("?"), |j| j.log_of(Some(k)))
                    .display()
            ));
            continue;
        }
        match read(&dir) {
            Ok(recorded) => blocks.push(Block { index: k, recorded }),
            Err(error) => notes.push(format!("block {k} left out: {error:#}")),
        }
    }
    let Some(first) = blocks.first() else {
        bail!(
            "cluster run {} has no block with a finished run in {}\nhint: `afterburner status` shows its jobs and their logs; `afterburner bench --resume` resubmits the blocks",
            cluster.run_id,
            run_dir.join(BLOCKS_DIR).display()
        );
    };
    let plan = &first.recorded.meta;
    let per_block = plan.warmup + plan.repetitions;
    for block in &blocks[1..] {
        let m = &block.recorded.meta;
        let same = (m.warmup, m.repetitions, &m.workloads)
            == (plan.warmup, plan.repetitions, &plan.workloads)
            && m.variants
                .iter()
                .map(|v| &v.name)
                .eq(plan.variants.iter().map(|v| &v.name));
        if !same {
            bail!(
                "block {} of cluster run {} was planned with other variants, workloads or rounds than block {}\nhint: a resumed block must run the experiment file as it was; move {} aside to report the others",
                block.index,
                cluster.run_id,
                first.index,
                block.recorded.dir.display()
            );
        }
    }
    let mut meta = plan.clone();
    meta.run_id.clone_from(&cluster.run_id);
    meta.seed = cluster.seed;
    meta.warmup = plan.warmup * cluster.blocks;
    meta.repetitions = plan.repetitions * cluster.blocks;
    let mut runs = Vec::new();
    for block in &blocks {
        let offset = block.index * per_block;
        runs.extend(block.recorded.runs.iter().cloned().map(|mut r| {
            r.round += offset;
            r
        }));
        notes.extend(
            block
                .recorded
                .notes
                .iter()
                .map(|n| format!("block {}: {n}", block.index)),
        );
    }
    let progress = Progress::of(&meta, &runs);
    Ok(Recorded {
        dir: run_dir.to_owned(),
        meta,
        runs,
        notes,
        progress,
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_seeds_differ_and_repeat() {
        let seeds: Vec<u64> = (0..100).map(|k| block_seed(42, k)).collect();
        let mut unique = seeds.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), seeds.len());
        assert_eq!(block_seed(42, 7), seeds[7]);
        assert_ne!(block_seed(43, 7), seeds[7]);
    }

    #[test]
    fn a_block_set_aside_keeps_its_files_under_its_node_and_is_named_in_notes() {
        let run = tempfile::tempdir().unwrap();
        for attempt in 1..=2 {
            fs_err::create_dir_all(block_dir(run.path(), 1)).unwrap();
            fs_err::write(block_dir(run.path(), 1).join("raw.jsonl"), "x\n").unwrap();
            let aside = set_aside(run.path(), 1, "node/3").unwrap();
            let name = if attempt == 1 {
                "1.on-node_3"
            } else {
                "1.on-node_3.2"
            };
            assert_eq!(aside, run.path().join(BLOCKS_DIR).join(name));
            assert!(aside.join("raw.jsonl").is_file());
            assert!(!block_dir(run.path(), 1).exists());
        }
        let notes = set_aside_notes(run.path(), 1);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("block 1 started over"), "{notes:?}");
        assert!(notes[0].contains("on node_3 are in"), "{notes:?}");
        assert!(set_aside_notes(run.path(), 0).is_empty());
    }

    #[test]
    fn an_array_task_log_names_its_task() {
        let job = Job {
            id: "12".into(),
            step: "bench".into(),
            variant: None,
            array: Some("0-1".into()),
            log: PathBuf::from("/w/runs/x/slurm/bench-%a.log"),
        };
        assert_eq!(
            job.log_of(Some(1)),
            PathBuf::from("/w/runs/x/slurm/bench-1.log")
        );
    }
}
