//! A cargo target's build: cargo run by afterburner with the variant's
//! words as RUSTFLAGS and release-profile settings, for the host target
//! (so that RUSTFLAGS reach the package's crates, not the build scripts
//! and procedural macros cargo runs while building), in a target
//! directory per variant and stage that cargo's own caching keeps; and
//! what rustc was given, read back from cargo's verbose log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use super::Composed;
use crate::experiment::Experiment;
use crate::toolchain::recorded::{parse_cargo_log, Unit};
use crate::toolchain::rustc;

/// Where cargo puts what it builds for `host` below the target directory.
pub(super) fn host_dir(target_dir: &Path, host: &str) -> PathBuf {
    target_dir.join(host)
}

/// The host target, from `rustc -vV`.
pub(super) fn host() -> Result<String> {
    rustc::probe().map(|r| r.host).with_context(|| {
        format!(
            "rustc is missing, so a cargo target cannot be built\nhint: install Rust with rustup (https://rustup.rs) or `apt-get install -y {}`",
            rustc::PACKAGES
        )
    })
}

/// Give `command` cargo's settings: the target directory, the host
/// target, RUSTFLAGS and each release-profile setting.
pub(super) fn configure(command: &mut Command, flags: &Composed, target_dir: &Path, host: &str) {
    command
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_BUILD_TARGET", host)
        .env("RUSTFLAGS", &flags.rustflags)
        // It would win over RUSTFLAGS (the caller's own are in ours).
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    for setting in flags.cargo.split_whitespace() {
        if let Some((key, value)) = setting.split_once('=') {
            command.env(key, value);
        }
    }
}

/// Remove the binaries an earlier build left (BOLT rewrote them in
/// place): cargo links them again from its own copies when they are
/// missing, and a build never starts from a rewritten one.
pub(super) fn clear_binaries(experiment: &Experiment, host_dir: &Path) -> Result<()> {
    for relative in experiment.target.binaries.values() {
        let path = host_dir.join(relative);
        if path.is_file() {
            fs_err::remove_file(&path)?;
        }
    }
    Ok(())
}

/// The file in a target directory that keeps the last rustc command line
/// of each crate built there.
const LINES_FILE: &str = "afterburner-rustc-lines.json";

/// The rustc command line of every crate in `target_dir`'s build for the
/// host: those cargo's log `log` shows it ran now, and for the crates it
/// found fresh, the ones it ran when it last built them (kept in the
/// target directory, which only afterburner's builds of this stage use).
pub(super) fn rustc_lines(target_dir: &Path, log: &Path) -> Result<Vec<Unit>> {
    let text = String::from_utf8_lossy(&fs_err::read(log)?).into_owned();
    let kept = target_dir.join(LINES_FILE);
    let mut lines: BTreeMap<String, String> = fs_err::read(&kept)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    for unit in parse_cargo_log(&text) {
        lines.insert(crate_of(&unit.line), unit.line);
    }
    fs_err::create_dir_all(target_dir)?;
    fs_err::write(&kept, serde_json::to_vec_pretty(&lines)?)?;
    Ok(lines
        .into_values()
        .map(|line| Unit {
            line,
            compiler: Some(crate::toolchain::Compiler::Rustc),
            lto_link: false,
        })
        .collect())
}

/// A crate build's identity in a rustc command line: its name and the
/// suffix cargo gives its files (`--crate-name foo … -C
/// extra-filename=-0123abcd`).
fn crate_of(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let after = |key: &str| {
        words
            .iter()
            .position(|w| *w == key)
            .and_then(|i| words.get(i + 1))
            .copied()
            .unwrap_or_default()
    };
    let suffix = words
        .iter()
        .find_map(|w| w.strip_prefix("-Cextra-filename="))
        .unwrap_or_default();
    format!(
        "{}{suffix} {}",
        after("--crate-name"),
        after("--crate-type")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "   Compiling memchr v2.7.4\n     Running `/r/bin/rustc --crate-name build_script_build --edition=2021 build.rs --crate-type bin -C opt-level=3 -C metadata=1`\n     Running `/r/bin/rustc --crate-name memchr --edition=2021 src/lib.rs --crate-type lib -C opt-level=3 -C extra-filename=-aa --target x86_64-unknown-linux-gnu -Cprofile-generate=/p`\n       Fresh itoa v1.0.0\n     Running `/r/bin/rustc --crate-name app --edition=2024 src/main.rs --crate-type bin -C opt-level=3 -C lto=fat -C extra-filename=-bb --target x86_64-unknown-linux-gnu -Cprofile-generate=/p`\n";

    #[test]
    fn the_crates_built_for_the_target_are_read_and_kept_for_the_next_build() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        fs_err::write(&log, LOG).unwrap();
        let target = dir.path().join("target");
        let units = rustc_lines(&target, &log).unwrap();
        // The build script runs on the host: not one of the target's.
        assert_eq!(units.len(), 2, "{units:?}");
        let app = units
            .iter()
            .find(|u| u.line.contains("--crate-name app"))
            .unwrap();
        assert!(app.line.contains(" -Clto=fat "), "{}", app.line);
        // A later build that finds every crate fresh still knows them;
        // one that rebuilds the app replaces its line.
        fs_err::write(&log, "       Fresh app v0.1.0\n").unwrap();
        assert_eq!(rustc_lines(&target, &log).unwrap().len(), 2);
        fs_err::write(
            &log,
            LOG.replace("-Cprofile-generate=/p", "-Cprofile-use=/m"),
        )
        .unwrap();
        let again = rustc_lines(&target, &log).unwrap();
        assert_eq!(again.len(), 2);
        assert!(again.iter().all(|u| u.line.contains("-Cprofile-use=/m")));
    }
}
