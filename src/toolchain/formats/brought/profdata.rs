//! clang's indexed instrumented profile (`*.profdata`), what
//! `llvm-profdata merge` writes and `-fprofile-use` reads.

use std::path::Path;

use super::{llvm_profdata_reads, BroughtFormat};

/// The indexed profile's magic (`\xfflprofi\x81`).
const MAGIC: [u8; 8] = [0xff, b'l', b'p', b'r', b'o', b'f', b'i', 0x81];

pub struct Profdata;

impl BroughtFormat for Profdata {
    fn name(&self) -> &'static str {
        "profdata"
    }

    fn describe(&self) -> &'static str {
        "clang indexed profile (.profdata)"
    }

    fn magic(&self, head: &[u8]) -> bool {
        head.starts_with(&MAGIC)
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".profdata"]
    }

    fn family(&self) -> &'static str {
        "llvm-instrumented"
    }

    fn readable(&self, path: &Path, _size: u64) -> Result<(), String> {
        llvm_profdata_reads(path)
    }
}
