//! The Rust toolchain a cargo target builds with, discovered, never
//! listed: `rustc -vV` says its release, its host and the LLVM release it
//! was built on. rustc's raw profiles are LLVM's, of that release, so
//! they are merged and read by `llvm-profdata` of the very same major
//! (rustup's `llvm-tools` where installed, else the distribution's
//! `llvm-N`); another release's is refused by name, since it cannot read
//! them ("unsupported instrumentation profile format version").

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Result};

use super::llvm;
use super::requirement::Requirement;

/// The Debian packages of a Rust toolchain, for hints: see [`packages`].
pub const PACKAGES: &str = "rustc cargo";

/// The oldest distribution rustc afterburner installs: 1.78 reads
/// `Cargo.lock` version 4, which cargo writes since 1.83 (crates published
/// since carry it). Debian 13's is 1.85; Debian 12's own is 1.63.
pub const DISTRIBUTION_MINIMUM: (u32, u32) = (1, 78);

/// The Debian packages that install a Rust toolchain here: the
/// distribution's `rustc` and `cargo` where apt's candidate is at least
/// [`DISTRIBUTION_MINIMUM`] (Debian 13's, on its own LLVM), else
/// `rustc-web` and `cargo-web` where apt offers them (Debian 12's current
/// release), else `rustc` and `cargo` all the same. rustup's toolchain,
/// where installed, is found first on the PATH and needs none.
pub fn packages() -> Vec<String> {
    let policy = crate::process::capture("apt-cache", &["policy", "rustc"], Duration::from_mins(1));
    let recent = policy
        .ok()
        .and_then(|out| candidate_release(&out.stdout))
        .is_some_and(|v| v >= DISTRIBUTION_MINIMUM);
    let offered = |name: &str| {
        crate::process::capture("apt-cache", &["pkgnames", name], Duration::from_mins(1))
            .is_ok_and(|out| out.stdout.lines().any(|l| l.trim() == name))
    };
    let web = ["rustc-web", "cargo-web"];
    let chosen: &[&str] = if !recent && web.iter().all(|p| offered(p)) {
        &web
    } else {
        &["rustc", "cargo"]
    };
    chosen.iter().map(|p| (*p).to_owned()).collect()
}

/// The release of `Candidate: 1.85.0+dfsg3-1` in `apt-cache policy rustc`.
fn candidate_release(policy: &str) -> Option<(u32, u32)> {
    let candidate = policy
        .lines()
        .find_map(|l| l.trim().strip_prefix("Candidate:"))?
        .trim();
    let version = candidate.split_once(':').map_or(candidate, |(_, v)| v);
    let mut parts = version.split(['.', '+', '-', '~']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// What `rustc -vV` says of the Rust toolchain on the PATH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rustc {
    /// `1.95.0`.
    pub release: String,
    /// `x86_64-unknown-linux-gnu`: the target a cargo target is built
    /// for, so that RUSTFLAGS reach its crates and not the build scripts
    /// and procedural macros cargo runs on the host (an instrumented
    /// build script would write profiles while building).
    pub host: String,
    /// The major release of LLVM it was built with (`LLVM version: 22.1.2`).
    pub llvm_major: Option<u32>,
}

/// Parse `rustc -vV`.
pub fn parse_verbose_version(text: &str) -> Option<Rustc> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_owned())
    };
    Some(Rustc {
        release: field("release")?,
        host: field("host")?,
        llvm_major: field("LLVM version").and_then(|v| v.split('.').next()?.parse().ok()),
    })
}

/// The Rust toolchain on the PATH; `None` when there is none. Only a
/// toolchain found is kept: one installed later (by `doctor --fix`) is
/// probed again.
pub fn probe() -> Option<Rustc> {
    static FOUND: OnceLock<Rustc> = OnceLock::new();
    if let Some(found) = FOUND.get() {
        return Some(found.clone());
    }
    let out = crate::process::capture("rustc", &["-vV"], Duration::from_secs(30)).ok()?;
    let found = out
        .success()
        .then(|| parse_verbose_version(&out.stdout))
        .flatten()?;
    Some(FOUND.get_or_init(|| found).clone())
}

/// `llvm-profdata` in rustc's own sysroot (rustup's `llvm-tools`
/// component), where installed.
fn sysroot_profdata(host: &str) -> Option<PathBuf> {
    let out =
        crate::process::capture("rustc", &["--print", "sysroot"], Duration::from_secs(30)).ok()?;
    let path = Path::new(out.stdout.trim())
        .join("lib/rustlib")
        .join(host)
        .join("bin/llvm-profdata");
    path.is_file().then_some(path)
}

/// Where an `llvm-profdata` may come from, and its LLVM release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    /// Its release; `None` where it does not say.
    pub major: Option<u32>,
    pub why: String,
}

/// Choose the `llvm-profdata` that reads rustc's profiles: rustc's own
/// (sysroot) first, then the release-`major` one of the distribution.
/// Another release's is refused, naming it and what to install.
pub fn choose_profdata(
    rustc: &Rustc,
    candidates: &[Candidate],
    package: Option<&str>,
) -> Result<Candidate, String> {
    let Some(major) = rustc.llvm_major else {
        return candidates.first().cloned().ok_or_else(|| {
            format!(
                "no llvm-profdata here, and rustc {} does not say its LLVM release",
                rustc.release
            )
        });
    };
    if let Some(found) = candidates.iter().find(|c| c.major == Some(major)) {
        return Ok(found.clone());
    }
    let install = package.map_or_else(
        || format!("apt offers no llvm-{major} here: install rustup's `llvm-tools` component (`rustup component add llvm-tools`)"),
        |p| format!("install it with `apt-get install -y {p}`, or rustup's `llvm-tools` component"),
    );
    let others: Vec<String> = candidates
        .iter()
        .map(|c| {
            let release = c
                .major
                .map_or_else(|| "an unknown release".to_owned(), |m| format!("LLVM {m}"));
            format!("{} ({release})", c.path.display())
        })
        .collect();
    let here = if others.is_empty() {
        String::new()
    } else {
        format!(
            "; {} cannot read them (each LLVM release writes raw profiles of its own version)",
            others.join(", ")
        )
    };
    Err(format!(
        "rustc {} writes LLVM {major}'s profiles, which only llvm-profdata of LLVM {major} reads{here}\nhint: {install}",
        rustc.release
    ))
}

/// The release of an `llvm-profdata` (`LLVM version 14.0.6`).
fn profdata_major(tool: &Path) -> Option<u32> {
    let out = crate::process::capture(
        &tool.to_string_lossy(),
        &["--version"],
        Duration::from_secs(30),
    )
    .ok()?;
    let text = format!("{}{}", out.stdout, out.stderr);
    let at = text.find("LLVM version ")? + "LLVM version ".len();
    text[at..].split('.').next()?.trim().parse().ok()
}

/// Every `llvm-profdata` here, rustc's sysroot first.
fn candidates(rustc: &Rustc) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(path) = sysroot_profdata(&rustc.host) {
        out.push(Candidate {
            major: profdata_major(&path),
            path,
            why: "rustup's llvm-tools, of rustc's own LLVM".to_owned(),
        });
    }
    for major in llvm::installed_majors().into_iter().rev() {
        if let Some(path) = llvm::tool_of("llvm-profdata", major) {
            out.push(Candidate {
                path,
                major: Some(major),
                why: format!("LLVM {major} (llvm-{major}), rustc's LLVM release"),
            });
        }
    }
    if super::tools::is_installed("llvm-profdata") {
        let path = PathBuf::from("llvm-profdata");
        out.push(Candidate {
            major: profdata_major(&path),
            path,
            why: "`llvm-profdata` on the PATH".to_owned(),
        });
    }
    out
}

/// The `llvm-profdata` package of rustc's LLVM release, where apt offers
/// it (`llvm-22`).
pub fn profdata_package(rustc: &Rustc) -> Option<String> {
    let major = rustc.llvm_major?;
    llvm::apt_majors("llvm-")
        .contains(&major)
        .then(|| format!("llvm-{major}"))
}

/// The `llvm-profdata` that merges and reads rustc's profiles, and why.
pub fn llvm_profdata() -> Result<Candidate> {
    let Some(rustc) = probe() else {
        bail!(
            "rustc is missing, so a cargo target cannot be built\nhint: install Rust with rustup (https://rustup.rs) or `apt-get install -y {PACKAGES}`"
        );
    };
    let found = candidates(&rustc);
    let chosen = choose_profdata(&rustc, &found, None);
    match chosen {
        Ok(c) => Ok(c),
        // Asking apt only when it is needed, for the hint.
        Err(_) => choose_profdata(&rustc, &found, profdata_package(&rustc).as_deref())
            .map_err(anyhow::Error::msg),
    }
}

/// What rustc's profiles need, for `doctor` and a run: llvm-profdata of
/// rustc's LLVM release.
pub fn profdata_requirement() -> Requirement {
    let rustc = probe();
    let chosen = llvm_profdata();
    let major = rustc.as_ref().and_then(|r| r.llvm_major);
    Requirement {
        need: match (&chosen, major) {
            (Ok(c), _) => format!(
                "llvm-profdata of rustc's LLVM ({}: {})",
                c.path.display(),
                c.why
            ),
            (Err(_), Some(m)) => format!("llvm-profdata of rustc's LLVM {m}"),
            (Err(_), None) => "llvm-profdata of rustc's LLVM (install rustc first)".to_owned(),
        },
        present: chosen.is_ok(),
        packages: rustc
            .as_ref()
            .and_then(profdata_package)
            .into_iter()
            .collect(),
        note: chosen.err().map(|e| format!("{e:#}")),
        optional: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VV: &str = "rustc 1.95.0 (59807616e 2026-04-14)\nbinary: rustc\ncommit-hash: 59807616e1fa2540724bfbac14d7976d7e4a3860\ncommit-date: 2026-04-14\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\nLLVM version: 22.1.2\n";

    fn rustc(major: Option<u32>) -> Rustc {
        Rustc {
            release: "1.95.0".to_owned(),
            host: "x86_64-unknown-linux-gnu".to_owned(),
            llvm_major: major,
        }
    }

    fn candidate(path: &str, major: Option<u32>) -> Candidate {
        Candidate {
            path: PathBuf::from(path),
            major,
            why: String::new(),
        }
    }

    #[test]
    fn reads_the_release_host_and_llvm_of_rustc() {
        assert_eq!(parse_verbose_version(VV), Some(rustc(Some(22))));
        // Debian 13's rustc 1.85 on its LLVM 19.
        let debian = VV
            .replace("1.95.0", "1.85.0")
            .replace("LLVM version: 22.1.2", "LLVM version: 19.1.7");
        assert_eq!(
            parse_verbose_version(&debian).and_then(|r| r.llvm_major),
            Some(19)
        );
        assert_eq!(parse_verbose_version("rustc 1.95.0\n"), None);
    }

    #[test]
    fn the_distributions_rustc_is_read_from_apts_candidate() {
        let trixie = "rustc:\n  Installed: (none)\n  Candidate: 1.85.0+dfsg3-1\n";
        assert_eq!(candidate_release(trixie), Some((1, 85)));
        let bookworm = "rustc:\n  Candidate: 1.63.0+dfsg1-2\n";
        assert_eq!(candidate_release(bookworm), Some((1, 63)));
        assert!(candidate_release(bookworm).unwrap() < DISTRIBUTION_MINIMUM);
        assert_eq!(candidate_release("rustc:\n  Candidate: (none)\n"), None);
    }

    #[test]
    fn the_llvm_profdata_of_rustcs_release_is_chosen() {
        let found = [
            candidate("/usr/lib/llvm-22/bin/llvm-profdata", Some(22)),
            candidate("/usr/lib/llvm-14/bin/llvm-profdata", Some(14)),
        ];
        assert_eq!(
            choose_profdata(&rustc(Some(22)), &found, None).map(|c| c.path),
            Ok(PathBuf::from("/usr/lib/llvm-22/bin/llvm-profdata"))
        );
        assert_eq!(
            choose_profdata(&rustc(Some(14)), &found, None).map(|c| c.major),
            Ok(Some(14))
        );
    }

    #[test]
    fn another_releases_llvm_profdata_is_refused_by_name() {
        let found = [candidate("/usr/lib/llvm-14/bin/llvm-profdata", Some(14))];
        let err = choose_profdata(&rustc(Some(22)), &found, Some("llvm-22")).unwrap_err();
        assert!(err.contains("only llvm-profdata of LLVM 22 reads"), "{err}");
        assert!(
            err.contains("/usr/lib/llvm-14/bin/llvm-profdata (LLVM 14) cannot read them"),
            "{err}"
        );
        assert!(err.contains("apt-get install -y llvm-22"), "{err}");
        let none = choose_profdata(&rustc(Some(22)), &[], None).unwrap_err();
        assert!(none.contains("rustup component add llvm-tools"), "{none}");
    }
}
