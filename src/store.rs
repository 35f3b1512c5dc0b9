//! Result history: every reported run in `history.db` (`SQLite`, bundled),
//! one row per run with its headline ratios, written in a transaction so a
//! crash mid-write leaves the previous state.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use rusqlite::{params, Connection, OptionalExtension};

use crate::report::Results;

/// The history database's file name, in the work directory.
pub const HISTORY_FILE: &str = "history.db";

/// One stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub run_id: String,
    /// When the environment was captured (RFC 3339 UTC).
    pub created: String,
    pub experiment: String,
    pub target: String,
    /// Revision of the target's source, when known (git commit, package version).
    pub revision: Option<String>,
    /// Variant names, comma-separated, baseline first.
    pub variants: String,
    /// "variant metric ratio verdict" per comparison, `; `-separated.
    pub headline: String,
    pub run_dir: PathBuf,
}

fn open(workdir: &Path) -> Result<Connection> {
    let path = workdir.join(HISTORY_FILE);
    let db = Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
    db.busy_timeout(std::time::Duration::from_secs(10))?;
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS runs (
            run_id TEXT PRIMARY KEY,
            created TEXT NOT NULL,
            experiment TEXT NOT NULL,
            target TEXT NOT NULL,
            revision TEXT,
            variants TEXT NOT NULL,
            headline TEXT NOT NULL,
            run_dir TEXT NOT NULL
        );",
    )
    .with_context(|| format!("preparing {}", path.display()))?;
    Ok(db)
}

/// Store (or refresh) a run's row.
pub fn record(workdir: &Path, results: &Results, run_dir: &Path) -> Result<()> {
    let mut db = open(workdir)?;
    let variants: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let headline: Vec<String> = results
        .comparisons
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {:.3} {}",
                c.workload, c.variant, c.metric, c.outcome.ratio, c.outcome.verdict
            )
        })
        .collect();
    let tx = db.transaction()?;
    tx.execute(
        "INSERT OR REPLACE INTO runs (run_id, created, experiment, target, revision, variants, headline, run_dir)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            results.run_id,
            results.environment.captured_at,
            results.experiment.to_string_lossy(),
            results.target,
            results.revision,
            variants.join(","),
            headline.join("; "),
            run_dir.to_string_lossy(),
        ],
    )?;
    tx.commit()?;
    Ok(())
}

fn entry(row: &rusqlite::Row) -> rusqlite::Result<Entry> {
    Ok(Entry {
        run_id: row.get(0)?,
        created: row.get(1)?,
        experiment: row.get(2)?,
        target: row.get(3)?,
        revision: row.get(4)?,
        variants: row.get(5)?,
        headline: row.get(6)?,
        run_dir: PathBuf::from(row.get::<_, String>(7)?),
    })
}

const COLUMNS: &str = "run_id, created, experiment, target, revision, variants, headline, run_dir";

/// Every stored run, oldest first.
pub fn list(workdir: &Path) -> Result<Vec<Entry>> {
    let db = open(workdir)?;
    let mut query = db.prepare(&format!("SELECT {COLUMNS} FROM runs ORDER BY run_id"))?;
    let rows = query
        .query_map([], entry)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// One stored run by id.
pub fn find(workdir: &Path, run_id: &str) -> Result<Option<Entry>> {
    let db = open(workdir)?;
    let found = db
        .query_row(
            &format!("SELECT {COLUMNS} FROM runs WHERE run_id = ?1"),
            [run_id],
            entry,
        )
        .optional()?;
    Ok(found)
}

/// The history as a table for the terminal.
pub fn render(entries: &[Entry]) -> String {
    let mut out = String::from(
        "run id            date                  target    revision          variants / headline\n",
    );
    for e in entries {
        let _ = write!(
            out,
            "{:<17} {:<21} {:<9} {:<17} {}\n{:>67}{}\n",
            e.run_id,
            e.created,
            e.target,
            e.revision.as_deref().unwrap_or("-"),
            e.variants,
            "",
            e.headline
        );
    }
    out
}
