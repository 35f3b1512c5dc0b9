//! gcc's AutoFDO profile (the file `-fauto-profile=` reads), written from an
//! LLVM sample profile in text form: afterburner's own from instruction
//! pointer samples (AutoFDO's `from_ip`), or `create_llvm_prof
//! --format=text`'s from recordings with branch stacks.
//!
//! Debian 12's `create_gcov` (autofdo 0.19) writes a profile gcc 12 refuses
//! (google/autofdo issues 139, 194, 196): version 1 where gcc 12 wants 2,
//! and strings padded to words where gcc 12 reads a byte length. This module
//! writes gcc 12's layout itself, and gcc 16's ([`Layout::V3`]); it is
//! pure (text in, bytes out).
//!
//! The layout was learnt from gcc 12.2.0's sources (Debian's `gcc-12`
//! source package, 12.2.0-14+deb12u1), read, not copied:
//! - `gcc/auto-profile.cc`: `read_profile` (magic, `AUTO_PROFILE_VERSION`
//!   2, an ignored word), `string_table::read` (tag, ignored length, count,
//!   strings; each name cut at its first `.` by `get_original_name`),
//!   `autofdo_source_profile::read` (tag, ignored length, count, each
//!   function's head count as a counter then its instance),
//!   `function_instance::read_function_instance` (name index, position
//!   count, callsite count; positions as offset, target count, counter,
//!   targets as type word, counter index, counter; callsites as offset and a
//!   nested instance without head count), `fake_read_autofdo_module_profile`
//!   (tag, length, and a module count that must be 0), and
//!   `get_combined_location` (offset = (line − `DECL_SOURCE_LINE`) << 16;
//!   position offsets are masked with `0xffff0000`, so gcc 12 ignores
//!   discriminators);
//! - `gcc/gcov-io.cc`: `gcov_read_unsigned` (a 4-byte word in the host's
//!   order), `gcov_read_counter` (two words, low first), and
//!   `gcov_read_string`, which since gcc 12 reads a byte length (the
//!   string's length plus its NUL) and then that many bytes, unpadded; the
//!   word-counted strings of older writers are what make gcc 12 fail with
//!   "Not expected TAG";
//! - `gcc/gcov-io.h`: `GCOV_DATA_MAGIC`, `GCOV_TAG_AFDO_FILE_NAMES`,
//!   `GCOV_TAG_AFDO_FUNCTION`; `gcc/value-prof.h`: `HIST_TYPE_INDIR_CALL`.
//!
//! LLVM's text profile keys lines the same way gcc does (line minus the
//! function's `DW_AT_decl_line`, then `.discriminator`) and names functions
//! by their linkage (mangled) names, which is what gcc looks up.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a gcc's `-fauto-profile` reader reads, learnt from each release's
/// `auto-profile.cc` (Debian's gcc-12, -13, -14, -15 and -16 sources):
/// every release from 12 reads byte-length strings; they differ in how a
/// location is keyed and, from gcc 16, in the file's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// gcc 12: version 2; a location is its line alone (positions masked
    /// with `0xffff0000`, the last of a line's entries wins; call sites
    /// looked up at discriminator 0), so discriminators are folded
    /// ([`fold_discriminators`]).
    LineOnly,
    /// gcc 13, 14 and 15: version 2; a location is `line << 16 |
    /// discriminator`, and only an exact pair finds its count (a profile
    /// without discriminators leaves a loop body that has one at 0).
    Discriminators,
    /// gcc 16 (it says so: `-print-autofdo-gcov-version` prints 3): keyed
    /// as gcc 13's, laid out as version 3 ([`Layout::V3`]).
    Version3,
}

impl Reader {
    /// What this reader reads, for `doctor`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::LineOnly => "gcc 12's reader: version 2, a line's discriminators folded",
            Self::Discriminators => {
                "gcc 13 to 15's reader: version 2, keyed by line and discriminator"
            }
            Self::Version3 => "gcc 16's reader: version 3, keyed by line and discriminator",
        }
    }

    /// The file layout this reader reads.
    pub fn layout(self) -> Layout {
        match self {
            Self::LineOnly | Self::Discriminators => Layout::V2,
            Self::Version3 => Layout::V3,
        }
    }

    /// Shape `functions` for this reader: keyed as it looks locations up,
    /// and, for a reader that reads no summary, scaled by
    /// [`V2_COUNT_SCALE`].
    pub fn prepare(self, functions: &mut [Instance]) {
        let scale = self.count_scale();
        for f in functions {
            if self == Self::LineOnly {
                fold_discriminators(f);
            }
            if scale != 1 {
                f.scale(scale);
            }
        }
    }

    /// What [`Reader::prepare`] multiplies every count by for this reader:
    /// [`V2_COUNT_SCALE`] for one that reads no summary, else 1.
    pub fn count_scale(self) -> u64 {
        match self.layout() {
            Layout::V2 => V2_COUNT_SCALE,
            Layout::V3 => 1,
        }
    }
}

/// What every count is multiplied by for gcc 12 to 15, whose AutoFDO
/// reader reads no summary: it sets `sum_max` to 0, so `maybe_hot_count_p`
/// (predict.cc) calls a count hot when it exceeds `MAX (runs, 1)`, that is
/// from 2 up, whatever the profile's scale. Timer samples leave most of a
/// request's lines at 0 or 1 (Redis's get: 157 lines at 1 beside 537 at 2
/// or more), and gcc optimizes a 1 for size and will not inline a call
/// whose inlined copy totals 1 ("call is cold"). Scaled, one sample is
/// hot; the reader's other uses of counts are ratios (branch
/// probabilities, an edge against its caller's count), which scaling
/// keeps. gcc 16 scales what it reads itself (`afdo_count_scale`) and
/// takes its threshold from the summary. Read in gcc 12.2.0's and 14.2.0's
/// `auto-profile.cc`, `predict.cc` and `ipa-inline.cc` (Debian's sources).
pub const V2_COUNT_SCALE: u64 = 100;

pub(super) const GCOV_DATA_MAGIC: u32 = 0x6763_6461;
pub(super) const AUTO_PROFILE_VERSION: u32 = 2;
pub(super) const TAG_FILE_NAMES: u32 = 0xaa00_0000;
pub(super) const TAG_FUNCTION: u32 = 0xac00_0000;
/// gcc 16's `AUTO_PROFILE_VERSION` (its `auto-profile.h`).
pub(super) const AUTO_PROFILE_VERSION_3: u32 = 3;
/// gcc 16's `GCOV_TAG_AFDO_SUMMARY`: the summary after the header, with no
/// length word after the tag.
pub(super) const TAG_SUMMARY: u32 = 0xa800_0000;
/// gcc 16's file index for a name whose file is unknown (any index past
/// the file table; `string_table::unknown_filename` is -1).
pub(super) const UNKNOWN_FILE: u32 = u32::MAX;
/// The summary's percentiles (×10⁶): LLVM's `ProfileSummaryBuilder::
/// DefaultCutoffs`, the 16 gcc 16's `NUM_PERCENTILES` holds.
const SUMMARY_CUTOFFS: [u32; 16] = [
    10_000, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000,
    950_000, 990_000, 999_000, 999_900, 999_990, 999_999,
];
/// The module grouping section (LIPO's, which gcc reads past unchecked).
const TAG_MODULE_GROUPING: u32 = 0xae00_0000;
/// `HIST_TYPE_INDIR_CALL` in gcc 12's `value-prof.h` (gcc reads the word
/// and ignores it).
const HIST_TYPE_INDIR_CALL: u32 = 3;
/// gcc keeps 16 bits for the line offset.
const MAX_LINE_OFFSET: u32 = 0xffff;
/// gcc asserts a string index is positive where it looks a name up by
/// index (indirect call targets), so index 0 holds a name no function has.
pub(super) const RESERVED_NAME: &str = "__afdo_reserved";

/// A malformed line of the text profile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line} of the LLVM text profile: {what}: `{text}`")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    pub what: &'static str,
    pub text: String,
}

/// One function's samples, or those of a copy inlined into another.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The name gcc looks up: the linkage name, cut at its first `.`.
    pub name: String,
    /// Samples at the function's entry (0 for inlined copies).
    pub head: u64,
    /// Samples per location: the line offset `<< 16`, or'd with the
    /// discriminator (see [`fold_discriminators`] for gcc 12).
    pub lines: BTreeMap<u32, Line>,
    /// Inlined callees per (location, callee name).
    pub callsites: BTreeMap<(u32, String), Instance>,
}

/// One line's samples and the call targets seen there.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Line {
    pub count: u64,
    /// Call target name → calls.
    pub targets: BTreeMap<String, u64>,
}

impl Instance {
    /// An instance of `name` with no samples yet.
    pub fn named(name: &str) -> Self {
        Self::new(name, 0)
    }

    fn new(name: &str, head: u64) -> Self {
        Self {
            name: gcc_name(name).to_owned(),
            head,
            ..Self::default()
        }
    }

    /// An instance named exactly `name` (its reader's rule applied by the
    /// caller).
    pub fn exactly(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Self::default()
        }
    }

    /// Samples of this instance and all it inlines.
    pub fn total(&self) -> u64 {
        self.lines.values().map(|l| l.count).sum::<u64>()
            + self.callsites.values().map(Instance::total).sum::<u64>()
    }

    /// Add `other`'s samples to this one (the same function).
    fn absorb(&mut self, other: Instance) {
        self.head += other.head;
        for (offset, line) in other.lines {
            let mine = self.lines.entry(offset).or_default();
            mine.count += line.count;
            for (target, calls) in line.targets {
                *mine.targets.entry(target).or_default() += calls;
            }
        }
        for (key, callee) in other.callsites {
            match self.callsites.get_mut(&key) {
                Some(mine) => mine.absorb(callee),
                None => {
                    self.callsites.insert(key, callee);
                }
            }
        }
    }

    /// Every count multiplied by `weight` (a workload's weight in a merge,
    /// or a reader's scale), saturating: a profile brought back in from an
    /// earlier merge is scaled again.
    pub fn scale(&mut self, weight: u64) {
        self.head = self.head.saturating_mul(weight);
        for line in self.lines.values_mut() {
            line.count = line.count.saturating_mul(weight);
            for calls in line.targets.values_mut() {
                *calls = calls.saturating_mul(weight);
            }
        }
        for callee in self.callsites.values_mut() {
            callee.scale(weight);
        }
    }

    /// Record a body line; a location read twice keeps the largest count.
    fn add_line(&mut self, offset: u32, count: u64, targets: Vec<(String, u64)>) {
        let line = self.lines.entry(offset).or_default();
        line.count = line.count.max(count);
        for (target, calls) in targets {
            *line
                .targets
                .entry(gcc_name(&target).to_owned())
                .or_default() += calls;
        }
    }
}

/// gcc's `get_original_name`: a name up to its first `.` (`foo.cold`,
/// `foo.constprop.0` and `foo` are one function to gcc).
pub fn gcc_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// Where an instance being read goes when it is closed.
enum Place {
    /// A top-level function.
    Function,
    /// Inlined into its parent at this offset.
    Callsite(u32),
    /// A callsite gcc cannot place (its line offset is too large): read,
    /// then dropped.
    Dropped,
}

/// An instance being read, with the depth of its header line.
struct Open {
    depth: usize,
    place: Place,
    instance: Instance,
}

/// Parse an LLVM text sample profile into its top-level functions, merged
/// by gcc's name for them.
pub fn parse_llvm_text(text: &str) -> Result<Vec<Instance>, ParseError> {
    parse_llvm_text_counting(text).map(|(functions, _)| functions)
}

/// Whether `name` can be a symbol: printable ASCII, no spaces.
/// `create_llvm_prof` 0.19 writes the names of some inlined callees of
/// gcc-built binaries from freed memory (bytes of any kind, newlines
/// included; about half of `SQLite`'s speedtest1 callsites).
fn is_symbol(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic())
}

/// [`parse_llvm_text`], also counting the inlined callsites left out
/// because `create_llvm_prof` wrote their callee's name garbled (see
/// [`is_symbol`]); the lines of such a name's tail are skipped too.
pub fn parse_llvm_text_counting(text: &str) -> Result<(Vec<Instance>, usize), ParseError> {
    // The open instances, outermost first; a line deeper than the
    // innermost's header belongs to it.
    let mut stack: Vec<Open> = Vec::new();
    let mut functions: BTreeMap<String, Instance> = BTreeMap::new();
    let mut garbled = 0;
    // After a garbled name, lines that do not parse are its tail.
    let mut in_garbled_name = false;
    for (i, raw) in text.lines().enumerate() {
        let error = |what| ParseError {
            line: i + 1,
            what,
            text: raw.to_owned(),
        };
        let body = raw.trim_start();
        if body.is_empty() || body.starts_with('!') {
            continue;
        }
        let depth = raw.len() - body.len();
        if in_garbled_name {
            if !parses(body, depth) {
                continue;
            }
            in_garbled_name = false;
        }
        while stack.last().is_some_and(|open| open.depth >= depth) {
            close(&mut stack, &mut functions);
        }
        if depth == 0 {
            let (name, head) =
                parse_header(body).ok_or_else(|| error("expected `name:total:head`"))?;
            stack.push(Open {
                depth,
                place: Place::Function,
                instance: Instance::new(name, head),
            });
            continue;
        }
        let Some(parent) = stack.last_mut() else {
            return Err(error("a sample line outside any function"));
        };
        let (location, rest) = body
            .split_once(':')
            .ok_or_else(|| error("expected `offset[.discriminator]: …`"))?;
        let line = line_number(location).ok_or_else(|| error("a bad line offset"))?;
        let offset = discriminator(location)
            .filter(|_| line <= MAX_LINE_OFFSET)
            .map(|d| (line << 16) | d);
        let mut words = rest.split_whitespace();
        if let Some(count) = words.next().and_then(|w| w.parse::<u64>().ok()) {
            let targets = words
                .map(|w| {
                    let (name, calls) = w.rsplit_once(':')?;
                    Some((name.to_owned(), calls.parse().ok()?))
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| error("expected call targets `name:count`"))?;
            if let Some(offset) = offset {
                parent.instance.add_line(offset, count, targets);
            }
        } else {
            let callee = rest
                .trim()
                .rsplit_once(':')
                .filter(|(n, t)| is_symbol(n) && t.parse::<u64>().is_ok())
                .map(|(n, _)| n);
            let Some(callee) = callee else {
                garbled += 1;
                in_garbled_name = true;
                stack.push(Open {
                    depth,
                    place: Place::Dropped,
                    instance: Instance::default(),
                });
                continue;
            };
            stack.push(Open {
                depth,
                place: offset.map_or(Place::Dropped, Place::Callsite),
                instance: Instance::new(callee, 0),
            });
        }
    }
    while !stack.is_empty() {
        close(&mut stack, &mut functions);
    }
    Ok((functions.into_values().collect(), garbled))
}

/// Whether a line reads as a header (depth 0) or a sample line.
fn parses(body: &str, depth: usize) -> bool {
    if depth == 0 {
        return parse_header(body).is_some();
    }
    body.split_once(':').is_some_and(|(location, rest)| {
        line_number(location).is_some()
            && rest.split_whitespace().next().is_some_and(|w| {
                w.parse::<u64>().is_ok()
                    || w.rsplit_once(':')
                        .is_some_and(|(n, t)| is_symbol(n) && t.parse::<u64>().is_ok())
            })
    })
}

/// `name:total:head` (a name may hold `:`).
fn parse_header(line: &str) -> Option<(&str, u64)> {
    let mut parts = line.rsplitn(3, ':');
    let head = parts.next()?.parse().ok()?;
    let _total: u64 = parts.next()?.parse().ok()?;
    let name = parts.next().filter(|n| !n.is_empty())?;
    Some((name, head))
}

/// Close the innermost open instance into its parent or the functions,
/// adding it to an instance of the same function already there.
fn close(stack: &mut Vec<Open>, functions: &mut BTreeMap<String, Instance>) {
    let Some(done) = stack.pop() else {
        return;
    };
    let instance = done.instance;
    let (into, key) = match (done.place, stack.last_mut()) {
        (Place::Dropped, _) => return,
        (Place::Callsite(offset), Some(parent)) => (
            &mut parent.instance.callsites,
            (offset, instance.name.clone()),
        ),
        _ => {
            let name = instance.name.clone();
            match functions.get_mut(&name) {
                Some(mine) => mine.absorb(instance),
                None => {
                    functions.insert(name, instance);
                }
            }
            return;
        }
    };
    match into.get_mut(&key) {
        Some(mine) => mine.absorb(instance),
        None => {
            into.insert(key, instance);
        }
    }
}

/// The line offset of `line[.discriminator]`; `None` when malformed.
fn line_number(location: &str) -> Option<u32> {
    location.split('.').next()?.parse().ok()
}

/// The discriminator of `line[.discriminator]` (0 without one); `None`
/// when it does not fit gcc's 16 bits.
fn discriminator(location: &str) -> Option<u32> {
    match location.split_once('.') {
        None => Some(0),
        Some((_, d)) => d.parse().ok().filter(|d| *d <= 0xffff),
    }
}

/// gcc 12 keys a location by its line alone (`get_combined_location`
/// has no discriminator; positions are masked with `0xffff0000`, call
/// sites are looked up at discriminator 0): each line keeps its largest
/// count (its instructions ran as often as each other), and the inlined
/// copies of one callee at one line become one, their samples added (each
/// copy ran apart). gcc 13 and later key by line and discriminator.
pub fn fold_discriminators(instance: &mut Instance) {
    let lines = std::mem::take(&mut instance.lines);
    let callsites = std::mem::take(&mut instance.callsites);
    let mut folded = Instance {
        lines: BTreeMap::new(),
        ..Instance::default()
    };
    for (key, line) in lines {
        keep_largest(&mut folded.lines, key & 0xffff_0000, line);
    }
    for ((key, name), mut callee) in callsites {
        fold_discriminators(&mut callee);
        match folded.callsites.get_mut(&(key & 0xffff_0000, name.clone())) {
            Some(mine) => mine.absorb(callee),
            None => {
                folded.callsites.insert((key & 0xffff_0000, name), callee);
            }
        }
    }
    instance.lines = folded.lines;
    instance.callsites = folded.callsites;
}

/// `line` into `lines` at `key`: the largest count, the targets added.
fn keep_largest(lines: &mut BTreeMap<u32, Line>, key: u32, line: Line) {
    let mine = lines.entry(key).or_default();
    mine.count = mine.count.max(line.count);
    for (target, calls) in line.targets {
        *mine.targets.entry(target).or_default() += calls;
    }
}

/// Several profiles (workloads, binaries) as one: each function's samples
/// added, as `llvm-profdata merge` adds them.
pub fn merge(profiles: impl IntoIterator<Item = Vec<Instance>>) -> Vec<Instance> {
    let mut merged: BTreeMap<String, Instance> = BTreeMap::new();
    for function in profiles.into_iter().flatten() {
        match merged.get_mut(&function.name) {
            Some(mine) => mine.absorb(function),
            None => {
                merged.insert(function.name.clone(), function);
            }
        }
    }
    merged.into_values().collect()
}

/// The major version in `gcc -dumpversion`'s output (`12`, or `12.2.0` on
/// some builds).
pub fn gcc_major(dumpversion: &str) -> Option<u32> {
    dumpversion.trim().split('.').next()?.parse().ok()
}

/// The reader of gcc `major`, whose `-print-autofdo-gcov-version` said
/// `gcov_version` (gcc 16 and later have the option; older ones refuse
/// it); why it cannot be served, when it cannot.
pub fn reader_of(major: Option<u32>, gcov_version: Option<u32>) -> Result<Reader, String> {
    let hint = "hint: use compiler = \"clang\" for autofdo, or optimize = [\"pgo\"] with this gcc";
    match (major, gcov_version) {
        (_, Some(3)) => Ok(Reader::Version3),
        (_, Some(v)) if v != 2 => Err(format!("this gcc reads AutoFDO profiles of version {v}, a layout afterburner has not followed (a profile it misread would be silently useless)\n{hint}")),
        (Some(12), _) => Ok(Reader::LineOnly),
        (Some(13..=15), _) => Ok(Reader::Discriminators),
        (Some(m), _) if m < 12 => Err(format!("gcc {m} reads AutoFDO strings counted in words, the layout before gcc 12, which afterburner does not write\nhint: use gcc 12 or newer, or {}", &hint["hint: use ".len()..])),
        (Some(m), _) => Err(format!("gcc {m} does not say which AutoFDO version it reads (`gcc -print-autofdo-gcov-version`), and its reader is newer than the ones afterburner follows\n{hint}")),
        (None, _) => Err("autofdo with gcc needs to know gcc's version, and `gcc -dumpversion` did not say\nhint: check that gcc runs (`gcc -dumpversion`)".to_owned()),
    }
}

/// Which gcc's reader a `-fauto-profile` file is laid out for. The two
/// differ in bytes only; the [`Instance`]s (names, line keys) are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `AUTO_PROFILE_VERSION` 2: what gcc 12 reads (gcc 13, 14 and 15 read
    /// the same bytes, and refuse version 3). gcc 16 refuses it ("AutoFDO
    /// profile version 2 does not match 3").
    V2,
    /// `AUTO_PROFILE_VERSION` 3: what gcc 16 (16.1, 16.2) reads, learnt
    /// from gcc 16.2.0's `auto-profile.cc` and `gcov-io.h` (Debian's
    /// `gcc-16` 16.2.0-4), read, not copied: `read_profile` reads a summary
    /// (`summary_info::read`) between the header and the string table;
    /// `string_table::read` reads a file name table first and a file index
    /// after each name; `read_function_instance` reads a timestamp after
    /// each top-level head count; `autofdo_source_profile::read` stops with
    /// a fatal error on a second top-level instance of one (file, name).
    /// gcc 16 keeps names whole (it does not cut them at the first `.`):
    /// for now they are written as the [`Instance`]s hold them, cut as gcc
    /// 12 cuts them, which still matches gcc 16's own renaming of
    /// `.cold`/`.part`/`.constprop`/`.isra`/`.lto_priv` copies. gcc 12–15
    /// refuse it ("AutoFDO profile version 3 does not match 2").
    V3,
}

/// gcc 12's `-fauto-profile` file for `functions`.
pub fn write(functions: &[Instance]) -> Vec<u8> {
    write_layout(functions, Layout::V2)
}

/// The `-fauto-profile` file for `functions` in `layout`. Version 3 has
/// each top-level function once (a duplicate name's samples added, as
/// [`merge`] adds them), as gcc 16 refuses a second one.
pub fn write_layout(functions: &[Instance], layout: Layout) -> Vec<u8> {
    let merged;
    let functions = match layout {
        Layout::V2 => functions,
        Layout::V3 => {
            merged = merge([functions.to_vec()]);
            &merged[..]
        }
    };
    let mut names = Names::default();
    names.index(RESERVED_NAME);
    for function in functions {
        names.collect(function);
    }
    let mut out = Words::default();
    out.word(GCOV_DATA_MAGIC);
    out.word(match layout {
        Layout::V2 => AUTO_PROFILE_VERSION,
        Layout::V3 => AUTO_PROFILE_VERSION_3,
    });
    out.word(0);
    if layout == Layout::V3 {
        Summary::of(functions).write(&mut out);
    }

    let mut table = Words::default();
    if layout == Layout::V3 {
        table.word(0); // no file names: every name's file is unknown
    }
    table.word(u32::try_from(names.list.len()).unwrap_or(u32::MAX));
    for name in &names.list {
        table.string(name);
        if layout == Layout::V3 {
            table.word(UNKNOWN_FILE);
        }
    }
    out.section(TAG_FILE_NAMES, &table);

    let mut body = Words::default();
    body.word(u32::try_from(functions.len()).unwrap_or(u32::MAX));
    for function in functions {
        body.counter(function.head);
        if layout == Layout::V3 {
            body.counter(0); // no timestamp (gcc 16: every tp_first_run 1)
        }
        write_instance(&mut body, function, &names);
    }
    out.section(TAG_FUNCTION, &body);

    let mut modules = Words::default();
    modules.word(0);
    out.section(TAG_MODULE_GROUPING, &modules);
    out.bytes
}

/// `functions` as an LLVM text sample profile (what `create_llvm_prof
/// --format=text` writes, and [`parse_llvm_text`] reads): a function's
/// `name:total:head`, then one space deeper its lines `offset: count` and
/// its call sites `offset: callee:total`, each callee's body a space
/// deeper still.
pub fn write_llvm_text(functions: &[Instance]) -> String {
    let mut out = String::new();
    for function in functions {
        let _ = writeln!(
            out,
            "{}:{}:{}",
            function.name,
            function.total(),
            function.head
        );
        write_body(&mut out, function, 1);
    }
    out
}

fn write_body(out: &mut String, instance: &Instance, depth: usize) {
    let indent = " ".repeat(depth);
    for (offset, line) in &instance.lines {
        let _ = write!(out, "{indent}{}: {}", location(*offset), line.count);
        for (target, calls) in &line.targets {
            let _ = write!(out, " {target}:{calls}");
        }
        out.push('\n');
    }
    for ((offset, name), callee) in &instance.callsites {
        let _ = writeln!(
            out,
            "{indent}{}: {name}:{}",
            location(*offset),
            callee.total()
        );
        write_body(out, callee, depth + 1);
    }
}

/// `line[.discriminator]` of a location key.
fn location(key: u32) -> String {
    match key & 0xffff {
        0 => format!("{}", key >> 16),
        d => format!("{}.{d}", key >> 16),
    }
}

/// Convert an LLVM text sample profile into the format `reader` reads.
pub fn convert(llvm_text: &str, reader: Reader) -> Result<Vec<u8>, ParseError> {
    let mut functions = parse_llvm_text(llvm_text)?;
    reader.prepare(&mut functions);
    Ok(write_layout(&functions, reader.layout()))
}

fn write_instance(out: &mut Words, instance: &Instance, names: &Names) {
    out.word(names.get(&instance.name));
    out.word(u32::try_from(instance.lines.len()).unwrap_or(u32::MAX));
    out.word(u32::try_from(instance.callsites.len()).unwrap_or(u32::MAX));
    for (offset, line) in &instance.lines {
        out.word(*offset);
        out.word(u32::try_from(line.targets.len()).unwrap_or(u32::MAX));
        out.counter(line.count);
        for (target, calls) in &line.targets {
            out.word(HIST_TYPE_INDIR_CALL);
            out.counter(u64::from(names.get(target)));
            out.counter(*calls);
        }
    }
    for ((offset, _), callee) in &instance.callsites {
        out.word(*offset);
        write_instance(out, callee, names);
    }
}

/// gcc 16's profile summary (`summary_info`), computed as LLVM's
/// `SampleProfileSummaryBuilder` computes a sample profile's
/// (llvm/lib/ProfileData/ProfileSummaryBuilder.cpp, read, not copied):
/// `addRecord` adds every position count of a function and, recursively,
/// of every instance inlined into it (`addCount`: total, maximum, one more
/// count); only top-level functions count as functions, with their head
/// count for the maximum. `computeDetailedSummary` then walks the counts
/// from the largest down, and for each cutoff c (×10⁶) takes counts until
/// their sum reaches ⌊total × c / 10⁶⌋: the entry's `min_count` is the last
/// count taken and `num_counts` how many were taken. gcc reads only
/// `max_count` (its count scale) and the entries' cutoff and `min_count`
/// (the one at 990000, `hot_bb_count_ws_permille`, becomes its hot block
/// threshold).
#[derive(Debug, PartialEq, Eq)]
struct Summary {
    total_count: u64,
    max_count: u64,
    max_function_count: u64,
    num_counts: u64,
    num_functions: u64,
    /// (cutoff, `min_count`, `num_counts`) per [`SUMMARY_CUTOFFS`].
    detailed: Vec<(u32, u64, u64)>,
}

impl Summary {
    fn of(functions: &[Instance]) -> Self {
        fn add(instance: &Instance, frequencies: &mut BTreeMap<u64, u64>) {
            for line in instance.lines.values() {
                *frequencies.entry(line.count).or_default() += 1;
            }
            for callee in instance.callsites.values() {
                add(callee, frequencies);
            }
        }
        // Count → how many positions have it.
        let mut frequencies = BTreeMap::new();
        for function in functions {
            add(function, &mut frequencies);
        }
        let total: u128 = frequencies
            .iter()
            .map(|(count, n)| u128::from(*count) * u128::from(*n))
            .sum();
        let mut largest_first = frequencies.iter().rev();
        let (mut sum, mut count, mut seen) = (0u128, 0u64, 0u64);
        let detailed = SUMMARY_CUTOFFS
            .iter()
            .map(|&cutoff| {
                let desired = total * u128::from(cutoff) / 1_000_000;
                while sum < desired {
                    let Some((c, n)) = largest_first.next() else {
                        break;
                    };
                    count = *c;
                    sum += u128::from(*c) * u128::from(*n);
                    seen += n;
                }
                (cutoff, count, seen)
            })
            .collect();
        Self {
            total_count: u64::try_from(total).unwrap_or(u64::MAX),
            max_count: frequencies.keys().next_back().copied().unwrap_or(0),
            max_function_count: functions.iter().map(|f| f.head).max().unwrap_or(0),
            num_counts: frequencies.values().sum(),
            num_functions: functions.len() as u64,
            detailed,
        }
    }

    /// `summary_info::read`'s order: the tag with no length word, five
    /// counters, the entry count as a counter, then each entry's cutoff as
    /// a word and two counters.
    fn write(&self, out: &mut Words) {
        out.word(TAG_SUMMARY);
        for value in [
            self.total_count,
            self.max_count,
            self.max_function_count,
            self.num_counts,
            self.num_functions,
            self.detailed.len() as u64,
        ] {
            out.counter(value);
        }
        for &(cutoff, min_count, num_counts) in &self.detailed {
            out.word(cutoff);
            out.counter(min_count);
            out.counter(num_counts);
        }
    }
}

/// The string table: every function, callee and call target name once.
#[derive(Default)]
struct Names {
    list: Vec<String>,
    index: BTreeMap<String, u32>,
}

impl Names {
    fn index(&mut self, name: &str) {
        if !self.index.contains_key(name) {
            let i = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
            self.index.insert(name.to_owned(), i);
            self.list.push(name.to_owned());
        }
    }

    fn collect(&mut self, instance: &Instance) {
        self.index(&instance.name);
        for line in instance.lines.values() {
            for target in line.targets.keys() {
                self.index(target);
            }
        }
        for callee in instance.callsites.values() {
            self.collect(callee);
        }
    }

    fn get(&self, name: &str) -> u32 {
        self.index.get(name).copied().unwrap_or(0)
    }
}

/// gcov's words, in the host's byte order (gcc reads them with no swap).
#[derive(Default)]
struct Words {
    bytes: Vec<u8>,
}

impl Words {
    fn word(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_ne_bytes());
    }

    /// `gcov_read_counter`: the low word, then the high word.
    fn counter(&mut self, value: u64) {
        self.word((value & 0xffff_ffff) as u32);
        self.word((value >> 32) as u32);
    }

    /// gcc 12's `gcov_read_string`: the byte length with the NUL, the
    /// bytes, the NUL, no padding.
    fn string(&mut self, text: &str) {
        self.word(u32::try_from(text.len() + 1).unwrap_or(u32::MAX));
        self.bytes.extend_from_slice(text.as_bytes());
        self.bytes.push(0);
    }

    /// A tag, the section's length in bytes (gcc skips it), the section.
    fn section(&mut self, tag: u32, body: &Words) {
        self.word(tag);
        self.word(u32::try_from(body.bytes.len()).unwrap_or(u32::MAX));
        self.bytes.extend_from_slice(&body.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile as `create_llvm_prof` writes it, with what the conversion
    /// must handle: discriminators, call targets, an inlined callee at two
    /// discriminators of one line, metadata, and a `.cold` part.
    const PROFILE: &str = "\
main:300:10
 0: 10
 2: 100 foo:60 bar:40
 2.1: 120
 3: inl:50
  1: 50
 3.2: inl:20
  1: 20
 !CFGChecksum: 12345
 70000: 9
foo.cold:7:0
 1: 7
foo:5:1
 1: 5
";

    /// A reader in the order gcc 12's `read_profile` reads (see the module
    /// comment), so the test checks the layout gcc expects, not ours.
    struct Reader<'a> {
        bytes: &'a [u8],
        at: usize,
    }

    impl Reader<'_> {
        fn word(&mut self) -> u32 {
            let w = u32::from_ne_bytes(self.bytes[self.at..self.at + 4].try_into().unwrap());
            self.at += 4;
            w
        }

        fn counter(&mut self) -> u64 {
            u64::from(self.word()) | (u64::from(self.word()) << 32)
        }

        fn string(&mut self) -> String {
            let len = self.word() as usize;
            let s = &self.bytes[self.at..self.at + len];
            self.at += len;
            assert_eq!(s.last(), Some(&0), "a string ends in NUL");
            String::from_utf8(s[..len - 1].to_vec()).unwrap()
        }

        /// `read_function_instance`, as text: `name[head] offset=count…`.
        fn instance(&mut self, names: &[String], head: Option<u64>, out: &mut String) {
            let name = &names[self.word() as usize];
            let (positions, callsites) = (self.word(), self.word());
            write!(
                out,
                "{name}{} [",
                head.map(|h| format!("@{h}")).unwrap_or_default()
            )
            .unwrap();
            for _ in 0..positions {
                let (offset, targets, count) = (self.word(), self.word(), self.counter());
                write!(out, " {}={count}", offset >> 16).unwrap();
                for _ in 0..targets {
                    assert_eq!(self.word(), HIST_TYPE_INDIR_CALL);
                    let target = &names[usize::try_from(self.counter()).unwrap()];
                    write!(out, " {target}:{}", self.counter()).unwrap();
                }
            }
            for _ in 0..callsites {
                write!(out, " {}:", self.word() >> 16).unwrap();
                self.instance(names, None, out);
            }
            out.push_str(" ]");
        }
    }

    #[test]
    fn the_layout_is_the_one_gcc_12_reads() {
        let bytes = convert(PROFILE, super::Reader::LineOnly).unwrap();
        let mut r = Reader {
            bytes: &bytes,
            at: 0,
        };
        assert_eq!(
            &bytes[..4],
            &0x6763_6461u32.to_ne_bytes(),
            "GCOV_DATA_MAGIC"
        );
        assert_eq!((r.word(), r.word(), r.word()), (GCOV_DATA_MAGIC, 2, 0));
        assert_eq!(r.word(), 0xaa00_0000, "GCOV_TAG_AFDO_FILE_NAMES");
        let length = r.word() as usize;
        let table_start = r.at;
        let names: Vec<String> = (0..r.word()).map(|_| r.string()).collect();
        assert_eq!(r.at - table_start, length, "the section length in bytes");
        // Index 0 is no function's: gcc asserts a looked-up index is > 0.
        assert_eq!(names, ["__afdo_reserved", "foo", "main", "bar", "inl"]);
        // gcc 12's strings: a byte length with the NUL, unpadded ("foo" is
        // 4 + 4 bytes, not rounded to words as before gcc 12).
        let foo = 12 + 8 + 4 + (4 + 16);
        assert_eq!(&bytes[foo..foo + 8], &[4, 0, 0, 0, b'f', b'o', b'o', 0]);

        assert_eq!(r.word(), 0xac00_0000, "GCOV_TAG_AFDO_FUNCTION");
        let length = r.word() as usize;
        let start = r.at;
        let mut functions = Vec::new();
        for _ in 0..r.word() {
            let head = r.counter();
            let mut text = String::new();
            r.instance(&names, Some(head), &mut text);
            functions.push(text);
        }
        assert_eq!(r.at - start, length);
        assert_eq!(
            functions,
            [
                // foo.cold is foo to gcc: one function, samples added;
                // every count times V2_COUNT_SCALE (100).
                "foo@100 [ 1=1200 ]",
                // 2 and 2.1 folded into the larger count; inl's two copies
                // on line 3 added; offset 70000 dropped (gcc keeps 16 bits).
                "main@1000 [ 0=1000 2=12000 bar:4000 foo:6000 3:inl [ 1=7000 ] ]",
            ]
        );
        // The module section gcc reads past: tag, length, 0 modules.
        assert_eq!((r.word(), r.word(), r.word()), (0xae00_0000, 4, 0));
        assert_eq!(r.at, bytes.len());
    }

    /// gcc 16's layout (see [`Layout::V3`]), walked in the order gcc
    /// 16.2.0's `read_profile` reads it: the header with version 3, the
    /// summary with no length word and 16 entries, file names before the
    /// names and a file index after each, a timestamp after each head
    /// count, and each top-level function once.
    #[test]
    fn the_v3_layout_is_the_one_gcc_16_reads() {
        let mut functions = parse_llvm_text(PROFILE).unwrap();
        // A second `main` (another binary's, say): gcc 16 stops at a
        // duplicate, so its samples are added to the first.
        functions.extend(parse_llvm_text("main:5:2\n 0: 5\n").unwrap());
        // Lines without discriminators, as the counts below add them.
        for f in &mut functions {
            fold_discriminators(f);
        }
        let bytes = write_layout(&functions, Layout::V3);
        let words: Vec<u32> = bytes[..16]
            .chunks(4)
            .map(|w| u32::from_ne_bytes(w.try_into().unwrap()))
            .collect();
        assert_eq!(words, [0x6763_6461, 3, 0, 0xa800_0000]);
        let mut r = Reader {
            bytes: &bytes,
            at: 16,
        };
        // total, max, max head, number of counts, number of functions:
        // foo 1=12; main 0=10+5, 2=120 (the larger of 2 and 2.1), inl 1=70;
        // the heads 1 and 10+2.
        let fields: Vec<u64> = (0..5).map(|_| r.counter()).collect();
        assert_eq!(fields, [12 + (10 + 5) + 120 + 70, 120, 12, 4, 2]);
        assert_eq!(r.counter(), 16, "exactly NUM_PERCENTILES entries");
        let entries: Vec<(u32, u64, u64)> = (0..16)
            .map(|_| (r.word(), r.counter(), r.counter()))
            .collect();
        let cutoffs: Vec<u32> = entries.iter().map(|e| e.0).collect();
        assert_eq!(cutoffs, SUMMARY_CUTOFFS);
        // gcc's hot threshold: 99% of 217 is 214, reached by 120, 70, 15
        // and 12 (see the next test for the rule).
        assert_eq!(entries[11], (990_000, 12, 4));

        assert_eq!(r.word(), 0xaa00_0000, "GCOV_TAG_AFDO_FILE_NAMES");
        let length = r.word() as usize;
        let table_start = r.at;
        assert_eq!(r.word(), 0, "no file names");
        let names: Vec<String> = (0..r.word())
            .map(|_| {
                let name = r.string();
                assert_eq!(r.word(), u32::MAX, "{name}'s file: unknown");
                name
            })
            .collect();
        assert_eq!(r.at - table_start, length);
        assert_eq!(names, ["__afdo_reserved", "foo", "main", "bar", "inl"]);

        assert_eq!(r.word(), 0xac00_0000, "GCOV_TAG_AFDO_FUNCTION");
        let length = r.word() as usize;
        let start = r.at;
        let mut read = Vec::new();
        for _ in 0..r.word() {
            let head = r.counter();
            assert_eq!(r.counter(), 0, "the timestamp");
            let mut text = String::new();
            r.instance(&names, Some(head), &mut text);
            read.push(text);
        }
        assert_eq!(r.at - start, length);
        assert_eq!(
            read,
            [
                "foo@1 [ 1=12 ]",
                "main@12 [ 0=15 2=120 bar:40 foo:60 3:inl [ 1=70 ] ]",
            ]
        );
        assert_eq!((r.word(), r.word(), r.word()), (0xae00_0000, 4, 0));
        assert_eq!(r.at, bytes.len());
        // Version 2 is unchanged by the layouts' split.
        assert_eq!(write_layout(&functions, Layout::V2), write(&functions));
    }

    /// The summary's entries on a small profile, worked by hand with
    /// LLVM's rule: counts taken from the largest down until their sum
    /// reaches ⌊total × cutoff / 10⁶⌋; the entry is (cutoff, the last count
    /// taken, how many were taken). Counts here: 100, 50, 50, 10 (in `g`,
    /// inlined into `f`) and 0 (`k`'s); total 210.
    #[test]
    fn the_summary_cutoffs_follow_llvm() {
        let mut functions =
            parse_llvm_text("f:160:4\n 1: 50\n 2: 50\n 4: 50\n 3: g:10\n  1: 10\nk:0:3\n 1: 0\n")
                .unwrap();
        // `f` again: one function of 1: 100 after the merge.
        functions.extend(parse_llvm_text("f:50:3\n 1: 50\n").unwrap());
        let summary = Summary::of(&merge([functions]));
        assert_eq!(
            (
                summary.total_count,
                summary.max_count,
                summary.max_function_count,
                summary.num_counts,
                summary.num_functions
            ),
            (210, 100, 7, 5, 2)
        );
        // Wanted sums: 10000 → 2, … 400000 → 84: 100 alone (1 count);
        // 500000 → 105 … 950000 → 199: 100 + 2 × 50 = 200 (3 counts);
        // 990000 → 207 and above (≤ 209): + 10 = 210 (4 counts). The 0
        // is never needed.
        let mut expected = vec![(10_000, 100, 1)];
        for cutoff in [100_000, 200_000, 300_000, 400_000] {
            expected.push((cutoff, 100, 1));
        }
        for cutoff in [500_000, 600_000, 700_000, 800_000, 900_000, 950_000] {
            expected.push((cutoff, 50, 3));
        }
        for cutoff in [990_000, 999_000, 999_900, 999_990, 999_999] {
            expected.push((cutoff, 10, 4));
        }
        assert_eq!(summary.detailed, expected);
        // An empty profile: all zero, still 16 entries.
        let empty = Summary::of(&[]);
        assert_eq!(empty.detailed.len(), 16);
        assert!(empty.detailed.iter().all(|&(_, min, n)| min == 0 && n == 0));
    }

    #[test]
    fn a_malformed_line_is_named_by_its_number() {
        let err = convert("main:1:0\n 0: 1\n x: 3\n", super::Reader::LineOnly).unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(err.to_string().contains("line 3"), "{err}");
        assert_eq!(
            convert(" 0: 1\n", super::Reader::LineOnly)
                .unwrap_err()
                .line,
            1
        );
        assert_eq!(
            convert("main\n", super::Reader::LineOnly).unwrap_err().line,
            1
        );
    }

    #[test]
    fn profiles_are_merged_by_adding_samples() {
        let a = parse_llvm_text("f:10:2\n 1: 10\n").unwrap();
        let b = parse_llvm_text("f:4:1\n 1: 3\n 2: 1\ng:1:0\n 0: 1\n").unwrap();
        let merged = merge([a, b]);
        assert_eq!(merged.len(), 2);
        assert_eq!((merged[0].head, merged[0].total()), (3, 14));
        assert_eq!(merged[1].name, "g");
    }

    /// A workload of weight 3 counts as three of it: every count of its
    /// profile, inlined copies and call targets included, is tripled.
    #[test]
    fn a_weighted_profile_counts_its_weight_times() {
        let text = "f:10:2\n 1: 10 g:4\n 3: h:6\n  1: 6\n";
        let mut a = parse_llvm_text(text).unwrap();
        for f in &mut a {
            f.scale(3);
        }
        let b = parse_llvm_text("f:4:1\n 1: 3\n").unwrap();
        let merged = merge([a, b]);
        let f = &merged[0];
        assert_eq!((f.head, f.total()), (7, 3 * 16 + 3));
        assert_eq!(f.lines[&(1 << 16)].count, 33);
        assert_eq!(f.lines[&(1 << 16)].targets["g"], 12);
        assert_eq!(f.callsites[&(3 << 16, "h".to_owned())].total(), 18);
    }

    #[test]
    fn each_gcc_gets_the_reader_its_source_has_and_others_are_refused_by_name() {
        assert_eq!(gcc_major("12\n"), Some(12));
        assert_eq!(gcc_major("14.2.0"), Some(14));
        assert_eq!(reader_of(Some(12), None), Ok(super::Reader::LineOnly));
        assert_eq!(reader_of(Some(13), None), Ok(super::Reader::Discriminators));
        assert_eq!(reader_of(Some(14), None), Ok(super::Reader::Discriminators));
        assert_eq!(reader_of(Some(15), None), Ok(super::Reader::Discriminators));
        assert_eq!(reader_of(Some(16), Some(3)), Ok(super::Reader::Version3));
        let old = reader_of(Some(11), None).unwrap_err();
        assert!(old.contains("gcc 11") && old.contains("hint:"), "{old}");
        assert!(reader_of(Some(17), None).is_err());
        assert!(reader_of(Some(14), Some(4)).is_err());
        assert!(reader_of(None, None).is_err());
    }

    /// gcc 12 keys a location by its line: a line's discriminators keep
    /// their largest count, and two call sites of one callee on one line
    /// become one.
    #[test]
    fn discriminators_are_folded_for_gcc_12_and_kept_for_later_gccs() {
        let text = "f:60:0\n 3: 10\n 3.2: 40\n 4.1: g:5\n  1: 5\n 4.3: g:5\n  1: 7\n";
        let functions = parse_llvm_text(text).unwrap();
        let f = &functions[0];
        assert_eq!(f.lines[&((3 << 16) | 2)].count, 40);
        assert_eq!(f.callsites.len(), 2);
        assert_eq!(
            write_llvm_text(&functions),
            "f:62:0\n 3: 10\n 3.2: 40\n 4.1: g:5\n  1: 5\n 4.3: g:7\n  1: 7\n"
        );
        let mut folded = functions.clone();
        super::Reader::LineOnly.prepare(&mut folded);
        let f = &folded[0];
        assert_eq!(f.lines.len(), 1);
        assert_eq!(f.lines[&(3 << 16)].count, 40 * super::V2_COUNT_SCALE);
        assert_eq!(f.callsites.len(), 1);
        assert_eq!(
            f.callsites[&(4 << 16, "g".to_owned())].lines[&(1 << 16)].count,
            12 * super::V2_COUNT_SCALE
        );
        let mut kept = functions.clone();
        super::Reader::Discriminators.prepare(&mut kept);
        let mut scaled = functions.clone();
        for f in &mut scaled {
            f.scale(super::V2_COUNT_SCALE);
        }
        assert_eq!(kept, scaled);
        // gcc 16 scales what it reads itself.
        let mut v3 = functions.clone();
        super::Reader::Version3.prepare(&mut v3);
        assert_eq!(v3, functions);
    }

    /// A profile merged by an earlier run and brought back in is scaled
    /// again for gcc 12 to 15: its counts stop at the largest, never wrap.
    #[test]
    fn scaling_a_profile_again_saturates() {
        let mut functions = parse_llvm_text("f:30:1\n 1: 10\n 2: g:7\n  1: 7\n").unwrap();
        for _ in 0..12 {
            super::Reader::Discriminators.prepare(&mut functions);
        }
        let f = &functions[0];
        assert_eq!(f.head, u64::MAX);
        assert_eq!(f.lines[&(1 << 16)].count, u64::MAX);
        assert_eq!(
            f.callsites[&(2 << 16, "g".to_owned())].lines[&(1 << 16)].count,
            u64::MAX
        );
    }

    /// `create_llvm_prof` 0.19 wrote `SQLite`'s inlined callee names from
    /// freed memory, a newline among the bytes: the callsite and its name's
    /// tail are left out, counted, and the function around them kept whole.
    #[test]
    fn a_garbled_callee_name_drops_only_its_callsite() {
        let text = "f:30:1\n 1: 10\n 2: \u{f0}\u{1f}R\u{8d}\nS\u{8d}U:1\n  4: 5\n 3: g:7\n  1: 7\n 5: 20\n";
        let (functions, garbled) = parse_llvm_text_counting(text).unwrap();
        assert_eq!(garbled, 1);
        assert_eq!(functions.len(), 1, "{functions:?}");
        let f = &functions[0];
        assert_eq!(f.lines.keys().map(|o| o >> 16).collect::<Vec<_>>(), [1, 5]);
        assert_eq!(
            f.callsites.keys().cloned().collect::<Vec<_>>(),
            [(3 << 16, "g".to_owned())]
        );
    }

    #[test]
    fn names_are_cut_where_gcc_cuts_them() {
        let functions = parse_llvm_text("_ZL3barv.constprop.0:4:2\n 1: 4\n").unwrap();
        assert_eq!(functions[0].name, "_ZL3barv");
        assert_eq!(functions[0].total(), 4);
    }
}
