//! The formats a profile brought from elsewhere comes in (`profile =
//! "prod/redis.perf.data"` on a variant), one file each, declared in the
//! one list [`formats!`]: how each is recognised (its first bytes, else its
//! name), said, laid out for a round's merge and checked readable. Which
//! training round a format can stand in for is the round's to say (its
//! `accepts`).
//!
//! To add a format: write `brought/<name>.rs` with a unit struct
//! implementing [`BroughtFormat`] and add `<name>::<Struct> as <CONSTANT>`
//! to `formats!` below; a round that reads it names it in its `accepts`.
//!
//! Brought files come from other machines and are untrusted: sizes are
//! bounded ([`MAX_FILE_BYTES`]) and archives unpack through the untrusted
//! tar reader only.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The largest brought file (and the most an archive may unpack to): 4 GiB.
pub use super::untrusted_tar::MAX_FILE_BYTES;

/// A format of brought profile files.
pub trait BroughtFormat: Sync {
    /// Its name in records (`perf-data`).
    fn name(&self) -> &'static str;

    /// How it is said in messages (`perf recording (perf.data)`).
    fn describe(&self) -> &'static str;

    /// Whether a file's first bytes are this format's (for a format with a
    /// magic number).
    fn magic(&self, _head: &[u8]) -> bool {
        false
    }

    /// The file name endings that say this format, for one without a magic
    /// number (or a compressed one, whose first bytes are gzip's).
    fn endings(&self) -> &'static [&'static str] {
        &[]
    }

    /// The formats one merge reads together share a family (a `.profdata`
    /// with `.profraw` files); the name of this one's.
    fn family(&self) -> &'static str {
        self.name()
    }

    /// The files a brought entry of this format holds, and the tree they
    /// keep their places in where they do: a directory's files, else the
    /// file itself. `scratch` is a directory of its own to unpack into.
    fn parts(&self, path: &Path, _scratch: &Path) -> anyhow::Result<Parts> {
        Ok(if path.is_dir() {
            Parts {
                tree: Some(path.to_path_buf()),
                files: files_in(path),
            }
        } else {
            Parts {
                tree: None,
                files: vec![path.to_path_buf()],
            }
        })
    }

    /// The format of one of its parts (an archive's `.gcda` files are
    /// `gcda`); `None` leaves the part out.
    fn part_format(&self, _part: &Path) -> Option<Format> {
        Format::from_name(self.name())
    }

    /// Where the `index`th part goes in the round's directory `into`:
    /// renamed with the round's raw `extension` (the merge reads parts by
    /// content) unless the format keeps its own name or place.
    fn target(
        &self,
        into: &Path,
        _tree: Option<&Path>,
        _part: &Path,
        index: usize,
        extension: &str,
    ) -> PathBuf {
        into.join(format!("{index}.{extension}"))
    }

    /// Whether the tool that will read it can (`size` bytes): `Err` says
    /// why not.
    fn readable(&self, path: &Path, size: u64) -> Result<(), String>;
}

/// A brought entry's files: where they lie, and the tree they keep their
/// places in.
pub struct Parts {
    pub tree: Option<PathBuf>,
    pub files: Vec<PathBuf>,
}

/// Declares each format's module, lists the formats in the order their
/// magic numbers are tried, and names each one a constant of [`Format`]:
/// the one list. (rustfmt does not reach modules a macro declares;
/// `.ci/run` checks these files by name.)
macro_rules! formats {
    ($($module:ident :: $format:ident as $constant:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every brought format, in the order detection tries them.
        pub const FORMATS: &[Format] = &[$(Format(&$module::$format)),*];

        impl Format {
            $(
                #[doc = concat!("The `", stringify!($module), "` format.")]
                pub const $constant: Format = Format(&$module::$format);
            )*
        }
    };
}

formats! {
    profraw::Profraw as PROFRAW,
    profdata::Profdata as PROFDATA,
    gcc_afdo::GccAfdo as GCC_AFDO,
    gcda::Gcda as GCDA,
    perf_data::PerfData as PERF_DATA,
    gcda_archive::GcdaArchive as GCDA_ARCHIVE,
    pprof::Pprof as PPROF,
    fdata::Fdata as FDATA,
}

/// A brought format, compared, printed and written by its name.
#[derive(Clone, Copy)]
pub struct Format(pub &'static dyn BroughtFormat);

afterburner_leaves::named_handle!(Format, BroughtFormat, name, |name| {
    Format::from_name(name).ok_or_else(|| format!("unknown profile format `{name}`"))
});

impl Format {
    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Format> {
        FORMATS.iter().find(|f| f.name() == name).copied()
    }

    /// Every format as messages say it, for a hint: "clang raw profile
    /// (.profraw), …".
    pub fn all_described() -> String {
        FORMATS
            .iter()
            .map(|f| f.describe())
            .collect::<Vec<_>>()
            .join(", ")
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
    #[serde(rename = "kind")]
    pub format: Format,
}

/// Detect the kind of `path` (a file, or a directory of profiles): by its
/// first bytes where the format has a magic number, else by its extension.
/// `Err` says why none fits.
pub fn detect(path: &Path) -> Result<Format, String> {
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
    if let Some(format) = by_magic(head) {
        return Ok(format);
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

/// The format a file's first bytes say, for the formats with a magic
/// number.
pub fn by_magic(head: &[u8]) -> Option<Format> {
    FORMATS.iter().find(|f| f.magic(head)).copied()
}

/// The format a file name says, for the formats without a magic number
/// (and compressed ones, whose first bytes are gzip's).
fn by_extension(name: &str) -> Option<Format> {
    FORMATS
        .iter()
        .find(|f| f.endings().iter().any(|ending| name.ends_with(ending)))
        .copied()
}

/// A directory: a `.gcda` tree when it holds any `.gcda`; else the one
/// kind all its files share.
fn detect_dir(dir: &Path) -> Result<Format, String> {
    let files = files_in(dir);
    if files
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "gcda"))
    {
        return Ok(Format::GCDA);
    }
    let mut kinds: Vec<Format> = files.iter().filter_map(|f| detect(f).ok()).collect();
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

/// Whether `program` (run with `args`, naming the file) reads it: `Err`
/// with the first line it said where it cannot.
fn tool_reads(program: &str, args: &[&str]) -> Result<(), String> {
    match crate::process::capture(program, args, std::time::Duration::from_mins(2)) {
        Ok(out) if out.success() && !out.stderr.contains("ERROR") => Ok(()),
        Ok(out) => Err(format!(
            "`{program}` cannot read it: {}",
            out.stderr
                .lines()
                .chain(out.stdout.lines())
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no reason given")
                .trim()
        )),
        Err(e) => Err(format!("`{program}` did not run: {e}")),
    }
}

/// Whether an `llvm-profdata` here reads the LLVM profile at `path`:
/// clang's release, else rustc's (a cargo target's profiles are of rustc's
/// LLVM, which the round that merges them uses). `Err` says why none can.
fn llvm_profdata_reads(path: &Path) -> Result<(), String> {
    let mut tools: Vec<String> = Vec::new();
    let mut why: Vec<String> = Vec::new();
    match crate::toolchain::find_llvm_profdata() {
        Ok(t) => tools.push(t),
        Err(e) => why.push(format!("{e:#}")),
    }
    if crate::toolchain::rustc::probe().is_some() {
        match crate::toolchain::rustc::llvm_profdata() {
            Ok(c) => tools.push(c.path.to_string_lossy().into_owned()),
            Err(e) => why.push(format!("{e:#}")),
        }
    }
    tools.dedup();
    for tool in &tools {
        match tool_reads(tool, &["show", &path.to_string_lossy()]) {
            Ok(()) => return Ok(()),
            Err(e) => why.push(e),
        }
    }
    Err(why.join("; "))
}

/// A format read by its round's own tool later: readable when not empty.
fn not_empty(size: u64) -> Result<(), String> {
    if size == 0 {
        Err("the file is empty".to_owned())
    } else {
        Ok(())
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
        assert_eq!(by_magic(&profraw), Some(Format::PROFRAW));
        assert_eq!(
            by_magic(&[0xff, b'l', b'p', b'r', b'o', b'f', b'i', 0x81]),
            Some(Format::PROFDATA)
        );
        assert_eq!(by_magic(b"adcg*22B"), Some(Format::GCDA));
        assert_eq!(by_magic(b"adcg\x02\0\0\0\0\0\0\0"), Some(Format::GCC_AFDO));
        assert_eq!(by_magic(b"PERFILE2...."), Some(Format::PERF_DATA));
        let mut tar = vec![0_u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(by_magic(&tar), Some(Format::GCDA_ARCHIVE));
        assert_eq!(by_magic(b"\x1f\x8b"), None);
        assert_eq!(by_extension("cpu.pprof"), Some(Format::PPROF));
        assert_eq!(by_extension("prof.tar.gz"), Some(Format::GCDA_ARCHIVE));
        assert_eq!(by_extension("prod.perf.data"), Some(Format::PERF_DATA));
        assert_eq!(by_extension("notes.txt"), None);
        // Every format's name reads back to it.
        for f in FORMATS {
            assert_eq!(Format::from_name(f.name()), Some(*f));
        }
    }
}
