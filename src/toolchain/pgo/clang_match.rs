//! clang's instrumented profiles against the binaries they are applied
//! to: the profiles name functions (`file.c:f` for static ones); the
//! instrumented binaries list every function they count in their
//! `__llvm_prf_names` section (zlib-compressed), inlined ones included,
//! and their symbol tables the others. A function matches when its name
//! is there and its structural hash is one the binaries' `__llvm_prf_data`
//! holds (names only for `cspgo`, whose binaries hash the code after
//! inlining).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::process::capture;
use crate::toolchain::matching::{symbols, Counts, Matched};

/// Match clang profiles `files` against `binaries`; `hashes`: compare
/// structural hashes too (not for context-sensitive profiles).
pub(super) fn matched(
    tool: &str,
    files: &[PathBuf],
    binaries: &[PathBuf],
    hashes: bool,
) -> Result<Matched> {
    let (counts, hash_of) = clang_counts(tool, files)?;
    let mut known = clang_known(binaries)?;
    if !hashes {
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
            known.hashes.is_empty() || hash_of.get(*f).is_some_and(|h| known.hashes.contains(h))
        })
        .cloned()
        .collect();
    Ok(Matched {
        method: "names",
        counts,
        found,
    })
}

/// `file.c:f` (clang's name of a static function) → `f`.
fn plain_name(name: &str) -> &str {
    name.rsplit_once([':', ';']).map_or(name, |(_, f)| f)
}

/// Every function of clang profiles with the sum of its counters, and its
/// structural hash (`llvm-profdata show --all-functions --counts`).
fn clang_counts(tool: &str, files: &[PathBuf]) -> Result<(Counts, BTreeMap<String, u64>)> {
    let mut counts = Counts::new();
    let mut hashes = BTreeMap::new();
    for file in files {
        let path = file.to_string_lossy();
        let out = capture(
            tool,
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

#[cfg(test)]
mod tests {
    use super::*;

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
