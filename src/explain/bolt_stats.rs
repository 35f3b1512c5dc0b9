//! BOLT's own statistics for a binary it laid out, read from the output
//! `llvm-bolt -data=…` printed, which afterburner keeps beside the binary
//! ([`crate::toolchain::bolt::log_path`]): how many functions had a
//! profile, how many layouts changed, how much code went cold, and its
//! dyno-stats' taken branches before and after.

use std::path::Path;

/// What llvm-bolt said about one binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoltStats {
    /// Functions with a non-empty execution profile.
    pub profiled: u64,
    /// Functions in the binary.
    pub functions: u64,
    /// Functions whose basic-block layout changed.
    pub reordered: Option<u64>,
    /// Hot and cold bytes of the functions it split.
    pub split: Option<(u64, u64)>,
    /// Taken branches by the profile (dyno-stats), before and after.
    pub taken_branches: Option<(u64, u64)>,
}

/// The statistics in llvm-bolt's output; `None` when it has not the line
/// on profiled functions (not a layout run, or a BOLT that words it
/// otherwise).
pub fn parse(text: &str) -> Option<BoltStats> {
    let mut stats: Option<BoltStats> = None;
    let mut reordered = None;
    let mut split = None;
    let mut taken = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(info) = line.strip_prefix("BOLT-INFO: ") {
            let words: Vec<&str> = info.split_whitespace().collect();
            if info.contains("functions in the binary")
                && info.contains("non-empty execution profile")
            {
                // "N out of M functions in the binary (X%) have …"
                if let (Some(n), Some(m)) = (number(words.first()), number(words.get(3))) {
                    stats = Some(BoltStats {
                        profiled: n,
                        functions: m,
                        reordered: None,
                        split: None,
                        taken_branches: None,
                    });
                }
            } else if let Some(rest) =
                info.strip_prefix("basic block reordering modified layout of ")
            {
                reordered = number(rest.split_whitespace().next().as_ref());
            } else if let Some(rest) = info.strip_prefix("splitting separates ") {
                // "H hot bytes from C cold bytes (…)"
                let w: Vec<&str> = rest.split_whitespace().collect();
                split = number(w.first()).zip(number(w.get(4)));
            }
        } else if let Some((count, name)) = line.split_once(" : ") {
            // dyno-stats: "1063003 : taken branches", then after the
            // optimizations "1063000 : taken branches (-0.0%)".
            let name = name.split(" (").next().unwrap_or(name);
            if name == "taken branches" {
                if let Ok(n) = count.trim().parse::<u64>() {
                    taken.push(n);
                }
            }
        }
    }
    let mut stats = stats?;
    stats.reordered = reordered;
    stats.split = split;
    stats.taken_branches = match taken[..] {
        [before, after, ..] => Some((before, after)),
        _ => None,
    };
    Some(stats)
}

fn number(word: Option<&&str>) -> Option<u64> {
    word?.replace(',', "").parse().ok()
}

/// The statistics kept beside `binary`; `None` when BOLT did not lay it
/// out (no kept output) or the output says nothing this reads.
pub fn read(binary: &Path) -> Option<BoltStats> {
    let text = std::fs::read_to_string(crate::toolchain::bolt::log_path(binary)).ok()?;
    parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output of llvm-bolt 16 on the hotpath fixture (see
    /// tests/fixtures/bolt/README.md).
    const HOTPATH: &str = include_str!("../../tests/fixtures/bolt/hotpath-llvm-bolt-16.log");

    #[test]
    fn reads_llvm_bolt_16s_output() {
        let stats = parse(HOTPATH).unwrap();
        assert_eq!(
            stats,
            BoltStats {
                profiled: 8,
                functions: 12,
                reordered: Some(2),
                split: Some((119, 119)),
                taken_branches: Some((1_063_003, 1_063_000)),
            }
        );
    }

    #[test]
    fn output_without_a_profile_line_is_not_read() {
        let instrumenting =
            "BOLT-INFO: Target architecture: x86_64\nBOLT-INFO: enabling relocation mode\n";
        assert_eq!(parse(instrumenting), None);
        // The other lines alone are not enough either.
        let cut = HOTPATH
            .lines()
            .filter(|l| !l.contains("non-empty execution profile"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(parse(&cut), None);
    }

    #[test]
    fn a_kept_log_is_found_beside_its_binary() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("app");
        assert_eq!(read(&binary), None);
        std::fs::write(crate::toolchain::bolt::log_path(&binary), HOTPATH).unwrap();
        assert_eq!(read(&binary).map(|s| s.profiled), Some(8));
        assert_eq!(
            crate::toolchain::bolt::log_path(&binary),
            dir.path().join("app.bolt.log")
        );
    }
}
