//! External tools afterburner runs: find them, and install the missing ones
//! with apt-get when running as root, or say the exact command otherwise.

use std::time::Duration;

use anyhow::{bail, Context, Result};

/// A command-line tool and the Debian package that provides it.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    pub command: &'static str,
    pub package: &'static str,
}

pub const MAKE: Tool = Tool {
    command: "make",
    package: "make",
};
pub const GCC: Tool = Tool {
    command: "gcc",
    package: "gcc",
};
pub const GXX: Tool = Tool {
    command: "g++",
    package: "g++",
};
pub const LLVM_PROFDATA: Tool = Tool {
    command: "llvm-profdata",
    package: "llvm",
};
pub const GO: Tool = Tool {
    command: "go",
    package: "golang-go",
};
pub const PERF: Tool = Tool {
    command: "perf",
    package: "linux-perf",
};
pub const CREATE_LLVM_PROF: Tool = Tool {
    command: "create_llvm_prof",
    package: "autofdo",
};
pub const CLANG: Tool = Tool {
    command: "clang",
    package: "clang",
};
pub const VALGRIND: Tool = Tool {
    command: "valgrind",
    package: "valgrind",
};
pub const DPKG_SOURCE: Tool = Tool {
    command: "dpkg-source",
    package: "dpkg-dev",
};
pub const GIT: Tool = Tool {
    command: "git",
    package: "git",
};
pub const CURL: Tool = Tool {
    command: "curl",
    package: "curl",
};
pub const TAR: Tool = Tool {
    command: "tar",
    package: "tar",
};

/// The Debian package of the CA bundle https fetches verify against.
pub const CA_CERTIFICATES: &str = "ca-certificates";

/// Whether `command` is on `PATH`.
pub fn is_installed(command: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        let candidate = dir.join(command);
        fs_err::metadata(&candidate).is_ok_and(|m| m.is_file())
    })
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Make sure every tool is present: install what is missing with apt-get as
/// root, else fail naming the command that would.
pub fn ensure(tools: &[Tool]) -> Result<()> {
    let missing: Vec<&Tool> = tools.iter().filter(|t| !is_installed(t.command)).collect();
    let what = missing
        .iter()
        .map(|t| t.command)
        .collect::<Vec<_>>()
        .join(", ");
    install_missing(
        &format!("missing tools: {what}"),
        missing.iter().map(|t| t.package).collect(),
    )
}

/// Make sure Debian packages a target's build needs are installed, the same way.
pub fn ensure_packages(packages: &[String]) -> Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .map(String::as_str)
        .filter(|p| !package_installed(p))
        .collect();
    install_missing(
        &format!("missing packages: {}", missing.join(", ")),
        missing,
    )
}

fn install_missing(what: &str, mut packages: Vec<&str>) -> Result<()> {
    packages.sort_unstable();
    packages.dedup();
    if packages.is_empty() {
        return Ok(());
    }
    let list = packages.join(" ");
    if !is_root() {
        bail!("{what}\nhint: install them with `sudo apt-get install -y {list}`");
    }
    crate::progress::info(format_args!("installing {list} with apt-get"));
    apt_install(&packages)
}

/// Whether dpkg lists `package` as installed.
pub fn package_installed(package: &str) -> bool {
    crate::process::capture(
        "dpkg-query",
        &["-W", "-f=${Status}", package],
        Duration::from_secs(30),
    )
    .is_ok_and(|out| out.success() && out.stdout.contains("install ok installed"))
}

/// `apt-get update`, as root: apt's lists, which a fresh root lacks, name
/// the packages (and their versions) the rest asks apt about.
pub fn apt_update() -> Result<()> {
    // Two runs (or tests) updating at once: the second waits for the
    // lists' lock (apt-get update has no lock timeout of its own).
    let mut update = crate::process::capture("apt-get", &["update"], APT_TIMEOUT)
        .context("running apt-get update")?;
    for _ in 0..60 {
        if update.success() || !update.stderr.contains("Could not get lock") {
            break;
        }
        std::thread::sleep(Duration::from_secs(5));
        update = crate::process::capture("apt-get", &["update"], APT_TIMEOUT)
            .context("running apt-get update")?;
    }
    if !update.success() {
        bail!(
            "apt-get update failed:\n{}",
            crate::process::quote_output(&update.stderr)
        );
    }
    Ok(())
}

const APT_TIMEOUT: Duration = Duration::from_mins(20);

/// Whether apt has no package lists yet (a fresh root, an image whose
/// lists were cleaned): nothing can be looked up in them.
pub fn apt_lists_empty() -> bool {
    fs_err::read_dir("/var/lib/apt/lists").map_or(true, |d| {
        !d.flatten()
            .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
    })
}

/// `packages` split into those apt can install here (a candidate version
/// in its lists) and those it cannot (unknown, or known with none).
pub fn apt_installable<'a>(packages: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    if packages.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut args = vec!["policy"];
    args.extend_from_slice(packages);
    let text = crate::process::capture("apt-cache", &args, Duration::from_mins(1))
        .map(|o| o.stdout)
        .unwrap_or_default();
    let with_candidate = candidates(&text);
    packages
        .iter()
        .partition(|p| with_candidate.iter().any(|c| c == *p))
}

/// The packages of `apt-cache policy` output that have a candidate:
/// `NAME:` at the left margin, then `  Candidate: VERSION` (not `(none)`).
fn candidates(policy: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut name: Option<&str> = None;
    for line in policy.lines() {
        if !line.starts_with(' ') {
            name = line.strip_suffix(':');
        } else if let (Some(n), Some(candidate)) = (name, line.trim().strip_prefix("Candidate:")) {
            if candidate.trim() != "(none)" {
                out.push(n.to_owned());
            }
        }
    }
    out
}

/// `apt-get install -y PACKAGES` (after an `apt-get update`), as root.
pub fn apt_install(packages: &[&str]) -> Result<()> {
    apt_update()?;
    apt_install_updated(packages)
}

/// `apt-get install -y PACKAGES`, as root, with apt's lists already fresh.
pub fn apt_install_updated(packages: &[&str]) -> Result<()> {
    let timeout = APT_TIMEOUT;
    // Two runs (or tests) installing at once: the second waits for dpkg's
    // lock instead of failing.
    let mut args = vec![
        "-o",
        "DPkg::Lock::Timeout=600",
        "install",
        "-y",
        "--no-install-recommends",
    ];
    args.extend_from_slice(packages);
    let mut command = std::process::Command::new("apt-get");
    command.args(&args).env("DEBIAN_FRONTEND", "noninteractive");
    let out = crate::process::capture_command(&mut command, timeout)
        .context("running apt-get install")?;
    if !out.success() {
        bail!(
            "`apt-get {}` failed:\n{}",
            args.join(" "),
            crate::process::quote_output(&out.stderr)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_apt_does_not_know_or_cannot_serve_has_no_candidate() {
        let policy = "clang:\n  Installed: (none)\n  Candidate: 1:19.0-63\n  Version table:\n     1:19.0-63 500\nbolt-16:\n  Installed: (none)\n  Candidate: (none)\n";
        assert_eq!(candidates(policy), vec!["clang"]);
        assert!(candidates("").is_empty());
    }

    #[test]
    fn finds_sh_and_not_nonsense() {
        assert!(is_installed("sh"));
        assert!(!is_installed("surely-not-a-command-afterburner"));
    }
}
