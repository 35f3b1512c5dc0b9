//! `create_llvm_prof` (Google's AutoFDO converter): a perf recording with
//! branch stacks (LBR) of one binary into an LLVM text sample profile, and
//! the repair of what its 0.19 release writes garbled.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::TIMEOUT;
use crate::process::{capture_command, quote_output};
use crate::toolchain::formats::gcov_afdo;
use crate::toolchain::{llvm, tools};

fn converter() -> Result<&'static str> {
    if tools::is_installed("create_llvm_prof") {
        Ok("create_llvm_prof")
    } else {
        bail!("create_llvm_prof is missing, so perf recordings cannot become a profile\nhint: install it with `apt-get install -y autofdo`")
    }
}

/// Convert one recording for one binary; `None` when it holds no sample of
/// that binary.
pub(super) fn convert(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    run_converter(recording, binary, out, branch_stack, &[])?;
    let text = fs_err::read(out)?;
    let (clean, dropped) = drop_garbled_callsites(&String::from_utf8_lossy(&text));
    if dropped > 0 {
        crate::progress::info(format_args!(
            "{}: left out {dropped} inlined call site(s) whose name create_llvm_prof garbled",
            out.display()
        ));
        fs_err::write(out, clean)?;
    }
    Ok(has_samples(out)?.then(|| out.to_path_buf()))
}

/// Convert one recording for one binary into an LLVM text profile (gcc's
/// round reads text: `create_llvm_prof` 0.19's binary writer fails on some
/// binaries with "Truncated function name table"); `None` when it holds no
/// sample of that binary.
pub(super) fn convert_text(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
) -> Result<Option<PathBuf>> {
    run_converter(recording, binary, out, branch_stack, &[])?;
    let text = if out.is_file() {
        read_lossy(out)?
    } else {
        String::new()
    };
    let functions = gcov_afdo::parse_llvm_text(&text)
        .with_context(|| format!("reading create_llvm_prof's profile {}", out.display()))?;
    Ok(functions
        .iter()
        .any(|f| f.total() > 0)
        .then(|| out.to_path_buf()))
}

/// A text profile, its bytes read as UTF-8 where they are not (some names
/// `create_llvm_prof` writes are garbage; `gcov_afdo` leaves them out).
pub(super) fn read_lossy(path: &Path) -> Result<String> {
    Ok(String::from_utf8_lossy(&fs_err::read(path)?).into_owned())
}

fn run_converter(
    recording: &Path,
    binary: &Path,
    out: &Path,
    branch_stack: bool,
    extra: &[&str],
) -> Result<()> {
    let mut command = Command::new(converter()?);
    command
        .args(extra)
        .arg(format!("--binary={}", binary.display()))
        .arg(format!("--profile={}", recording.display()))
        .arg(format!("--out={}", out.display()))
        .arg(format!("--use_lbr={branch_stack}"))
        // Text: create_llvm_prof 0.19's binary writer fails on some
        // daemons ("Truncated function name table"); llvm-profdata reads
        // the text form and merges it into the binary one.
        .arg("--format=text")
        // glog would otherwise leave log files in /tmp on every call.
        .arg("--logtostderr");
    let result = capture_command(&mut command, TIMEOUT).context("running create_llvm_prof")?;
    if !result.success() {
        bail!(
            "create_llvm_prof failed on {} for {}:\n{}",
            recording.display(),
            binary.display(),
            quote_output(&result.stderr)
        );
    }
    Ok(())
}

/// `create_llvm_prof` 0.19 sometimes writes an inlined call site's name
/// as bytes from nowhere (`3: P\u{fffd}D\u{fffd}U  P\u{fffd}A:0`, seen
/// on a forking daemon recorded over its whole life), which
/// `llvm-profdata` then refuses. Such a call site, and everything nested
/// under it, is left out; the count of those left out is returned.
/// In the text format a body line is `OFFSET: COUNT [TARGET:COUNT]*` and
/// a call site `OFFSET: NAME:TOTAL`, each nested one space deeper.
fn drop_garbled_callsites(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut dropped = 0;
    let mut skip_deeper_than: Option<usize> = None;
    for line in text.lines() {
        let depth = line.len() - line.trim_start_matches(' ').len();
        if let Some(limit) = skip_deeper_than {
            if depth > limit {
                continue;
            }
            skip_deeper_than = None;
        }
        if depth > 0 && is_garbled_callsite(line.trim_start()) {
            dropped += 1;
            skip_deeper_than = Some(depth);
            continue;
        }
        // A garbled name holding a newline leaves its tail at depth 0:
        // no function header. It and what it nests (as a call site, one
        // level deep) are left out.
        if depth == 0 && !line.is_empty() && !is_function_header(line) {
            dropped += 1;
            skip_deeper_than = Some(1);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, dropped)
}

/// Whether an unindented line is a function's header, `NAME:TOTAL:HEAD`
/// with a name that is a symbol (printable ASCII without spaces).
fn is_function_header(line: &str) -> bool {
    let mut parts = line.rsplitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(head), Some(total), Some(name)) => {
            head.trim().parse::<u64>().is_ok()
                && total.parse::<u64>().is_ok()
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_graphic())
        }
        _ => false,
    }
}

/// Whether `line` (indentation removed) is a call site whose name is not
/// a symbol: a symbol is printable ASCII without spaces.
fn is_garbled_callsite(line: &str) -> bool {
    let Some((_, rest)) = line.split_once(": ") else {
        return false;
    };
    if rest
        .split_whitespace()
        .next()
        .is_some_and(|w| w.parse::<u64>().is_ok())
    {
        return false; // a body line: a count first
    }
    let name = rest.rsplit_once(':').map_or(rest, |(name, _)| name);
    name.is_empty() || !name.chars().all(|c| c.is_ascii_graphic())
}

/// Whether a sample profile names at least one function with samples.
fn has_samples(profile: &Path) -> Result<bool> {
    if !profile.is_file() {
        return Ok(false);
    }
    let tool = llvm::find_llvm_profdata()?;
    let mut command = Command::new(tool);
    command.args(["show", "--sample"]).arg(profile);
    let result = capture_command(&mut command, TIMEOUT).context("running llvm-profdata show")?;
    Ok(result.success() && result.stdout.contains("Function: "))
}

#[cfg(test)]
mod tests {
    /// The recording of a forking daemon's whole life that
    /// `create_llvm_prof` 0.19 wrote with a garbled inlined name.
    #[test]
    fn a_garbled_inlined_call_site_is_left_out_with_what_it_nests() {
        let text = "startup_burn:1965:0\n 1: 0\n 5.3: 1657\n 3: P\u{fffd}D\u{fffd}U  P\u{fffd}A:0\n  3: 0\n  4: 0\n 6: 303\n 7: helper:40\n  1: 40\nmain:10:1\n 1: 1\n";
        let (clean, dropped) = super::drop_garbled_callsites(text);
        assert_eq!(dropped, 1);
        assert_eq!(
            clean,
            "startup_burn:1965:0\n 1: 0\n 5.3: 1657\n 6: 303\n 7: helper:40\n  1: 40\nmain:10:1\n 1: 1\n"
        );
    }

    /// A garbled name that held a newline: its tail starts a line of its
    /// own at depth 0, its body two levels deep (seen on the same daemon).
    #[test]
    fn a_garbled_name_split_onto_a_line_of_its_own_is_left_out() {
        let text = "startup_burn:1959:0\n 5.3: 1618\n 65498: 0\n\u{c}\u{12}nU\u{0}\u{0}\u{fffd}$\t:0\n  3: 0\n  4: 0\n 6: 340\nserve:11:0\n 6: 5\n";
        let (clean, dropped) = super::drop_garbled_callsites(text);
        assert_eq!(dropped, 1);
        assert_eq!(
            clean,
            "startup_burn:1959:0\n 5.3: 1618\n 65498: 0\n 6: 340\nserve:11:0\n 6: 5\n"
        );
    }
}
