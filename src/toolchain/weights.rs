//! Per-workload weights of a merged profile (`weight = 3` on a training
//! workload), as the seed's `profile_merger` and `llvm-profdata merge
//! --weighted-input` take them: a workload of weight 3 counts as if it had
//! been trained three times.
//!
//! Training leaves each workload's files under `raw/<workload>/` (and
//! their conversions under `converted/<workload>/`); a weight other than 1
//! is written beside them as `raw/<workload>/weight`, so the profile
//! directory says how it was merged, and each merge reads the weight of a
//! file from its path. Tools that take weights get them (`llvm-profdata`,
//! `gcov-tool merge -w`, afterburner's own gcc AutoFDO writer); those that
//! do not (`merge-fdata`, `go tool pprof`) get a file of weight `w` `w`
//! times, which adds its counts `w` times.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::{raw_dir, StageDirs};

/// The largest weight: repeating a file that many times stays cheap.
pub const MAX: u32 = 100;

/// The name of a workload's weight file under `raw/<workload>/`.
const FILE: &str = "weight";

/// The directory of converted recordings, one sub-directory per workload.
pub const CONVERTED_DIR: &str = "converted";

/// Record `workload`'s weight after its training (nothing when it is 1).
pub fn record(dirs: &StageDirs, workload: &str, weight: u32) -> Result<()> {
    if weight == 1 {
        return Ok(());
    }
    let dir = raw_dir(dirs).join(workload);
    fs_err::create_dir_all(&dir)?;
    fs_err::write(dir.join(FILE), format!("{weight}\n"))?;
    Ok(())
}

/// The training workload a file of this round belongs to: the directory
/// below `raw/` or `converted/` it lies in.
pub fn workload_of<'a>(dirs: &StageDirs, file: &'a Path) -> Option<&'a str> {
    let relative = file.strip_prefix(&dirs.profile).ok()?;
    let mut parts = relative.components();
    let top = parts.next()?.as_os_str();
    if top != super::RAW_DIR && top != CONVERTED_DIR {
        return None;
    }
    let workload = parts.next()?.as_os_str().to_str()?;
    // A file directly under raw/ belongs to no workload.
    parts.next().map(|_| workload)
}

/// The weight of a file of this round: its workload's, 1 by default.
pub fn of(dirs: &StageDirs, file: &Path) -> Result<u32> {
    workload_of(dirs, file).map_or(Ok(1), |w| of_workload(dirs, w))
}

/// The weight of `workload` in this round, 1 by default.
pub fn of_workload(dirs: &StageDirs, workload: &str) -> Result<u32> {
    let path = raw_dir(dirs).join(workload).join(FILE);
    if !path.is_file() {
        return Ok(1);
    }
    let text = fs_err::read_to_string(&path)?;
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|w| (1..=MAX).contains(w))
        .with_context(|| {
            format!(
                "{}: `{}` is not a weight from 1 to {MAX}\nhint: train again; afterburner writes this file from the workload's `weight`",
                path.display(),
                text.trim()
            )
        })
}

/// Each file with its weight.
pub fn each(dirs: &StageDirs, files: &[PathBuf]) -> Result<Vec<(u32, PathBuf)>> {
    files
        .iter()
        .map(|f| Ok((of(dirs, f)?, f.clone())))
        .collect()
}

/// Each file repeated as many times as its weight, for tools that add
/// their inputs and take no weights.
pub fn repeated(dirs: &StageDirs, files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(files.len());
    for (weight, file) in each(dirs, files)? {
        out.extend(std::iter::repeat_n(file, weight as usize));
    }
    Ok(out)
}

/// `workload=weight` for each workload whose weight is not 1, for the
/// message that names the merge; `None` when every weight is 1.
pub fn describe(dirs: &StageDirs) -> Option<String> {
    let entries = fs_err::read_dir(raw_dir(dirs)).ok()?;
    let mut named: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join(FILE).is_file())
        .filter_map(|e| {
            let workload = e.file_name().to_string_lossy().into_owned();
            let weight = of_workload(dirs, &workload).ok()?;
            Some(format!("{workload}={weight}"))
        })
        .collect();
    named.sort();
    (!named.is_empty()).then(|| named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(root: &Path) -> StageDirs {
        StageDirs {
            build: root.join("build"),
            profile: root.join("profile"),
        }
    }

    #[test]
    fn a_file_takes_its_workloads_weight_and_one_by_default() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        record(&d, "reads", 3).unwrap();
        record(&d, "writes", 1).unwrap();
        let raw = raw_dir(&d);
        let reads = raw.join("reads").join("1.perfdata");
        let converted = d
            .profile
            .join(CONVERTED_DIR)
            .join("reads")
            .join("0-app.afdo");
        let writes = raw.join("writes").join("2.perfdata");
        let loose = raw.join("3.perfdata");
        assert_eq!(of(&d, &reads).unwrap(), 3);
        assert_eq!(of(&d, &converted).unwrap(), 3);
        assert_eq!(of(&d, &writes).unwrap(), 1);
        assert_eq!(of(&d, &loose).unwrap(), 1);
        assert!(!raw.join("writes").exists(), "weight 1 writes nothing");
        let files = [reads.clone(), writes.clone()];
        assert_eq!(
            repeated(&d, &files).unwrap(),
            vec![reads.clone(), reads.clone(), reads, writes]
        );
        assert_eq!(describe(&d).as_deref(), Some("reads=3"));
    }

    #[test]
    fn a_damaged_weight_file_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        let dir = raw_dir(&d).join("reads");
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::write(dir.join(FILE), "0\n").unwrap();
        let error = of(&d, &dir.join("1.perfdata")).unwrap_err().to_string();
        assert!(error.contains("reads/weight"), "{error}");
        assert!(error.contains("not a weight from 1 to 100"), "{error}");
    }
}
