//! Training with `train_stop = "dump"`: the services are started with the
//! dump shim preloaded, and at the end of each training workload each
//! service's processes dump their counters while they run; the dumps go
//! where the round's profile is collected from (gcc: the `.gcda` tree of
//! `-fprofile-dir`, a file some other process of the service wrote already
//! added to with `gcov-tool merge`; clang: the raw directory's `.profraw`
//! files). The service is stopped after, as before: what it counts from the
//! dump to its exit adds to the dump.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::{dump, shim};

/// How long a training dump may take.
const DUMP_TIMEOUT: Duration = Duration::from_mins(2);

/// Where a training round's dumps go.
#[derive(Debug, Clone)]
pub struct Dumping {
    /// The shim, built into the work directory.
    pub shim: PathBuf,
    /// Where the shim writes (its `AFTERBURNER_DUMP_DIR`).
    pub dir: PathBuf,
    /// gcc's `-fprofile-dir` (the round's profile directory).
    pub profile_dir: PathBuf,
    /// Where clang's raw profiles are merged from.
    pub raw_dir: PathBuf,
}

impl Dumping {
    /// The services' environment: `env` with the shim preloaded.
    pub fn service_env(&self, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut out = env.clone();
        out.extend(shim::env(
            &self.shim,
            &self.dir,
            env.get("LD_PRELOAD").map(String::as_str),
        ));
        out
    }

    /// Dump every process of a service that has the shim and a runtime (a
    /// shell in front of it has none; a forked worker has the shim too, its
    /// counters from zero at the fork), and move the dumps into place; the
    /// files moved.
    pub fn dump_service(&self, name: &str, pids: &[libc::pid_t]) -> Result<usize> {
        let mut moved = 0;
        let mut why = Vec::new();
        for &pid in pids {
            match dump::dump(pid, DUMP_TIMEOUT) {
                Ok(dumped) => moved += self.place(&dumped)?,
                Err(e) => why.push(format!("{e:#}")),
            }
        }
        if moved == 0 {
            bail!(
                "train_stop = \"dump\": no process of service `{name}` dumped its counters:\n{}",
                why.join("\n")
            );
        }
        Ok(moved)
    }

    /// Move one dump where the round collects from.
    fn place(&self, dumped: &dump::Dumped) -> Result<usize> {
        for relative in &dumped.files {
            let from = dumped.dir.join(relative);
            let to = if dumped.runtime == "gcc" {
                // The shim's GCOV_PREFIX put gcc's absolute path under the dump.
                let to = Path::new("/").join(relative);
                if !to.starts_with(&self.profile_dir) {
                    bail!(
                        "the dump {} is not a file of this round's profile directory {}",
                        from.display(),
                        self.profile_dir.display()
                    );
                }
                if to.exists() {
                    // Written by another process of the service: a worker
                    // that exited, or one dumped before this one.
                    self.add_gcda(&from, &to)?;
                    continue;
                }
                to
            } else {
                // clang names a forked child's file by its parent's pid
                // (`%p` is expanded once, at start): the dump's own pid
                // keeps the two apart.
                let file = relative.file_name().context("a dumped file has a name")?;
                self.raw_dir.join(format!(
                    "dump-{}-{}-{}",
                    dumped.pid,
                    dumped.seq,
                    file.to_string_lossy()
                ))
            };
            if let Some(parent) = to.parent() {
                fs_err::create_dir_all(parent)?;
            }
            if fs_err::rename(&from, &to).is_err() {
                fs_err::copy(&from, &to)?;
            }
        }
        Ok(dumped.files.len())
    }

    /// Add the counters of the `.gcda` file `from` to those of `to` with
    /// `gcov-tool merge` (gcc's files cannot be added by moving).
    fn add_gcda(&self, from: &Path, to: &Path) -> Result<()> {
        let name = to.file_name().context("a .gcda file has a name")?;
        let scratch = self.dir.join("merging");
        if scratch.exists() {
            fs_err::remove_dir_all(&scratch)?;
        }
        let (a, b, out) = (scratch.join("a"), scratch.join("b"), scratch.join("out"));
        fs_err::create_dir_all(&a)?;
        fs_err::create_dir_all(&b)?;
        fs_err::copy(to, a.join(name))?;
        fs_err::copy(from, b.join(name))?;
        crate::toolchain::pgo::gcc::merge_two(&a, &b, &out, &scratch.join("work"))
            .with_context(|| format!("adding the dump {} to {}", from.display(), to.display()))?;
        fs_err::copy(out.join(name), to)?;
        fs_err::remove_dir_all(&scratch)?;
        Ok(())
    }
}
