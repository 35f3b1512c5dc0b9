//! A tar archive (optionally gzip-compressed) of a `.gcda` tree, unpacked
//! through the untrusted tar reader; its `.gcda` files are laid out as a
//! tree's.

use std::path::Path;

use super::super::untrusted_tar;
use super::{files_in, not_empty, BroughtFormat, Format, Parts};

pub struct GcdaArchive;

impl BroughtFormat for GcdaArchive {
    fn name(&self) -> &'static str {
        "gcda-archive"
    }

    fn describe(&self) -> &'static str {
        "tar archive (of a .gcda tree)"
    }

    /// A tar header's `ustar` at byte 257.
    fn magic(&self, head: &[u8]) -> bool {
        head.len() >= 262 && &head[257..262] == b"ustar"
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".tar.gz", ".tgz", ".tar"]
    }

    fn family(&self) -> &'static str {
        "gcda"
    }

    fn parts(&self, path: &Path, scratch: &Path) -> anyhow::Result<Parts> {
        untrusted_tar::unpack(path, scratch)?;
        Ok(Parts {
            tree: Some(scratch.to_path_buf()),
            files: files_in(scratch),
        })
    }

    fn part_format(&self, part: &Path) -> Option<Format> {
        Format::GCDA.part_format(part)
    }

    fn readable(&self, _path: &Path, size: u64) -> Result<(), String> {
        not_empty(size)
    }
}
