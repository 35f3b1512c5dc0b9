//! Figures a workload prints, read from its output file as a stream, in
//! pieces of about 1 MiB that end at a line's end (a line longer than 1 MiB
//! more is cut there), so a workload that prints gigabytes costs afterburner
//! two buffers, not its output. A figure matched within a line is found as
//! when the whole output was searched at once: each figure's first match
//! decides; reading stops once every figure has one.

use std::collections::BTreeMap;
use std::io::{BufRead as _, Read as _};
use std::path::Path;

use crate::experiment::Figure;

/// The size of a piece before it is extended to the end of its line.
const PIECE: u64 = 1 << 20;
/// How far a piece is extended to reach the end of its line.
const MAX_LINE: u64 = 1 << 20;

/// Read each figure's first capture group (a number; `,` thousands
/// separators allowed) from its regex's first match.
pub fn read_figures(figures: &[Figure], stdout: &Path) -> anyhow::Result<BTreeMap<String, f64>> {
    if figures.is_empty() {
        return Ok(BTreeMap::new());
    }
    // None: not matched yet; Some(value): the first match decided (a
    // match whose group is no number decides "none", as it always did).
    let mut first: Vec<Option<Option<f64>>> = vec![None; figures.len()];
    scan_pieces(stdout, |text| {
        for (figure, found) in figures.iter().zip(&mut first) {
            if found.is_some() {
                continue;
            }
            if let Some(captures) = figure.regex.captures(text) {
                *found = Some(
                    captures
                        .get(1)
                        .and_then(|m| m.as_str().replace(',', "").parse::<f64>().ok()),
                );
            }
        }
        first.iter().all(Option::is_some)
    })?;
    let mut out = BTreeMap::new();
    for (figure, found) in figures.iter().zip(first) {
        match found.flatten() {
            Some(v) => {
                out.insert(figure.name.clone(), v);
            }
            None => anyhow::bail!(
                "figure `{}`: regex `{}` found no number in the output {}\nhint: check the regex against that file (it is matched within lines); its first group must capture a number",
                figure.name,
                figure.regex.as_str(),
                stdout.display()
            ),
        }
    }
    Ok(out)
}

/// Hand the file at `path` to `visit` in pieces of about 1 MiB that end
/// at a line's end (a line more than 1 MiB longer is cut), until `visit`
/// says it is done (`true`) or the file ends.
pub fn scan_pieces(path: &Path, mut visit: impl FnMut(&str) -> bool) -> std::io::Result<()> {
    let file = fs_err::File::open(path)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut piece = Vec::new();
    loop {
        piece.clear();
        if (&mut reader).take(PIECE).read_to_end(&mut piece)? == 0 {
            return Ok(());
        }
        if piece.last() != Some(&b'\n') {
            (&mut reader).take(MAX_LINE).read_until(b'\n', &mut piece)?;
        }
        if visit(&String::from_utf8_lossy(&piece)) {
            return Ok(());
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // parsed numbers compared exactly
mod tests {
    use super::*;

    fn figure(name: &str, regex: &str) -> Figure {
        Figure {
            name: name.to_owned(),
            regex: regex::Regex::new(regex).unwrap(),
            unit: String::new(),
            higher_is_better: false,
            primary: false,
        }
    }

    #[test]
    fn the_first_match_of_each_figure_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::write(&out, "warming\ntps 1,234.5 (x)\ntps 9\nlatency 3 ms").unwrap();
        let read = read_figures(
            &[
                figure("tps", r"tps ([0-9.,]+)"),
                figure("lat", r"latency ([0-9]+) ms$"),
            ],
            &out,
        )
        .unwrap();
        assert_eq!(read["tps"], 1234.5);
        assert_eq!(read["lat"], 3.0);
        let missing = read_figures(&[figure("p", r"p=([0-9]+)")], &out).unwrap_err();
        assert!(format!("{missing}").contains("figure `p`"), "{missing}");
    }

    /// A line longer than a piece is read in pieces, memory bounded by the
    /// piece, not the line; a figure after it, or across a piece's edge
    /// within one line of normal length, is still found.
    #[test]
    fn an_endless_line_is_read_in_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut text = "x".repeat(3 * usize::try_from(PIECE).unwrap());
        text.push('\n');
        // "rate 5" straddles the first piece's edge.
        text = format!(
            "{}rate 5\n{text}",
            "y\n".repeat(usize::try_from(PIECE).unwrap() / 2 - 2)
        );
        let read = read_figures(&[figure("rate", r"rate ([0-9]+)")], &out);
        assert!(read.is_err(), "no file yet");
        std::fs::write(&out, &text).unwrap();
        let read = read_figures(&[figure("rate", r"rate ([0-9]+)")], &out).unwrap();
        assert_eq!(read["rate"], 5.0);
        let mut text = "x".repeat(3 * usize::try_from(PIECE).unwrap());
        text.push_str("\nrate 7\n");
        std::fs::write(&out, text).unwrap();
        let read = read_figures(&[figure("rate", r"rate ([0-9]+)")], &out).unwrap();
        assert_eq!(read["rate"], 7.0);
    }
}
