//! Go's PGO from `perf record -g` samples, for any Go program: training
//! runs (and services, attached over each workload's window) are sampled
//! with their call stacks (Go keeps frame pointers on amd64 and arm64),
//! and the recordings become one pprof CPU profile, `merged-<hash>.pprof`,
//! which the final build reads through `GOFLAGS=-pgo=`.
//!
//! The conversion: `perf script -F period,ip,dso` prints each sample's
//! stack as file offsets; those in the trained binaries become linked
//! addresses (a return address less one, so it names the call's line), and
//! `llvm-symbolizer` names their functions, files, lines, inlined frames
//! and each function's first line, which Go's PGO needs to place a call
//! site (`line - start_line`). Kernel frames and frames in other objects
//! (libc, the vDSO) are left out. A sample taken where a function has not
//! set up its frame pointer (a leaf without a frame, a prologue) loses its
//! caller: the stack goes on at the caller's caller, as every
//! frame-pointer profiler's does.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};

use crate::toolchain::formats::perf_script::{self, PlacedFrame};
use crate::toolchain::formats::pprof::{Line, LocationId, Mapping, Profile};
use crate::toolchain::matching::Counts;
use crate::toolchain::round::Round;
use crate::toolchain::sampling::{self, CallGraph, Sampler, Unwind, RAW_EXTENSION};
use crate::toolchain::symbolize::{self, Frame, Segment};
use crate::toolchain::{find_files, no_profile_error, raw_dir, store_merged, Flags, StageDirs};

/// Go's PGO from perf samples.
pub struct GoPerfPgo;

/// Go PGO's part in the messages about sampling: a timer by default, which
/// needs no PMU (Go's own profiler samples a timer too).
pub const SAMPLER: Sampler = Sampler {
    what: "Go PGO from perf samples (pgo_source = \"perf\")",
    instead:
        "use pgo_source = \"cpuprofile\" with a program that writes its own CPU profile ({profile})",
    default_event: Some("cpu-clock"),
    call_graph: CallGraph::Always(Unwind::FramePointers),
};

impl Round for GoPerfPgo {
    fn name(&self) -> &'static str {
        "go-pgo-perf"
    }

    fn sampler(&self) -> Option<&'static Sampler> {
        Some(&SAMPLER)
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        super::MERGED_EXTENSION
    }

    fn sampled_functions(&self, files: &[PathBuf]) -> Result<Option<Counts>> {
        super::sampled_functions(files).map(Some)
    }

    fn compared_name<'a>(&self, name: &'a str) -> &'a str {
        super::go_name(name)
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let recordings = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if recordings.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION)
                .context("training ran under perf record -g and left no recording"));
        }
        let event = sampling::recorded_event(dirs).unwrap_or_else(|| "cpu-clock".to_owned());
        let profile = convert(&recordings, binaries, &event)?;
        let staging = dirs.profile.join("merging.tmp");
        fs_err::write(&staging, profile.to_gzip()?)?;
        Ok(vec![store_merged(
            &dirs.profile,
            &staging,
            super::MERGED_EXTENSION,
        )?])
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        super::use_merged(flags, dirs);
    }
}

/// A trained binary: its path as perf names it, and where its code lies.
struct Binary {
    path: PathBuf,
    segments: Vec<Segment>,
}

/// One frame of a stack: a trained binary and a linked address in it (a
/// return address already less one).
type Key = (usize, u64);

/// The samples of every recording, by stack (leaf first): how many, and
/// their periods added up.
#[derive(Default)]
struct Stacks {
    counts: HashMap<Vec<Key>, (i64, i64)>,
    samples: u64,
    kept: u64,
}

/// Turn `recordings` of `binaries` into one CPU profile.
pub fn convert(recordings: &[PathBuf], binaries: &[PathBuf], event: &str) -> Result<Profile> {
    let started = Instant::now();
    let trained: Vec<Binary> = binaries
        .iter()
        .map(|b| {
            Ok(Binary {
                path: fs_err::canonicalize(b)?,
                segments: symbolize::load_segments(b)?,
            })
        })
        .collect::<Result<_>>()?;
    let mut stacks = Stacks::default();
    for recording in recordings {
        let text = perf_script::run(recording, true)?;
        read_samples(&perf_script::parse(&text), &trained, &mut stacks);
    }
    if stacks.kept == 0 {
        bail!(
            "the {} perf recording(s) hold {} samples, none in the trained binaries ({})\nhint: the training workloads must run the binaries ({{bin.NAME}}) long enough to be sampled (perf samples about 4000 times a second of CPU time)",
            recordings.len(),
            stacks.samples,
            binaries.iter().map(|b| b.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    let symbols = symbolize_all(&trained, &stacks)?;
    let profile = build(&trained, &stacks, &symbols, event)?;
    crate::progress::info(format_args!(
        "perf samples → pprof: {} of {} samples in the trained binaries, {} stacks, {} addresses symbolized in {:.1} s",
        stacks.kept,
        stacks.samples,
        profile.stacks(),
        symbols.values().map(HashMap::len).sum::<usize>(),
        started.elapsed().as_secs_f64()
    ));
    Ok(profile)
}

/// Add the samples of one recording (`perf script`'s text, see
/// [`perf_script::run`]) to `stacks`.
fn read_samples(recording: &perf_script::Recording, trained: &[Binary], stacks: &mut Stacks) {
    for placement in recording.placed() {
        stacks.samples += 1;
        let stack = stack_of(&placement.frames, trained);
        if stack.is_empty() {
            continue;
        }
        stacks.kept += 1;
        let entry = stacks.counts.entry(stack).or_default();
        entry.0 += 1;
        entry.1 += i64::try_from(placement.period).unwrap_or(i64::MAX);
    }
}

/// The frames of one sample that lie in a trained binary, leaf first. The
/// first user-space frame is where the sample was taken; every later one is
/// a return address, looked up one byte earlier (inside the call).
fn stack_of(frames: &[PlacedFrame], trained: &[Binary]) -> Vec<Key> {
    let mut stack = Vec::new();
    let mut leaf = true;
    for frame in frames.iter().filter(|f| !f.kernel) {
        let is_return = !leaf;
        leaf = false;
        let Some((file, offset)) = frame.at else {
            continue;
        };
        let Some(b) = trained.iter().position(|b| b.path.as_os_str() == file) else {
            continue;
        };
        let Some(address) = trained[b]
            .segments
            .iter()
            .find_map(|s| s.address_of(offset))
        else {
            continue;
        };
        stack.push((b, address - u64::from(is_return)));
    }
    stack
}

/// The frames of every address the stacks hold, per binary.
fn symbolize_all(
    trained: &[Binary],
    stacks: &Stacks,
) -> Result<HashMap<usize, HashMap<u64, Vec<Frame>>>> {
    let mut wanted: HashMap<usize, BTreeSet<u64>> = HashMap::new();
    for key in stacks.counts.keys().flatten() {
        wanted.entry(key.0).or_default().insert(key.1);
    }
    let mut out = HashMap::new();
    for (b, addresses) in wanted {
        let addresses: Vec<u64> = addresses.into_iter().collect();
        let frames = symbolize::symbolize(&trained[b].path, &addresses)?;
        if !frames.values().any(|f| !f.is_empty()) {
            bail!(
                "llvm-symbolizer names no function at the {} sampled addresses of {}: the binary has no DWARF line tables\nhint: Go's PGO from perf samples needs them: build the pgo variant without -ldflags=-w or -s (strip after the final build if you must)",
                addresses.len(),
                trained[b].path.display()
            );
        }
        out.insert(b, frames);
    }
    Ok(out)
}

/// The profile: a mapping per trained binary, a location per sampled
/// address with its inlined frames, a sample per stack.
fn build(
    trained: &[Binary],
    stacks: &Stacks,
    symbols: &HashMap<usize, HashMap<u64, Vec<Frame>>>,
    event: &str,
) -> Result<Profile> {
    let clock = ["cpu-clock", "task-clock"]
        .iter()
        .any(|c| event.starts_with(c));
    // A clock event's period is nanoseconds, which Go's own profiles count.
    let value = if clock {
        ("cpu", "nanoseconds")
    } else {
        (event, "events")
    };
    let (count, period): (i64, i64) = stacks
        .counts
        .values()
        .fold((0, 0), |(c, p), v| (c + v.0, p + v.1));
    let mut profile = Profile::new(&[("samples", "count"), value], value, period / count.max(1));
    profile.comment(&format!(
        "converted by afterburner from perf record -g -e {event} ({count} samples)"
    ));
    let mappings: Vec<_> = trained
        .iter()
        .map(|b| {
            let text = b.segments.iter().find(|s| s.executable).copied();
            profile.add_mapping(Mapping {
                start: text.map_or(0, |s| s.vaddr),
                limit: text.map_or(0, |s| s.vaddr + s.size),
                file_offset: text.map_or(0, |s| s.offset),
                file: b.path.display().to_string(),
            })
        })
        .collect();
    let mut locations: HashMap<Key, Option<LocationId>> = HashMap::new();
    let mut ordered: Vec<(&Vec<Key>, &(i64, i64))> = stacks.counts.iter().collect();
    ordered.sort(); // the same recordings write the same bytes
    for (stack, &(n, p)) in ordered {
        let mut ids = Vec::with_capacity(stack.len());
        for key in stack {
            let id = *locations.entry(*key).or_insert_with(|| {
                let frames = symbols.get(&key.0).and_then(|s| s.get(&key.1))?;
                if frames.is_empty() {
                    return None;
                }
                let lines = frames
                    .iter()
                    .map(|f| Line {
                        function: profile.function(&f.function, &f.file, f.start_line),
                        line: f.line,
                    })
                    .collect();
                Some(profile.add_location(mappings[key.0], key.1, lines))
            });
            ids.extend(id);
        }
        if !ids.is_empty() {
            profile.add_sample(ids, &[n, p]);
        }
    }
    if profile.stacks() == 0 {
        bail!("no sampled address of the trained binaries could be named by llvm-symbolizer");
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gohot() -> Vec<Binary> {
        vec![Binary {
            path: PathBuf::from("/tmp/gp/gohot"),
            segments: vec![Segment {
                offset: 0,
                vaddr: 0x40_0000,
                size: 0xce571,
                executable: true,
            }],
        }]
    }

    fn gohot_at(path: &str) -> Vec<Binary> {
        let mut b = gohot();
        b[0].path = PathBuf::from(path);
        b
    }

    /// The same gohot binary (Go 1.26, not PIE) recorded with `perf record
    /// -g -e cpu-clock` by perf 6.1 (frames printed as file offsets) and
    /// perf 6.12 (frames printed as addresses), read by `perf script` of
    /// the same version (tests/fixtures/perf-script).
    fn stacks_of(fixture: &str, path: &str) -> Stacks {
        let mut stacks = Stacks::default();
        read_samples(&perf_script::parse(fixture), &gohot_at(path), &mut stacks);
        stacks
    }

    const PERF_6_1: &str = include_str!("../../../tests/fixtures/perf-script/perf6.1-go-g.txt");
    const PERF_6_12: &str = include_str!("../../../tests/fixtures/perf-script/perf6.12-go-g.txt");

    /// Regression: perf 6.12 prints a call chain's frames as addresses,
    /// which were read as file offsets and fell outside the binary: "none
    /// in the trained binaries" while `perf report` put 99% there.
    #[test]
    fn the_same_binary_recorded_by_perf_6_1_and_6_12_gives_the_same_hot_stacks() {
        let old = stacks_of(PERF_6_1, "/var/tmp/fx/go/gohot");
        let new = stacks_of(PERF_6_12, "/tmp/gohot");
        for stacks in [&old, &new] {
            assert!(
                stacks.kept * 10 >= stacks.samples * 9,
                "{} of {}",
                stacks.kept,
                stacks.samples
            );
            for (b, address) in stacks.counts.keys().flatten() {
                assert_eq!(*b, 0);
                assert!((0x40_0000..0x4c_e571).contains(address), "{address:#x}");
            }
        }
        let hottest = |stacks: &Stacks| {
            let mut leaves: HashMap<u64, i64> = HashMap::new();
            for (stack, (count, _)) in &stacks.counts {
                *leaves.entry(stack[0].1).or_default() += count;
            }
            let mut leaves: Vec<(i64, u64)> = leaves.into_iter().map(|(a, c)| (c, a)).collect();
            leaves.sort_unstable_by(|a, b| b.cmp(a));
            leaves
                .into_iter()
                .take(3)
                .map(|(_, a)| a)
                .collect::<BTreeSet<u64>>()
        };
        assert!(
            !hottest(&old).is_disjoint(&hottest(&new)),
            "{:x?} vs {:x?}",
            hottest(&old),
            hottest(&new)
        );
    }

    /// Written by hand in perf 6.1's form: kernel frames before the leaf,
    /// a libc frame, a sample wholly in the kernel.
    const SCRIPT: &str = "    0 PERF_RECORD_MMAP2 7/7: [0x400000(0xcf000) @ 0 fe:00 1 0]: r-xp /tmp/gp/gohot\n    0 PERF_RECORD_MMAP2 7/7: [0x7f0000000000(0x156000) @ 0x26000 fe:00 2 0]: r-xp /usr/lib/x86_64-linux-gnu/libc.so.6\n7    250000 \n\tffffffff815a2841 ([kernel.kallsyms])\n\tffffffff81000c82 ([kernel.kallsyms])\n\t           26be0 (/tmp/gp/gohot)\n\t           1cb7d (/tmp/gp/gohot)\n\n7    250000 \n\t           ce11b (/tmp/gp/gohot)\n\t           ce3f8 (/tmp/gp/gohot)\n\t           27000 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n7    250000 \n\t           ce11b (/tmp/gp/gohot)\n\t           ce3f8 (/tmp/gp/gohot)\n\n7    250000 \n\tffffffff815a2841 ([kernel.kallsyms])\n";

    #[test]
    fn stacks_keep_the_binarys_frames_and_look_return_addresses_up_inside_the_call() {
        let mut stacks = Stacks::default();
        read_samples(&perf_script::parse(SCRIPT), &gohot(), &mut stacks);
        assert_eq!((stacks.samples, stacks.kept), (4, 3));
        // The leaf after kernel frames is where the sample was taken: exact.
        let faulted = vec![(0, 0x42_6be0), (0, 0x41_cb7c)];
        assert_eq!(stacks.counts[&faulted], (1, 250_000));
        // Two identical stacks add up; the libc frame is left out.
        let hot = vec![(0, 0x4c_e11b), (0, 0x4c_e3f7)];
        assert_eq!(stacks.counts[&hot], (2, 500_000));
    }
}
