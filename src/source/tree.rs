//! What a build reads from a local (`path`) source tree, and what changed
//! since the last build.
//!
//! A build must rerun when a source file changes, and only then: a log, an
//! exported CSV, a `perf.data` or an editor's swap file written into the
//! project must not rebuild and retrain every variant. In a git work tree the
//! files are what git sees (tracked, and untracked ones that are not ignored);
//! elsewhere every file the `.gitignore`/`.ignore` rules keep. The work
//! directory and the source's own `exclude` patterns (gitignore syntax) are
//! left out in both cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::process::capture_command;

/// Relative path (with `/`) → a stamp of the file: its size and modification
/// time, `"<bytes>:<seconds>.<nanoseconds>"`. Equal manifests mean nothing
/// the build reads has changed.
pub type Manifest = BTreeMap<String, String>;

/// How long `git ls-files` may take on a large tree.
const GIT_TIMEOUT: Duration = Duration::from_mins(2);

/// The files of the tree at `dir` a build reads, with their stamps.
/// `workdir` (the afterburner work directory, when it lies inside the tree)
/// and paths matching `exclude` are left out.
pub fn manifest(dir: &Path, workdir: &Path, exclude: &[String]) -> Result<Manifest> {
    let excluded = exclusions(dir, exclude)?;
    let skip = std::path::absolute(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    let files = match git_files(dir)? {
        Some(files) => files,
        None => walked_files(dir)?,
    };
    let mut out = Manifest::new();
    for relative in files {
        let path = dir.join(&relative);
        let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        if absolute.starts_with(&skip) || is_excluded(&excluded, &relative) {
            continue;
        }
        // A tracked file deleted in the work tree has no stamp: it is gone.
        let Ok(meta) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .unwrap_or_default();
        let key = relative.to_string_lossy().replace('\\', "/");
        out.insert(
            key,
            format!(
                "{}:{}.{:09}",
                meta.len(),
                mtime.as_secs(),
                mtime.subsec_nanos()
            ),
        );
    }
    Ok(out)
}

/// What differs between two manifests, a phrase per file, at most `limit`
/// of them and a count of the rest: "src/foo.c changed", "new.c added",
/// "old.c removed".
pub fn changes(before: &Manifest, after: &Manifest, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (path, stamp) in after {
        match before.get(path) {
            None => out.push(format!("{path} added")),
            Some(old) if old != stamp => out.push(format!("{path} changed")),
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        out.push(format!("{path} removed"));
    }
    if out.len() > limit {
        let rest = out.len() - limit;
        out.truncate(limit);
        out.push(format!("{rest} more files"));
    }
    out
}

/// `git ls-files` of a work tree: tracked files and untracked ones git does
/// not ignore, relative to `dir`. `None` when `dir` is not in a work tree (or
/// git is not installed).
fn git_files(dir: &Path) -> Result<Option<Vec<PathBuf>>> {
    let mut probe = std::process::Command::new("git");
    probe
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--is-inside-work-tree"]);
    let inside = capture_command(&mut probe, GIT_TIMEOUT)
        .is_ok_and(|out| out.success() && out.stdout.trim() == "true");
    if !inside {
        return Ok(None);
    }
    let mut list = std::process::Command::new("git");
    list.arg("-C").arg(dir).args([
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
    ]);
    let out = capture_command(&mut list, GIT_TIMEOUT)
        .with_context(|| format!("listing the files of {} with git", dir.display()))?;
    if !out.success() {
        bail!(
            "`git ls-files` failed in {}:\n{}\nhint: repair the repository, or move the source out of it",
            dir.display(),
            out.stderr.trim()
        );
    }
    let mut files: Vec<PathBuf> = out
        .stdout
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect();
    // A file both staged and modified is listed once per state.
    files.sort();
    files.dedup();
    Ok(Some(files))
}

/// Every file under `dir` that `.gitignore`, `.ignore` and git's exclude
/// rules keep (hidden files included: `.config` may be read by a build).
fn walked_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker {
        let entry = entry.with_context(|| format!("reading the source tree {}", dir.display()))?;
        if entry.file_type().is_some_and(|t| !t.is_dir()) {
            if let Ok(relative) = entry.path().strip_prefix(dir) {
                files.push(relative.to_path_buf());
            }
        }
    }
    files.sort();
    Ok(files)
}

fn exclusions(dir: &Path, patterns: &[String]) -> Result<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    for pattern in patterns {
        builder.add_line(None, pattern).with_context(|| {
            format!("source exclude pattern `{pattern}` is not a gitignore pattern")
        })?;
    }
    builder
        .build()
        .context("building the source's exclude patterns")
}

/// Whether `relative` or a directory above it matches an exclude pattern.
fn is_excluded(excluded: &Gitignore, relative: &Path) -> bool {
    excluded
        .matched_path_or_any_parents(relative, false)
        .is_ignore()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    #[test]
    fn outside_git_the_ignore_files_and_exclude_patterns_are_honoured() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "main.c", "int main(void) { return 0; }\n");
        write(root, "lib/util.c", "int f(void) { return 1; }\n");
        write(root, ".gitignore", "*.log\nbuild/\n");
        write(root, "run.log", "noise\n");
        write(root, "build/x.o", "object\n");
        write(root, "data/big.csv", "1,2\n");
        write(root, ".afterburner/runs/r/raw.jsonl", "{}\n");
        let files = manifest(root, &root.join(".afterburner"), &["data/".to_owned()]).unwrap();
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(names, [".gitignore", "lib/util.c", "main.c"]);
    }

    #[test]
    fn changes_name_each_file() {
        let before = Manifest::from([
            ("a.c".to_owned(), "1:1.0".to_owned()),
            ("b.c".to_owned(), "1:1.0".to_owned()),
        ]);
        let after = Manifest::from([
            ("a.c".to_owned(), "2:1.0".to_owned()),
            ("c.c".to_owned(), "1:1.0".to_owned()),
        ]);
        assert_eq!(
            changes(&before, &after, 5),
            ["a.c changed", "c.c added", "b.c removed"]
        );
        assert_eq!(changes(&before, &after, 1), ["a.c changed", "2 more files"]);
        assert!(changes(&after, &after, 5).is_empty());
    }
}
