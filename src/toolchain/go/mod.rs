//! Go's PGO (`optimize = ["pgo"]` with `compiler = "go"`): a Go new
//! enough found ([`find`]), and its two rounds, from the program's own CPU
//! profiles ([`cpuprofile`]) or from `perf record -g` samples ([`perf`]).
//! Both merge into one pprof profile that `go build -pgo=` reads, and are
//! checked against the binaries the same way: each function's own (flat)
//! samples by `go tool pprof -top -noinlines` (inlined callees folded into
//! the function they were inlined into, as the binary's symbols have them),
//! against the symbols the binaries define, compared without the type
//! arguments of a generic (`F[...]`).

pub mod cpuprofile;
pub mod find;
pub mod perf;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

pub use cpuprofile::profile_path;
pub use find::{find_pgo_go, path_with_pgo_go, pgo_go_dir, FoundGo, INSTALL_HINT};

use crate::process::{capture_command, quote_output};
use crate::toolchain::matching::Counts;
use crate::toolchain::optimize::{Requirement, VariantSetup};
use crate::toolchain::{merged_profiles, sampling, symbolize, Flags, GoPgoSource, StageDirs};

/// What the merged profile of either round is called.
const MERGED_EXTENSION: &str = "pprof";

/// Go's PGO: a Go of 1.21 or newer (Debian 12's golang-go is 1.19, so
/// apt's default package is no remedy: the note says what is).
pub fn pgo_requirement() -> Requirement {
    Requirement::fact(
        "Go >= 1.21 (on the PATH, /usr/lib/go-1.2x/bin or /usr/local/go/bin)",
        find_pgo_go().is_some(),
        INSTALL_HINT,
    )
}

/// What a Go variant's PGO needs: Go, and where it samples, perf to
/// sample and llvm-symbolizer to name the addresses.
pub(crate) fn pgo_requirements(source: GoPgoSource) -> Vec<Requirement> {
    let mut needs = vec![pgo_requirement()];
    if source == GoPgoSource::Perf {
        needs.extend([
            Requirement::tool("perf", "linux-perf"),
            Requirement {
                need: "llvm-symbolizer".to_owned(),
                present: symbolize::find_symbolizer().is_some(),
                packages: vec!["llvm".to_owned()],
                note: Some("Go PGO from perf samples (pgo_source = \"perf\") names sampled addresses with it".to_owned()),
                optional: false,
            },
        ]);
    }
    needs
}

/// Check that this machine can run a Go variant's PGO.
pub(crate) fn check(variant: &VariantSetup) -> Result<()> {
    if find_pgo_go().is_none() {
        bail!("Go PGO needs Go 1.21 or newer, and this machine has none\nhint: {INSTALL_HINT}");
    }
    if variant.go_pgo == GoPgoSource::Perf {
        sampling::sampling(variant.sampling, &perf::SAMPLER).map_err(anyhow::Error::msg)?;
        if symbolize::find_symbolizer().is_none() {
            bail!(
                "Go PGO from perf samples names the sampled addresses with llvm-symbolizer, which is missing\nhint: {}",
                symbolize::SYMBOLIZER_HINT
            );
        }
    }
    Ok(())
}

/// The final build of either round: `-pgo=` the merged profile.
fn use_merged(flags: &mut Flags, dirs: &StageDirs) {
    if let Some(profile) = merged_profiles(&dirs.profile, MERGED_EXTENSION).first() {
        flags.goflags.push(format!("-pgo={}", profile.display()));
    }
}

/// A Go name without a generic's type arguments or the ABI suffix its
/// assembly functions' symbols carry (`runtime.asyncPreempt.abi0`); Go
/// names keep their dots (`main.run`).
fn go_name(name: &str) -> &str {
    let name = name.split('[').next().unwrap_or(name);
    name.strip_suffix(".abi0")
        .or_else(|| name.strip_suffix(".abiinternal"))
        .unwrap_or(name)
}

/// Each function's flat samples in the merged profiles `files`.
fn sampled_functions(files: &[PathBuf]) -> Result<Counts> {
    let mut counts = Counts::new();
    for file in files {
        pprof_counts(file, &mut counts)?;
    }
    Ok(counts)
}

/// `go tool pprof -top -noinlines`'s rows: flat samples, then the name.
fn pprof_counts(file: &Path, counts: &mut Counts) -> Result<()> {
    let mut command =
        std::process::Command::new(find_pgo_go().map_or_else(|| PathBuf::from("go"), |g| g.path));
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
    fn go_names_drop_type_arguments_and_abi_suffixes() {
        assert_eq!(go_name("main.run"), "main.run");
        assert_eq!(go_name("main.(*fold).step"), "main.(*fold).step");
        assert_eq!(go_name("net/http.(*conn).serve"), "net/http.(*conn).serve");
        assert_eq!(go_name("main.Map[go.shape.int]"), "main.Map");
        assert_eq!(go_name("runtime.asyncPreempt.abi0"), "runtime.asyncPreempt");
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
