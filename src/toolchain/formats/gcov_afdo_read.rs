//! Reading gcc's AutoFDO profile back (the file `-fauto-profile=` reads):
//! a profile brought from another machine, in the layout
//! [`super::gcov_afdo`] writes and gcc 12 reads (version 2: strings with a
//! byte length), in gcc 16's (version 3: a summary, file names, a timestamp
//! per function; see [`super::gcov_afdo::Layout::V3`]), or in the older one Debian 12's `create_gcov` (autofdo
//! 0.19) writes (strings counted in padded words; version 1, or by default
//! a version word whose bytes read `*704`, checked on its output here),
//! which gcc 12 refuses; either is read into [`Instance`]s and written again in gcc
//! 12's layout by the round's merge.
//!
//! Every length and count is checked against the bytes left, so a
//! truncated or hostile file is an error naming the offset, never a panic
//! or a huge allocation.

use std::collections::BTreeMap;

use super::gcov_afdo::{
    Instance, Line, AUTO_PROFILE_VERSION, AUTO_PROFILE_VERSION_3, GCOV_DATA_MAGIC, RESERVED_NAME,
    TAG_FILE_NAMES, TAG_FUNCTION, TAG_SUMMARY,
};

/// The version `create_gcov -gcov_version=1` (autofdo 0.19) writes.
const OLD_VERSION: u32 = 1;
/// The version word `create_gcov` 0.19 writes by default (its bytes read
/// `*704`, a gcda-style version no gcc has), in the same layout as 1.
const CREATE_GCOV_DEFAULT: u32 = 0x3430_372a;
/// Deeper inline stacks than this are refused (gcc reads them
/// recursively too; a real profile nests a few dozen at most).
const MAX_DEPTH: usize = 256;

/// Whether `head` (a file's first bytes) starts a gcc AutoFDO profile:
/// gcov's data magic then version 1, 2 or 3 (a `.gcda` has the same magic
/// and a version such as `B22*`).
pub fn is_afdo(head: &[u8]) -> bool {
    let word = |at: usize| {
        head.get(at..at + 4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    word(0) == Some(GCOV_DATA_MAGIC)
        && matches!(word(4), Some(v) if v == AUTO_PROFILE_VERSION || v == AUTO_PROFILE_VERSION_3 || v == OLD_VERSION || v == CREATE_GCOV_DEFAULT)
}

/// Read a gcc AutoFDO profile's functions.
pub fn read(bytes: &[u8]) -> Result<Vec<Instance>, String> {
    let mut r = Reader {
        bytes,
        at: 0,
        old: false,
    };
    let mut v3 = false;
    if r.word()? != GCOV_DATA_MAGIC {
        return Err("not a gcc AutoFDO profile (no gcov data magic)".to_owned());
    }
    let version = r.word()?;
    r.old = match version {
        AUTO_PROFILE_VERSION => false,
        AUTO_PROFILE_VERSION_3 => {
            v3 = true;
            false
        }
        OLD_VERSION | CREATE_GCOV_DEFAULT => true,
        other => {
            return Err(format!(
            "AutoFDO profile version {other}; versions 1 (create_gcov's), 2 (gcc 12's) and 3 (gcc 16's) are read"
        ))
        }
    };
    r.word()?;
    if v3 {
        r.summary()?;
    }
    r.tag(TAG_FILE_NAMES, "the name table")?;
    if v3 {
        // File names (gcc 16 uses them to tell apart static functions of
        // one name): read past, as every name is looked up by itself.
        for _ in 0..r.count(4)? {
            r.string()?;
        }
    }
    let count = r.count(if v3 { 8 } else { 4 })?;
    let mut names = Vec::with_capacity(count);
    for _ in 0..count {
        names.push(r.string()?);
        if v3 {
            r.word()?; // the name's file index
        }
    }
    r.tag(TAG_FUNCTION, "the function section")?;
    let count = r.count(if v3 { 20 } else { 12 })?;
    let mut functions = Vec::with_capacity(count);
    for _ in 0..count {
        let head = r.counter()?;
        if v3 {
            r.counter()?; // the timestamp (first run order), not kept
        }
        let mut function = r.instance(&names, 0)?;
        function.head = head;
        functions.push(function);
    }
    // The module section that follows is LIPO's and ignored, as gcc does.
    Ok(functions)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Version 1: strings counted in words.
    old: bool,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "cut short at byte {} (wanted {n} more of {} bytes)",
                self.at,
                self.bytes.len()
            ));
        };
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn word(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn counter(&mut self) -> Result<u64, String> {
        let low = u64::from(self.word()?);
        Ok(low | (u64::from(self.word()?) << 32))
    }

    /// A count of items each at least `least` bytes long: more than the
    /// bytes left could hold is an error, not an allocation.
    fn count(&mut self, least: usize) -> Result<usize, String> {
        let at = self.at;
        let n = self.word()? as usize;
        if n.saturating_mul(least) > self.bytes.len() - self.at {
            return Err(format!(
                "a count of {n} at byte {at} is more than the file holds"
            ));
        }
        Ok(n)
    }

    /// gcc 16's summary: its tag (no length word), five counters, an entry
    /// count as a counter, entries of a word and two counters; read past,
    /// as the writer computes it again from the functions.
    fn summary(&mut self) -> Result<(), String> {
        let at = self.at;
        let tag = self.word()?;
        if tag != TAG_SUMMARY {
            return Err(format!(
                "expected the summary (tag {TAG_SUMMARY:#010x}) at byte {at}, found {tag:#010x}"
            ));
        }
        for _ in 0..5 {
            self.counter()?;
        }
        let at = self.at;
        let entries = self.counter()?;
        let left = (self.bytes.len() - self.at) as u64;
        if entries.saturating_mul(20) > left {
            return Err(format!(
                "a count of {entries} at byte {at} is more than the file holds"
            ));
        }
        self.take(usize::try_from(entries * 20).unwrap_or(usize::MAX))?;
        Ok(())
    }

    fn tag(&mut self, want: u32, what: &str) -> Result<(), String> {
        let at = self.at;
        let tag = self.word()?;
        if tag != want {
            return Err(format!(
                "expected {what} (tag {want:#010x}) at byte {at}, found {tag:#010x}"
            ));
        }
        self.word()?; // the section's length, which gcc skips
        Ok(())
    }

    fn string(&mut self) -> Result<String, String> {
        let at = self.at;
        let length = self.word()? as usize;
        let bytes = if self.old {
            self.take(length.saturating_mul(4))?
        } else {
            self.take(length)?
        };
        let text = bytes.split(|b| *b == 0).next().unwrap_or_default();
        String::from_utf8(text.to_vec()).map_err(|_| format!("a name at byte {at} is not UTF-8"))
    }

    fn name<'n>(&self, names: &'n [String], index: u64) -> Result<&'n str, String> {
        usize::try_from(index)
            .ok()
            .and_then(|i| names.get(i))
            .map(String::as_str)
            .ok_or_else(|| {
                format!(
                    "name index {index} before byte {} is past the table of {}",
                    self.at,
                    names.len()
                )
            })
    }

    fn instance(&mut self, names: &[String], depth: usize) -> Result<Instance, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "inline stack deeper than {MAX_DEPTH} at byte {}",
                self.at
            ));
        }
        let name = self.word()?;
        let name = self.name(names, u64::from(name))?;
        let mut instance = Instance::named(name);
        let positions = self.count(16)?;
        let callsites = self.count(0)?;
        for _ in 0..positions {
            let offset = self.word()?;
            let targets = self.count(20)?;
            let count = self.counter()?;
            let mut line = Line {
                count,
                targets: BTreeMap::new(),
            };
            for _ in 0..targets {
                self.word()?; // the histogram's type
                let target = self.counter()?;
                let target = self.name(names, target)?.to_owned();
                let calls = self.counter()?;
                if target != RESERVED_NAME {
                    *line.targets.entry(target).or_default() += calls;
                }
            }
            instance.lines.insert(offset, line);
        }
        for _ in 0..callsites {
            let offset = self.word()?;
            let callee = self.instance(names, depth + 1)?;
            instance
                .callsites
                .insert((offset, callee.name.clone()), callee);
        }
        Ok(instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::formats::gcov_afdo::{parse_llvm_text, write, write_layout, Layout};

    const PROFILE: &str = "\
main:300:10
 0: 10
 2: 100 foo:60 bar:40
 3: inl:50
  1: 50
  4: deeper:5
   0: 5
foo:5:1
 1: 5
";

    #[test]
    fn what_the_writer_writes_reads_back_the_same() {
        let functions = parse_llvm_text(PROFILE).unwrap();
        let bytes = write(&functions);
        assert!(is_afdo(&bytes));
        assert_eq!(read(&bytes).unwrap(), functions);
    }

    #[test]
    fn a_gcc_16_profile_reads_back_the_same() {
        let functions = parse_llvm_text(PROFILE).unwrap();
        let bytes = write_layout(&functions, Layout::V3);
        assert!(is_afdo(&bytes));
        assert_eq!(read(&bytes).unwrap(), functions);
        // Every cut before the module section is an error, not a panic.
        for cut in 0..bytes.len() - 3 * 4 {
            assert!(read(&bytes[..cut]).is_err(), "cut at {cut} read");
        }
        // A summary entry count past the file's end: refused, not read.
        let mut huge = bytes.clone();
        huge[56..64].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert!(read(&huge)
            .unwrap_err()
            .contains("more than the file holds"));
    }

    /// A file as gcc 16 reads it that names a source file, as
    /// google/autofdo's v3 writer may: the file table and each name's
    /// index are read past.
    #[test]
    fn a_gcc_16_file_table_is_read_past() {
        let mut bytes = Vec::new();
        let word = |w: u32, b: &mut Vec<u8>| b.extend_from_slice(&w.to_ne_bytes());
        let counter = |c: u64, b: &mut Vec<u8>| b.extend_from_slice(&c.to_ne_bytes());
        word(GCOV_DATA_MAGIC, &mut bytes);
        word(AUTO_PROFILE_VERSION_3, &mut bytes);
        word(0, &mut bytes);
        word(TAG_SUMMARY, &mut bytes);
        for _ in 0..5 {
            counter(1, &mut bytes);
        }
        counter(1, &mut bytes); // one entry (gcc wants 16; not checked here)
        word(990_000, &mut bytes);
        counter(1, &mut bytes);
        counter(1, &mut bytes);
        word(TAG_FILE_NAMES, &mut bytes);
        word(0, &mut bytes);
        word(1, &mut bytes);
        word(4, &mut bytes);
        bytes.extend_from_slice(b"t.c\0");
        word(2, &mut bytes);
        for (name, file) in [("", u32::MAX), ("f", 0)] {
            word(u32::try_from(name.len() + 1).unwrap(), &mut bytes);
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(0);
            word(file, &mut bytes);
        }
        word(TAG_FUNCTION, &mut bytes);
        word(0, &mut bytes);
        word(1, &mut bytes);
        counter(10, &mut bytes); // head
        counter(5, &mut bytes); // timestamp
        word(1, &mut bytes); // name index
        word(1, &mut bytes); // one position
        word(0, &mut bytes); // no callsite
        word((2 << 16) | 3, &mut bytes);
        word(0, &mut bytes);
        counter(900, &mut bytes);
        let functions = read(&bytes).unwrap();
        assert_eq!(functions.len(), 1);
        assert_eq!((functions[0].name.as_str(), functions[0].head), ("f", 10));
        assert_eq!(functions[0].lines[&((2 << 16) | 3)].count, 900);
    }

    #[test]
    fn create_gcov_version_1_strings_in_words_read() {
        // Version 1 as autofdo 0.19's `gcov_write_string` lays it out: the
        // length in words, then the string padded with NULs to words.
        let mut bytes = Vec::new();
        let word = |w: u32, b: &mut Vec<u8>| b.extend_from_slice(&w.to_ne_bytes());
        word(GCOV_DATA_MAGIC, &mut bytes);
        word(OLD_VERSION, &mut bytes);
        word(0, &mut bytes);
        word(TAG_FILE_NAMES, &mut bytes);
        word(0, &mut bytes);
        word(1, &mut bytes);
        word(2, &mut bytes); // "hot_fn" + NUL = 7 bytes: 2 words
        bytes.extend_from_slice(b"hot_fn\0\0");
        word(TAG_FUNCTION, &mut bytes);
        word(0, &mut bytes);
        word(1, &mut bytes);
        word(7, &mut bytes); // head: 7, then its high word
        word(0, &mut bytes);
        word(0, &mut bytes); // name index
        word(1, &mut bytes); // one position
        word(0, &mut bytes); // no callsite
        word(3 << 16, &mut bytes);
        word(0, &mut bytes);
        word(42, &mut bytes);
        word(0, &mut bytes);
        assert!(is_afdo(&bytes));
        let functions = read(&bytes).unwrap();
        assert_eq!(functions.len(), 1);
        assert_eq!(functions[0].name, "hot_fn");
        assert_eq!(functions[0].head, 7);
        assert_eq!(functions[0].lines[&(3 << 16)].count, 42);
    }

    /// The header and empty sections of `create_gcov --use_lbr=false` 0.19's
    /// file (it wrote no function from a perf 6.1 recording it could not
    /// parse), byte for byte: the default version word, a name table of
    /// one empty name in one padded word.
    #[test]
    fn create_gcov_default_output_reads() {
        let words: [u32; 14] = [
            GCOV_DATA_MAGIC,
            CREATE_GCOV_DEFAULT,
            0,
            TAG_FILE_NAMES,
            3,
            1,
            1,
            0,
            TAG_FUNCTION,
            1,
            0,
            0xae00_0000,
            1,
            0,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(&bytes[4..8], b"*704");
        assert!(is_afdo(&bytes));
        assert_eq!(read(&bytes).unwrap(), Vec::new());
    }

    #[test]
    fn every_cut_of_a_profile_is_an_error_not_a_panic() {
        let bytes = write(&parse_llvm_text(PROFILE).unwrap());
        // The module section at the end is not read: cuts inside it pass.
        let modules = 3 * 4;
        for cut in 0..bytes.len() - modules {
            assert!(read(&bytes[..cut]).is_err(), "cut at {cut} read");
        }
    }

    #[test]
    fn a_gcda_is_not_an_afdo_profile() {
        assert!(!is_afdo(b"adcgB22*\0\0\0\0"));
        let mut huge = write(&parse_llvm_text(PROFILE).unwrap());
        // The name table's count made enormous: refused, not allocated.
        huge[20..24].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert!(read(&huge)
            .unwrap_err()
            .contains("more than the file holds"));
    }
}
