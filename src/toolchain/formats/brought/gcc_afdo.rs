//! gcc's AutoFDO profile (`*.afdo`, what `-fauto-profile=` reads:
//! afterburner's, or `create_gcov`'s). It shares gcc's `gcda` tag, a small
//! version number after it; a brought one is merged as it is, not
//! converted.

use std::path::{Path, PathBuf};

use super::super::gcov_afdo_read;
use super::BroughtFormat;

/// The extension a brought gcc AutoFDO profile keeps in its round's
/// directory, where the round merges it as it is.
pub const EXTENSION: &str = "afdo";

pub struct GccAfdo;

impl BroughtFormat for GccAfdo {
    fn name(&self) -> &'static str {
        "gcc-afdo"
    }

    fn describe(&self) -> &'static str {
        "gcc AutoFDO profile (.afdo)"
    }

    fn magic(&self, head: &[u8]) -> bool {
        gcov_afdo_read::is_afdo(head)
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".afdo"]
    }

    fn target(
        &self,
        into: &Path,
        _tree: Option<&Path>,
        _part: &Path,
        index: usize,
        _extension: &str,
    ) -> PathBuf {
        into.join(format!("{index}.{EXTENSION}"))
    }

    fn readable(&self, path: &Path, _size: u64) -> Result<(), String> {
        let bytes = fs_err::read(path).map_err(|e| e.to_string())?;
        gcov_afdo_read::read(&bytes).map(|_| ())
    }
}
