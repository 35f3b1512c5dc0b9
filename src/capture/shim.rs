//! The dump shim (`shim.c`): compiled with the host's `cc` into a directory
//! (the work directory, or the user's cache), once per version of its
//! source, and preloaded into instrumented services with [`env`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use sha2::{Digest as _, Sha256};

use crate::process::{capture_command, quote_output};

/// The shim's C source.
pub const SOURCE: &str = include_str!("shim.c");
/// The environment variable naming the directory the shim writes into.
pub const DIR_ENV: &str = "AFTERBURNER_DUMP_DIR";
/// The environment variable naming the signal (a number) that asks for a dump.
pub const SIGNAL_ENV: &str = "AFTERBURNER_DUMP_SIGNAL";
/// Part of the shim's file name: how a process's maps show it is loaded.
pub const NAME: &str = "afterburner-dump";

/// Build the shim into `dir` unless it is there already; its path.
pub fn build(dir: &Path) -> Result<PathBuf> {
    let hash = crate::digest::hex(&Sha256::digest(SOURCE.as_bytes()));
    let stem = format!("{NAME}-{}", &hash[..16]);
    let out = dir.join(format!("{stem}.so"));
    if out.is_file() {
        return Ok(out);
    }
    fs_err::create_dir_all(dir)?;
    let source = dir.join(format!("{stem}.c"));
    fs_err::write(&source, SOURCE)?;
    // A name of its own until it is whole: two builds may race.
    let partial = dir.join(format!("{stem}.{}.tmp", std::process::id()));
    let mut command = Command::new("cc");
    command
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&partial)
        .arg(&source)
        .args(["-ldl", "-lpthread"]);
    let result = capture_command(&mut command, Duration::from_mins(2))
        .context("running cc to build the dump shim")?;
    if !result.success() {
        bail!(
            "cc could not build the dump shim {}:\n{}\nhint: install a C compiler (`apt-get install -y gcc`)",
            source.display(),
            quote_output(&format!("{}{}", result.stdout, result.stderr))
        );
    }
    fs_err::rename(&partial, &out)?;
    Ok(out)
}

/// Where `afterburner profile --shim` builds it: `$XDG_CACHE_HOME/afterburner`,
/// else `~/.cache/afterburner`, else a folder of the temporary directory.
pub fn default_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("afterburner")
}

/// The environment that preloads `shim` (before what `LD_PRELOAD` already
/// holds in `current`) and has it write into `dump_dir`.
pub fn env(shim: &Path, dump_dir: &Path, current: Option<&str>) -> Vec<(String, String)> {
    let mut preload = shim.to_string_lossy().into_owned();
    if let Some(more) = current.filter(|c| !c.trim().is_empty()) {
        preload = format!("{preload} {more}");
    }
    vec![
        ("LD_PRELOAD".to_owned(), preload),
        (DIR_ENV.to_owned(), dump_dir.to_string_lossy().into_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_goes_first_and_keeps_what_was_preloaded() {
        let both = env(
            Path::new("/w/shim.so"),
            Path::new("/w/dumps"),
            Some("/lib/x.so"),
        );
        assert_eq!(both[0].1, "/w/shim.so /lib/x.so");
        assert_eq!(both[1], (DIR_ENV.to_owned(), "/w/dumps".to_owned()));
        assert_eq!(env(Path::new("/s.so"), Path::new("/d"), None)[0].1, "/s.so");
    }
}
