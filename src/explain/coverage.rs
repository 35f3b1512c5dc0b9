//! How much of the code training ran: of the functions a variant's PGO
//! profile has (every function the instrumented build compiled), those
//! whose counters training moved. The profile is the one the variant's
//! final build read, found in its flags:
//! - clang (`-fprofile-use=FILE` or `-fprofile-instr-use=FILE`):
//!   `llvm-profdata show FILE` gives the total, `show --covered FILE` lists
//!   the functions with counts (context-sensitive records left out);
//! - gcc (`-fprofile-use` with `-fprofile-dir=DIR`): `gcov-dump -l` on each
//!   `.gcda` file of DIR; a function counts as run when any of its counters
//!   is not zero.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::process::{capture, quote_output};

/// Functions the training ran, of those in the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// The tool that read the profile.
    pub tool: String,
    /// Functions with counts.
    pub covered: u64,
    /// Functions in the profile.
    pub total: u64,
}

const TIMEOUT: Duration = Duration::from_mins(2);

/// The profile a final build read, from its compiler flags.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Used {
    /// clang's merged `.profdata`.
    Clang(PathBuf),
    /// gcc's directory of `.gcda` files.
    Gcc(PathBuf),
}

fn used(cflags: &str) -> Option<Used> {
    let words: Vec<&str> = cflags.split_whitespace().collect();
    let clang = words.iter().find_map(|w| {
        w.strip_prefix("-fprofile-use=")
            .or_else(|| w.strip_prefix("-fprofile-instr-use="))
    });
    if let Some(file) = clang {
        return Some(Used::Clang(PathBuf::from(file)));
    }
    if words.contains(&"-fprofile-use") {
        let dir = words
            .iter()
            .find_map(|w| w.strip_prefix("-fprofile-dir="))?;
        return Some(Used::Gcc(PathBuf::from(dir)));
    }
    None
}

/// The coverage of the profile a build with `cflags` read; `None` when it
/// read no instrumented profile (no PGO, or sampled AutoFDO).
pub fn read(cflags: &str) -> Result<Option<Coverage>> {
    match used(cflags) {
        None => Ok(None),
        Some(Used::Clang(file)) => clang(&file).map(Some),
        Some(Used::Gcc(dir)) => gcc(&dir).map(Some),
    }
}

fn clang(file: &Path) -> Result<Coverage> {
    if !file.is_file() {
        bail!(
            "the profile {} the build read is gone\nhint: `afterburner train` makes it again",
            file.display()
        );
    }
    let tool = crate::toolchain::find_llvm_profdata()?;
    let path = file.to_string_lossy();
    let show = |extra: &[&str]| -> Result<String> {
        let mut args = vec!["show"];
        args.extend_from_slice(extra);
        args.push(&path);
        let out = capture(&tool, &args, TIMEOUT).with_context(|| format!("running {tool}"))?;
        if !out.success() {
            bail!(
                "`{tool} show` could not read {}:\n{}",
                file.display(),
                quote_output(&out.stderr)
            );
        }
        Ok(out.stdout)
    };
    let total = show(&[])?
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Total functions:")?
                .trim()
                .parse()
                .ok()
        })
        .with_context(|| {
            format!(
                "`{tool} show {}` printed no \"Total functions:\" line",
                file.display()
            )
        })?;
    let covered = covered_names(&show(&["--covered"])?);
    Ok(Coverage {
        tool,
        covered,
        total,
    })
}

/// Functions `llvm-profdata show --covered` listed, one a line.
fn covered_names(listing: &str) -> u64 {
    listing.lines().filter(|l| !l.trim().is_empty()).count() as u64
}

fn gcc(dir: &Path) -> Result<Coverage> {
    let raw = dir.join(crate::toolchain::RAW_DIR);
    let files: Vec<PathBuf> = crate::toolchain::find_files(dir, "gcda")
        .into_iter()
        .filter(|f| !f.starts_with(&raw))
        .collect();
    if files.is_empty() {
        bail!(
            "no .gcda file in {}, the profile the build read\nhint: `afterburner train` makes it again",
            dir.display()
        );
    }
    let mut coverage = Coverage {
        tool: "gcov-dump".to_owned(),
        covered: 0,
        total: 0,
    };
    for file in files {
        let path = file.to_string_lossy();
        let out = capture("gcov-dump", &["-l", &path], TIMEOUT)
            .context("running gcov-dump (it comes with gcc)")?;
        if !out.success() {
            bail!(
                "gcov-dump could not read {}:\n{}",
                file.display(),
                quote_output(&out.stderr)
            );
        }
        let (covered, total) = gcda_functions(&out.stdout);
        coverage.covered += covered;
        coverage.total += total;
    }
    Ok(coverage)
}

/// Functions run and functions in all, from `gcov-dump -l`'s listing: a
/// `FUNCTION ident=…` record opens a function, and the value lines of its
/// counters (`   0: 1 1 0 999`) say whether it ran.
fn gcda_functions(listing: &str) -> (u64, u64) {
    let mut total = 0;
    let mut covered = 0;
    let mut this_ran = false;
    for line in listing.lines() {
        if line.contains(":FUNCTION ident=") {
            covered += u64::from(this_ran && total > 0);
            total += 1;
            this_ran = false;
        } else if total > 0 && !line.contains("COUNTERS") {
            // "<file>:   index: v v v"; the file's name may hold colons.
            let mut fields = line.rsplitn(2, ": ");
            let values = fields.next().unwrap_or("");
            let is_values = fields
                .next()
                .and_then(|head| head.rsplit(':').next())
                .is_some_and(|index| index.trim().parse::<u64>().is_ok());
            if is_values
                && values
                    .split_whitespace()
                    .any(|v| v.parse::<u64>().is_ok_and(|n| n > 0))
            {
                this_ran = true;
            }
        }
    }
    covered += u64::from(this_ran);
    (covered, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_is_found_in_the_flags() {
        assert_eq!(
            used("-O2 -fprofile-use=/p/merged-x.profdata -Wno-x"),
            Some(Used::Clang("/p/merged-x.profdata".into()))
        );
        assert_eq!(
            used("-O2 -fprofile-instr-use=/p/m.profdata"),
            Some(Used::Clang("/p/m.profdata".into()))
        );
        assert_eq!(
            used("-O2 -fprofile-use -fprofile-dir=/w/prof -fprofile-prefix-path=/w/b"),
            Some(Used::Gcc("/w/prof".into()))
        );
        assert_eq!(used("-O2 -flto"), None);
        assert_eq!(used("-fprofile-sample-use=/p/a.afdo"), None);
    }

    /// A real program, built instrumented by gcc and clang, run once with
    /// an argument that leaves one of its functions unrun.
    fn build_and_train(dir: &Path, compiler: &str) -> Option<String> {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hotpath/hotpath.c");
        let binary = dir.join("hotpath");
        let profile = dir.join("profile");
        let generate = match compiler {
            "gcc" => format!("-fprofile-dir={}", profile.display()),
            _ => format!("-fprofile-generate={}", profile.join("raw").display()),
        };
        let mut args = vec!["-O2", "-fprofile-generate"];
        if compiler == "clang" {
            args.pop();
        }
        let out = std::process::Command::new(compiler)
            .args(&args)
            .arg(&generate)
            .arg(&source)
            .arg("-o")
            .arg(&binary)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let ran = std::process::Command::new(&binary)
            .arg("1000")
            .output()
            .ok()?;
        assert!(ran.status.success());
        if compiler == "gcc" {
            return Some(format!(
                "-O2 -fprofile-use -fprofile-dir={}",
                profile.display()
            ));
        }
        let tool = crate::toolchain::find_llvm_profdata().ok()?;
        let merged = profile.join("merged-hotpath.profdata");
        let raws: Vec<PathBuf> = crate::toolchain::find_files(&profile, "profraw");
        let status = std::process::Command::new(tool)
            .arg("merge")
            .arg("-o")
            .arg(&merged)
            .args(&raws)
            .status()
            .ok()?;
        assert!(status.success());
        Some(format!("-O2 -fprofile-use={}", merged.display()))
    }

    #[test]
    fn gcc_and_clang_profiles_of_a_real_run() {
        for compiler in ["gcc", "clang"] {
            let dir = tempfile::tempdir().unwrap();
            let Some(cflags) = build_and_train(dir.path(), compiler) else {
                eprintln!("{compiler} (or llvm-profdata) is missing here: not checked");
                continue;
            };
            let coverage = read(&cflags).unwrap().unwrap();
            // hotpath has main, mix, fold and rare; this run calls rare
            // and mix, and each compiler keeps its own count of the rest:
            // some but not all ran.
            assert!(coverage.total >= 3, "{compiler}: {coverage:?}");
            assert!(
                coverage.covered >= 2 && coverage.covered < coverage.total,
                "{compiler}: {coverage:?}"
            );
        }
    }

    #[test]
    fn a_profile_that_is_gone_is_named() {
        let err = read("-fprofile-use -fprofile-dir=/nonexistent/prof")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/nonexistent/prof") && err.contains("afterburner train"),
            "{err}"
        );
        let err = read("-fprofile-use=/nonexistent/m.profdata")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/m.profdata"), "{err}");
    }
}
