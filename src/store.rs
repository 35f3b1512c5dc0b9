//! Result history: every reported run in `history.db` (`SQLite`, bundled),
//! one row per run with its headline ratios, and every calibration
//! (`afterburner calibrate`) with its machine class, each written in a
//! transaction so a crash mid-write leaves the previous state.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use rusqlite::{params, Connection, OptionalExtension};

use crate::analysis::Results;

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
        );
        CREATE TABLE IF NOT EXISTS calibrations (
            run_id TEXT PRIMARY KEY,
            created TEXT NOT NULL,
            target TEXT NOT NULL,
            machine_class TEXT NOT NULL,
            summary TEXT NOT NULL,
            run_dir TEXT NOT NULL
        );",
    )
    .with_context(|| format!("preparing {}", path.display()))?;
    Ok(db)
}

/// The history for reading only: `None` when there is none yet (a read
/// creates no file and no directory).
fn open_to_read(workdir: &Path) -> Result<Option<Connection>> {
    let path = workdir.join(HISTORY_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let db = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("opening {}", path.display()))?;
    db.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(Some(db))
}

/// Store (or refresh) a run's row.
pub fn record(workdir: &Path, results: &Results, run_dir: &Path) -> Result<()> {
    let mut db = open(workdir)?;
    let variants: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let headline: Vec<String> = results
        .comparisons
        .iter()
        .filter(|c| c.primary)
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

/// Store (or refresh) a calibration's row: its machine class, a summary
/// and where its `calibration.json` is.
pub fn record_calibration(
    workdir: &Path,
    calibration: &crate::runs::Calibration,
    run_dir: &Path,
) -> Result<()> {
    let mut db = open(workdir)?;
    let summary: Vec<String> = calibration
        .workloads
        .iter()
        .map(|w| {
            format!(
                "{} {} noise {} claims {}/{}",
                w.workload,
                w.metric,
                w.within_round_pct
                    .map_or_else(|| "unknown".to_owned(), |p| format!("{p:.2}%")),
                w.disjoint.claims,
                w.disjoint.trials
            )
        })
        .collect();
    let tx = db.transaction()?;
    tx.execute(
        "INSERT OR REPLACE INTO calibrations (run_id, created, target, machine_class, summary, run_dir)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            calibration.run_id,
            calibration.captured_at,
            calibration.target,
            calibration.machine_class,
            summary.join("; "),
            run_dir.to_string_lossy(),
        ],
    )?;
    tx.commit()?;
    Ok(())
}

/// The run directory of the newest calibration of `target` on
/// `machine_class`, if any (none without a history).
pub fn latest_calibration(
    workdir: &Path,
    target: &str,
    machine_class: &str,
) -> Result<Option<PathBuf>> {
    let Some(db) = open_to_read(workdir)? else {
        return Ok(None);
    };
    // A history written before calibrations were kept has no such table.
    let kept: bool = db.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'calibrations')",
        [],
        |row| row.get(0),
    )?;
    if !kept {
        return Ok(None);
    }
    let found = db
        .query_row(
            "SELECT run_dir FROM calibrations WHERE target = ?1 AND machine_class = ?2
             ORDER BY run_id DESC LIMIT 1",
            [target, machine_class],
            |row| row.get::<_, String>(0),
        )
        .optional()?;
    Ok(found.map(PathBuf::from))
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

/// Every stored run, oldest first (none without a history).
pub fn list(workdir: &Path) -> Result<Vec<Entry>> {
    let Some(db) = open_to_read(workdir)? else {
        return Ok(Vec::new());
    };
    let mut query = db.prepare(&format!("SELECT {COLUMNS} FROM runs ORDER BY run_id"))?;
    let rows = query
        .query_map([], entry)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// One stored run by id (none without a history).
pub fn find(workdir: &Path, run_id: &str) -> Result<Option<Entry>> {
    let Some(db) = open_to_read(workdir)? else {
        return Ok(None);
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead as _;

    const CRASH_DIR: &str = "AFTERBURNER_TEST_STORE_CRASH_DIR";

    fn insert(db: &Connection, run_id: &str) -> rusqlite::Result<usize> {
        db.execute(
            "INSERT INTO runs (run_id, created, experiment, target, revision, variants, headline, run_dir)
             VALUES (?1, 'now', 'e.toml', 't', NULL, 'baseline,pgo', 'w pgo wall 0.9 faster', '/r')",
            [run_id],
        )
    }

    /// Reading a history that does not exist yet answers "none" and
    /// creates neither the file nor its directory.
    #[test]
    fn reading_no_history_creates_none() {
        let tmp = tempfile::tempdir().unwrap();
        let workdir = tmp.path().join(".afterburner");
        assert!(list(&workdir).unwrap().is_empty());
        assert!(find(&workdir, "20261129-000000").unwrap().is_none());
        assert!(latest_calibration(&workdir, "t", "class")
            .unwrap()
            .is_none());
        assert!(!workdir.exists(), "a read created {}", workdir.display());
        std::fs::create_dir(&workdir).unwrap();
        assert!(list(&workdir).unwrap().is_empty());
        assert!(!workdir.join(HISTORY_FILE).exists());
        // A history from before calibrations were kept: runs only.
        let old = Connection::open(workdir.join(HISTORY_FILE)).unwrap();
        old.execute_batch(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, created TEXT NOT NULL,
             experiment TEXT NOT NULL, target TEXT NOT NULL, revision TEXT,
             variants TEXT NOT NULL, headline TEXT NOT NULL, run_dir TEXT NOT NULL);",
        )
        .unwrap();
        insert(&old, "20261129-000001").unwrap();
        drop(old);
        assert_eq!(list(&workdir).unwrap().len(), 1);
        assert!(latest_calibration(&workdir, "t", "class")
            .unwrap()
            .is_none());
    }

    /// A writer killed with SIGKILL inside its transaction leaves the
    /// database as it was before: readable, intact, without the row.
    #[test]
    fn a_crash_mid_write_leaves_the_previous_state() {
        if let Some(dir) = std::env::var_os(CRASH_DIR) {
            // The child: write in a transaction and never commit.
            let mut db = open(Path::new(&dir)).unwrap();
            let tx = db.transaction().unwrap();
            insert(&tx, "uncommitted").unwrap();
            println!("ready");
            std::thread::sleep(std::time::Duration::from_mins(1));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        insert(&open(dir.path()).unwrap(), "committed").unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "store::tests::a_crash_mid_write_leaves_the_previous_state",
                "--nocapture",
            ])
            .env(CRASH_DIR, dir.path())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let ready = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.trim() == "ready");
        assert!(ready, "the writer never got into its transaction");
        child.kill().unwrap();
        child.wait().unwrap();
        let ids: Vec<String> = list(dir.path())
            .unwrap()
            .into_iter()
            .map(|e| e.run_id)
            .collect();
        assert_eq!(ids, ["committed"]);
        let db = open(dir.path()).unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        insert(&db, "after").unwrap();
        assert_eq!(list(dir.path()).unwrap().len(), 2);
    }
}
