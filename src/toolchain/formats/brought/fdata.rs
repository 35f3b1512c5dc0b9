//! A BOLT profile (`*.fdata`, from `perf2bolt` or an instrumented run).

use std::path::Path;

use super::{not_empty, BroughtFormat};

pub struct Fdata;

impl BroughtFormat for Fdata {
    fn name(&self) -> &'static str {
        "fdata"
    }

    fn describe(&self) -> &'static str {
        "BOLT profile (.fdata)"
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".fdata"]
    }

    fn readable(&self, _path: &Path, size: u64) -> Result<(), String> {
        not_empty(size)
    }
}
