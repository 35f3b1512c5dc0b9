//! BOLT's profile format (`.fdata`), as `perf2bolt` and `llvm-bolt
//! -instrument` write it: branch lines `1 FROM OFFSET 1 TO OFFSET
//! MISPREDICTS COUNT` (with LBR), or after a `no_lbr EVENT:` header sample
//! lines `1 NAME OFFSET COUNT`; a location's kind is 1 for a symbol, 0 for
//! an address outside any. `merge-fdata` 16 cannot read the `no_lbr` form,
//! so such profiles are summed here.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::toolchain::matching::{c_symbol, Counts};

/// Add each line's count to its source function (the first location's,
/// when it is a symbol), under its compared name ([`c_symbol`]): the
/// count is the last word.
pub fn add_counts(text: &str, counts: &mut Counts) {
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 4 || words[0] != "1" {
            continue;
        }
        let Some(count) = words.last().and_then(|c| c.parse::<u64>().ok()) else {
            continue;
        };
        *counts.entry(c_symbol(words[1]).to_owned()).or_default() += count;
    }
}

/// Whether a BOLT profile has at least one counted location.
pub fn has_samples(fdata: &str) -> bool {
    fdata.lines().any(|l| {
        !l.trim().is_empty() && !l.starts_with("no_lbr") && !l.starts_with("boltedcollection")
    })
}

/// Sum `perf2bolt -nl` profiles: the same header, each location's count
/// added up.
pub fn sum_no_lbr(profiles: &[String]) -> Result<String, String> {
    let mut header: Option<&str> = None;
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, text) in profiles.iter().enumerate() {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or_default();
        if !first.starts_with("no_lbr") {
            return Err(format!(
                "profile {i} is not a no-LBR profile (it starts `{first}`)"
            ));
        }
        match header {
            Some(h) if h != first => {
                return Err(format!(
                    "profiles sampled different events: `{h}` and `{first}`"
                ))
            }
            _ => header = Some(first),
        }
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let (location, count) = line
                .rsplit_once(' ')
                .and_then(|(l, c)| Some((l, c.parse::<u64>().ok()?)))
                .ok_or_else(|| format!("profile {i}: unreadable line `{line}`"))?;
            *counts.entry(location).or_default() += count;
        }
    }
    let mut out = format!("{}\n", header.unwrap_or("no_lbr"));
    for (location, count) in counts {
        let _ = writeln!(out, "{location} {count}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bolt_lines_give_their_source_function_and_count() {
        let mut counts = Counts::new();
        add_counts(
            "no_lbr cpu-clock:\n1 hot 1a 90\n1 hot 2c 5\n1 cold/1 0 5\n0 [unknown] 0 7\n",
            &mut counts,
        );
        add_counts("1 main 10 1 hot 0 0 12\n", &mut counts);
        assert_eq!(counts["hot"], 95);
        assert_eq!(counts["cold"], 5);
        assert_eq!(counts["main"], 12);
        assert_eq!(counts.len(), 3);
    }

    #[test]
    fn no_lbr_profiles_sum_per_location() {
        let a = "no_lbr cpu-clock:\n1 main 45 3\n1 rare/1 1d 2\n".to_owned();
        let b = "no_lbr cpu-clock:\n1 main 45 4\n1 main 38 1\n".to_owned();
        let sum = sum_no_lbr(&[a.clone(), b]).unwrap();
        assert_eq!(
            sum,
            "no_lbr cpu-clock:\n1 main 38 1\n1 main 45 7\n1 rare/1 1d 2\n"
        );
        let other = "no_lbr cycles:u:\n1 main 45 1\n".to_owned();
        assert!(sum_no_lbr(&[a.clone(), other])
            .unwrap_err()
            .contains("different events"));
        assert!(sum_no_lbr(&["1 main 0 1 main 4 0 9\n".to_owned()]).is_err());
        assert!(has_samples(&a));
        assert!(!has_samples("no_lbr cpu-clock:\n"));
    }
}
