//! Which LLVM tools this machine has or apt can bring, by version, never
//! from a list in the code: Debian and Ubuntu install each LLVM release
//! under `/usr/lib/llvm-N/` (its tools in `bin/`, BOLT's runtime in
//! `lib/`) with `TOOL-N` links in `/usr/bin`, and name its packages after
//! it (`llvm-N`, `bolt-N`, `libclang-rt-N-dev`). Where formats must match,
//! the tool is taken from the installed clang's release (clang 19's raw
//! profiles need llvm-profdata 19); elsewhere the newest release there is.

use std::path::{Path, PathBuf};
use std::time::Duration;

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
}
