//! `afterburner profile --out NAME.afdo`: the samples converted where they
//! were taken, into gcc's AutoFDO profile. A `perf.data` places samples by
//! address, so it only fits the very build that ran; the `.afdo` names
//! functions and source lines, so a later build of the same source (or of
//! a newer revision: a stale profile) can bring it. The conversion needs
//! the running binary's symbols and DWARF line tables: the process's own
//! executable, or `--binary`, an unstripped copy of the same build.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use crate::toolchain::autofdo::from_ip;
use crate::toolchain::formats::gcov_afdo;

/// Whether `out` asks for a gcc AutoFDO profile.
pub fn wanted(out: &Path) -> bool {
    out.extension().is_some_and(|e| e == "afdo")
}

/// The recording kept beside `out` (`NAME.afdo` → `NAME.perf.data`).
pub fn recording_for(out: &Path) -> PathBuf {
    out.with_extension("perf.data")
}

/// The binary to convert against: `given`, else the process's executable.
pub fn binary_of(pid: libc::pid_t, given: Option<&Path>) -> Result<PathBuf> {
    if let Some(binary) = given {
        return Ok(binary.to_path_buf());
    }
    let exe = format!("/proc/{pid}/exe");
    fs_err::read_link(&exe).with_context(|| {
        format!("reading {exe}\nhint: give the running build's unstripped binary with --binary")
    })
}

/// Convert `recording` for `binary` into gcc's format at `out`; the number
/// of functions with samples.
pub fn convert(recording: &Path, binary: &Path, out: &Path) -> Result<usize> {
    let text = out.with_extension("afdo.txt");
    let converted = from_ip::convert(recording, binary, &text, from_ip::Dialect::Gcc)?;
    let Some(converted) = converted else {
        bail!(
            "none of the samples in {} lies in {}\nhint: give with --binary the executable the process runs (its file name must be the one the process mapped)",
            recording.display(),
            binary.display()
        );
    };
    let functions = gcov_afdo::parse_llvm_text(&fs_err::read_to_string(&converted)?)
        .with_context(|| format!("reading {}", converted.display()))?;
    fs_err::remove_file(&converted)?;
    let sampled = functions.iter().filter(|f| f.total() > 0).count();
    let staging = out.with_extension("afdo.tmp");
    fs_err::write(&staging, gcov_afdo::write(&functions))?;
    fs_err::rename(&staging, out)?;
    Ok(sampled)
}
