//! `perf script` read the same way on every perf (5.10 to 6.12 and later):
//! the fields are asked for by name, a recording with call chains (`perf
//! record -g`, as production recordings usually are) is read as well as
//! one without, and every address is placed in its binary through the
//! process's own mappings.
//!
//! Two things differ between perf versions, and both are handled here:
//! - the width of the leading columns (perf 6.12 pads the pid wider);
//!   words are split on whitespace, never on columns;
//! - what a call chain's frame prints: perf up to 6.3 prints the frame's
//!   offset in its object (`map__map_ip`), perf 6.4 and later the raw
//!   instruction pointer (Linux commit "perf script: Print raw ip instead
//!   of binary offset for callchain"). A sample's own address (`-G`, no
//!   call chain) is the raw one on every version. Which one a recording's
//!   frames are is read from the frames themselves ([`Convention`]), not
//!   from perf's version: an address is raw when it lies inside a mapping
//!   of its object, an offset when it lies inside the file range a mapping
//!   covers, and the frames that fit only one reading decide.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::process::{capture_command, quote_output};

/// How long `perf script` may take over one recording.
const TIMEOUT: Duration = Duration::from_mins(10);

/// The text of `perf script` over `recording`: mappings, forks and execs,
/// then per sample its pid, period and address (`call_graph`: every frame
/// of its call chain, one per line, leaf first).
pub fn run(recording: &Path, call_graph: bool) -> Result<String> {
    let mut command = Command::new("perf");
    command.args([
        "script",
        "--show-mmap-events",
        "--show-task-events",
        "--no-inline",
        "-F",
        "pid,period,ip,dso",
    ]);
    if !call_graph {
        // A recording made with -g prints its call chain under `ip`
        // unless told not to.
        command.arg("-G");
    }
    command.arg("-i").arg(recording);
    let out = capture_command(&mut command, TIMEOUT).context("running perf script")?;
    if !out.success() {
        bail!(
            "perf script could not read {}:\n{}\nhint: a recording cut short (the machine ran out of disk, perf was killed) cannot be read; train again",
            recording.display(),
            quote_output(&out.stderr)
        );
    }
    Ok(out.stdout)
}

/// One mapping of a file into a process (`PERF_RECORD_MMAP2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub len: u64,
    pub pgoff: u64,
    pub file: Rc<str>,
}

impl Mapping {
    fn holds_address(&self, value: u64) -> bool {
        value >= self.start && value - self.start < self.len
    }

    fn holds_offset(&self, value: u64) -> bool {
        value >= self.pgoff && value - self.pgoff < self.len
    }
}

/// What a call chain's frames print: an address in the process (perf 6.4
/// and later), or an offset in the object's file (perf 6.3 and older).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Convention {
    #[default]
    Address,
    FileOffset,
}

/// Where a frame lies: the mapped file and the offset in it.
pub type Placed = Option<(Rc<str>, u64)>;

/// One frame, placed under either reading of its value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Frame {
    as_address: Placed,
    as_offset: Placed,
    /// In the kernel (or a guest's): never in a user's file.
    kernel: bool,
}

/// One sample: its process, its period and its frames, leaf first (one
/// frame without a call chain).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sample {
    pid: u32,
    period: u64,
    frames: Vec<Frame>,
    /// Whether the frames came from a call chain (one line each).
    chain: bool,
}

/// A recording's samples, each frame placed in its file through the
/// process's mappings as they were when the sample was taken.
#[derive(Debug, Default)]
pub struct Recording {
    samples: Vec<Sample>,
    /// How the call chains' frames are printed (a sample's own address,
    /// without a call chain, is always an address).
    pub chain_convention: Convention,
}

/// A sample as the converters see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement<'r> {
    pub pid: u32,
    pub period: u64,
    /// Leaf first.
    pub frames: Vec<PlacedFrame<'r>>,
}

/// One frame of a [`Placement`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedFrame<'r> {
    /// The mapped file and the offset in it; `None` where the frame lies
    /// in no mapped file (the kernel, the vDSO, JIT code, a process whose
    /// mappings were never seen).
    pub at: Option<(&'r str, u64)>,
    /// Whether the frame is the kernel's.
    pub kernel: bool,
}

/// The reader's state: every process's mappings, and the sample being read.
#[derive(Default)]
struct Reader {
    maps: HashMap<u32, Vec<Mapping>>,
    recording: Recording,
    current: Option<Sample>,
}

impl Reader {
    fn finish_sample(&mut self) {
        if let Some(sample) = self.current.take() {
            self.recording.samples.push(sample);
        }
    }

    fn frame(&self, pid: u32, value: u64, object: &str) -> Frame {
        let maps = self.maps.get(&pid).map_or(&[][..], Vec::as_slice);
        let of_object = || maps.iter().filter(|m| &*m.file == object);
        Frame {
            as_address: of_object()
                .find(|m| m.holds_address(value))
                .map(|m| (m.file.clone(), value - m.start + m.pgoff)),
            as_offset: of_object()
                .find(|m| m.holds_offset(value))
                .map(|m| (m.file.clone(), value)),
            kernel: object.starts_with("[kernel") || object.starts_with("[guest"),
        }
    }

    fn event(&mut self, pid: u32, what: &str, line: &str, owner: Option<&str>) {
        if what.starts_with("PERF_RECORD_MMAP") {
            // The leading pid of a mapping perf synthesized when it
            // attached (`perf record -p`) is 0: the event's own names it.
            let owner = owner
                .and_then(|w| w.split('/').next()?.parse::<u32>().ok())
                .unwrap_or(pid);
            if let Some(mapping) = parse_mapping(line) {
                let list = self.maps.entry(owner).or_default();
                list.retain(|m| {
                    m.start + m.len <= mapping.start || mapping.start + mapping.len <= m.start
                });
                list.push(mapping);
            }
        } else if what.starts_with("PERF_RECORD_FORK") {
            if let Some((child, parent)) = parse_fork(what) {
                if child != parent {
                    let inherited = self.maps.get(&parent).cloned().unwrap_or_default();
                    self.maps.insert(child, inherited);
                }
            }
        } else if what.starts_with("PERF_RECORD_EXIT") {
            if let Some((child, parent)) = parse_fork(what) {
                if child != parent {
                    self.maps.remove(&child);
                }
            }
        } else if what.starts_with("PERF_RECORD_COMM") && line.contains("COMM exec") {
            self.maps.remove(&pid);
        }
    }
}

/// Read `perf script`'s text (see [`run`]).
pub fn parse(text: &str) -> Recording {
    let mut reader = Reader::default();
    for line in text.lines() {
        if line.starts_with('\t') {
            if let Some((value, object)) = parse_frame(line) {
                let pid = reader.current.as_ref().map_or(0, |s| s.pid);
                let frame = reader.frame(pid, value, object);
                if let Some(sample) = reader.current.as_mut() {
                    sample.frames.push(frame);
                    sample.chain = true;
                }
            }
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(pid), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        reader.finish_sample();
        if what.starts_with("PERF_RECORD") {
            reader.event(pid, what, line, words.next());
            continue;
        }
        let Ok(period) = what.parse::<u64>() else {
            continue;
        };
        let mut sample = Sample {
            pid,
            period,
            frames: Vec::new(),
            chain: false,
        };
        // Without a call chain the address follows on the same line.
        if let (Some(value), Some(object)) = (
            words.next().and_then(|ip| u64::from_str_radix(ip, 16).ok()),
            object_of(line),
        ) {
            sample.frames.push(reader.frame(pid, value, object));
        }
        reader.current = Some(sample);
    }
    reader.finish_sample();
    let mut recording = reader.recording;
    recording.chain_convention = recording.guess_chain_convention();
    recording
}

/// The object in parentheses that ends a sample's line, if any.
fn object_of(line: &str) -> Option<&str> {
    let inner = line.trim_end().strip_suffix(')')?;
    let open = inner.find(" (")?;
    Some(&inner[open + 2..])
}

/// `\t   ce11b (/path/to/bin)` → the value and the object.
fn parse_frame(line: &str) -> Option<(u64, &str)> {
    let line = line.trim();
    let (ip, rest) = line.split_once(' ')?;
    let object = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some((u64::from_str_radix(ip, 16).ok()?, object))
}

impl Recording {
    /// How many samples the recording holds (user and kernel).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Each sample with its frames placed in their files.
    pub fn placed(&self) -> impl Iterator<Item = Placement<'_>> + '_ {
        self.samples.iter().map(move |sample| {
            let convention = if sample.chain {
                self.chain_convention
            } else {
                Convention::Address
            };
            let frames = sample
                .frames
                .iter()
                .map(|f| {
                    let placed = match convention {
                        Convention::Address => &f.as_address,
                        Convention::FileOffset => &f.as_offset,
                    };
                    PlacedFrame {
                        at: placed.as_ref().map(|(file, offset)| (&**file, *offset)),
                        kernel: f.kernel,
                    }
                })
                .collect();
            Placement {
                pid: sample.pid,
                period: sample.period,
                frames,
            }
        })
    }

    /// The frames of call chains that fit only one reading decide; a tie
    /// is read as addresses, what perf 6.4 and later print.
    fn guess_chain_convention(&self) -> Convention {
        let (mut only_address, mut only_offset) = (0usize, 0usize);
        for frame in self
            .samples
            .iter()
            .filter(|s| s.chain)
            .flat_map(|s| &s.frames)
        {
            match (frame.as_address.is_some(), frame.as_offset.is_some()) {
                (true, false) => only_address += 1,
                (false, true) => only_offset += 1,
                _ => {}
            }
        }
        if only_offset > only_address {
            Convention::FileOffset
        } else {
            Convention::Address
        }
    }
}

/// `… PERF_RECORD_MMAP2 1/1: [0xSTART(0xLEN) @ 0xPGOFF …]: r-xp /path`.
pub fn parse_mapping(line: &str) -> Option<Mapping> {
    let (_, rest) = line.split_once('[')?;
    let (range, rest) = rest.split_once('(')?;
    let (len, rest) = rest.split_once(')')?;
    let rest = rest.trim_start().strip_prefix('@')?.trim_start();
    let pgoff = rest.split_whitespace().next()?.trim_end_matches(']');
    let (_, tail) = rest.split_once("]: ")?;
    let (_perms, file) = tail.split_once(' ')?;
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    Some(Mapping {
        start: hex(range)?,
        len: hex(len)?,
        pgoff: hex(pgoff)?,
        file: Rc::from(file.trim()),
    })
}

/// `PERF_RECORD_FORK(child:tid):(parent:tid)` → (child, parent) pids.
fn parse_fork(word: &str) -> Option<(u32, u32)> {
    let mut pids = word
        .split('(')
        .skip(1)
        .map(|p| p.split(':').next()?.parse::<u32>().ok());
    Some((pids.next()??, pids.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORK_6_1_G: &str = include_str!("../../../tests/fixtures/perf-script/perf6.1-fork-g.txt");
    const FORK_6_12_G: &str =
        include_str!("../../../tests/fixtures/perf-script/perf6.12-fork-g.txt");
    const FORK_6_12: &str = include_str!("../../../tests/fixtures/perf-script/perf6.12-fork.txt");
    const GO_6_1_G: &str = include_str!("../../../tests/fixtures/perf-script/perf6.1-go-g.txt");
    const GO_6_12_G: &str = include_str!("../../../tests/fixtures/perf-script/perf6.12-go-g.txt");

    #[test]
    fn a_call_chains_frames_are_read_as_the_perf_that_printed_them_wrote_them() {
        assert_eq!(parse(FORK_6_1_G).chain_convention, Convention::FileOffset);
        assert_eq!(parse(GO_6_1_G).chain_convention, Convention::FileOffset);
        assert_eq!(parse(FORK_6_12_G).chain_convention, Convention::Address);
        assert_eq!(parse(GO_6_12_G).chain_convention, Convention::Address);
        // Without call chains there is nothing to tell: addresses.
        assert_eq!(parse(FORK_6_12).chain_convention, Convention::Address);
    }

    #[test]
    fn samples_with_and_without_call_chains_keep_their_pid_period_and_leaf() {
        let recording = parse(FORK_6_12_G);
        let samples: Vec<Placement> = recording.placed().collect();
        assert_eq!(samples.len(), recording.len());
        assert!(samples.iter().all(|s| s.period == 250_000));
        let in_fork = samples
            .iter()
            .filter(|s| {
                s.frames
                    .first()
                    .and_then(|f| f.at)
                    .is_some_and(|(f, _)| f == "/tmp/fork")
            })
            .count();
        assert!(in_fork > 150, "{in_fork}");
        // The parent and the forked child both burn.
        let pids: std::collections::BTreeSet<u32> = samples.iter().map(|s| s.pid).collect();
        assert!(pids.len() >= 2, "{pids:?}");
    }

    #[test]
    fn a_forked_child_inherits_its_parents_mappings_and_an_exec_drops_them() {
        let text = "1 PERF_RECORD_MMAP2 1/1: [0x5000(0x1000) @ 0x1000 fe:00 1 0]: r-xp /b/x\n1 PERF_RECORD_FORK(2:2):(1:1)\n2     9      5010 (/b/x)\n2 PERF_RECORD_COMM exec: y:2/2\n2     9      5010 (/b/x)\n";
        let recording = parse(text);
        let samples: Vec<Placement> = recording.placed().collect();
        assert_eq!(samples[0].frames[0].at, Some(("/b/x", 0x1010)));
        assert_eq!(samples[1].frames[0].at, None);
    }

    #[test]
    fn reads_mappings_forks_and_frames() {
        let m = parse_mapping("16807 PERF_RECORD_MMAP2 16807/16807: [0x555583cb0000(0x1000) @ 0x1000 fe:00 10469939 2958782907]: r-xp /a b/fork").unwrap();
        assert_eq!(
            (m.start, m.len, m.pgoff),
            (0x5555_83cb_0000, 0x1000, 0x1000)
        );
        assert_eq!(&*m.file, "/a b/fork");
        assert_eq!(
            parse_fork("PERF_RECORD_FORK(16809:16809):(16807:16807)"),
            Some((16809, 16807))
        );
        assert_eq!(
            parse_frame("\t  ce11b (/a b/gohot)"),
            Some((0xce11b, "/a b/gohot"))
        );
        assert_eq!(parse_frame("\tzz (x)"), None);
    }
}
