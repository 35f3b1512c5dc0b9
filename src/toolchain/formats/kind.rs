//! What kind of profile a file is — by its first bytes where the format
//! has a magic number, else by its extension — for profiles brought from
//! elsewhere (`profile = "prod/redis.perf.data"` on a variant). Which
//! training round a kind can stand in for is the round's to say (its
//! `accepts`).
//!
//! Brought files come from other machines and are untrusted: sizes are
//! bounded ([`MAX_FILE_BYTES`]) and archives unpack through the untrusted
//! tar reader only.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The largest brought file (and the most an archive may unpack to): 4 GiB.
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// What a brought file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// clang's raw instrumented profile (`*.profraw`).
    Profraw,
    /// clang's indexed instrumented profile (`*.profdata`).
    Profdata,
    /// One gcc `.gcda` file, or a directory tree of them.
    Gcda,
    /// A tar archive (optionally gzip-compressed) of a `.gcda` tree.
    GcdaArchive,
    /// A `perf record` file (`perf.data`).
    PerfData,
    /// A BOLT profile (`*.fdata`, from `perf2bolt` or `-instrument`).
    Fdata,
    /// A Go CPU profile (`*.pprof`, pprof's gzipped `profile.proto`).
    Pprof,
    /// gcc's AutoFDO profile (`*.afdo`, what `-fauto-profile=` reads:
    /// afterburner's, or `create_gcov`'s).
    GccAfdo,
}

impl Kind {
    /// How the kind is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Profraw => "clang raw profile (.profraw)",
            Kind::Profdata => "clang indexed profile (.profdata)",
            Kind::Gcda => "gcc profile (.gcda)",
            Kind::GcdaArchive => "tar archive (of a .gcda tree)",
            Kind::PerfData => "perf recording (perf.data)",
            Kind::Fdata => "BOLT profile (.fdata)",
            Kind::Pprof => "Go CPU profile (.pprof)",
            Kind::GccAfdo => "gcc AutoFDO profile (.afdo)",
        }
    }

    /// Which kinds one merge reads together: a `.profdata` with `.profraw`
    /// files, an archive with a `.gcda` tree; every other kind alone.
    pub fn family(self) -> u8 {
        match self {
            Kind::Profraw | Kind::Profdata => 0,
            Kind::Gcda | Kind::GcdaArchive => 1,
            other => 2 + other as u8,
        }
    }
}

/// One file of a brought profile, with its weight in the merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BroughtFile {
    /// Absolute path: a file, or a directory holding the profile's files.
    pub path: PathBuf,
    /// How much it counts in the merge (1 to [`crate::toolchain::weights::MAX`]).
    pub weight: u32,
    /// What it is.
    pub kind: Kind,
}

/// Detect the kind of `path` (a file, or a directory of profiles): by its
/// first bytes where the format has a magic number, else by its extension.
/// `Err` says why none fits.
pub fn detect(path: &Path) -> Result<Kind, String> {
    let meta = fs_err::metadata(path).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return detect_dir(path);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} is {} bytes, more than the {MAX_FILE_BYTES} a brought profile may have",
            path.display(),
            meta.len()
        ));
    }
    let mut head = [0_u8; 512];
    let read = fs_err::File::open(path)
        .and_then(|mut f| read_up_to(&mut f, &mut head))
        .map_err(|e| e.to_string())?;
    let head = &head[..read];
    if let Some(kind) = by_magic(head) {
        return Ok(kind);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    by_extension(&name).ok_or_else(|| {
        format!(
            "{} is no profile afterburner knows (neither its first bytes nor its name say which)",
            path.display()
        )
    })
}

fn read_up_to(file: &mut fs_err::File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        let n = file.read(&mut buffer[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// The kind a file's first bytes say, for the formats with a magic number.
pub fn by_magic(head: &[u8]) -> Option<Kind> {
    // LLVM's raw profile magic, 64- and 32-bit (`\xffl` `profr`/`profR`
    // `\x81`, little-endian), and the indexed profile's (`\xfflprofi\x81`).
    const PROFRAW64: [u8; 8] = [0x81, b'r', b'f', b'o', b'r', b'p', b'l', 0xff];
    const PROFRAW32: [u8; 8] = [0x81, b'R', b'f', b'o', b'r', b'p', b'l', 0xff];
    const PROFDATA: [u8; 8] = [0xff, b'l', b'p', b'r', b'o', b'f', b'i', 0x81];
    if head.starts_with(&PROFRAW64) || head.starts_with(&PROFRAW32) {
        return Some(Kind::Profraw);
    }
    if head.starts_with(&PROFDATA) {
        return Some(Kind::Profdata);
    }
    // gcc's `gcda` tag, written as a little-endian word; AutoFDO profiles
    // share it, and a small version number follows.
    if super::gcov_afdo_read::is_afdo(head) {
        return Some(Kind::GccAfdo);
    }
    if head.starts_with(b"adcg") {
        return Some(Kind::Gcda);
    }
    if head.starts_with(b"PERFILE2") {
        return Some(Kind::PerfData);
    }
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        return Some(Kind::GcdaArchive);
    }
    None
}

/// The kind a file name says, for the formats without a magic number (and
/// compressed ones, whose first bytes are gzip's).
fn by_extension(name: &str) -> Option<Kind> {
    let kinds = [
        (".tar.gz", Kind::GcdaArchive),
        (".tgz", Kind::GcdaArchive),
        (".tar", Kind::GcdaArchive),
        (".pprof", Kind::Pprof),
        (".pgo", Kind::Pprof),
        (".pb.gz", Kind::Pprof),
        (".fdata", Kind::Fdata),
        (".afdo", Kind::GccAfdo),
        (".profraw", Kind::Profraw),
        (".profdata", Kind::Profdata),
        (".gcda", Kind::Gcda),
        (".perfdata", Kind::PerfData),
        ("perf.data", Kind::PerfData),
    ];
    kinds
        .iter()
        .find(|(suffix, _)| name.ends_with(suffix))
        .map(|(_, k)| *k)
}

/// A directory: a `.gcda` tree when it holds any `.gcda`; else the one
/// kind all its files share.
fn detect_dir(dir: &Path) -> Result<Kind, String> {
    let files = files_in(dir);
    if files
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "gcda"))
    {
        return Ok(Kind::Gcda);
    }
    let mut kinds: Vec<Kind> = files.iter().filter_map(|f| detect(f).ok()).collect();
    kinds.dedup();
    match kinds.as_slice() {
        [kind] => Ok(*kind),
        [] => Err(format!("{} holds no profile file", dir.display())),
        _ => Err(format!(
            "{} holds profiles of several kinds ({})",
            dir.display(),
            kinds
                .iter()
                .map(|k| k.describe())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every regular file under `dir`, sorted; symbolic links are left out (a
/// brought tree is read where it lies, never followed out of it).
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// A digest of the brought files' content and weights, for the key that
/// says the round's profile is current: a changed file is merged again and
/// the build that uses it rebuilt.
pub fn digest(files: &[BroughtFile]) -> anyhow::Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for file in files {
        let parts = if file.path.is_dir() {
            files_in(&file.path)
        } else {
            vec![file.path.clone()]
        };
        for part in parts {
            hasher.update(format!("{}\t{}\t", part.display(), file.weight).as_bytes());
            hasher.update(crate::digest::sha256_file(&part)?.as_bytes());
            hasher.update(b"\n");
        }
    }
    Ok(crate::digest::hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_decide_before_names() {
        let mut profraw = vec![0x81, b'r', b'f', b'o', b'r', b'p', b'l', 0xff];
        profraw.extend([0; 8]);
        assert_eq!(by_magic(&profraw), Some(Kind::Profraw));
        assert_eq!(
            by_magic(&[0xff, b'l', b'p', b'r', b'o', b'f', b'i', 0x81]),
            Some(Kind::Profdata)
        );
        assert_eq!(by_magic(b"adcg*22B"), Some(Kind::Gcda));
        assert_eq!(by_magic(b"adcg\x02\0\0\0\0\0\0\0"), Some(Kind::GccAfdo));
        assert_eq!(by_magic(b"PERFILE2...."), Some(Kind::PerfData));
        let mut tar = vec![0_u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(by_magic(&tar), Some(Kind::GcdaArchive));
        assert_eq!(by_magic(b"\x1f\x8b"), None);
        assert_eq!(by_extension("cpu.pprof"), Some(Kind::Pprof));
        assert_eq!(by_extension("prof.tar.gz"), Some(Kind::GcdaArchive));
        assert_eq!(by_extension("prod.perf.data"), Some(Kind::PerfData));
        assert_eq!(by_extension("notes.txt"), None);
    }
}
