//! The functions a sampled profile names, with their samples, for the
//! check of a profile against its binaries
//! ([`super::profile_match`]): sampled profiles name functions by their
//! symbols, so a function matches when a binary of this build defines it.
//!
//! Each kind is read as the round merged it:
//! - gcc AutoFDO (`merged-*.gcov`): read back by
//!   [`super::gcov_afdo_read`]; a function's samples are those of its
//!   lines and of what it inlines;
//! - clang AutoFDO (`merged-*.afdo`): `llvm-profdata merge --sample
//!   --text`, read as gcc's are;
//! - BOLT (`*.fdata`): each branch or sample line's source function
//!   (`1 NAME OFFSET …`), with the line's count;
//! - Go (`merged-*.pprof`): `go tool pprof -top -noinlines`, each
//!   function's own (flat) samples, inlined callees folded into the
//!   function they were inlined into, as the binary's symbols have them.
//!
//! Names are compared as the compilers' readers compare them: up to the
//! first `.` for C (`foo.cold` and `foo.constprop.0` are `foo`), up to
//! `/` for BOLT's local symbols (`foo/1`), and without the type arguments
//! of a Go generic (`F[...]`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::process::{capture, capture_command, quote_output};

/// A profile's functions and their samples.
pub type Counts = BTreeMap<String, u64>;

/// The functions of round `round`'s merged profile `files`, or `None` for a
/// round whose profile is not sampled.
pub fn counts(round: &str, files: &[PathBuf]) -> Result<Option<Counts>> {
    let mut counts = Counts::new();
    for file in files {
        match round {
            "gcc-autofdo" => {
                let functions = super::gcov_afdo_read::read(&fs_err::read(file)?)
                    .map_err(|why| anyhow::anyhow!("reading {}: {why}", file.display()))?;
                add_instances(round, functions, &mut counts);
            }
            "autofdo" => clang_sample_counts(file, &mut counts)?,
            "bolt" | "bolt-perf" => fdata_counts(&super::autofdo::read_lossy(file)?, &mut counts),
            "go-pgo" | "go-pgo-perf" => pprof_counts(file, &mut counts)?,
            _ => return Ok(None),
        }
    }
    Ok(Some(counts))
}

/// The names `binaries` define (`nm --defined-only`), compared as round
/// `round`'s profile names are.
pub fn defined(round: &str, binaries: &[PathBuf]) -> Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for binary in binaries {
        for symbol in super::profile_match::symbols(binary)? {
            names.insert(compared(round, &symbol).to_owned());
        }
    }
    Ok(names)
}

/// A name of round `round`'s profile or binaries as the two are compared.
pub fn compared<'a>(round: &str, name: &'a str) -> &'a str {
    if round.starts_with("go-") {
        go_name(name)
    } else {
        c_name(bolt_name(name))
    }
}

/// A C or C++ name up to its first `.`, which gcc's and LLVM's sample
/// readers drop too (Go names keep theirs: `main.run`).
fn c_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// A Go name without a generic's type arguments or the ABI suffix its
/// assembly functions' symbols carry (`runtime.asyncPreempt.abi0`).
fn go_name(name: &str) -> &str {
    let name = name.split('[').next().unwrap_or(name);
    name.strip_suffix(".abi0")
        .or_else(|| name.strip_suffix(".abiinternal"))
        .unwrap_or(name)
}

/// BOLT's name of a local symbol, `NAME/N` (or `NAME/FILE/N`): `NAME`.
fn bolt_name(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

/// Each AutoFDO function's samples (its lines' and those of what it
/// inlines) under its compared name.
fn add_instances(round: &str, functions: Vec<super::gcov_afdo::Instance>, counts: &mut Counts) {
    for f in functions {
        *counts
            .entry(compared(round, &f.name).to_owned())
            .or_default() += f.total();
    }
}

fn clang_sample_counts(file: &Path, counts: &mut Counts) -> Result<()> {
    let tool = super::find_llvm_profdata()?;
    let path = file.to_string_lossy();
    let out = capture(
        &tool,
        &["merge", "--sample", "--text", &path, "-o", "-"],
        Duration::from_mins(5),
    )
    .with_context(|| format!("running {tool}"))?;
    if !out.success() {
        bail!(
            "`{tool} merge --sample --text` cannot read {}:\n{}",
            file.display(),
            quote_output(&out.stderr)
        );
    }
    let functions = super::gcov_afdo::parse_llvm_text(&out.stdout)
        .with_context(|| format!("reading {} as text", file.display()))?;
    add_instances("autofdo", functions, counts);
    Ok(())
}

/// BOLT's profile: `no_lbr` lines `1 NAME OFFSET COUNT`, or branch lines
/// `1 FROM OFFSET 1 TO OFFSET MISPREDICTS COUNT`; the count is the last
/// word and the function the first location's, when it is a symbol (its
/// kind is 1; 0 is an address outside any).
fn fdata_counts(text: &str, counts: &mut Counts) {
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 4 || words[0] != "1" {
            continue;
        }
        let Some(count) = words.last().and_then(|c| c.parse::<u64>().ok()) else {
            continue;
        };
        *counts
            .entry(compared("bolt", words[1]).to_owned())
            .or_default() += count;
    }
}

/// `go tool pprof -top -noinlines`'s rows: flat samples, then the name.
fn pprof_counts(file: &Path, counts: &mut Counts) -> Result<()> {
    let mut command = std::process::Command::new(
        super::go_find::find_pgo_go().map_or_else(|| PathBuf::from("go"), |g| g.path),
    );
    command
        .args(["tool", "pprof", "-top", "-noinlines", "-nodecount=1000000"])
        .arg(file);
    let out =
        capture_command(&mut command, Duration::from_mins(5)).context("running go tool pprof")?;
    if !out.success() {
        bail!(
            "`go tool pprof -top` cannot read {}:\n{}",
            file.display(),
            quote_output(&out.stderr)
        );
    }
    read_pprof_top(&out.stdout, counts);
    Ok(())
}

/// The rows after pprof's `flat  flat%  sum%  cum  cum%` header; a flat
/// value keeps its unit's magnitude (`1.20s`, `70ms`: both in the unit the
/// whole table uses, so only their order matters, as milliseconds).
fn read_pprof_top(text: &str, counts: &mut Counts) {
    let mut rows = false;
    for line in text.lines() {
        if line.trim_start().starts_with("flat") {
            rows = true;
            continue;
        }
        if !rows {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(flat), Some(name)) = (words.next(), words.nth(4)) else {
            continue;
        };
        let value = flat_value(flat);
        if value > 0 {
            *counts.entry(go_name(name).to_owned()).or_default() += value;
        }
    }
}

/// pprof's `70ms`, `1.20s`, `1.50mins`, `12` (samples), as a whole number
/// (milliseconds for times).
fn flat_value(text: &str) -> u64 {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let Ok(number) = number.parse::<f64>() else {
        return 0;
    };
    let scale = match unit {
        "ns" => 1e-6,
        "us" | "µs" => 1e-3,
        "s" => 1e3,
        "mins" => 6e4,
        "hrs" => 3.6e6,
        _ => 1.0, // milliseconds, or a count of samples
    };
    // A sample count fits an f64's integers exactly; the cast saturates.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let value = (number * scale).round() as u64;
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_compared_as_the_compilers_compare_them() {
        assert_eq!(compared("gcc-autofdo", "foo.cold"), "foo");
        assert_eq!(compared("gcc-autofdo", "foo.constprop.0"), "foo");
        assert_eq!(
            compared("autofdo", "_ZN3abc3defEv.llvm.123"),
            "_ZN3abc3defEv"
        );
        assert_eq!(compared("bolt", "local_fn/1"), "local_fn");
        assert_eq!(compared("bolt", "hot.cold/2"), "hot");
        assert_eq!(compared("go-pgo", "main.run"), "main.run");
        assert_eq!(compared("go-pgo", "main.(*fold).step"), "main.(*fold).step");
        assert_eq!(
            compared("go-pgo-perf", "net/http.(*conn).serve"),
            "net/http.(*conn).serve"
        );
        assert_eq!(compared("go-pgo", "main.Map[go.shape.int]"), "main.Map");
        assert_eq!(
            compared("go-pgo", "runtime.asyncPreempt.abi0"),
            "runtime.asyncPreempt"
        );
    }

    #[test]
    fn bolt_lines_give_their_source_function_and_count() {
        let mut counts = Counts::new();
        fdata_counts(
            "no_lbr cpu-clock:\n1 hot 1a 90\n1 hot 2c 5\n1 cold/1 0 5\n0 [unknown] 0 7\n",
            &mut counts,
        );
        fdata_counts("1 main 10 1 hot 0 0 12\n", &mut counts);
        assert_eq!(counts["hot"], 95);
        assert_eq!(counts["cold"], 5);
        assert_eq!(counts["main"], 12);
        assert_eq!(counts.len(), 3);
    }

    #[test]
    fn pprof_top_rows_read_with_their_units() {
        // `go tool pprof -top -noinlines` of the gohot fixture (go 1.23).
        let text = "\
File: gohot
Type: cpu
Duration: 401.36ms, Total samples = 80ms (19.93%)
Showing nodes accounting for 80ms, 100% of 80ms total
      flat  flat%   sum%        cum   cum%
      70ms 87.50% 87.50%       80ms   100%  main.run
    1.20s 12.50%   100%       10ms 12.50%  runtime.asyncPreempt
         0     0%   100%       80ms   100%  main.main
";
        let mut counts = Counts::new();
        read_pprof_top(text, &mut counts);
        assert_eq!(counts["main.run"], 70);
        assert_eq!(counts["runtime.asyncPreempt"], 1200);
        assert!(!counts.contains_key("main.main"));
    }
}
