//! What the compiler said about a profile that does not fit the source it
//! is applied to: the warnings a final feedback-directed build writes to
//! its log, counted per function. A stale profile (trained on another
//! revision, `profile_from`) shows here how far the code moved.
//!
//! gcc (`-fprofile-use`): `-Wcoverage-mismatch` ("the control flow of
//! function ‘f’ does not match its profile data", "number of counters in
//! profile data for function ‘f’ does not match", "source locations for
//! function ‘f’ have changed") and `-Wmissing-profile` ("profile for
//! function ‘f’ not found in profile data"). clang: IR PGO's "function
//! control flow change detected (hash mismatch) f" and "no profile data
//! available for function f", front-end PGO's `-Wprofile-instr-out-of-date`
//! ("of N functions, M have mismatched data") and `-Wprofile-instr-missing`
//! / `-Wprofile-instr-unprofiled`.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Compiler;

/// Names of changed functions a record keeps, at most.
const NAMES_KEPT: usize = 20;

/// The profile-mismatch warnings of one final build's log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileMismatch {
    /// Warning lines about the profile in the log (a compiler may repeat
    /// one for the same function).
    pub warnings: u32,
    /// Functions whose profile no longer matches their code (changed
    /// control flow or number of counters): the compiler drops the
    /// counters that do not match (gcc's `get_coverage_counts` in
    /// coverage.cc returns none for them; clang drops the function's).
    pub changed: u32,
    /// Functions whose code kept its shape but moved (gcc: "source
    /// locations … have changed"): their profile is still used.
    #[serde(default)]
    pub moved: u32,
    /// Functions (or, for clang's `-Wprofile-instr-unprofiled`, files) the
    /// profile has no data for, each counted once.
    pub missing: u32,
    /// The changed functions' names, sorted, at most 20.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_names: Vec<String>,
}

/// Warning flags for a final build with a profile from another revision:
/// gcc treats `-Wcoverage-mismatch` as an error by default (the build would
/// fail on the first changed function) and afterburner turns
/// `-Wmissing-profile` off for its own profiles; clang's out-of-date and
/// missing-data warnings are off by default but for one.
pub fn stale_warning_flags(compiler: Compiler) -> Vec<String> {
    let flags: &[&str] = match compiler {
        Compiler::Gcc => &["-Wmissing-profile", "-Wno-error=coverage-mismatch"],
        Compiler::Clang => &[
            "-Wprofile-instr-out-of-date",
            "-Wprofile-instr-missing",
            "-Wprofile-instr-unprofiled",
        ],
        Compiler::Go | Compiler::Rustc => &[],
    };
    flags.iter().map(|f| (*f).to_owned()).collect()
}

/// Count the mismatch warnings in a build log; `None` when it cannot be
/// read (a prebuilt variant, a log removed since).
pub fn count_in_log(log: &Path) -> Option<ProfileMismatch> {
    let bytes = fs_err::read(log).ok()?;
    Some(count(&String::from_utf8_lossy(&bytes)))
}

/// Count the mismatch warnings in a compiler's output.
pub fn count(text: &str) -> ProfileMismatch {
    let mut changed = BTreeSet::new();
    let mut moved = BTreeSet::new();
    let mut missing = BTreeSet::new();
    let mut warnings = 0;
    // Front-end PGO summarizes per file: "of 12 functions, 3 have …".
    let mut summarized_changed = 0;
    let mut summarized_missing = 0;
    for line in text.lines() {
        let Some(kind) = classify(line) else { continue };
        warnings += 1;
        match kind {
            Mismatch::Changed(name) => {
                changed.insert(name);
            }
            Mismatch::Moved(name) => {
                moved.insert(name);
            }
            Mismatch::Missing(name) => {
                missing.insert(name);
            }
            Mismatch::ChangedCount(n) => summarized_changed += n,
            Mismatch::MissingCount(n) => summarized_missing += n,
        }
    }
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    // A function that moved and changed counts as changed.
    let moved = moved.difference(&changed).count();
    ProfileMismatch {
        warnings,
        changed: to_u32(changed.len()).saturating_add(summarized_changed),
        moved: to_u32(moved),
        missing: to_u32(missing.len()).saturating_add(summarized_missing),
        changed_names: changed.into_iter().take(NAMES_KEPT).collect(),
    }
}

enum Mismatch {
    Changed(String),
    Moved(String),
    Missing(String),
    ChangedCount(u32),
    MissingCount(u32),
}

fn classify(line: &str) -> Option<Mismatch> {
    if line.contains("[-Wcoverage-mismatch]") {
        let name = quoted_function(line)?;
        // gcc keeps using the profile of a function that only moved:
        // coverage.cc's get_coverage_counts returns its counts after this
        // warning, and none after the control-flow and counter ones.
        return Some(if line.contains("source locations for function") {
            Mismatch::Moved(name)
        } else {
            Mismatch::Changed(name)
        });
    }
    if line.contains("[-Wmissing-profile]") {
        // "profile for function ‘f’ not found", or a whole unit:
        // "‘m.c’ profile count data file not found".
        return Some(Mismatch::Missing(
            quoted_function(line).unwrap_or_else(|| line.trim().to_owned()),
        ));
    }
    if let Some((_, name)) = line.split_once("(hash mismatch) ") {
        let name = name.split_whitespace().next()?;
        return Some(Mismatch::Changed(name.to_owned()));
    }
    if let Some((_, name)) = line.split_once("no profile data available for function ") {
        let name = name.split_whitespace().next()?;
        return Some(Mismatch::Missing(name.to_owned()));
    }
    if line.contains("[-Wprofile-instr-out-of-date]") {
        return Some(Mismatch::ChangedCount(summary_count(line)?));
    }
    if line.contains("[-Wprofile-instr-missing]") {
        return Some(Mismatch::MissingCount(summary_count(line)?));
    }
    if line.contains("[-Wprofile-instr-unprofiled]") {
        // "no profile data available for file \"m.c\"".
        return Some(Mismatch::Missing(line.trim().to_owned()));
    }
    None
}

/// The function a gcc warning names, between ‘’ (UTF-8 locales) or ''
/// (the C locale), after the word "function".
fn quoted_function(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("function ")?;
    let rest = rest.strip_prefix('‘').or_else(|| rest.strip_prefix('\''))?;
    let end = rest.find(['’', '\''])?;
    Some(rest[..end].to_owned())
}

/// M of clang's "of N functions, M have …" ("of 1 function, 1 has …").
fn summary_count(line: &str) -> Option<u32> {
    let (_, rest) = line.split_once(": of ")?;
    let (_, rest) = rest.split_once(", ")?;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gcc 12's words for a revision whose `walk` gained a branch, whose
    /// `main` moved and which added `added` (one warning repeated).
    /// `walk` also moved in a second unit: changed wins.
    const GCC: &str = "m.c: In function ‘main’:
m.c:14:5: warning: source locations for function ‘main’ have changed, the profile data may be out of date [-Wcoverage-mismatch]
   14 | int main(int argc, char **argv) {
m.c:14:5: warning: source locations for function ‘main’ have changed, the profile data may be out of date [-Wcoverage-mismatch]
m.c:13:36: warning: profile for function ‘added’ not found in profile data [-Wmissing-profile]
m.c:4:36: warning: number of counters in profile data for function ‘walk’ does not match its profile data (counter ‘arcs’, expected 3 and have 4) [-Wcoverage-mismatch]
m.c:4:36: warning: the control flow of function 'walk' does not match its profile data (counter 'time_profiler') [-Wcoverage-mismatch]
n.c:4:36: warning: source locations for function ‘walk’ have changed, the profile data may be out of date [-Wcoverage-mismatch]
";

    #[test]
    fn gcc_warnings_count_each_function_once() {
        let m = count(GCC);
        assert_eq!(m.warnings, 6);
        assert_eq!(m.changed, 1);
        assert_eq!(m.moved, 1);
        assert_eq!(m.missing, 1);
        assert_eq!(m.changed_names, ["walk"]);
    }

    #[test]
    fn clang_ir_and_frontend_warnings_are_counted() {
        let text = "warning: m.c: function control flow change detected (hash mismatch) walk Hash = 567185239100086256 [-Wbackend-plugin]
warning: m.c: no profile data available for function added [-Wbackend-plugin]
m.c:1:1: warning: profile data may be out of date: of 12 functions, 3 have mismatched data that will be ignored [-Wprofile-instr-out-of-date]
m.c:1:1: warning: profile data may be incomplete: of 1 function, 1 has no data [-Wprofile-instr-missing]
1 warning generated.
";
        let m = count(text);
        assert_eq!(m.warnings, 4);
        assert_eq!(m.changed, 1 + 3);
        assert_eq!(m.missing, 1 + 1);
        assert_eq!(m.changed_names, ["walk"]);
    }

    #[test]
    fn a_clean_log_counts_nothing() {
        assert_eq!(
            count("gcc -O2 -c m.c\nm.c:3:1: warning: unused variable ‘x’ [-Wunused-variable]\n"),
            ProfileMismatch::default()
        );
    }
}
