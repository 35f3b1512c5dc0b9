//! gcc's AutoFDO profile from instruction-pointer samples (a recording
//! without branch stacks: timer samples on a VM, any event where the CPU
//! has no LBR), made by afterburner itself instead of `create_llvm_prof`.
//!
//! Why: `create_llvm_prof` 0.19 writes the names of many inlined callees of
//! gcc-built binaries from freed memory (about half of `SQLite`'s speedtest1
//! call sites, 333 of Redis's), and a call site gcc cannot name is a call
//! gcc does not inline where the profiled binary did. Here every address is
//! named by `llvm-symbolizer --inlining` from the binary's DWARF
//! ([`crate::toolchain::symbolize`]), so every inlined frame keeps its name.
//!
//! The method is AutoFDO's own for samples without branch stacks (google/
//! autofdo `profile.cc` and `symbol_map.cc`, read, not copied): samples are
//! counted per instruction address; each address's inline stack, outermost
//! first, places it: the outermost frame is the function, each inner frame a
//! call site at its caller's line offset (line − the caller's
//! `DW_AT_decl_line`), the innermost frame's line offset takes the count. A
//! line offset reached from several addresses keeps the largest count
//! (AutoFDO's `MAX` for perf data: the instructions of one line run as
//! often as each other). Every other instruction of a sampled function
//! (`objdump -d`) is placed the same way with a count of 0, as AutoFDO's
//! instruction map does: gcc reads a line listed at 0 as cold, and a line
//! not listed as unknown, which its propagation may make as hot as its
//! neighbours (measured on `SQLite`'s speedtest1: without the zeros, gcc's
//! build ran 0.5% more instructions than -O2; with them, see the README).
//! Where the recording has call chains (the variant's `call_chains`, or
//! one brought with `perf record -g` or `--call-graph dwarf`; by default
//! training records none, see [`super::SAMPLER`]), each call through a pointer gets the
//! functions it was seen calling as its line's call targets
//! ([`call_targets`]), as shares of its line's count. For clang, every
//! call (direct or through a pointer) counts as its straight-line run
//! does: its own instruction seldom draws a sample, and a call read cold
//! is one the inliner passes over; and a direct call at least as its
//! callee's entry, in the share of the callee's calls made from it
//! ([`callee_entries`]).
//! For gcc, each instruction's count is first its straight-line run's
//! samples per instruction ([`super::straight_runs`]), so that a line whose
//! few instructions drew no sample of their own (a call, a `return`) is not
//! read as cold beside the run it executes with. A function's head count is
//! its entry's ([`Dialect`]). A frame with no line, or one before its
//! function's first line, cuts the sample out.
//!
//! Addresses: `perf script` prints a sample's instruction pointer in the
//! process's address space; the process's mappings (its `MMAP2` events, a
//! forked child inheriting its parent's) turn it into a file offset, and
//! the binary's program headers into the address it is linked at.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::process::{capture_command, quote_output};
use crate::toolchain::formats::gcov_afdo::{gcc_name, Instance};
use crate::toolchain::formats::perf_script;
use crate::toolchain::sampling;
use crate::toolchain::symbolize::{self, Frame, Segment};

use super::call_targets;
use super::callee_entries;
use super::straight_runs::{self, Instruction, Role};

/// gcc keeps 16 bits for a line offset.
const MAX_LINE_OFFSET: i64 = 0xffff;

/// Convert `recording` for `binary` into an LLVM text sample profile at
/// `out` (what gcc's round merges); `None` when no sample lies in the
/// binary. The [`crate::toolchain::merge::Convert`] of gcc's round without branch
/// stacks.
pub fn convert(
    recording: &Path,
    binary: &Path,
    out: &Path,
    dialect: Dialect,
) -> Result<Option<PathBuf>> {
    let path = fs_err::canonicalize(binary)?;
    let segments = symbolize::load_segments(binary)?;
    let text = perf_script::run(recording, true)?;
    let samples = read_samples(&perf_script::parse(&text), &path, &segments);
    drop(text);
    if samples.counts.is_empty() {
        return Ok(None);
    }
    let listing = disassemble(binary)?;
    let functions = straight_runs::disassembly(&listing);
    let mut targets = call_targets::Targets::new();
    let mut direct = call_targets::Direct::new();
    if !samples.chains.is_empty() {
        // A chain is the frame pointers' walk unless perf copied the stack
        // to unwind it (or its header cannot be read: the stricter reading).
        let frame_pointers = !sampling::holds_user_stacks(recording).unwrap_or(false);
        let code = call_targets::Code::new(&functions);
        for chain in &samples.chains {
            call_targets::count(&mut targets, &mut direct, &code, chain, frame_pointers);
        }
    }
    let hot_code = sampled_functions(&functions, &samples.counts, dialect);
    let mut counts = samples.counts.clone();
    for instruction in hot_code.iter().flat_map(|code| code.iter()) {
        counts.entry(instruction.address).or_insert(0);
    }
    // A call through a pointer is placed on its line like any instruction.
    for call in targets.keys() {
        counts.entry(*call).or_insert(0);
    }
    // Spread, a count is in hundredths of a sample ([`straight_runs::PER_SAMPLE`]).
    let mut raised = String::new();
    let unit = if dialect.spreads_samples() {
        straight_runs::spread(&mut counts, &hot_code);
        straight_runs::PER_SAMPLE
    } else {
        calls_count_as_their_runs(&mut counts, &hot_code);
        let n = callee_entries::raise(&mut counts, &samples.counts, &functions, &direct);
        raised = format!("; {n} direct calls raised to their callees' entry counts");
        1
    };
    let addresses: Vec<u64> = counts.keys().copied().collect();
    let frames = symbolize::symbolize(binary, &addresses)?;
    let (functions, cut) = build(&counts, &targets, &frames, dialect);
    if functions.iter().all(|f| f.total() == 0) {
        bail!(
            "llvm-symbolizer names no line at the {} sampled addresses of {}: the binary has no DWARF line tables\nhint: gcc's AutoFDO needs them (afterburner builds the profiled variant with -g -gdwarf-4): do not strip it",
            addresses.len(),
            binary.display()
        );
    }
    crate::progress::info(format_args!(
        "{}: {} of {} samples in {}, at {} addresses of {} instructions in sampled functions; {} samples without a line left out{}{raised}",
        recording.display(),
        samples.kept,
        samples.total,
        binary.display(),
        samples.counts.len(),
        addresses.len(),
        (cut + unit / 2) / unit,
        said_targets(&samples, &targets)
    ));
    fs_err::write(
        out,
        crate::toolchain::formats::gcov_afdo::write_llvm_text(&functions),
    )?;
    Ok(Some(out.to_path_buf()))
}

/// For a reader whose counts are not spread (clang's): each call counts
/// at least as its straight-line run does, since its own instruction
/// seldom draws a sample, and a call line read cold is a call the inliner
/// passes over (and a call through a pointer's targets are shares of it).
fn calls_count_as_their_runs(counts: &mut BTreeMap<u64, u64>, hot_code: &[&[Instruction]]) {
    let mut spread = counts.clone();
    straight_runs::spread(&mut spread, hot_code);
    let calls = hot_code
        .iter()
        .flat_map(|code| code.iter())
        .filter(|i| matches!(i.role, Role::IndirectCall | Role::DirectCall));
    for call in calls {
        let in_run = spread.get(&call.address).copied().unwrap_or(0);
        let run = (in_run + straight_runs::PER_SAMPLE / 2) / straight_runs::PER_SAMPLE;
        counts
            .entry(call.address)
            .and_modify(|c| *c = (*c).max(run));
    }
}

/// What the log says of the call chains: how many samples had one, and
/// the calls through pointers they named targets for.
fn said_targets(samples: &Samples, targets: &call_targets::Targets) -> String {
    if samples.chains.is_empty() {
        return "; no call chains (a recording with them, -g or --call-graph dwarf, names the targets of calls through pointers)"
            .to_owned();
    }
    format!(
        "; {} samples with call chains name the targets of {} calls through pointers",
        samples.chains.len(),
        targets.len()
    )
}

/// How long `objdump -d` may take over one binary.
const OBJDUMP_TIMEOUT: Duration = Duration::from_mins(5);

/// `objdump -d`'s listing of `binary`.
fn disassemble(binary: &Path) -> Result<String> {
    let mut command = Command::new("objdump");
    command.args(["-d", "--no-show-raw-insn"]).arg(binary);
    let out =
        capture_command(&mut command, OBJDUMP_TIMEOUT).context("running objdump -d (binutils)")?;
    if !out.success() {
        bail!(
            "objdump could not disassemble {}:\n{}",
            binary.display(),
            quote_output(&out.stderr)
        );
    }
    Ok(out.stdout)
}

/// The instructions of each function that holds a sampled address (a
/// function's `.cold` and other parts included: gcc names them
/// `NAME.PART`).
fn sampled_functions<'a>(
    functions: &'a [(&str, Vec<Instruction>)],
    sampled: &BTreeMap<u64, u64>,
    dialect: Dialect,
) -> Vec<&'a [Instruction]> {
    let hot: BTreeSet<&str> = functions
        .iter()
        .filter(|(_, code)| code.iter().any(|i| sampled.contains_key(&i.address)))
        .map(|(name, _)| dialect.name(name))
        .collect();
    functions
        .iter()
        .filter(|(name, _)| hot.contains(dialect.name(name)))
        .map(|(_, code)| code.as_slice())
        .collect()
}

/// The samples of one recording that lie in the binary, per linked
/// address.
#[derive(Debug, Default)]
struct Samples {
    counts: BTreeMap<u64, u64>,
    /// Every user or kernel sample of the recording.
    total: u64,
    /// Those in the binary.
    kept: u64,
    /// The call chain of each kept sample that has one: each frame's
    /// linked address, `None` outside the binary, leaf first.
    chains: Vec<Vec<Option<u64>>>,
}

/// The samples of `recording` (`perf script`'s text, see
/// [`perf_script::run`]) whose own address lies in the binary at `path`,
/// counted by their leaves, and the call chains of those that have one.
fn read_samples(recording: &perf_script::Recording, path: &Path, segments: &[Segment]) -> Samples {
    let wanted = path.to_string_lossy();
    // A recording brought from another machine names the binary where it
    // ran there: the same file name is taken for the same program.
    let name = path.file_name();
    let is_binary = |object: &str| {
        object == wanted || (name.is_some() && Path::new(object).file_name() == name)
    };
    let mut samples = Samples::default();
    for placement in recording.placed() {
        samples.total += 1;
        let Some(Some((file, offset))) = placement.frames.first().map(|f| f.at) else {
            continue;
        };
        if !is_binary(file) {
            continue;
        }
        if let Some(address) = segments.iter().find_map(|s| s.address_of(offset)) {
            samples.kept += 1;
            *samples.counts.entry(address).or_default() += 1;
            if placement.frames.len() > 1 {
                let linked = |at: Option<(&str, u64)>| {
                    let (file, offset) = at?;
                    is_binary(file)
                        .then(|| segments.iter().find_map(|s| s.address_of(offset)))
                        .flatten()
                };
                samples
                    .chains
                    .push(placement.frames.iter().map(|f| linked(f.at)).collect());
            }
        }
    }
    samples
}

/// Whose reader the profile is keyed for: gcc's (names cut at the first
/// `.`, the DWARF's raw discriminators) or LLVM's (clang's
/// `-fprofile-sample-use`: see [`Dialect::Llvm`]). Either way a sampled
/// function's head count is that of its first instruction, at least 1:
/// timer samples measure no entry counts, and a reader takes 0 for never
/// entered. LLVM puts such a function in `.text.unlikely`; gcc 12 drops
/// the samples of a function whose head is 0 (23 of 31 sampled functions
/// of Redis's `networking.c`): with heads, gcc 12's AutoFDO on Redis went
/// from 10% to 58% of PGO's instruction cut on get, 8% to 59% on set and
/// from 4.8% *more* instructions than -O2 to 1.0% fewer on zrange; gcc 14
/// ran `tests/fixtures/hotpath` 6.0% more instructions than -O2 with a
/// head of 0 on `main`, as many with one. (On `hotpath` gcc 12's gain fell
/// from 23.5% to 11.5% with a head on the indirectly called `mix`: one toy
/// against a server.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Gcc,
    /// LLVM's sample profile, keyed as its loader looks it up
    /// (`FunctionSamples::getCallSiteIdentifier` and
    /// `getCanonicalFnName` in LLVM 14 and 19): the base discriminator
    /// decoded from the DWARF's encoded one and each sample counted times
    /// the duplication factor clang encoded with it (loops unrolled or
    /// vectorized under `-fdebug-info-for-profiling`), as `create_llvm_prof`
    /// counts; names keep a `.__uniq.N` suffix and lose any other.
    Llvm,
}

impl Dialect {
    /// Whether each sample is spread over its straight-line run
    /// ([`straight_runs::spread`]) before lines take their counts.
    fn spreads_samples(self) -> bool {
        self == Self::Gcc
    }

    /// The name the reader looks a function up by.
    pub fn name(self, linkage: &str) -> &str {
        match self {
            Self::Gcc => gcc_name(linkage),
            Self::Llvm => llvm_name(linkage),
        }
    }

    /// The discriminator a location is keyed by, and the times each sample
    /// there counts; `None` where the reader cannot key it (gcc keeps 16
    /// bits for it).
    fn discriminator(self, raw: u32) -> Option<(u32, u64)> {
        match self {
            Self::Gcc => (raw <= 0xffff).then_some((raw, 1)),
            Self::Llvm => {
                let base = prefix_decoded(raw);
                let duplication = prefix_decoded(next_component(raw)).max(1);
                Some((base, u64::from(duplication)))
            }
        }
    }
}

/// LLVM's name rule for a sample profile: up to and with `.__uniq.DIGITS`
/// (`-funique-internal-linkage-names`), else up to the first `.`
/// (`foo.llvm.123`, `foo.cold` are `foo`).
fn llvm_name(name: &str) -> &str {
    const UNIQ: &str = ".__uniq.";
    if let Some(at) = name.find(UNIQ) {
        let digits = name[at + UNIQ.len()..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        return &name[..at + UNIQ.len() + digits];
    }
    name.split('.').next().unwrap_or(name)
}

/// LLVM's `getUnsignedFromPrefixEncoding` (llvm/Support/Discriminator.h,
/// the same in LLVM 14 and 19): a component of an encoded discriminator.
fn prefix_decoded(u: u32) -> u32 {
    if u & 1 != 0 {
        return 0;
    }
    let v = u >> 1;
    if v & 0x20 != 0 {
        ((v >> 1) & 0xfe0) | (v & 0x1f)
    } else {
        v & 0x1f
    }
}

/// LLVM's `getNextComponentInDiscriminator`: the encoded discriminator
/// past its first component.
fn next_component(d: u32) -> u32 {
    if d & 1 == 0 {
        d >> if d & 0x40 != 0 { 14 } else { 7 }
    } else {
        d >> 1
    }
}

/// The profile of `counts` (samples per linked address) and `targets`
/// (the functions each call through a pointer called), each address
/// placed by its `frames` (innermost first) and keyed for `dialect`;
/// returns it and how many samples had no usable line.
fn build(
    counts: &BTreeMap<u64, u64>,
    targets: &call_targets::Targets,
    frames: &HashMap<u64, Vec<Frame>>,
    dialect: Dialect,
) -> (Vec<Instance>, u64) {
    let mut functions: BTreeMap<String, Instance> = BTreeMap::new();
    // Each function's first instruction's location (its entry).
    let mut entries: BTreeMap<String, u32> = BTreeMap::new();
    let mut cut = 0;
    for (address, &count) in counts {
        let stack = frames.get(address).map_or(&[][..], Vec::as_slice);
        let keys: Option<Vec<(u32, u64)>> = stack.iter().map(|f| location(f, dialect)).collect();
        let (Some(outer), Some(keys)) = (stack.last(), keys) else {
            cut += count;
            continue;
        };
        let name = dialect.name(&outer.function);
        if stack.len() == 1 {
            entries.entry(name.to_owned()).or_insert(keys[0].0);
        }
        let mut instance = functions
            .entry(name.to_owned())
            .or_insert_with(|| Instance::exactly(name));
        for k in (1..stack.len()).rev() {
            let callee = dialect.name(&stack[k - 1].function);
            instance = instance
                .callsites
                .entry((keys[k].0, callee.to_owned()))
                .or_insert_with(|| Instance::exactly(callee));
        }
        let (key, duplication) = keys[0];
        let line = instance.lines.entry(key).or_default();
        line.count = line.count.max(count * duplication);
        for (callee, calls) in targets.get(address).into_iter().flatten() {
            *line
                .targets
                .entry(dialect.name(callee).to_owned())
                .or_default() += calls;
        }
    }
    for function in functions.values_mut() {
        targets_in_line_units(function);
        drop_zeros_beside_samples(function);
    }
    for (name, function) in &mut functions {
        let entry = entries.get(name).and_then(|k| function.lines.get(k));
        if function.total() > 0 {
            function.head = entry.map_or(0, |l| l.count).max(1);
        }
    }
    (functions.into_values().collect(), cut)
}

/// A call's targets as shares of its line's count: the chains count the
/// samples spent under each callee (its whole work), the line how often
/// the call ran, which is what a reader takes a target's count for (LBR's
/// counts are calls). Left as the samples under the callee, the line
/// `c->cmd->proc(c)` of Redis's `call()` said thousands where its
/// neighbours said tens. A line whose count is 0 keeps no targets.
fn targets_in_line_units(instance: &mut Instance) {
    for line in instance.lines.values_mut() {
        let under: u64 = line.targets.values().sum();
        if under == 0 {
            continue;
        }
        let count = u128::from(line.count);
        for calls in line.targets.values_mut() {
            let share = (count * u128::from(*calls) + u128::from(under) / 2) / u128::from(under);
            *calls = u64::try_from(share).unwrap_or(u64::MAX);
        }
        line.targets.retain(|_, calls| *calls > 0);
    }
    for callee in instance.callsites.values_mut() {
        targets_in_line_units(callee);
    }
}

/// Timer samples are sparse: where one discriminator of a line was sampled
/// and another was not, the other is unknown, not cold (a loop's increment
/// runs as often as its body). A reader that keys by discriminator (gcc 13
/// and later, LLVM) takes a listed 0 as never executed, so such zeros are
/// left out and only a line none of whose instructions was sampled is
/// listed at 0. gcc 12 folds a line into its largest count, which a zero
/// never was.
fn drop_zeros_beside_samples(instance: &mut Instance) {
    let sampled: std::collections::BTreeSet<u32> = instance
        .lines
        .iter()
        .filter(|(_, l)| l.count > 0)
        .map(|(k, _)| k >> 16)
        .collect();
    instance
        .lines
        .retain(|k, l| l.count > 0 || !l.targets.is_empty() || !sampled.contains(&(k >> 16)));
    for callee in instance.callsites.values_mut() {
        drop_zeros_beside_samples(callee);
    }
}

/// A frame's location key in its function (line offset `<< 16` | the
/// dialect's discriminator) and the duplication factor, when the reader
/// can key it.
fn location(frame: &Frame, dialect: Dialect) -> Option<(u32, u64)> {
    let offset = frame.line - frame.start_line;
    let offset =
        (frame.line > 0 && frame.start_line > 0 && (0..=MAX_LINE_OFFSET).contains(&offset))
            .then(|| u32::try_from(offset).ok())
            .flatten()?;
    let (discriminator, duplication) = dialect.discriminator(frame.discriminator)?;
    Some(((offset << 16) | discriminator, duplication))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `perf script --show-mmap-events --show-task-events -F
    /// pid,period,ip,dso -G` of a PIE that forks and burns in both
    /// processes (gcc 12 -O2, perf 6.1, cpu-clock), cut down.
    const SCRIPT: &str = "    0 PERF_RECORD_COMM: perf-exec:16807/16807
16807 PERF_RECORD_COMM exec: fork:16807/16807
16807 PERF_RECORD_MMAP2 16807/16807: [0x555583cb0000(0x1000) @ 0x1000 fe:00 10469939 2958782907]: r-xp /tmp/ipx/fork
16807 PERF_RECORD_MMAP2 16807/16807: [0x7f0afe9f9000(0x156000) @ 0x26000 fe:00 326269 0]: r-xp /usr/lib/x86_64-linux-gnu/libc.so.6
16807     250000      ffffffff81249aa6 ([kernel.kallsyms])
16807 PERF_RECORD_FORK(16809:16809):(16807:16807)
16809     250000      555583cb0192 (/tmp/ipx/fork)
16809     250000      555583cb0192 (/tmp/ipx/fork)
16807     250000      555583cb019d (/tmp/ipx/fork)
16807     250000      7f0afea01000 (/usr/lib/x86_64-linux-gnu/libc.so.6)
16809 PERF_RECORD_EXIT(16809:16809):(16807:16807)
";

    fn read(script: &str, binary: &str, segments: &[Segment]) -> Samples {
        read_samples(&perf_script::parse(script), Path::new(binary), segments)
    }

    fn text_segment() -> Vec<Segment> {
        vec![Segment {
            offset: 0x1000,
            vaddr: 0x1000,
            size: 0x289,
            executable: true,
        }]
    }

    #[test]
    fn samples_are_placed_through_the_mappings_a_forked_child_inherits() {
        let s = read(SCRIPT, "/tmp/ipx/fork", &text_segment());
        assert_eq!((s.total, s.kept), (5, 3));
        // 0x555583cb0192 − 0x555583cb0000 + 0x1000 = file offset 0x1192,
        // linked at 0x1192 (the text segment's offset is its address).
        assert_eq!(s.counts.get(&0x1192), Some(&2));
        assert_eq!(s.counts.get(&0x119d), Some(&1));
        assert_eq!(s.counts.len(), 2);
    }

    /// A server perf attached to (`perf record -p`): its mappings were
    /// synthesized, with 0 for the leading pid (perf 6.1, redis-server).
    #[test]
    fn mappings_synthesized_on_attach_belong_to_the_pid_they_name() {
        let script = "    0 PERF_RECORD_MMAP2 7965/7965: [0x555bb5b52000(0x107000) @ 0x5d000 fe:00 10528067 0]: r-xp /b/redis-server\n    0 PERF_RECORD_COMM: bio_close_file:7965/7966\n 7965     250000      555bb5b593cb (/b/redis-server)\n";
        let segments = vec![Segment {
            offset: 0x5d000,
            vaddr: 0x5d000,
            size: 0x0010_7000,
            executable: true,
        }];
        let s = read(script, "/b/redis-server", &segments);
        assert_eq!((s.total, s.kept), (1, 1));
        assert_eq!(
            s.counts
                .get(&(0x555b_b5b5_93cb - 0x555b_b5b5_2000 + 0x5d000)),
            Some(&1)
        );
    }

    #[test]
    fn a_recording_from_another_machine_is_matched_by_the_binarys_file_name() {
        let script = SCRIPT.replace("/tmp/ipx/fork", "/srv/prod/fork");
        let s = read(&script, "/tmp/ipx/fork", &text_segment());
        assert_eq!((s.total, s.kept), (5, 3));
        let other = read(SCRIPT, "/tmp/ipx/other", &text_segment());
        assert_eq!(other.kept, 0);
    }

    #[test]
    fn a_sample_of_a_process_whose_mapping_was_never_seen_is_not_guessed() {
        let script = "42     250000      555583cb0192 (/tmp/ipx/fork)\n";
        let s = read(script, "/tmp/ipx/fork", &text_segment());
        assert_eq!((s.total, s.kept), (1, 0));
    }

    /// The same fork fixture recorded by perf 6.1 and perf 6.12, with and
    /// without call chains (`-g`): every recording is read by its leaves,
    /// which lie in `burn`'s loop of the one text segment.
    #[test]
    fn recordings_of_perf_6_1_and_6_12_with_and_without_call_chains_are_read_alike() {
        let segments = vec![Segment {
            offset: 0x1000,
            vaddr: 0x1000,
            size: 0x209,
            executable: true,
        }];
        let fixtures = [
            (
                include_str!("../../../tests/fixtures/perf-script/perf6.1-fork.txt"),
                "/var/tmp/fx/fork",
            ),
            (
                include_str!("../../../tests/fixtures/perf-script/perf6.1-fork-g.txt"),
                "/var/tmp/fx/fork",
            ),
            (
                include_str!("../../../tests/fixtures/perf-script/perf6.12-fork.txt"),
                "/tmp/fork",
            ),
            (
                include_str!("../../../tests/fixtures/perf-script/perf6.12-fork-g.txt"),
                "/tmp/fork",
            ),
        ];
        for (script, binary) in fixtures {
            let in_binary = script
                .lines()
                .filter(|l| !l.contains("PERF_RECORD") && l.ends_with(&format!("({binary})")))
                .count() as u64;
            let s = read(script, binary, &segments);
            assert!(in_binary > 150, "{binary}: {in_binary}");
            // With call chains a sample's return addresses are in the
            // binary too: only the leaves count.
            assert!(
                s.kept <= in_binary && s.kept * 10 >= s.total * 9,
                "{binary}: {} of {} ({in_binary} lines)",
                s.kept,
                s.total
            );
            let hottest = s
                .counts
                .iter()
                .max_by_key(|(_, c)| **c)
                .map(|(a, _)| *a)
                .unwrap();
            assert!((0x11d0..0x1200).contains(&hottest), "{hottest:#x}");
        }
    }

    #[test]
    fn unsampled_lines_of_a_sampled_function_are_listed_at_zero() {
        let counts = BTreeMap::from([(0x10, 4), (0x18, 0)]);
        let frames = HashMap::from([
            (0x10, vec![frame("f", 1, 2)]),
            (0x18, vec![frame("g", 7, 8), frame("f", 1, 5)]),
        ]);
        let (functions, _) = build(
            &counts,
            &call_targets::Targets::new(),
            &frames,
            Dialect::Gcc,
        );
        let f = &functions[0];
        assert_eq!(f.lines[&(1 << 16)].count, 4);
        let g = &f.callsites[&(4 << 16, "g".to_owned())];
        assert_eq!(g.lines[&(1 << 16)].count, 0);
        assert_eq!(
            crate::toolchain::formats::gcov_afdo::write_llvm_text(&functions),
            "f:4:4\n 1: 4\n 4: g:0\n  1: 0\n"
        );
    }

    fn frame(function: &str, start_line: i64, line: i64) -> Frame {
        Frame {
            function: function.to_owned(),
            file: "x.c".to_owned(),
            start_line,
            line,
            discriminator: 0,
        }
    }

    #[test]
    fn inline_stacks_become_call_sites_and_a_line_keeps_its_largest_count() {
        let counts = BTreeMap::from([(0x10, 7), (0x14, 3), (0x20, 5), (0x30, 2)]);
        let frames = HashMap::from([
            // `helper` (first line 3) inlined into `main` (first line 10)
            // at line 12: two addresses on helper's line 5.
            (0x10, vec![frame("helper", 3, 5), frame("main", 10, 12)]),
            (0x14, vec![frame("helper", 3, 5), frame("main", 10, 12)]),
            (0x20, vec![frame("main", 10, 14)]),
            // A line before its function's first: cut.
            (0x30, vec![frame("main.cold", 10, 9)]),
        ]);
        let (functions, cut) = build(
            &counts,
            &call_targets::Targets::new(),
            &frames,
            Dialect::Gcc,
        );
        assert_eq!(cut, 2);
        assert_eq!(functions.len(), 1);
        let main = &functions[0];
        assert_eq!(main.name, "main");
        assert_eq!(main.lines[&(4 << 16)].count, 5);
        let helper = &main.callsites[&(2 << 16, "helper".to_owned())];
        assert_eq!(helper.lines[&(2 << 16)].count, 7);
        assert_eq!(main.total(), 12);
        // The text gcc's round merges reads back the same.
        let text = crate::toolchain::formats::gcov_afdo::write_llvm_text(&functions);
        assert_eq!(text, "main:12:5\n 4: 5\n 2: helper:7\n  2: 7\n");
        assert_eq!(
            crate::toolchain::formats::gcov_afdo::parse_llvm_text(&text).unwrap(),
            functions
        );
    }

    /// clang's counts are the samples as drawn, but each call, direct or
    /// through a pointer, counts as its straight-line run does.
    #[test]
    fn for_clang_each_call_counts_as_its_run() {
        let listing = "
0000000000001000 <f>:
    1000:\tmov    %edi,%ebx
    1002:\tcall   2000 <g>
    1007:\tadd    %eax,%ebx
    1009:\tcall   *%rax
    100b:\tadd    %eax,%ebx
    100d:\tret
";
        let functions = straight_runs::disassembly(listing);
        let code: Vec<&[Instruction]> = functions.iter().map(|f| f.1.as_slice()).collect();
        let mut counts: BTreeMap<u64, u64> =
            functions[0].1.iter().map(|i| (i.address, 0)).collect();
        counts.insert(0x1007, 12);
        calls_count_as_their_runs(&mut counts, &code);
        // One run of six instructions, twelve samples: two each.
        assert_eq!((counts[&0x1002], counts[&0x1009]), (2, 2));
        assert_eq!((counts[&0x1000], counts[&0x1007]), (0, 12));
    }

    /// A call through a pointer inside an inlined function: its targets go
    /// on its line in the inlined instance, keyed by the reader's name, as
    /// shares of the line's count.
    #[test]
    fn call_targets_go_on_the_calls_line_where_it_was_inlined() {
        let counts = BTreeMap::from([(0x10, 3), (0x20, 21), (0x24, 0)]);
        let frames = HashMap::from([
            (0x10, vec![frame("main", 10, 11)]),
            // `dispatch` (first line 3) inlined into main at line 12, its
            // call through a pointer on its line 4.
            (0x20, vec![frame("dispatch", 3, 4), frame("main", 10, 12)]),
            // A call on a line no sample fell on: no targets.
            (0x24, vec![frame("main", 10, 13)]),
        ]);
        let targets = call_targets::Targets::from([
            (
                0x20,
                BTreeMap::from([
                    ("handler.constprop.0".to_owned(), 40),
                    ("other".to_owned(), 2),
                ]),
            ),
            (0x24, BTreeMap::from([("late".to_owned(), 9)])),
        ]);
        let (functions, _) = build(&counts, &targets, &frames, Dialect::Gcc);
        let dispatch = &functions[0].callsites[&(2 << 16, "dispatch".to_owned())];
        let line = &dispatch.lines[&(1 << 16)];
        assert_eq!(line.count, 21);
        // 40 and 2 samples under them: 20 and 1 of the line's 21.
        assert_eq!(
            line.targets,
            BTreeMap::from([("handler".to_owned(), 20), ("other".to_owned(), 1)])
        );
        assert!(functions[0].lines[&(3 << 16)].targets.is_empty());
        assert_eq!(
            crate::toolchain::formats::gcov_afdo::write_llvm_text(&functions),
            "main:24:3\n 1: 3\n 3: 0\n 2: dispatch:21\n  1: 21 handler:20 other:1\n"
        );
    }

    /// LLVM's encoded discriminators as clang 14 wrote them and its loader
    /// keyed them (measured: DWARF 2, 6, 8, 10, 14 are base 1, 3, 4, 5, 7);
    /// a duplication factor (an unrolled loop's) multiplies the samples.
    #[test]
    fn llvm_discriminators_are_decoded_to_their_base_and_duplication() {
        for (raw, base) in [(0, 0), (2, 1), (6, 3), (8, 4), (10, 5), (14, 7), (1, 0)] {
            assert_eq!(Dialect::Llvm.discriminator(raw), Some((base, 1)), "{raw}");
        }
        // Base 1 (2), then a duplication factor of 4 in the next component
        // (prefix-encoded 4 is 8, shifted past the base's 7 bits).
        assert_eq!(Dialect::Llvm.discriminator(2 | (8 << 7)), Some((1, 4)));
        // gcc's are raw, and gcc keeps 16 bits of them.
        assert_eq!(Dialect::Gcc.discriminator(6), Some((6, 1)));
        assert_eq!(Dialect::Gcc.discriminator(0x1_0000), None);
    }

    #[test]
    fn llvm_names_keep_a_unique_suffix_and_lose_any_other() {
        assert_eq!(llvm_name("foo.llvm.1234"), "foo");
        assert_eq!(llvm_name("foo.cold"), "foo");
        assert_eq!(llvm_name("sq.__uniq.2912"), "sq.__uniq.2912");
        assert_eq!(llvm_name("sq.__uniq.2912.llvm.7"), "sq.__uniq.2912");
        assert_eq!(gcc_name("sq.__uniq.2912"), "sq");
    }

    /// For clang: locations carry the base discriminator, and a function
    /// with samples has a head count (its entry's, at least 1) so that
    /// LLVM does not take it for cold.
    #[test]
    fn an_llvm_profile_keys_discriminators_and_gives_sampled_functions_a_head() {
        let at = |line, d| Frame {
            discriminator: d,
            ..frame("f", 10, line)
        };
        let counts = BTreeMap::from([(0x10, 0), (0x14, 30), (0x18, 50)]);
        let frames = HashMap::from([
            (0x10, vec![at(10, 0)]),
            (0x14, vec![at(12, 2)]),
            (0x18, vec![at(12, 6)]),
        ]);
        let (functions, _) = build(
            &counts,
            &call_targets::Targets::new(),
            &frames,
            Dialect::Llvm,
        );
        let f = &functions[0];
        assert_eq!(f.lines[&((2 << 16) | 1)].count, 30);
        assert_eq!(f.lines[&((2 << 16) | 3)].count, 50);
        assert_eq!(f.head, 1);
        assert_eq!(
            crate::toolchain::formats::gcov_afdo::write_llvm_text(&functions),
            "f:80:1\n 0: 0\n 2.1: 30\n 2.3: 50\n"
        );
        let (gcc, _) = build(
            &counts,
            &call_targets::Targets::new(),
            &frames,
            Dialect::Gcc,
        );
        assert_eq!(gcc[0].head, 1);
        assert_eq!(gcc[0].lines[&((2 << 16) | 6)].count, 50);
    }
}
