//! Binary facts per variant, as the layout optimizations change them: the
//! file's size, its code (`.text`, from binutils' `size -A`), how many
//! functions it defines and how many of those are split-off cold parts
//! (`nm --defined-only`: gcc's `.cold` fragments, BOLT's `.cold.N`). The
//! binaries are read as they are on disk now.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::process::capture;
use crate::runs::BenchMeta;

/// What one variant's binary is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub variant: String,
    pub binary: String,
    /// The file's size, in bytes.
    pub bytes: u64,
    /// Its `.text` section, in bytes, when `size` could read it.
    pub text_bytes: Option<u64>,
    /// Functions it defines (`nm` symbols of type T or t), when `nm` could
    /// read its symbols (a stripped binary has none).
    pub functions: Option<u64>,
    /// Of those, split-off cold parts.
    pub cold: Option<u64>,
}

const TIMEOUT: Duration = Duration::from_mins(1);

/// The facts of every variant's binaries in `meta`, in its order; a
/// binary no longer on disk is left out.
pub fn read(meta: &BenchMeta) -> Vec<Facts> {
    let mut out = Vec::new();
    for v in &meta.variants {
        for (name, path) in &v.binaries {
            let Ok(info) = std::fs::metadata(path) else {
                continue;
            };
            let (functions, cold) = symbols(path).unzip();
            out.push(Facts {
                variant: v.name.clone(),
                binary: name.clone(),
                bytes: info.len(),
                text_bytes: text_size(path),
                functions,
                cold,
            });
        }
    }
    out
}

/// `.text`'s size from `size -A -d`.
fn text_size(path: &Path) -> Option<u64> {
    let out = capture("size", &["-A", "-d", &path.to_string_lossy()], TIMEOUT).ok()?;
    out.success().then_some(())?;
    out.stdout.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next()? == ".text").then(|| words.next()?.parse().ok())?
    })
}

/// Functions defined, and how many are cold parts, from `nm`.
fn symbols(path: &Path) -> Option<(u64, u64)> {
    let out = capture("nm", &["--defined-only", &path.to_string_lossy()], TIMEOUT).ok()?;
    out.success().then_some(())?;
    let mut functions = 0;
    let mut cold = 0;
    for line in out.stdout.lines() {
        let mut words = line.split_whitespace();
        let (Some(_), Some(kind), Some(name)) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if kind == "T" || kind == "t" {
            functions += 1;
            if name.contains(".cold") {
                cold += 1;
            }
        }
    }
    (functions > 0).then_some((functions, cold))
}

/// The facts as a table for the terminal.
pub fn text(facts: &[Facts]) -> String {
    if facts.is_empty() {
        return String::new();
    }
    let show = |v: Option<u64>| v.map_or_else(|| "–".to_owned(), |n| n.to_string());
    let mut out = String::from("\nbinaries (as they are on disk now):\n");
    let _ = writeln!(
        out,
        "  {:<20} {:<14} {:>12} {:>12} {:>10} {:>6}",
        "variant", "binary", "file bytes", ".text bytes", "functions", "cold"
    );
    for f in facts {
        let _ = writeln!(
            out,
            "  {:<20} {:<14} {:>12} {:>12} {:>10} {:>6}",
            f.variant,
            f.binary,
            f.bytes,
            show(f.text_bytes),
            show(f.functions),
            show(f.cold)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_has_code_and_functions() {
        let me = std::env::current_exe().unwrap();
        let text = text_size(&me);
        let symbols = symbols(&me);
        if text.is_none() || symbols.is_none() {
            eprintln!(
                "binutils' size or nm is missing here (.ci/run installs binutils): not checked"
            );
            return;
        }
        assert!(text.unwrap() > 1000);
        let (functions, cold) = symbols.unwrap();
        assert!(functions > 100 && cold <= functions);
    }
}
