//! AutoFDO's branch-stack (LBR) path on a real LBR recording. No machine
//! here has LBR, so google/autofdo's test data stands in: a `perf record
//! -b` of gzip and that very gzip binary (`tests/fixtures/lbr/README.md`).
//! The recording goes through the product's own round (`Round::merge`), as
//! training's recordings do, with no note from afterburner's sampling: the
//! recording's header alone must say it holds branch stacks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use afterburner::toolchain::autofdo::clang::AutoFdo;
use afterburner::toolchain::autofdo::gcc::GccAutoFdo;
use afterburner::toolchain::formats::gcov_afdo::Instance;
use afterburner::toolchain::round::Round as _;
use afterburner::toolchain::{raw_dir, sampling, StageDirs};

use crate::support::{compile_with_profile, gunzip, served_gcc_or_skip, tools_or_skip, Sandbox};

/// The fixture's binary: its file name is the one in the recording's
/// mmap events, which is how `create_llvm_prof` finds its samples.
const BINARY: &str = "test.binary";

/// A training round whose workloads each left the LBR recording.
struct Round {
    sandbox: Sandbox,
    dirs: StageDirs,
    recording: PathBuf,
    binary: PathBuf,
    workloads: Vec<String>,
}

impl Round {
    /// The fixture unpacked, and the recording filed under `raw/<w>/` for
    /// each workload `w`; `None` (the test skips, saying why) where the
    /// converter or perf is missing.
    fn new(workloads: &[&str]) -> Option<Self> {
        if !tools_or_skip(&["create_llvm_prof", "perf"]) {
            return None;
        }
        let sandbox = Sandbox::with_fixture("lbr");
        let src = sandbox.path().join("src");
        let recording = gunzip(&src.join("test.lbr.gz"));
        let binary = gunzip(&src.join(format!("{BINARY}.gz")));
        let dirs = StageDirs {
            build: src,
            profile: sandbox.path().join("profile"),
        };
        for (i, workload) in workloads.iter().enumerate() {
            let dir = raw_dir(&dirs).join(workload);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(&recording, dir.join(format!("{}.perfdata", 100 + i))).unwrap();
        }
        Some(Self {
            sandbox,
            dirs,
            recording,
            binary,
            workloads: workloads.iter().map(|w| (*w).to_owned()).collect(),
        })
    }

    /// The converted profile of the `i`th recording (text, as
    /// `create_llvm_prof --format=text` writes it), under its workload.
    fn converted(&self, i: usize, extension: &str) -> PathBuf {
        self.dirs.profile.join(format!(
            "converted/{}/{i}-{BINARY}.{extension}",
            self.workloads[i]
        ))
    }
}

/// One function of a sample profile in LLVM's text form.
#[derive(Debug, Default)]
struct Function {
    total: u64,
    /// Call targets recorded in its body: callee → calls.
    targets: BTreeMap<String, u64>,
}

/// The top-level functions of an LLVM text sample profile, with their
/// totals and the call targets of their own body lines.
fn functions(text: &str) -> BTreeMap<String, Function> {
    let mut out: BTreeMap<String, Function> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if !line.starts_with(' ') {
            let mut parts = line.rsplitn(3, ':');
            let (_head, total, name) = (parts.next(), parts.next(), parts.next());
            let name = name.unwrap().to_owned();
            out.entry(name.clone()).or_default().total += total.unwrap().parse::<u64>().unwrap();
            current = Some(name);
        } else if !line.starts_with("  ") {
            let mut words = line.split_whitespace().skip(1);
            if words.next().is_some_and(|w| w.parse::<u64>().is_ok()) {
                let function = out.get_mut(current.as_ref().unwrap()).unwrap();
                for target in words {
                    let (callee, calls) = target.rsplit_once(':').unwrap();
                    *function.targets.entry(callee.to_owned()).or_default() +=
                        calls.parse::<u64>().unwrap();
                }
            }
        }
    }
    out
}

/// A binary sample profile (what `llvm-profdata merge -sample` writes) as
/// text.
fn profile_text(profile: &Path) -> String {
    let tool = afterburner::toolchain::find_llvm_profdata().unwrap();
    let out = Command::new(tool)
        .args(["merge", "-sample", "-text", "-o", "-"])
        .arg(profile)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The function symbols the binary defines (`nm`).
fn defined_functions(binary: &Path) -> Vec<String> {
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg(binary)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [_, "T" | "t", name] => Some(name.to_owned()),
            _ => None,
        })
        .collect()
}

/// The samples in a recording (`perf script`, one line each).
fn samples(recording: &Path) -> u64 {
    let out = Command::new("perf")
        .args(["script", "-F", "ip", "-i"])
        .arg(recording)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64
}

/// The recording's own header says it holds branch stacks; one sampled
/// here with a timer says it does not, and a round mixing the two is
/// converted without (its profiles must be of one kind).
#[test]
fn branch_stacks_are_known_from_the_recording_itself() {
    let Some(round) = Round::new(&["point"]) else {
        return;
    };
    assert_eq!(sampling::holds_branch_stacks(&round.recording), Some(true));
    let recordings = afterburner::toolchain::find_files(&raw_dir(&round.dirs), "perfdata");
    assert!(sampling::recorded_branch_stacks(&round.dirs, &recordings));

    let timer = round.sandbox.path().join("timer.perfdata");
    let out = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(&timer)
        .args(["--", "true"])
        .output()
        .unwrap();
    if !out.status.success() {
        crate::support::skip_part(&format!(
            "the timer half: perf cannot record cpu-clock here: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
        return;
    }
    assert_eq!(sampling::holds_branch_stacks(&timer), Some(false));
    let mixed = [recordings[0].clone(), timer];
    assert!(!sampling::recorded_branch_stacks(&round.dirs, &mixed));
    assert_eq!(
        sampling::holds_branch_stacks(&round.binary),
        None,
        "not a recording"
    );
}

/// clang's round on two workloads' LBR recordings: each converted with
/// its branch stacks (more samples than the recording holds: each sample's
/// 16 branches give ranges of executed lines, and call targets only
/// branch records give), every function one the binary defines, and the
/// merged profile each function's samples added up.
#[test]
fn clang_autofdo_converts_and_merges_lbr_recordings() {
    let Some(round) = Round::new(&["point", "scan"]) else {
        return;
    };
    let merged = AutoFdo
        .merge(&round.dirs, std::slice::from_ref(&round.binary))
        .unwrap();
    let merged = functions(&profile_text(&merged[0]));
    let parts: Vec<_> = (0..2)
        .map(|i| {
            let text = std::fs::read(round.converted(i, "afdo")).unwrap();
            functions(&String::from_utf8(text).expect("garbled names were left out"))
        })
        .collect();

    let total: u64 = parts[0].values().map(|f| f.total).sum();
    let recorded = samples(&round.recording);
    assert!(
        total > recorded,
        "a profile of {total} samples from {recorded} recorded: converted without branch stacks"
    );
    let defined = defined_functions(&round.binary);
    for name in merged.keys() {
        assert!(defined.contains(name), "{name} is not in {BINARY}");
    }
    let calls: Vec<_> = merged
        .iter()
        .flat_map(|(caller, f)| f.targets.keys().map(move |callee| (caller, callee)))
        .collect();
    assert!(!calls.is_empty(), "no call targets in {merged:?}");
    for (caller, callee) in &calls {
        assert!(defined.contains(callee), "{caller} calls {callee}?");
    }
    for (name, f) in &merged {
        let sum: u64 = parts
            .iter()
            .filter_map(|p| p.get(name))
            .map(|f| f.total)
            .sum();
        assert_eq!(f.total, sum, "{name}: merged against its parts");
    }
    assert_eq!(merged.len(), parts[0].len());
}

/// gcc's round on the LBR recording, one workload and two. The product's
/// parse of the converted profile keeps what only branch stacks give (more
/// samples than recorded, call targets) and names only functions of the
/// binary; gcc reads each written profile without a diagnostic and places
/// the samples of gzip's `bi_reverse` on a function laid out like it
/// (`bitrev.c`): its loop gets the profile's count, and twice that from
/// two workloads.
#[test]
fn gcc_autofdo_converts_and_merges_lbr_recordings() {
    if !served_gcc_or_skip() {
        return;
    }
    let mut loop_counts = Vec::new();
    let mut expected = 0;
    for workloads in [&["point"][..], &["point", "scan"]] {
        let Some(round) = Round::new(workloads) else {
            return;
        };
        let merged = GccAutoFdo
            .merge(&round.dirs, std::slice::from_ref(&round.binary))
            .unwrap();
        if workloads.len() == 1 {
            expected = check_gcc_parse(&round) * crate::support::gcc_count_scale();
        }
        let counts = compile_with_profile(&round.dirs.build, "bitrev.c", &merged[0]);
        loop_counts.push(counts.get("bi_reverse").copied().unwrap_or(0));
    }
    assert_eq!(loop_counts, [expected, 2 * expected]);
}

/// What the gcc writer reads from the first converted recording, checked;
/// returns the largest line count of `bi_reverse` in it.
fn check_gcc_parse(round: &Round) -> u64 {
    let text = std::fs::read(round.converted(0, "txt")).unwrap();
    let functions = afterburner::toolchain::formats::gcov_afdo::parse_llvm_text(
        &String::from_utf8_lossy(&text),
    )
    .unwrap();
    let total: u64 = functions.iter().map(Instance::total).sum();
    let recorded = samples(&round.recording);
    assert!(
        total > recorded,
        "{total} samples from {recorded} recorded: converted without branch stacks"
    );
    let defined = defined_functions(&round.binary);
    let mut targets = 0;
    for f in &functions {
        assert!(defined.contains(&f.name), "{} is not in {BINARY}", f.name);
        for callee in f.lines.values().flat_map(|l| l.targets.keys()) {
            assert!(defined.contains(callee), "{} calls {callee}?", f.name);
            targets += 1;
        }
    }
    assert!(targets > 0, "no call targets in {functions:?}");
    let bi_reverse = functions.iter().find(|f| f.name == "bi_reverse").unwrap();
    let count = bi_reverse.lines.values().map(|l| l.count).max().unwrap();
    assert!(count > 0);
    count
}
