//! Writing a run directory: `meta.json` before the first run, then one
//! `raw.jsonl` line per finished run, each synced before the next run
//! starts, all under the work directory's lock.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{read_meta, read_records, BenchMeta, RunRecord};
use crate::lockfile::Held;
use crate::workdir::{META_FILE, RAW_FILE};

/// Appends run records to one run directory, which it holds locked.
#[derive(Debug)]
pub struct Writer {
    dir: PathBuf,
    raw: fs_err::File,
    _lock: Held,
}

/// A run directory reopened to go on.
#[derive(Debug)]
pub struct Resumed {
    pub meta: BenchMeta,
    /// The records kept, checked against the plan.
    pub runs: Vec<RunRecord>,
    /// What the check left out (a torn last line, a duplicate), to say.
    pub notes: Vec<String>,
    pub writer: Writer,
}

impl Writer {
    /// Create `run_dir` with its `meta.json` (synced) and an empty `raw.jsonl`.
    pub fn create(run_dir: &Path, meta: &BenchMeta, lock: Held) -> Result<Self> {
        lock.say(&format!("run {} is being written", meta.run_id))?;
        fs_err::create_dir_all(run_dir)?;
        let mut file = fs_err::File::create(run_dir.join(META_FILE))?;
        file.write_all(&serde_json::to_vec_pretty(meta)?)?;
        file.sync_all()?;
        let raw = open_raw(run_dir)?;
        sync_dir(run_dir)?;
        if let Some(parent) = run_dir.parent() {
            sync_dir(parent)?;
        }
        Ok(Self {
            dir: run_dir.to_owned(),
            raw,
            _lock: lock,
        })
    }

    /// Reopen `run_dir` to append: its records are checked, and what
    /// follows the last good line (a torn line) is cut off first.
    pub fn resume(run_dir: &Path, lock: Held) -> Result<Resumed> {
        let meta = read_meta(run_dir)?;
        lock.say(&format!("run {} is being written", meta.run_id))?;
        let path = run_dir.join(RAW_FILE);
        let checked = read_records(&path, &meta)?;
        let file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)?;
        if file.metadata()?.len() > checked.good_len {
            file.set_len(checked.good_len)?;
        }
        let mut raw = open_raw(run_dir)?;
        // A good last line without its newline (cut right before it)
        // gets one, so the next record starts a line of its own.
        let bytes = fs_err::read(&path)?;
        if bytes.last().is_some_and(|b| *b != b'\n') {
            raw.write_all(b"\n")?;
        }
        raw.sync_all()?;
        Ok(Resumed {
            meta,
            runs: checked.runs,
            notes: checked.notes,
            writer: Self {
                dir: run_dir.to_owned(),
                raw,
                _lock: lock,
            },
        })
    }

    /// Replace `meta.json` (written aside, synced, then renamed over it, so
    /// a crash leaves the old or the new one whole): a sequential plan
    /// records why it stopped.
    pub fn rewrite_meta(&self, meta: &BenchMeta) -> Result<()> {
        let aside = self.dir.join(format!("{META_FILE}.new"));
        let mut file = fs_err::File::create(&aside)?;
        file.write_all(&serde_json::to_vec_pretty(meta)?)?;
        file.sync_all()?;
        fs_err::rename(&aside, self.dir.join(META_FILE))?;
        sync_dir(&self.dir)
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append one finished run and sync it to disk before returning.
    pub fn append(&mut self, record: &RunRecord) -> Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        // One write of the whole line: a crash tears at most this line.
        self.raw.write_all(&line)?;
        self.raw.sync_data()?;
        Ok(())
    }
}

fn open_raw(run_dir: &Path) -> Result<fs_err::File> {
    Ok(fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(run_dir.join(RAW_FILE))?)
}

/// Sync a directory, so the files just created in it survive a crash.
fn sync_dir(dir: &Path) -> Result<()> {
    fs_err::File::open(dir)?.sync_all()?;
    Ok(())
}
