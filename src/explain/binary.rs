//! Binary facts per variant, as the layout optimizations change them: the
//! file's size, its code (`.text`, from binutils' `size -A`), how many
//! functions it defines and how many of those are split-off cold parts
//! (`nm --defined-only`: gcc's `.cold` fragments, BOLT's `.cold.N`). The
//! binaries are read as they are on disk now. Beside them, where a variant
//! used them: BOLT's own statistics ([`super::bolt_stats`]) and how much of
//! the code its PGO training ran ([`super::coverage`]).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::bolt_stats::{self, BoltStats};
use super::coverage::{self, Coverage};
use crate::process::capture;
use crate::runs::BenchMeta;

/// What one variant's binary is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub variant: String,
    pub binary: String,
    /// The file's size, in bytes.
    pub bytes: u64,
    /// Its `.text` section (with BOLT's `.text.cold`), in bytes, when
    /// `size` could read it.
    pub text_bytes: Option<u64>,
    /// Functions it defines (`nm` symbols of type T or t), when `nm` could
    /// read its symbols (a stripped binary has none).
    pub functions: Option<u64>,
    /// Of those, split-off cold parts.
    pub cold: Option<u64>,
    /// What llvm-bolt said when it laid the binary out.
    pub bolt: Option<BoltStats>,
    /// How much of the code the variant's PGO training ran.
    pub coverage: Option<Coverage>,
    /// Why the coverage could not be read, when a profile was used.
    pub coverage_problem: Option<String>,
}

const TIMEOUT: Duration = Duration::from_mins(1);

/// The facts of every variant's binaries in `meta`, in its order; a
/// binary no longer on disk is left out.
pub fn read(meta: &BenchMeta) -> Vec<Facts> {
    let mut out = Vec::new();
    for v in &meta.variants {
        let (coverage, coverage_problem) = match coverage::read(&v.cflags) {
            Ok(c) => (c, None),
            Err(e) => (None, Some(format!("{e:#}"))),
        };
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
                bolt: bolt_stats::read(path),
                coverage: coverage.clone(),
                coverage_problem: coverage_problem.clone(),
            });
        }
    }
    out
}

/// `.text`'s size from `size -A -d`, with BOLT's `.text.cold` where BOLT
/// split the code (its `.text` holds the hot part only, and the code as
/// linked stays as `.bolt.org.text`, not counted).
fn text_size(path: &Path) -> Option<u64> {
    let out = capture("size", &["-A", "-d", &path.to_string_lossy()], TIMEOUT).ok()?;
    out.success().then_some(())?;
    text_in(&out.stdout)
}

fn text_in(listing: &str) -> Option<u64> {
    let size = |section: &str| {
        listing.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next()? == section).then(|| words.next()?.parse::<u64>().ok())?
        })
    };
    Some(size(".text")? + size(".text.cold").unwrap_or(0))
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
    let training = training_rows(facts);
    if !training.is_empty() {
        out.push_str("\ntraining and layout (profile coverage: functions the training ran, of those in the profile; BOLT: llvm-bolt's own output):\n");
        out.push_str(&super::table::draw_text(&super::table::Table {
            header: TRAINING_HEADER.iter().map(|h| (*h).to_owned()).collect(),
            right: vec![false, false, true, true, true, true, true],
            rows: training.into_iter().map(Vec::from).collect(),
        }));
    }
    for f in facts {
        if let Some(problem) = &f.coverage_problem {
            let _ = writeln!(
                out,
                "note: variant `{}`: {}",
                f.variant,
                problem.replace('\n', " ")
            );
        }
    }
    out
}

const TRAINING_HEADER: [&str; 7] = [
    "variant",
    "binary",
    "profile coverage",
    "BOLT profiled functions",
    "BOLT layouts",
    "BOLT hot/cold bytes",
    "BOLT taken branches",
];

/// One row per binary whose variant had a profile or BOLT.
fn training_rows(facts: &[Facts]) -> Vec<[String; 7]> {
    let dash = || "–".to_owned();
    facts
        .iter()
        .filter(|f| f.bolt.is_some() || f.coverage.is_some())
        .map(|f| {
            let coverage = f.coverage.as_ref().map_or_else(dash, |c| {
                format!(
                    "{} of {} ({}, {})",
                    c.covered,
                    c.total,
                    share(c.covered, c.total),
                    c.tool
                )
            });
            let b = f.bolt.as_ref();
            [
                f.variant.clone(),
                f.binary.clone(),
                coverage,
                b.map_or_else(dash, |b| {
                    format!(
                        "{} of {} ({})",
                        b.profiled,
                        b.functions,
                        share(b.profiled, b.functions)
                    )
                }),
                b.and_then(|b| b.reordered)
                    .map_or_else(dash, |n| n.to_string()),
                b.and_then(|b| b.split)
                    .map_or_else(dash, |(hot, cold)| format!("{hot} / {cold}")),
                b.and_then(|b| b.taken_branches)
                    .map_or_else(dash, |(before, after)| {
                        format!("{before} → {after} ({})", change(before, after))
                    }),
            ]
        })
        .collect()
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "–".to_owned();
    }
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

fn change(before: u64, after: u64) -> String {
    if before == 0 {
        return "–".to_owned();
    }
    format!(
        "{:+.1}%",
        100.0 * (after as f64 - before as f64) / before as f64
    )
}

/// The facts as Markdown, for `report.md`'s section on where the
/// instructions went.
pub fn markdown(facts: &[Facts]) -> String {
    if facts.is_empty() {
        return String::new();
    }
    let show = |v: Option<u64>| v.map_or_else(|| "–".to_owned(), |n| n.to_string());
    let mut out = String::from("### Binaries\n\nAs they are on disk now (binutils' `size -A` and `nm`).\n\n| variant | binary | file bytes | .text bytes | functions | cold |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
    for f in facts {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            f.variant,
            f.binary,
            f.bytes,
            show(f.text_bytes),
            show(f.functions),
            show(f.cold)
        );
    }
    let training = training_rows(facts);
    if !training.is_empty() {
        out.push_str("\nProfile coverage: functions the training ran, of those in the profile. BOLT: from llvm-bolt's own output.\n\n");
        let _ = writeln!(out, "| {} |", TRAINING_HEADER.join(" | "));
        out.push_str("| --- | --- | --- | --- | ---: | --- | --- |\n");
        for r in &training {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
    }
    for f in facts {
        if let Some(problem) = &f.coverage_problem {
            let _ = writeln!(
                out,
                "- variant `{}`: {}",
                f.variant,
                problem.replace('\n', " ")
            );
        }
    }
    out.push('\n');
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

    /// `size -A -d` of a binary BOLT laid out (the gcc stack of speedtest1).
    #[test]
    fn bolts_cold_text_counts_and_the_original_code_does_not() {
        let bolted = ".rela.plt                   1560     41168\n.bolt.org.text            683893     46160\n.text                     269884   4194304\n.text.cold                234049   4464192\n";
        assert_eq!(text_in(bolted), Some(269_884 + 234_049));
        let linked = ".init 27 4096\n.text 802035 8192\n.fini 13 810240\n";
        assert_eq!(text_in(linked), Some(802_035));
        assert_eq!(text_in(".data 10 0\n"), None);
    }

    fn facts(bolt: Option<BoltStats>, coverage: Option<Coverage>) -> Facts {
        Facts {
            variant: "pgo+bolt".to_owned(),
            binary: "app".to_owned(),
            bytes: 100,
            text_bytes: Some(50),
            functions: Some(10),
            cold: Some(2),
            bolt,
            coverage,
            coverage_problem: None,
        }
    }

    #[test]
    fn training_and_layout_are_shown_where_a_variant_had_them() {
        let plain = [facts(None, None)];
        assert!(!text(&plain).contains("training and layout"));
        assert!(!markdown(&plain).contains("profile coverage"));
        let both = [facts(
            Some(BoltStats {
                profiled: 8,
                functions: 12,
                reordered: Some(2),
                split: Some((119, 119)),
                taken_branches: Some((2000, 1000)),
            }),
            Some(Coverage {
                tool: "gcov-dump".to_owned(),
                covered: 3,
                total: 4,
            }),
        )];
        let shown = text(&both);
        assert!(shown.contains("3 of 4 (75.0%, gcov-dump)"), "{shown}");
        assert!(shown.contains("8 of 12 (66.7%)"), "{shown}");
        assert!(shown.contains("2000 → 1000 (-50.0%)"), "{shown}");
        let md = markdown(&both);
        assert!(
            md.contains(
                "| pgo+bolt | app | 3 of 4 (75.0%, gcov-dump) | 8 of 12 (66.7%) | 2 | 119 / 119 |"
            ),
            "{md}"
        );
    }
}
