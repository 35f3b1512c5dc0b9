//! Addresses of a binary to functions, files and lines, with inlined
//! frames and each function's first line: `llvm-symbolizer --inlining
//! --output-style=JSON` reads the binary's DWARF (binutils' `addr2line`
//! 2.40 reads no line of Go 1.26's DWARF 5; perf's own `srcline` calls it,
//! and `go tool addr2line` has no inlined frames nor start lines). Also
//! where perf's file offsets lie in the binary's address space (its ELF
//! program headers).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::process::{capture_command, quote_output};

/// One frame at an address: the function, its file and first line, and the
/// line the address is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub function: String,
    pub file: String,
    pub start_line: i64,
    pub line: i64,
    /// The line table's discriminator (innermost frame) or the inlined
    /// call's (`DW_AT_GNU_discriminator`, outer frames), as the DWARF
    /// holds it: gcc's raw number, or LLVM's encoded one.
    pub discriminator: u32,
}

/// Addresses per `llvm-symbolizer` call: the command line stays far below
/// the kernel's limit on arguments.
const CHUNK: usize = 4000;
/// How long one `llvm-symbolizer` call may take.
const TIMEOUT: Duration = Duration::from_mins(5);

/// `llvm-symbolizer`, unversioned on the PATH or the newest of Debian's
/// `/usr/lib/llvm-N/bin`.
pub fn find_symbolizer() -> Option<PathBuf> {
    if super::tools::is_installed("llvm-symbolizer") {
        return Some(PathBuf::from("llvm-symbolizer"));
    }
    super::llvm::installed_majors()
        .into_iter()
        .rev()
        .find_map(|major| super::llvm::tool_of("llvm-symbolizer", major))
}

/// The install hint when it is missing.
pub const SYMBOLIZER_HINT: &str = "install it with `apt-get install -y llvm` (llvm-symbolizer reads the binary's DWARF for functions, files and lines)";

/// The frames at each of `addresses` in `binary`, innermost first; an
/// address the DWARF does not cover gets none.
pub fn symbolize(binary: &Path, addresses: &[u64]) -> Result<HashMap<u64, Vec<Frame>>> {
    let tool = find_symbolizer()
        .with_context(|| format!("llvm-symbolizer is missing\nhint: {SYMBOLIZER_HINT}"))?;
    let mut out = HashMap::new();
    for chunk in addresses.chunks(CHUNK) {
        let mut command = Command::new(&tool);
        command
            .arg(format!("--obj={}", binary.display()))
            .args(["--inlining", "--no-demangle", "--output-style=JSON"])
            .args(chunk.iter().map(|a| format!("{a:#x}")));
        let result = capture_command(&mut command, TIMEOUT)
            .with_context(|| format!("running {} on {}", tool.display(), binary.display()))?;
        if !result.success() {
            bail!(
                "llvm-symbolizer failed on {}:\n{}",
                binary.display(),
                quote_output(&result.stderr)
            );
        }
        let parsed = parse_output(&result.stdout).with_context(|| {
            format!("reading llvm-symbolizer's output for {}", binary.display())
        })?;
        out.extend(parsed);
    }
    Ok(out)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JsonAddress {
    address: String,
    #[serde(default)]
    symbol: Vec<JsonFrame>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JsonFrame {
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    file_name: String,
    #[serde(default)]
    line: i64,
    #[serde(default)]
    start_line: i64,
    #[serde(default)]
    discriminator: u32,
}

/// `--output-style=JSON` output: one array of every address given on the
/// command line (an object a line when they come on standard input).
fn parse_output(text: &str) -> Result<Vec<(u64, Vec<Frame>)>> {
    if text.trim_start().starts_with('[') {
        let all: Vec<JsonAddress> = serde_json::from_str(text)?;
        return all.into_iter().map(frames_of).collect();
    }
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| frames_of(serde_json::from_str(l)?))
        .collect()
}

/// An address and its frames (those the DWARF names; `??` is
/// llvm-symbolizer's unknown).
fn frames_of(parsed: JsonAddress) -> Result<(u64, Vec<Frame>)> {
    let hex = parsed.address.trim_start_matches("0x");
    let address = u64::from_str_radix(hex, 16)
        .with_context(|| format!("`{}` is not an address", parsed.address))?;
    let frames = parsed
        .symbol
        .into_iter()
        .filter(|f| !f.function_name.is_empty() && f.function_name != "??")
        .map(|f| Frame {
            function: f.function_name,
            file: f.file_name,
            start_line: f.start_line,
            line: f.line,
            discriminator: f.discriminator,
        })
        .collect();
    Ok((address, frames))
}

/// One loaded segment of an ELF file: where its bytes lie in the file and
/// in the address space it is linked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub offset: u64,
    pub vaddr: u64,
    pub size: u64,
    pub executable: bool,
}

impl Segment {
    /// The linked address of file offset `offset`, when this segment holds it.
    pub fn address_of(&self, offset: u64) -> Option<u64> {
        (offset >= self.offset && offset - self.offset < self.size)
            .then(|| offset - self.offset + self.vaddr)
    }
}

/// The program header type of a loaded segment.
const PT_LOAD: u32 = 1;

/// The `PT_LOAD` segments of a 64-bit little-endian ELF file (x86-64,
/// arm64). Three fields of the ELF header and the program headers are
/// read; perf prints user-space addresses as offsets into the file they
/// were mapped from, and the symbolizer takes linked addresses.
pub fn load_segments(binary: &Path) -> Result<Vec<Segment>> {
    let data = fs_err::read(binary)?;
    let not = || {
        anyhow::anyhow!(
            "{} is not a 64-bit little-endian ELF file, which Go PGO from perf samples reads",
            binary.display()
        )
    };
    if data.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1]) {
        return Err(not());
    }
    let u16_at = |at: usize| -> Option<u64> {
        Some(u64::from(u16::from_le_bytes(
            data.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
    };
    let phoff = usize::try_from(u64_at(0x20).ok_or_else(not)?)?;
    let entsize = usize::try_from(u16_at(0x36).ok_or_else(not)?)?;
    let count = usize::try_from(u16_at(0x38).ok_or_else(not)?)?;
    let mut segments = Vec::new();
    for i in 0..count {
        let at = phoff + i * entsize;
        if u32_at(at).ok_or_else(not)? != PT_LOAD {
            continue;
        }
        segments.push(Segment {
            executable: u32_at(at + 4).ok_or_else(not)? & 1 != 0,
            offset: u64_at(at + 8).ok_or_else(not)?,
            vaddr: u64_at(at + 16).ok_or_else(not)?,
            size: u64_at(at + 32).ok_or_else(not)?,
        });
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inlined_frames_and_start_lines_and_leaves_unknowns_out() {
        let line = r#"{"Address":"0x4ce11b","ModuleName":"gohot","Symbol":[{"Column":0,"Discriminator":0,"FileName":"/s/main.go","FunctionName":"main.mix.step","Line":18,"StartAddress":"","StartFileName":"/s/main.go","StartLine":18},{"Column":0,"Discriminator":0,"FileName":"/s/main.go","FunctionName":"main.run","Line":26,"StartAddress":"0x4ce0e0","StartFileName":"/s/main.go","StartLine":23}]}"#;
        let (address, frames) = parse_output(line).unwrap().remove(0);
        assert_eq!(address, 0x004c_e11b);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[1].function, "main.run");
        assert_eq!((frames[1].start_line, frames[1].line), (23, 26));
        let unknown = r#"{"Address":"0x10","ModuleName":"x","Symbol":[{"FileName":"??","FunctionName":"??","Line":0,"StartLine":0}]}"#;
        assert!(parse_output(unknown).unwrap()[0].1.is_empty());
        assert!(parse_output("not json").is_err());
        // Addresses given as arguments come back as one array.
        let both = parse_output(&format!("[{line},{unknown}]")).unwrap();
        assert_eq!(both.len(), 2);
        assert_eq!(both[1].0, 0x10);
    }

    #[test]
    fn file_offsets_map_into_the_segment_that_holds_them() {
        let text = Segment {
            offset: 0,
            vaddr: 0x40_0000,
            size: 0xce571,
            executable: true,
        };
        assert_eq!(text.address_of(0xce11b), Some(0x4c_e11b));
        assert_eq!(text.address_of(0xce571), None);
    }

    #[test]
    fn the_test_binary_itself_has_an_executable_segment() {
        let me = std::env::current_exe().unwrap();
        let segments = load_segments(&me).unwrap();
        assert!(segments.iter().any(|s| s.executable), "{segments:?}");
        let not_elf =
            std::env::temp_dir().join(format!("afterburner-not-elf-{}", std::process::id()));
        fs_err::write(&not_elf, "#!/bin/sh\n").unwrap();
        let err = load_segments(&not_elf).unwrap_err().to_string();
        assert!(err.contains("not a 64-bit little-endian ELF"), "{err}");
        fs_err::remove_file(&not_elf).unwrap();
    }
}
