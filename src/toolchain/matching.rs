//! How much of a profile matches the code it is applied to, checked before
//! the build that uses it: of the profile's functions (with their counts),
//! how many exist in the round's binaries, and how many of the hot ones
//! (those that hold [`HOT_SHARE`] of the counts). A profile whose hot
//! functions are mostly absent is one of another program: an error. The
//! figures are kept beside the profile (`match.json`), where the report
//! reads them.
//!
//! What "exists" means depends on what the profile names, so each round
//! says it (`Round::matched`): clang's instrumented
//! profiles are matched by function name and structural hash, gcc's
//! `.gcda` files by translation unit, sampled profiles (AutoFDO, BOLT,
//! Go) by the symbols the binaries define ([`symbols`], names compared as
//! the compilers' readers compare them: [`c_symbol`]). A round that checks
//! nothing records so (`method = "unchecked"`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::process::capture;

/// The share of a profile's counts that its hot functions hold.
pub const HOT_SHARE: f64 = 0.9;
/// Below this share of hot functions found, the profile is another
/// program's: an error.
pub const FOREIGN_BELOW: f64 = 0.1;
/// Below this share of hot functions found, a warning names the missing.
pub const WARN_BELOW: f64 = 0.8;
/// The file beside a round's profile that holds its figures.
pub const FILE: &str = "match.json";

/// How much of one round's profile matched the binaries it was applied to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileMatch {
    /// The training round (`clang-pgo`, `gcc-pgo`, …).
    pub round: String,
    /// Where the profile came from: `trained`, `attached` or `brought`.
    pub source: String,
    /// The variant that trained it, where this one shares it: the same
    /// instrumented build trained by the same runs
    /// (`profiles::shared`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_from: Option<String>,
    /// How functions were matched: `names` (clang: function names against
    /// the binaries' counted functions and symbols), `translation-units`
    /// (gcc: `.gcda` files against those the binaries write), `symbols`
    /// (sampled profiles: function names against the binaries' defined
    /// symbols), or `unchecked`.
    pub method: String,
    /// Functions in the profile with a nonzero count.
    pub functions: u64,
    /// Of them, found in the binaries being built.
    pub found: u64,
    /// The hottest functions that together hold 90% of the counts.
    pub hot: u64,
    /// Of them, found.
    pub hot_found: u64,
    /// The hottest functions not found, hottest first (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_hot: Vec<String>,
    /// What each recording of running services cost (the window, its
    /// samples, perf's own CPU time), where the round recorded them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recordings: Vec<super::recording_cost::RecordingCost>,
}

impl ProfileMatch {
    /// The share of hot functions found (1 when there are none).
    pub fn hot_share(&self) -> f64 {
        if self.hot == 0 {
            1.0
        } else {
            self.hot_found as f64 / self.hot as f64
        }
    }

    /// One line for messages and the text report.
    pub fn describe(&self) -> String {
        if self.method == "unchecked" {
            return format!(
                "{} ({}): not checked against the binaries",
                self.round, self.source
            );
        }
        let recorded = super::recording_cost::total(&self.recordings)
            .map_or_else(String::new, |cost| format!("; recorded {cost}"));
        format!(
            "{} ({}): {} of {} functions found, {} of {} hot ones ({:.0}%){recorded}",
            self.round,
            self.source,
            self.found,
            self.functions,
            self.hot_found,
            self.hot,
            100.0 * self.hot_share()
        )
    }
}

/// A profile's functions and their counts.
pub type Counts = BTreeMap<String, u64>;

/// What a round found of its profile in the binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    /// How functions were matched (see [`ProfileMatch::method`]).
    pub method: &'static str,
    /// The profile's functions and their counts.
    pub counts: Counts,
    /// Those of them the binaries have.
    pub found: BTreeSet<String>,
}

/// The record of a round whose kind is not checked.
pub fn unchecked(round: &str, source: &str) -> ProfileMatch {
    ProfileMatch {
        round: round.to_owned(),
        source: source.to_owned(),
        shared_from: None,
        method: "unchecked".to_owned(),
        functions: 0,
        found: 0,
        hot: 0,
        hot_found: 0,
        missing_hot: Vec::new(),
        recordings: Vec::new(),
    }
}

/// The figures of round `round`'s profile from `source`, from what it
/// matched.
pub fn figures(round: &str, source: &str, matched: &Matched) -> ProfileMatch {
    let Matched {
        method,
        counts,
        found,
    } = matched;
    let mut ranked: Vec<(&String, u64)> = counts
        .iter()
        .map(|(f, c)| (f, *c))
        .filter(|(_, c)| *c > 0)
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total: u64 = ranked.iter().map(|(_, c)| c).sum();
    let mut held = 0_u64;
    let mut hot = Vec::new();
    for (name, count) in &ranked {
        if total > 0 && held as f64 >= HOT_SHARE * total as f64 {
            break;
        }
        held += count;
        hot.push(*name);
    }
    let missing_hot: Vec<String> = hot
        .iter()
        .filter(|f| !found.contains(**f))
        .take(5)
        .map(|f| (*f).clone())
        .collect();
    ProfileMatch {
        round: round.to_owned(),
        source: source.to_owned(),
        shared_from: None,
        method: (*method).to_owned(),
        functions: ranked.len() as u64,
        found: ranked.iter().filter(|(f, _)| found.contains(*f)).count() as u64,
        hot: hot.len() as u64,
        hot_found: hot.iter().filter(|f| found.contains(**f)).count() as u64,
        missing_hot,
        recordings: Vec::new(),
    }
}

/// The defined symbols of `binary` (`nm --defined-only`), local ones too.
pub fn symbols(binary: &Path) -> Result<Vec<String>> {
    let path = binary.to_string_lossy();
    let out = capture("nm", &["--defined-only", &path], Duration::from_mins(2))
        .context("running nm (binutils)")?;
    Ok(out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(str::to_owned)
        .collect())
}

/// A C or C++ symbol as sampled profiles and the compilers' readers
/// compare it: without the suffix BOLT gives a local symbol (`foo/1`,
/// `foo/file.c/1`), and up to its first `.`, which gcc's and LLVM's
/// sample readers drop too (`foo.cold` and `foo.constprop.0` are `foo`).
pub fn c_symbol(name: &str) -> &str {
    let name = name.split('/').next().unwrap_or(name);
    name.split('.').next().unwrap_or(name)
}

/// Write a round's figures beside its profile.
pub fn record(profile_dir: &Path, figures: &ProfileMatch) -> Result<()> {
    fs_err::write(profile_dir.join(FILE), serde_json::to_vec_pretty(figures)?)?;
    Ok(())
}

/// A round's figures, if checked.
pub fn read(profile_dir: &Path) -> Option<ProfileMatch> {
    serde_json::from_slice(&fs_err::read(profile_dir.join(FILE)).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_functions_hold_ninety_percent_of_the_counts() {
        let counts: Counts = [("a", 900), ("b", 60), ("c", 30), ("d", 10), ("e", 0)]
            .into_iter()
            .map(|(f, c)| (f.to_owned(), c))
            .collect();
        let found: BTreeSet<String> = ["b", "c", "d"].into_iter().map(str::to_owned).collect();
        let matched = Matched {
            method: "names",
            counts,
            found,
        };
        let m = figures("clang-pgo", "brought", &matched);
        assert_eq!((m.functions, m.found, m.hot, m.hot_found), (4, 3, 1, 0));
        assert_eq!(m.missing_hot, vec!["a".to_owned()]);
        assert!(m.hot_share() < FOREIGN_BELOW);
    }

    #[test]
    fn symbols_are_compared_as_the_compilers_compare_them() {
        assert_eq!(c_symbol("foo.cold"), "foo");
        assert_eq!(c_symbol("foo.constprop.0"), "foo");
        assert_eq!(c_symbol("_ZN3abc3defEv.llvm.123"), "_ZN3abc3defEv");
        assert_eq!(c_symbol("local_fn/1"), "local_fn");
        assert_eq!(c_symbol("hot.cold/2"), "hot");
    }
}
