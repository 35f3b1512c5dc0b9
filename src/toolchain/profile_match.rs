//! How much of a profile matches the code it is applied to, checked before
//! the build that uses it: of the profile's functions (with their counts),
//! how many exist in the round's binaries, and how many of the hot ones
//! (those that hold [`HOT_SHARE`] of the counts). A profile whose hot
//! functions are mostly absent is one of another program: an error. The
//! figures are kept beside the profile (`match.json`), where the report
//! reads them.
//!
//! What "exists" means depends on what the profile names:
//! - clang's instrumented profiles name functions (`file.c:f` for static
//!   ones); the instrumented binaries list every function they count in
//!   their `__llvm_prf_names` section (zlib-compressed), inlined ones
//!   included, and their symbol tables the others; a function matches when
//!   its name is there and its structural hash is one the binaries'
//!   `__llvm_prf_data` holds (names only for `cspgo`, whose binaries hash
//!   the code after inlining);
//! - gcc's `.gcda` files carry no function names, only checksums, one file
//!   per translation unit: a file matches when the instrumented binaries
//!   would write a `.gcda` of that name, and its functions (and counts)
//!   with it.
//!
//! - sampled profiles (AutoFDO's from perf recordings or brought `.afdo`,
//!   BOLT's `.fdata`, Go's `.pprof`) name functions by symbol: a function
//!   matches when the binaries define it ([`super::sampled_names`]). A
//!   perf recording is converted against this build's binaries, found by
//!   their file names, so what it can miss is what the conversion could
//!   not place; that a brought recording sampled another build of the
//!   same binary is told by its build-id (the brought profile source
//!   source warns).
//!
//! A round none of these reads records so (`method = "unchecked"`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
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
        format!(
            "{} ({}): {} of {} functions found, {} of {} hot ones ({:.0}%)",
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
type Counts = BTreeMap<String, u64>;

/// Match the round's merged profile (`files`) against the `binaries` that
/// training ran (or that a brought profile's round built).
pub fn check(
    round: &str,
    source: &str,
    files: &[PathBuf],
    binaries: &[PathBuf],
) -> Result<ProfileMatch> {
    let (method, counts, found): (&str, Counts, BTreeSet<String>) = if round.starts_with("clang")
        || round == "cspgo"
    {
        let (counts, hashes) = clang_counts(files)?;
        let mut known = clang_known(binaries)?;
        if round == "cspgo" {
            // Its binaries count the code after inlining, under other
            // hashes than the IR records the merged profile also holds:
            // names only.
            known.hashes.clear();
        }
        let found = counts
            .keys()
            .filter(|f| known.names.contains(*f) || known.names.contains(plain_name(f)))
            // A function of the same name whose code differs (another
            // program's `main`) has another hash: not found.
            .filter(|f| {
                known.hashes.is_empty() || hashes.get(*f).is_some_and(|h| known.hashes.contains(h))
            })
            .cloned()
            .collect();
        ("names", counts, found)
    } else if round == "gcc-pgo" {
        let (counts, unit_of) = gcda_counts(files)?;
        let written = gcda_names(binaries)?;
        let found = counts
            .keys()
            .filter(|f| unit_of.get(*f).is_some_and(|u| written.contains(u)))
            .cloned()
            .collect();
        ("translation-units", counts, found)
    } else if let Some(counts) = super::sampled_names::counts(round, files)? {
        let defined = super::sampled_names::defined(round, binaries)?;
        let found = counts
            .keys()
            .filter(|f| defined.contains(*f))
            .cloned()
            .collect();
        ("symbols", counts, found)
    } else {
        return Ok(unchecked(round, source));
    };
    Ok(figures(round, source, method, &counts, &found))
}

/// The record of a round whose kind is not checked.
pub fn unchecked(round: &str, source: &str) -> ProfileMatch {
    ProfileMatch {
        round: round.to_owned(),
        source: source.to_owned(),
        method: "unchecked".to_owned(),
        functions: 0,
        found: 0,
        hot: 0,
        hot_found: 0,
        missing_hot: Vec::new(),
    }
}

fn figures(
    round: &str,
    source: &str,
    method: &str,
    counts: &Counts,
    found: &BTreeSet<String>,
) -> ProfileMatch {
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
        method: method.to_owned(),
        functions: ranked.len() as u64,
        found: ranked.iter().filter(|(f, _)| found.contains(*f)).count() as u64,
        hot: hot.len() as u64,
        hot_found: hot.iter().filter(|f| found.contains(**f)).count() as u64,
        missing_hot,
    }
}

/// `file.c:f` (clang's name of a static function) → `f`.
fn plain_name(name: &str) -> &str {
    name.rsplit_once([':', ';']).map_or(name, |(_, f)| f)
}

/// Every function of clang profiles with the sum of its counters, and its
/// structural hash (`llvm-profdata show --all-functions --counts`).
fn clang_counts(files: &[PathBuf]) -> Result<(Counts, BTreeMap<String, u64>)> {
    let tool = super::find_llvm_profdata()?;
    let mut counts = Counts::new();
    let mut hashes = BTreeMap::new();
    for file in files {
        let path = file.to_string_lossy();
        let out = capture(
            &tool,
            &["show", "--all-functions", "--counts", &path],
            Duration::from_mins(5),
        )
        .with_context(|| format!("running {tool}"))?;
        if !out.success() {
            bail!(
                "`{tool} show` cannot read {}:\n{}",
                file.display(),
                crate::process::quote_output(&out.stderr)
            );
        }
        let mut current: Option<String> = None;
        for line in out.stdout.lines() {
            if let Some(name) = line
                .strip_prefix("  ")
                .filter(|l| !l.starts_with(' '))
                .and_then(|l| l.strip_suffix(':'))
            {
                current = Some(name.to_owned());
            } else if let (Some(name), Some(hash)) =
                (&current, line.trim().strip_prefix("Hash: 0x"))
            {
                if let Ok(hash) = u64::from_str_radix(hash, 16) {
                    hashes.insert(name.clone(), hash);
                }
            } else if let (Some(name), Some(list)) =
                (&current, line.trim().strip_prefix("Block counts: ["))
            {
                let sum: u64 = list
                    .trim_end_matches(']')
                    .split(',')
                    .filter_map(|n| n.trim().parse::<u64>().ok())
                    .sum();
                *counts.entry(name.clone()).or_default() += sum;
            }
        }
    }
    Ok((counts, hashes))
}

/// What clang's instrumented binaries know of their functions.
#[derive(Default)]
struct Known {
    /// The functions they count (`__llvm_prf_names`) and define (symbols).
    names: BTreeSet<String>,
    /// The structural hashes of the functions they count
    /// (`__llvm_prf_data`); empty where unreadable.
    hashes: BTreeSet<u64>,
}

fn clang_known(binaries: &[PathBuf]) -> Result<Known> {
    let mut known = Known::default();
    for binary in binaries {
        known.names.extend(symbols(binary)?);
        let Some(section_names) = section(binary, "__llvm_prf_names")? else {
            continue;
        };
        let names = prf_names(&section_names);
        if let Some(data) = section(binary, "__llvm_prf_data")? {
            known.hashes.extend(prf_hashes(&data, names.len()));
        }
        known.names.extend(names);
    }
    Ok(known)
}

/// The function hashes of an `__llvm_prf_data` section of `functions`
/// records: each record starts with the name's MD5 and the function's
/// hash (two little-endian 64-bit words, in every raw profile version);
/// the records' size, which versions change, is the section's size over
/// their number. Empty when that does not divide.
fn prf_hashes(data: &[u8], functions: usize) -> Vec<u64> {
    if functions == 0 || !data.len().is_multiple_of(functions) || data.len() / functions < 16 {
        return Vec::new();
    }
    data.chunks_exact(data.len() / functions)
        .filter_map(|r| r.get(8..16)?.try_into().ok().map(u64::from_le_bytes))
        .collect()
}

/// The defined symbols of `binary` (`nm --defined-only`), local ones too.
pub(super) fn symbols(binary: &Path) -> Result<Vec<String>> {
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

/// The bytes of an ELF section (`objcopy --dump-section`), `None` when the
/// binary has none.
fn section(binary: &Path, name: &str) -> Result<Option<Vec<u8>>> {
    static SCRATCH: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let scratch = std::env::temp_dir().join(format!(
        "afterburner-section-{}-{}",
        std::process::id(),
        SCRATCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    fs_err::create_dir_all(&scratch)?;
    let out_file = scratch.join("section");
    let mut command = std::process::Command::new("objcopy");
    command
        .arg(format!("--dump-section={name}={}", out_file.display()))
        .arg(binary)
        .arg(scratch.join("copy"));
    let out = crate::process::capture_command(&mut command, Duration::from_mins(2))
        .context("running objcopy (binutils)");
    let bytes = match out {
        Ok(o) if o.success() && out_file.is_file() => Some(fs_err::read(&out_file)),
        _ => None,
    };
    fs_err::remove_dir_all(&scratch)?;
    bytes.transpose().map_err(Into::into)
}

/// The names in an `__llvm_prf_names` section: records of (ULEB128
/// uncompressed size, ULEB128 compressed size, data), the data zlib
/// compressed unless its compressed size is 0, names separated by `\x01`
/// (LLVM's `InstrProf.cpp`, `readPGOFuncNameStrings`).
fn prf_names(mut bytes: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    while !bytes.is_empty() {
        let Some((plain, rest)) = uleb128(bytes) else {
            break;
        };
        let Some((packed, rest)) = uleb128(rest) else {
            break;
        };
        let take = if packed == 0 { plain } else { packed };
        let Some(data) = usize::try_from(take).ok().and_then(|n| rest.get(..n)) else {
            break;
        };
        let text = if packed == 0 {
            data.to_vec()
        } else {
            let mut out = Vec::new();
            if flate2::read::ZlibDecoder::new(data)
                .read_to_end(&mut out)
                .is_err()
            {
                break;
            }
            out
        };
        names.extend(
            String::from_utf8_lossy(&text)
                .split('\u{1}')
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
        );
        bytes = &rest[data.len()..];
        // Records are padded with zeros to 8 bytes.
        while bytes.first() == Some(&0) {
            bytes = &bytes[1..];
        }
    }
    names
}

fn uleb128(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0_u64;
    for (i, b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, &bytes[i + 1..]));
        }
    }
    None
}

/// The functions of `.gcda` files, each named `<file>#<ident>` with the
/// sum of its arc counters (`gcov-dump -l`), and the file each is in.
fn gcda_counts(files: &[PathBuf]) -> Result<(Counts, BTreeMap<String, String>)> {
    let mut counts = Counts::new();
    let mut unit_of = BTreeMap::new();
    for file in files {
        let unit = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = file.to_string_lossy();
        let out = capture("gcov-dump", &["-l", &path], Duration::from_mins(2))
            .context("running gcov-dump (it comes with gcc)")?;
        let mut current: Option<String> = None;
        let mut arcs = false;
        for line in out.stdout.lines() {
            let line = line.split_once(':').map_or(line, |(_, rest)| rest).trim();
            if let Some(rest) = line.split("FUNCTION ident=").nth(1) {
                let ident = rest.split(',').next().unwrap_or_default();
                let name = format!("{unit}#{ident}");
                unit_of.insert(name.clone(), unit.clone());
                counts.entry(name.clone()).or_default();
                current = Some(name);
            } else if line.contains("COUNTERS") {
                arcs = line.contains("COUNTERS arcs");
            } else if let (Some(name), true) = (&current, arcs) {
                if let Some((_, values)) = line.split_once(": ") {
                    let sum: u64 = values
                        .split_whitespace()
                        .filter_map(|v| v.parse::<u64>().ok())
                        .sum();
                    *counts.entry(name.clone()).or_default() += sum;
                }
            }
        }
    }
    Ok((counts, unit_of))
}

/// The file names of the `.gcda` files gcc's instrumented binaries write
/// (each names its own, as a string, in its data).
fn gcda_names(binaries: &[PathBuf]) -> Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for binary in binaries {
        let bytes = fs_err::read(binary)?;
        for piece in bytes.split(|b| *b == 0) {
            if piece.ends_with(b".gcda") {
                let text = String::from_utf8_lossy(piece);
                let name = text.rsplit('/').next().unwrap_or(&text);
                names.insert(name.to_owned());
            }
        }
    }
    Ok(names)
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
        let m = figures("clang-pgo", "brought", "names", &counts, &found);
        assert_eq!((m.functions, m.found, m.hot, m.hot_found), (4, 3, 1, 0));
        assert_eq!(m.missing_hot, vec!["a".to_owned()]);
        assert!(m.hot_share() < FOREIGN_BELOW);
    }

    #[test]
    fn reads_uncompressed_and_compressed_name_records() {
        let mut section = vec![7, 0];
        section.extend(b"a\x01b.c:f");
        section.resize(16, 0);
        let mut packed = Vec::new();
        {
            use std::io::Write as _;
            let mut z =
                flate2::write::ZlibEncoder::new(&mut packed, flate2::Compression::default());
            z.write_all(b"main").unwrap();
            z.finish().unwrap();
        }
        section.push(4);
        section.push(u8::try_from(packed.len()).unwrap());
        section.extend(&packed);
        assert_eq!(prf_names(&section), ["a", "b.c:f", "main"]);
        assert_eq!(plain_name("b.c:f"), "f");
    }
}
