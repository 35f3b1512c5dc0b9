//! Reading `raw.jsonl` back, every record checked: a torn last line (a
//! crash mid-write) is left out and said, a second record of a run that
//! already succeeded is dropped and said, a record outside the plan is an
//! error naming its line.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::{read_meta, BenchMeta, Progress, RunKind, RunRecord};
use crate::workdir::RAW_FILE;

/// The records of `raw.jsonl` that passed the checks.
#[derive(Debug, Clone)]
pub struct Checked {
    pub runs: Vec<RunRecord>,
    /// What was left out, one sentence each, naming the line.
    pub notes: Vec<String>,
    /// Bytes of the file up to the end of its last good line: a resume
    /// cuts the file there before appending.
    pub good_len: u64,
}

/// A run directory read back for a report.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub dir: PathBuf,
    pub meta: BenchMeta,
    pub runs: Vec<RunRecord>,
    pub notes: Vec<String>,
    pub progress: Progress,
    /// A cluster run's blocks, each read on its own (empty for a run on
    /// one machine); `runs` is then their records merged.
    pub blocks: Vec<super::Block>,
}

impl Recorded {
    /// The run directory whose per-run files (callgrind profiles,
    /// simulations) are read: a cluster run's first block, else this run.
    pub fn with_files(&self) -> &Recorded {
        self.blocks.first().map_or(self, |b| &b.recorded)
    }
}

/// Read and check a run directory for a report; a run with no finished
/// run at all is an error.
pub fn read(run_dir: &Path) -> Result<Recorded> {
    if super::is_cluster(run_dir) {
        return super::blocks::read_merged(run_dir);
    }
    let meta = read_meta(run_dir)?;
    let path = run_dir.join(RAW_FILE);
    let checked = read_records(&path, &meta)?;
    if checked.runs.is_empty() {
        bail!(
            "run {} has no finished run: {} is empty\nhint: the bench stopped before its first run finished; `afterburner bench --resume` continues it",
            meta.run_id,
            path.display()
        );
    }
    let progress = Progress::of(&meta, &checked.runs);
    Ok(Recorded {
        dir: run_dir.to_owned(),
        meta,
        runs: checked.runs,
        notes: checked.notes,
        progress,
        blocks: Vec::new(),
    })
}

/// Read `raw.jsonl` (at `path`) and check each record against `meta`'s plan.
pub fn read_records(path: &Path, meta: &BenchMeta) -> Result<Checked> {
    let bytes = fs_err::read(path)?;
    let mut checked = Checked {
        runs: Vec::new(),
        notes: Vec::new(),
        good_len: 0,
    };
    let mut succeeded: HashSet<(u32, String, String, RunKind)> = HashSet::new();
    let mut start = 0;
    let mut number = 0;
    while start < bytes.len() {
        number += 1;
        let end = bytes[start..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| start + i + 1);
        let line = &bytes[start..end];
        let at = format!("{}:{number}", path.display());
        let rest_is_blank = bytes[end..].iter().all(u8::is_ascii_whitespace);
        if line.iter().all(u8::is_ascii_whitespace) {
            start = end;
            continue;
        }
        let record: RunRecord = match serde_json::from_slice(line) {
            Ok(record) => record,
            Err(_) if rest_is_blank => {
                checked.notes.push(format!(
                    "torn last line in {}: line {number} left out (a run cut off mid-write)",
                    path.display()
                ));
                break;
            }
            Err(error) => bail!(
                "{at}: not a run record: {error}\nhint: raw.jsonl is written by afterburner alone; restore it, or move the line out to report the rest"
            ),
        };
        check_planned(&record, meta, &at)?;
        let key = (
            record.round,
            record.workload.clone(),
            record.variant.clone(),
            record.kind,
        );
        checked.good_len = u64::try_from(end).unwrap_or(u64::MAX);
        start = end;
        if succeeded.contains(&key) {
            checked.notes.push(format!(
                "duplicate run in {}: line {number}, a second record of round {} of workload `{}` on variant `{}` ({}), left out (that run had already succeeded)",
                path.display(),
                record.round + 1,
                record.workload,
                record.variant,
                kind_name(record.kind)
            ));
            continue;
        }
        if record.success {
            succeeded.insert(key);
        }
        checked.runs.push(record);
    }
    Ok(checked)
}

fn kind_name(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Timing => "timing",
        RunKind::Instructions => "instructions",
    }
}

/// A record must belong to the run's plan: a round, variant and workload
/// it has.
fn check_planned(record: &RunRecord, meta: &BenchMeta, at: &str) -> Result<()> {
    let hint = "hint: raw.jsonl is written by afterburner alone, for the plan in meta.json beside it; was it edited, or copied from another run?";
    if record.round >= meta.rounds() {
        bail!(
            "{at}: round {} is outside the plan of run {} ({} rounds, numbered 0 to {})\n{hint}",
            record.round,
            meta.run_id,
            meta.rounds(),
            meta.rounds().saturating_sub(1)
        );
    }
    if !meta.variants.iter().any(|v| v.name == record.variant) {
        bail!(
            "{at}: variant `{}` is not in the plan of run {}\n{hint}",
            record.variant,
            meta.run_id
        );
    }
    if !meta.workloads.contains(&record.workload) {
        bail!(
            "{at}: workload `{}` is not in the plan of run {}\n{hint}",
            record.workload,
            meta.run_id
        );
    }
    if record.warmup != (record.round < meta.warmup) {
        bail!(
            "{at}: round {} is marked warmup = {}, but the plan has {} warmup round(s)\n{hint}",
            record.round,
            record.warmup,
            meta.warmup
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::Writer;

    /// A plan of 1 warmup + 2 rounds, variants a and b, workload w.
    fn meta() -> BenchMeta {
        BenchMeta {
            warmup: 1,
            ..BenchMeta::for_tests(&["a", "b"], &["w"], 2, Vec::new())
        }
    }

    fn record(round: u32, variant: &str, success: bool) -> RunRecord {
        RunRecord {
            warmup: round == 0,
            success,
            ..RunRecord::timing_for_tests(round, variant, "w", 1_000_000)
        }
    }

    fn line(r: &RunRecord) -> String {
        serde_json::to_string(r).unwrap() + "\n"
    }

    /// A run directory with `meta()` and `raw` as its raw.jsonl.
    fn run_dir(raw: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(crate::workdir::META_FILE),
            serde_json::to_vec(&meta()).unwrap(),
        )
        .unwrap();
        std::fs::write(dir.path().join(RAW_FILE), raw).unwrap();
        dir
    }

    fn lock(dir: &Path) -> crate::lockfile::Held {
        crate::lockfile::acquire(&dir.join("lock"), "testing").unwrap()
    }

    #[test]
    fn a_torn_last_line_is_left_out_and_said_and_resume_appends_after_the_good_ones() {
        let good = line(&record(0, "a", true));
        let torn = &line(&record(0, "b", true))[..40];
        let dir = run_dir(&format!("{good}{torn}"));
        let got = read(dir.path()).unwrap();
        assert_eq!(got.runs.len(), 1);
        assert_eq!(got.notes.len(), 1, "{:?}", got.notes);
        assert!(
            got.notes[0].contains("torn last line in ")
                && got.notes[0].contains(": line 2 left out"),
            "{:?}",
            got.notes
        );
        // A torn line that kept its newline is as torn.
        let dir = run_dir(&format!("{good}{torn}\n"));
        let mut resumed = Writer::resume(dir.path(), lock(dir.path())).unwrap();
        assert_eq!(resumed.notes.len(), 1);
        resumed.writer.append(&record(0, "b", true)).unwrap();
        let text = std::fs::read_to_string(dir.path().join(RAW_FILE)).unwrap();
        assert_eq!(text, format!("{good}{}", line(&record(0, "b", true))));
        let again = read(dir.path()).unwrap();
        assert_eq!((again.runs.len(), again.notes.len()), (2, 0));
    }

    #[test]
    fn a_good_last_line_without_its_newline_gets_one_before_the_next() {
        let good = line(&record(0, "a", true));
        let dir = run_dir(good.trim_end());
        let mut resumed = Writer::resume(dir.path(), lock(dir.path())).unwrap();
        assert_eq!((resumed.runs.len(), resumed.notes.len()), (1, 0));
        resumed.writer.append(&record(0, "b", true)).unwrap();
        assert_eq!(read(dir.path()).unwrap().runs.len(), 2);
    }

    #[test]
    fn a_second_record_of_a_run_that_succeeded_is_dropped_and_said() {
        let failed = line(&record(1, "a", false));
        let ok = line(&record(1, "a", true));
        let dir = run_dir(&format!("{failed}{ok}{ok}"));
        let got = read(dir.path()).unwrap();
        // The failed try and the retry that succeeded stay; the copy goes.
        assert_eq!(got.runs.len(), 2);
        assert_eq!(got.notes.len(), 1);
        assert!(
            got.notes[0]
                .contains(": line 3, a second record of round 2 of workload `w` on variant `a`"),
            "{:?}",
            got.notes
        );
    }

    #[test]
    fn a_record_outside_the_plan_is_an_error_naming_its_line() {
        let ok = line(&record(0, "a", true));
        let dir = run_dir(&format!("{ok}{}", line(&record(999, "a", true))));
        let error = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(
            error.contains("raw.jsonl:2: round 999 is outside the plan of run 20261125-020000 (3 rounds, numbered 0 to 2)"),
            "{error}"
        );
        let dir = run_dir(&format!("{ok}{}", line(&record(1, "c", true))));
        let error = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(
            error.contains(":2: variant `c` is not in the plan"),
            "{error}"
        );
        let mut warm = record(2, "a", true);
        warm.warmup = true;
        let dir = run_dir(&line(&warm));
        let error = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(
            error.contains(":1: round 2 is marked warmup = true"),
            "{error}"
        );
    }

    #[test]
    fn a_bad_line_before_the_last_is_an_error() {
        let ok = line(&record(0, "a", true));
        let dir = run_dir(&format!("{{\"round\":\n{ok}"));
        let error = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(error.contains("raw.jsonl:1: not a run record"), "{error}");
    }

    #[test]
    fn an_empty_run_is_an_error_and_a_short_one_partial() {
        let dir = run_dir("");
        let error = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(
            error.contains("run 20261125-020000 has no finished run"),
            "{error}"
        );
        let raw: String = [
            record(0, "a", true),
            record(0, "b", false),
            record(1, "b", true),
        ]
        .iter()
        .map(line)
        .collect();
        let got = read(run_dir(&raw).path()).unwrap();
        assert_eq!(
            got.progress,
            Progress {
                complete_rounds: 1,
                planned_rounds: 3
            }
        );
        assert!(got.progress.is_partial());
    }
}
