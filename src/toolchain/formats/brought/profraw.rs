//! clang's raw instrumented profile (`*.profraw`), as a profiled binary
//! writes it; `llvm-profdata merge` reads it with `.profdata` files.

use std::path::Path;

use super::{llvm_profdata_reads, BroughtFormat};

/// LLVM's raw profile magic, 64- and 32-bit (`\xffl` `profr`/`profR`
/// `\x81`, little-endian).
const MAGIC: [[u8; 8]; 2] = [
    [0x81, b'r', b'f', b'o', b'r', b'p', b'l', 0xff],
    [0x81, b'R', b'f', b'o', b'r', b'p', b'l', 0xff],
];

pub struct Profraw;

impl BroughtFormat for Profraw {
    fn name(&self) -> &'static str {
        "profraw"
    }

    fn describe(&self) -> &'static str {
        "clang raw profile (.profraw)"
    }

    fn magic(&self, head: &[u8]) -> bool {
        MAGIC.iter().any(|m| head.starts_with(m))
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".profraw"]
    }

    fn family(&self) -> &'static str {
        "llvm-instrumented"
    }

    fn readable(&self, path: &Path, _size: u64) -> Result<(), String> {
        llvm_profdata_reads(path)
    }
}
