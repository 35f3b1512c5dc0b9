//! Fetch a target's source: a local path, a Debian source package, a git
//! repository at a revision, a tarball checked against its SHA-256, or a
//! crate from crates.io checked against its index's checksum.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::experiment::Source;
use crate::process::{capture, capture_command, quote_output};
use crate::toolchain::tools::{self, Tool};

pub mod apt_sources;
pub mod crates_io;
pub mod tree;

const FETCH_TIMEOUT: Duration = Duration::from_mins(30);
/// Written last into a fetched tree, so a half-fetched one is never reused.
const MARKER: &str = ".afterburner-fetched";

/// Return the directory holding the source tree, fetching it into
/// `<workdir>/src/` unless a complete earlier fetch is there.
pub fn fetch(source: &Source, workdir: &Path) -> Result<PathBuf> {
    if let Some(dir) = fetched(source, workdir) {
        return Ok(dir);
    }
    if let Source::Path(path) = source {
        bail!(
            "source path {} is not a directory\nhint: set source = {{ path = \"…\" }} relative to the experiment file",
            path.display()
        );
    }
    let dest = workdir.join("src").join(slug(source));
    if dest.exists() {
        fs_err::remove_dir_all(&dest)?;
    }
    fs_err::create_dir_all(workdir.join("src"))?;
    match source {
        Source::Path(_) => unreachable!("handled above"),
        Source::Apt(package) => fetch_apt(package, &dest)?,
        Source::Git { url, rev } => fetch_git(url, rev.as_deref(), &dest)?,
        Source::Url { url, sha256 } => fetch_url(url, sha256, &dest)?,
        Source::Crate { name, version } => {
            crates_io::fetch(&crates_io::Registry::from_env(), name, version, &dest)?;
        }
    }
    fs_err::write(dest.join(MARKER), format!("{source:?}\n"))?;
    Ok(dest)
}

/// The directory of `source` if a complete earlier fetch is there (a path
/// source's own directory), without fetching: `None` where a run would
/// fetch it first.
pub fn fetched(source: &Source, workdir: &Path) -> Option<PathBuf> {
    if let Source::Path(path) = source {
        return path.is_dir().then(|| path.clone());
    }
    let dest = workdir.join("src").join(slug(source));
    dest.join(MARKER).exists().then_some(dest)
}

/// What revision of the source a run measured: the git commit of a path or
/// git source, the package version from `debian/changelog`, the start of
/// a tarball's checksum, or a crate's version and the start of its.
pub fn revision(source: &Source, dir: &Path) -> Option<String> {
    match source {
        Source::Path(_) | Source::Git { .. } => {
            let out = capture(
                "git",
                &[
                    "-C",
                    &dir.to_string_lossy(),
                    "rev-parse",
                    "--short=12",
                    "HEAD",
                ],
                Duration::from_secs(10),
            )
            .ok()?;
            out.success().then(|| out.stdout.trim().to_owned())
        }
        Source::Apt(package) => {
            // "sqlite3 (3.40.1-2+deb12u2) bookworm-security; urgency=medium"
            let changelog = fs_err::read_to_string(dir.join("debian/changelog")).ok()?;
            let first = changelog.lines().next()?;
            let version = first.split_once('(')?.1.split_once(')')?.0;
            Some(format!("{package} {version}"))
        }
        Source::Url { sha256, .. } => Some(format!("sha256:{}", &sha256[..12.min(sha256.len())])),
        Source::Crate { version, .. } => Some(crates_io::revision(version, dir)),
    }
}

/// A source in a few words, with its revision where known: `git URL @ REV
/// (commit)`, `apt PACKAGE (version)`, `path DIR (commit)`, `crate NAME
/// VERSION (VERSION sha256:…)`.
pub fn describe(source: &Source, revision: Option<&str>) -> String {
    let what = match source {
        Source::Path(p) => format!("path {}", p.display()),
        Source::Apt(p) => format!("apt {p}"),
        Source::Git { url, rev } => format!("git {url} @ {}", rev.as_deref().unwrap_or("HEAD")),
        Source::Url { url, .. } => format!("url {url}"),
        Source::Crate { name, version } => format!("crate {name} {version}"),
    };
    match revision {
        Some(r) => format!("{what} ({r})"),
        None => what,
    }
}

/// A stable directory name for a source.
fn slug(source: &Source) -> String {
    let text = match source {
        Source::Path(p) => p.display().to_string(),
        Source::Apt(p) => format!("apt-{p}"),
        Source::Git { url, rev } => format!("git-{url}-{}", rev.as_deref().unwrap_or("HEAD")),
        Source::Url { sha256, .. } => format!("url-{}", &sha256[..16.min(sha256.len())]),
        Source::Crate { name, version } => format!("crate-{name}-{version}"),
    };
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn fetch_apt(package: &str, dest: &Path) -> Result<()> {
    tools::ensure(&[tools::DPKG_SOURCE])?;
    let staging = dest.with_extension("download");
    if staging.exists() {
        fs_err::remove_dir_all(&staging)?;
    }
    fs_err::create_dir_all(&staging)?;
    let mut out = apt_source(package, &staging)?;
    if !out.success() && out.stderr.contains("deb-src") {
        enable_deb_src()?;
        out = apt_source(package, &staging)?;
    }
    if !out.success() {
        bail!(
            "`apt-get source {package}` failed:\n{}\nhint: {}",
            quote_output(&out.stderr),
            apt_hint(package)
        );
    }
    let unpacked = fs_err::read_dir(&staging)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .with_context(|| {
            format!(
                "`apt-get source {package}` unpacked no directory in {}",
                staging.display()
            )
        })?;
    fs_err::rename(&unpacked, dest)?;
    fs_err::remove_dir_all(&staging)?;
    Ok(())
}

/// What to do when `apt-get source` failed: the versions apt knows of the
/// package, and how to pin one (a mirror may lack the candidate's source,
/// e.g. a 404 for the security pocket's).
fn apt_hint(package: &str) -> String {
    let name = package.split_once('=').map_or(package, |(n, _)| n);
    let versions = apt_source_versions(name);
    if versions.is_empty() {
        return format!(
            "check the package name with `apt-cache showsrc {name}` (run `apt-get update` first)"
        );
    }
    format!(
        "apt knows these versions of the source package `{name}`: {}; pin one that the mirror has with source = {{ apt = \"{name}={}\" }} (apt's own NAME=VERSION syntax)",
        versions.join(", "),
        // The newest may be the one whose source the mirror lacks.
        versions.get(1).unwrap_or(&versions[0])
    )
}

/// The source versions `apt-cache showsrc NAME` lists, newest first as apt
/// prints them, without duplicates.
fn apt_source_versions(name: &str) -> Vec<String> {
    let out = capture("apt-cache", &["showsrc", name], Duration::from_mins(1));
    let Ok(out) = out else { return Vec::new() };
    parse_showsrc_versions(&out.stdout)
}

fn parse_showsrc_versions(text: &str) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Version: ") {
            let v = v.trim().to_owned();
            if !versions.contains(&v) {
                versions.push(v);
            }
        }
    }
    versions
}

fn apt_source(package: &str, dir: &Path) -> Result<crate::process::Captured> {
    let mut command = std::process::Command::new("apt-get");
    command.args(["source", "--yes", package]).current_dir(dir);
    capture_command(&mut command, FETCH_TIMEOUT).context("running apt-get source")
}

/// Add a deb-src entry beside the system's `deb` entries (whatever apt
/// layout this machine has: see [`apt_sources`]), then `apt-get update`.
fn enable_deb_src() -> Result<()> {
    use apt_sources::{AptSources, DebSrc, DEB_SRC_FILE};
    let text = match AptSources::read(Path::new("/")).deb_src() {
        // apt said it lacks one; a present entry may be for another suite.
        DebSrc::Present => bail!(
            "apt has a deb-src entry, but `apt-get source` still asks for one\nhint: check that the deb-src entries name the same suites as the deb ones (`apt-get update` first)"
        ),
        DebSrc::NoUsableEntry(lines) => bail!(
            "apt has no deb-src entry, and no deb entry (other than cdrom: or file:) to make one from\nhint: add these lines to {DEB_SRC_FILE} (a deb822 entry for this distribution), run `apt-get update`, then run again:\n{lines}"
        ),
        DebSrc::Add(text) => text,
    };
    if !tools::is_root() {
        bail!(
            "apt has no deb-src entry, so `apt-get source` cannot fetch source packages\nhint: add one and refresh, then run again:\nsudo tee {DEB_SRC_FILE} <<'EOF'\n{text}EOF\nsudo apt-get update"
        );
    }
    crate::progress::info(format_args!(
        "adding deb-src entry {DEB_SRC_FILE} and running apt-get update"
    ));
    fs_err::write(DEB_SRC_FILE, text)?;
    let update = capture("apt-get", &["update"], FETCH_TIMEOUT)?;
    if !update.success() {
        bail!(
            "apt-get update failed after adding {DEB_SRC_FILE}:\n{}\nhint: fix or remove {DEB_SRC_FILE}",
            quote_output(&update.stderr)
        );
    }
    Ok(())
}

/// An https fetch needs the CA bundle: git and libcurl only recommend it,
/// so a minimal root has `curl` and no certificates (curl: (77) error
/// setting certificate file).
fn ensure_ca_certificates(url: &str) -> Result<()> {
    if url.starts_with("https://") {
        tools::ensure_packages(&[tools::CA_CERTIFICATES.to_owned()])?;
    }
    Ok(())
}

fn fetch_git(url: &str, rev: Option<&str>, dest: &Path) -> Result<()> {
    tools::ensure(&[tools::GIT])?;
    ensure_ca_certificates(url)?;
    let dest_text = dest.to_string_lossy();
    run_checked(&tools::GIT, &["clone", "--quiet", url, &dest_text], None)?;
    if let Some(rev) = rev {
        run_checked(
            &tools::GIT,
            &[
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "--quiet",
                rev,
            ],
            Some(dest),
        )?;
    }
    Ok(())
}

fn fetch_url(url: &str, sha256: &str, dest: &Path) -> Result<()> {
    let archive = dest.with_extension("archive");
    download(url, &archive)?;
    check_sha256(&archive, sha256, |actual| {
        format!("{url} has sha256 {actual}, but the experiment expects {sha256}\nhint: if the new file is the one you want, update sha256 in the experiment file")
    })?;
    unpack(&archive, dest)?;
    fs_err::remove_file(&archive)?;
    Ok(())
}

/// Download `url` (https, http or file://) to the file `to` with curl.
fn download(url: &str, to: &Path) -> Result<()> {
    tools::ensure(&[tools::CURL])?;
    ensure_ca_certificates(url)?;
    run_checked(
        &tools::CURL,
        &["-fsSL", "--retry", "2", "-o", &to.to_string_lossy(), url],
        None,
    )
}

/// Check that `file`'s SHA-256 is `expected` (hex); otherwise fail with
/// `mismatch(actual)`, the message naming both.
fn check_sha256(file: &Path, expected: &str, mismatch: impl FnOnce(&str) -> String) -> Result<()> {
    let actual = crate::digest::sha256_file(file)?;
    if !actual.eq_ignore_ascii_case(expected) {
        bail!("{}", mismatch(&actual));
    }
    Ok(())
}

/// Unpack the tarball `archive` (compressed or not) into `dest`, leaving
/// out its top folder.
fn unpack(archive: &Path, dest: &Path) -> Result<()> {
    tools::ensure(&[tools::TAR])?;
    fs_err::create_dir_all(dest)?;
    run_checked(
        &tools::TAR,
        &[
            "xf",
            &archive.to_string_lossy(),
            "-C",
            &dest.to_string_lossy(),
            "--strip-components=1",
        ],
        None,
    )
}

fn run_checked(tool: &Tool, args: &[&str], dir: Option<&Path>) -> Result<()> {
    let mut command = std::process::Command::new(tool.command);
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let out = capture_command(&mut command, FETCH_TIMEOUT)?;
    if !out.success() {
        bail!(
            "`{} {}` failed:\n{}",
            tool.command,
            args.join(" "),
            quote_output(&out.stderr)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_source_rejects_a_wrong_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let tarball = dir.path().join("t.tar.gz");
        let content = dir.path().join("pkg");
        fs_err::create_dir_all(&content).unwrap();
        fs_err::write(content.join("hello.c"), "int main(void){return 0;}\n").unwrap();
        let status = std::process::Command::new("tar")
            .args([
                "czf",
                &tarball.to_string_lossy(),
                "-C",
                &dir.path().to_string_lossy(),
                "pkg",
            ])
            .status()
            .unwrap();
        assert!(status.success());
        let url = format!("file://{}", tarball.display());
        let good = crate::digest::sha256_file(&tarball).unwrap();
        let work = dir.path().join("work");
        let wrong = Source::Url {
            url: url.clone(),
            sha256: "0".repeat(64),
        };
        let err = fetch(&wrong, &work).unwrap_err().to_string();
        assert!(err.contains("expects 0000"), "{err}");
        let right = Source::Url { url, sha256: good };
        let tree = fetch(&right, &work).unwrap();
        assert!(tree.join("hello.c").exists());
        assert!(tree.join(MARKER).exists());
    }

    #[test]
    fn showsrc_versions_are_listed_once_each_in_apt_order() {
        let text = "Package: postgresql-15\nVersion: 15.18-0+deb12u1\nBinary: x\n\nPackage: postgresql-15\nVersion: 15.14-0+deb12u1\n\nPackage: postgresql-15\nVersion: 15.18-0+deb12u1\n";
        assert_eq!(
            parse_showsrc_versions(text),
            ["15.18-0+deb12u1", "15.14-0+deb12u1"]
        );
    }

    #[test]
    fn missing_path_says_so() {
        let err = fetch(
            &Source::Path(PathBuf::from("/no/such/dir")),
            Path::new("/tmp"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("is not a directory"));
    }
}
