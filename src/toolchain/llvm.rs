//! Which LLVM tools this machine has or apt can bring, by version, never
//! from a list in the code: Debian and Ubuntu install each LLVM release
//! under `/usr/lib/llvm-N/` (its tools in `bin/`, BOLT's runtime in
//! `lib/`) with `TOOL-N` links in `/usr/bin`, and name its packages after
//! it (`llvm-N`, `bolt-N`, `libclang-rt-N-dev`). Where formats must match,
//! the tool is taken from the installed clang's release (clang 19's raw
//! profiles need llvm-profdata 19); elsewhere the newest release there is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

use super::requirement::Requirement;
use super::Compiler;

/// Where Debian and Ubuntu install each LLVM release.
const LLVM_ROOT: &str = "/usr/lib";

/// The LLVM releases installed under `/usr/lib/llvm-N`, oldest first.
pub fn installed_majors() -> Vec<u32> {
    majors_in(Path::new(LLVM_ROOT))
}

fn majors_in(root: &Path) -> Vec<u32> {
    let mut majors: Vec<u32> = fs_err::read_dir(root)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("llvm-")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    majors.sort_unstable();
    majors.dedup();
    majors
}

/// `/usr/lib/llvm-N/bin/TOOL` of release `major`, when installed.
pub fn tool_of(name: &str, major: u32) -> Option<PathBuf> {
    let path = Path::new(LLVM_ROOT)
        .join(format!("llvm-{major}"))
        .join("bin")
        .join(name);
    path.is_file().then_some(path)
}

/// The release a tool is taken from: clang's own where it has the tool,
/// else the newest that has it.
pub fn preferred_major(name: &str, clang: Option<u32>) -> Option<u32> {
    let has = |m: &u32| tool_of(name, *m).is_some();
    clang
        .filter(has)
        .or_else(|| installed_majors().into_iter().rev().find(has))
}

/// A found tool and why it was chosen, for `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub path: PathBuf,
    pub major: Option<u32>,
    pub why: String,
}

/// Find `name` from LLVM release `clang` first (formats that must match
/// clang's), else the newest installed release, else an unversioned
/// `name` on the PATH (a build of one's own).
pub fn find(name: &str, clang: Option<u32>) -> Option<Chosen> {
    if let Some(major) = preferred_major(name, clang) {
        let why = if Some(major) == clang {
            format!("LLVM {major}, the installed clang's")
        } else {
            format!("LLVM {major}, the newest installed release with {name}")
        };
        return Some(Chosen {
            path: tool_of(name, major)?,
            major: Some(major),
            why,
        });
    }
    super::tools::is_installed(name).then(|| Chosen {
        path: PathBuf::from(name),
        major: None,
        why: format!("`{name}` on the PATH"),
    })
}

/// The releases apt offers a package family of (`bolt-` → `bolt-17`,
/// `bolt-19`, …), newest last: `apt-cache pkgnames PREFIX`.
pub fn apt_majors(prefix: &str) -> Vec<u32> {
    let Ok(out) =
        crate::process::capture("apt-cache", &["pkgnames", prefix], Duration::from_mins(1))
    else {
        return Vec::new();
    };
    majors_of_names(&out.stdout, prefix)
}

/// The `N` of each `PREFIXN` line (another suffix, `bolt-19-dbgsym`, is
/// not the family's).
fn majors_of_names(text: &str, prefix: &str) -> Vec<u32> {
    let mut majors: Vec<u32> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix(prefix)?.parse().ok())
        .collect();
    majors.sort_unstable();
    majors.dedup();
    majors
}

/// The package of family `prefix` to install: the release of clang (or
/// apt's clang) where apt offers it, else the newest apt offers; `None`
/// where apt offers none (the reason is the caller's to say).
pub fn package_to_install(prefix: &str, clang: Option<u32>) -> Option<String> {
    let offered = apt_majors(prefix);
    choose_release(&offered, clang).map(|m| format!("{prefix}{m}"))
}

fn choose_release(offered: &[u32], clang: Option<u32>) -> Option<u32> {
    clang
        .filter(|m| offered.contains(m))
        .or_else(|| offered.last().copied())
}

/// `llvm-profdata` of the installed clang's own LLVM release (raw profile
/// formats change between releases): `/usr/lib/llvm-N/bin/llvm-profdata`
/// or `llvm-profdata-N`; where clang's release is unknown (a clang of
/// one's own), the unversioned one.
pub fn find_llvm_profdata() -> Result<String> {
    let major = Compiler::Clang.version().and_then(|v| clang_major(&v));
    if let Some(m) = major {
        if let Some(path) = tool_of("llvm-profdata", m) {
            return Ok(path.to_string_lossy().into_owned());
        }
        let versioned = format!("llvm-profdata-{m}");
        if super::tools::is_installed(&versioned) {
            return Ok(versioned);
        }
    }
    if major.is_none() && super::tools::is_installed("llvm-profdata") {
        return Ok("llvm-profdata".to_owned());
    }
    let package = llvm_package();
    bail!("llvm-profdata{} is missing, so clang's profiles cannot be merged\nhint: install it with `apt-get install -y {package}`", major.map(|m| format!(" {m} (clang {m}'s release)")).unwrap_or_default())
}

/// The package of the LLVM tools of clang's release (`llvm-N`), or of
/// apt's default (`llvm`) where clang's release is unknown.
pub fn llvm_package() -> String {
    clang_major_installed_or_candidate().map_or("llvm".to_owned(), |m| format!("llvm-{m}"))
}

/// The major version in `clang --version`'s first line.
pub fn clang_major(version_line: &str) -> Option<u32> {
    let at = version_line.find("version ")? + "version ".len();
    version_line[at..].split('.').next()?.trim().parse().ok()
}

/// The major version of the installed clang, or where clang is missing,
/// of the clang `apt-get install clang` would bring (`apt-cache policy`'s
/// candidate), so the profile runtime's package (`libclang-rt-N-dev`) goes
/// into the same apt-get call as clang itself.
pub fn clang_major_installed_or_candidate() -> Option<u32> {
    if let Some(line) = Compiler::Clang.version() {
        return clang_major(&line);
    }
    let out = crate::process::capture(
        "apt-cache",
        &["policy", "clang"],
        std::time::Duration::from_secs(30),
    )
    .ok()?;
    candidate_major(&out.stdout)
}

/// The major version of `Candidate: 1:14.0-55.7~deb12u1` in `apt-cache
/// policy` output.
fn candidate_major(policy: &str) -> Option<u32> {
    let candidate = policy
        .lines()
        .find_map(|l| l.trim().strip_prefix("Candidate:"))?
        .trim();
    let version = candidate.split_once(':').map_or(candidate, |(_, v)| v);
    version.split(['.', '-', '~']).next()?.parse().ok()
}

/// `llvm-profdata` of the installed clang's release, which clang's
/// profiles are merged with.
pub fn llvm_profdata_requirement() -> Requirement {
    let package = llvm_package();
    Requirement {
        need: format!("llvm-profdata of clang's release ({package})"),
        present: find_llvm_profdata().is_ok(),
        packages: vec![package],
        note: None,
        optional: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apt_names_give_the_releases_of_one_family_only() {
        let text = "bolt-19\nbolt-17\nbolt-19-dbgsym\nbolt-22\nbolt-18\n";
        assert_eq!(majors_of_names(text, "bolt-"), vec![17, 18, 19, 22]);
        assert!(majors_of_names("bolt\n", "bolt-").is_empty());
    }

    #[test]
    fn the_release_of_clang_is_preferred_else_the_newest() {
        assert_eq!(choose_release(&[17, 18, 19, 22], Some(19)), Some(19));
        assert_eq!(choose_release(&[16], Some(14)), Some(16));
        assert_eq!(choose_release(&[], Some(14)), None);
        assert_eq!(choose_release(&[17, 19], None), Some(19));
    }

    #[test]
    fn installed_releases_are_read_from_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["llvm-19", "llvm-14", "llvm-x", "gcc"] {
            fs_err::create_dir(dir.path().join(d)).unwrap();
        }
        assert_eq!(majors_in(dir.path()), vec![14, 19]);
    }

    #[test]
    fn reads_the_major_version_apt_would_install() {
        let policy =
            "clang:\n  Installed: (none)\n  Candidate: 1:14.0-55.7~deb12u1\n  Version table:\n";
        assert_eq!(candidate_major(policy), Some(14));
        assert_eq!(
            candidate_major("clang:\n  Candidate: 1:18.0-59~exp2\n"),
            Some(18)
        );
        assert_eq!(candidate_major("clang:\n  Candidate: (none)\n"), None);
    }

    #[test]
    fn parses_clang_major() {
        assert_eq!(clang_major("Debian clang version 14.0.6"), Some(14));
        assert_eq!(
            clang_major("clang version 18.1.3 (Fedora 18.1.3-1)"),
            Some(18)
        );
        assert_eq!(clang_major("gcc (Debian 12.2.0) 12.2.0"), None);
    }
}
