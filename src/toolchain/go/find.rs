//! Finding a Go that can build with PGO (1.21 or newer): the `go` on the
//! PATH when it is new enough, else one from Debian's versioned packages
//! (`/usr/lib/go-1.2x/bin/go`, e.g. bookworm-backports' `golang-1.23`,
//! which put no `go` on the PATH), else the go.dev install in
//! `/usr/local/go`.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The oldest Go whose `go build` takes `-pgo=`.
pub const PGO_MINIMUM: (u32, u32) = (1, 21);

/// How to get a Go new enough for PGO, for hints.
pub const INSTALL_HINT: &str = "Debian 12's golang-go is Go 1.19: add the bookworm-backports suite (`echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/backports.list && apt-get update`) and `apt-get install -y -t bookworm-backports golang-1.23` (afterburner finds /usr/lib/go-1.23/bin/go), or install Go from https://go.dev/dl";

/// A `go` command and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundGo {
    pub path: PathBuf,
    pub version: (u32, u32),
}

/// The version `go version` reports: `go version go1.22.8 linux/amd64`.
pub fn parse_go_version(text: &str) -> Option<(u32, u32)> {
    let word = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix("go1."))?;
    let minor: String = word.chars().take_while(char::is_ascii_digit).collect();
    Some((1, minor.parse().ok()?))
}

fn version_of(go: &Path) -> Option<(u32, u32)> {
    let out = crate::process::capture(&go.to_string_lossy(), &["version"], Duration::from_secs(30))
        .ok()?;
    out.success()
        .then(|| parse_go_version(&out.stdout))
        .flatten()
}

/// The `go` on the PATH, then Debian's `/usr/lib/go-*/bin/go` newest
/// first, then `/usr/local/go/bin/go`.
fn candidates() -> Vec<PathBuf> {
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("go"))
        .find(|p| p.is_file());
    let mut debian: Vec<(Option<(u32, u32)>, PathBuf)> = fs_err::read_dir("/usr/lib")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let version = parse_go_version(&format!("go{}", name.strip_prefix("go-")?));
                    Some((version, e.path().join("bin/go")))
                })
                .filter(|(_, p)| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    debian.sort();
    on_path
        .into_iter()
        .chain(debian.into_iter().rev().map(|(_, p)| p))
        .chain(std::iter::once(PathBuf::from("/usr/local/go/bin/go")).filter(|p| p.is_file()))
        .collect()
}

/// The first Go that can build with PGO, or `None`.
pub fn find_pgo_go() -> Option<FoundGo> {
    candidates().into_iter().find_map(|path| {
        let version = version_of(&path)?;
        (version >= PGO_MINIMUM).then_some(FoundGo { path, version })
    })
}

/// The directory to put first on a Go build's PATH: that of a Go new
/// enough for PGO when the PATH's own `go` is missing or older.
pub fn pgo_go_dir() -> Option<PathBuf> {
    let found = find_pgo_go()?;
    let dir = found.path.parent()?.to_owned();
    let path_go_ok = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("go"))
        .find(|p| p.is_file())
        .is_some_and(|p| p == found.path);
    (!path_go_ok).then_some(dir)
}

/// The PATH a Go build and `go tool` run with: [`pgo_go_dir`] first.
pub fn path_with_pgo_go() -> Option<std::ffi::OsString> {
    let dir = pgo_go_dir()?;
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_versions() {
        assert_eq!(
            parse_go_version("go version go1.22.8 linux/amd64"),
            Some((1, 22))
        );
        assert_eq!(
            parse_go_version("go version go1.19.8 linux/amd64"),
            Some((1, 19))
        );
        assert_eq!(
            parse_go_version("go version go1.26rc1 linux/amd64"),
            Some((1, 26))
        );
        assert_eq!(parse_go_version("go1.23"), Some((1, 23)));
        assert_eq!(parse_go_version("no go here"), None);
        assert!((1, 19) < PGO_MINIMUM && (1, 21) >= PGO_MINIMUM);
    }
}
