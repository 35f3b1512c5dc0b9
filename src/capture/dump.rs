//! Counters of an instrumented process, dumped on demand without stopping
//! it: the process's preloaded shim (`shim.c`) is sent its signal, dumps
//! into `DIR/<pid>/<n>/` and answers in `DIR/<pid>.done`. Each dump holds
//! what ran since the one before (the shim resets the counters).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use super::shim;

/// One finished dump of one process.
#[derive(Debug)]
pub struct Dumped {
    /// The process that dumped.
    pub pid: libc::pid_t,
    /// Its number among the process's dumps (1, 2, …).
    pub seq: u32,
    /// The directory the shim wrote it into.
    pub dir: PathBuf,
    /// Its files, relative to `dir`: a `.gcda` tree (gcc) or a `.profraw` (clang).
    pub files: Vec<PathBuf>,
    /// `gcc` or `clang`.
    pub runtime: String,
}

/// What the shim of a process said when it started (`<pid>.ready`).
struct Ready {
    dir: PathBuf,
    runtime: String,
    signal: i32,
}

/// The value of `name` in `/proc/<pid>/environ`.
fn environ_value(environ: &[u8], name: &str) -> Option<String> {
    environ.split(|b| *b == 0).find_map(|entry| {
        let text = String::from_utf8_lossy(entry);
        text.strip_prefix(name)?
            .strip_prefix('=')
            .map(str::to_owned)
    })
}

/// The program `pid` runs, for the messages.
pub fn program(pid: libc::pid_t) -> String {
    fs_err::read_link(format!("/proc/{pid}/exe"))
        .map_or_else(|_| "?".to_owned(), |p| p.display().to_string())
}

/// The shim's directory, from the `<pid>.ready` file it holds open (a
/// program may write over its environment: Redis's process title does).
fn held_dir(pid: libc::pid_t) -> Option<String> {
    let ready = format!("{pid}.ready");
    fs_err::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .flatten()
        .filter_map(|fd| fs_err::read_link(fd.path()).ok())
        .find(|target| target.file_name().is_some_and(|n| *n == *ready.as_str()))
        .and_then(|target| Some(target.parent()?.to_string_lossy().into_owned()))
}

/// Check that `pid` runs with the shim loaded and a profiling runtime found.
fn ready(pid: libc::pid_t) -> Result<Ready> {
    let environ = fs_err::read(format!("/proc/{pid}/environ")).with_context(|| {
        format!("no process {pid} to dump (or not one this user may read)\nhint: give the pid of the running service")
    })?;
    let hint = format!(
        "hint: start the service with LD_PRELOAD=$(afterburner profile --shim) {}=DIR, or profile it sampled (without --dump)",
        shim::DIR_ENV
    );
    let Some(dir) = held_dir(pid).or_else(|| environ_value(&environ, shim::DIR_ENV)) else {
        bail!(
            "process {pid} ({}) was not started with afterburner's dump shim: its environment has no {}\n{hint}",
            program(pid),
            shim::DIR_ENV
        );
    };
    let maps = fs_err::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let file = Path::new(&dir).join(format!("{pid}.ready"));
    if !maps.contains(shim::NAME) || !file.is_file() {
        bail!(
            "process {pid} ({}) has {}={dir} but no dump shim running (not loaded, or it could not write {})\n{hint}",
            program(pid),
            shim::DIR_ENV,
            file.display()
        );
    }
    let text = fs_err::read_to_string(&file)?;
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let runtime = field("runtime").unwrap_or_default();
    let signal = field("signal")
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("{} names no signal", file.display()))?;
    if runtime != "gcc" && runtime != "clang" {
        bail!(
            "process {pid} ({}) has no profiling runtime to dump: it was not built with -fprofile-generate, or its runtime's functions are not in it (gcc links __gcov_dump only when asked: -Wl,-u,__gcov_dump -Wl,-u,__gcov_reset; a stripped binary hides clang's)\nhint: rebuild it instrumented and unstripped, or profile it sampled (without --dump)",
            program(pid)
        );
    }
    Ok(Ready {
        dir: PathBuf::from(dir),
        runtime,
        signal,
    })
}

/// The last dump the shim finished, and its note ("ok" or "error: why").
fn last_done(dir: &Path, pid: libc::pid_t) -> (u32, String) {
    let text = fs_err::read_to_string(dir.join(format!("{pid}.done"))).unwrap_or_default();
    let (seq, note) = text.trim().split_once(' ').unwrap_or(("0", ""));
    (seq.parse().unwrap_or(0), note.to_owned())
}

/// Have `pid` dump its counters; wait at most `timeout` for it.
pub fn dump(pid: libc::pid_t, timeout: Duration) -> Result<Dumped> {
    let ready = ready(pid)?;
    let (before, _) = last_done(&ready.dir, pid);
    crate::process::signal(pid, ready.signal);
    let deadline = Instant::now() + timeout;
    loop {
        let (seq, note) = last_done(&ready.dir, pid);
        if seq > before {
            if note != "ok" {
                bail!("process {pid} ({}) could not dump: {note}", program(pid));
            }
            let dir = ready.dir.join(pid.to_string()).join(seq.to_string());
            let files = files_under(&dir);
            if files.is_empty() {
                bail!(
                    "process {pid} ({}) dumped nothing into {}",
                    program(pid),
                    dir.display()
                );
            }
            return Ok(Dumped {
                pid,
                seq,
                dir,
                files,
                runtime: ready.runtime,
            });
        }
        if !Path::new(&format!("/proc/{pid}")).exists() {
            bail!("process {pid} exited before its dump was written");
        }
        if Instant::now() >= deadline {
            bail!(
                "process {pid} ({}) did not finish its dump within {timeout:?} (no new line in {})\nhint: a large program takes longer: raise --timeout",
                program(pid),
                ready.dir.join(format!("{pid}.done")).display()
            );
        }
        crate::interrupt::check()?;
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(relative) = path.strip_prefix(dir) {
                found.push(relative.to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// Copy a dump's files into `out` (created), keeping their relative paths;
/// the copied paths.
pub fn copy_to(dumped: &Dumped, out: &Path) -> Result<Vec<PathBuf>> {
    let mut copied = Vec::new();
    for relative in &dumped.files {
        let to = out.join(relative);
        if let Some(parent) = to.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::copy(dumped.dir.join(relative), &to)?;
        copied.push(to);
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_is_read_from_the_nul_separated_environment() {
        let environ = b"A=1\0AFTERBURNER_DUMP_DIR=/x/y\0AFTERBURNER_DUMP_DIRX=no\0";
        assert_eq!(
            environ_value(environ, "AFTERBURNER_DUMP_DIR").as_deref(),
            Some("/x/y")
        );
        assert_eq!(environ_value(environ, "B"), None);
        assert_eq!(
            environ_value(b"AFTERBURNER_DUMP_DIRX=no", "AFTERBURNER_DUMP_DIR"),
            None
        );
    }
}
