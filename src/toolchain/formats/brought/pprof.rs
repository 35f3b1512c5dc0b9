//! A Go CPU profile (`*.pprof`, pprof's gzipped `profile.proto`), what Go's
//! PGO reads.

use std::path::Path;

use super::{not_empty, BroughtFormat};

pub struct Pprof;

impl BroughtFormat for Pprof {
    fn name(&self) -> &'static str {
        "pprof"
    }

    fn describe(&self) -> &'static str {
        "Go CPU profile (.pprof)"
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".pprof", ".pgo", ".pb.gz"]
    }

    fn readable(&self, _path: &Path, size: u64) -> Result<(), String> {
        not_empty(size)
    }
}
