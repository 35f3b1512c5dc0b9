//! One gcc `.gcda` file, or a directory tree of them: gcc finds each by
//! its name and place, so a tree keeps both.

use std::path::{Path, PathBuf};

use super::{tool_reads, BroughtFormat, Format};

pub struct Gcda;

impl BroughtFormat for Gcda {
    fn name(&self) -> &'static str {
        "gcda"
    }

    fn describe(&self) -> &'static str {
        "gcc profile (.gcda)"
    }

    /// gcc's `gcda` tag, written as a little-endian word.
    fn magic(&self, head: &[u8]) -> bool {
        head.starts_with(b"adcg")
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".gcda"]
    }

    fn family(&self) -> &'static str {
        "gcda"
    }

    fn part_format(&self, part: &Path) -> Option<Format> {
        part.extension()
            .is_some_and(|e| e == "gcda")
            .then_some(Format::GCDA)
    }

    /// A `.gcda` keeps its place in the tree (gcc finds it by its name).
    fn target(
        &self,
        into: &Path,
        tree: Option<&Path>,
        part: &Path,
        _index: usize,
        _extension: &str,
    ) -> PathBuf {
        match tree {
            Some(root) => into.join(part.strip_prefix(root).unwrap_or(part)),
            None => into.join(part.file_name().unwrap_or_default()),
        }
    }

    fn readable(&self, path: &Path, _size: u64) -> Result<(), String> {
        tool_reads("gcov-dump", &["-l", &path.to_string_lossy()])
    }
}
