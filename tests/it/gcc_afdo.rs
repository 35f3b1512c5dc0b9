//! gcc AutoFDO: the profile afterburner writes in gcc 12's format is read
//! by gcc without a complaint, and it reaches the hot function's blocks.

use std::process::Command;

use afterburner::toolchain::autofdo::straight_runs::{disassembly, spread};
use afterburner::toolchain::autofdo::target_inlines;
use afterburner::toolchain::formats::gcov_afdo::{self, fold_discriminators, Layout};

use crate::support::{
    compile_with_profile, gcc_count_scale, only_run_dir, read_json, served_gcc_or_skip, skip_part,
    Sandbox,
};

/// The writer's file, from a hand-written LLVM text profile of onehot's
/// hot `checksum` (its loop body on line offset 3), read by gcc itself: no
/// diagnostic, and the loop's block annotated with the profile's count. A
/// regression test for Debian's `create_gcov`, whose files gcc 12 refuses
/// ("AutoFDO profile version 1 does not match 2", "Not expected TAG").
#[test]
fn gcc_reads_the_written_profile_and_annotates_the_hot_loop() {
    if !served_gcc_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("onehot");
    let text = "checksum:20100:100\n 0: 100\n 1: 100\n 2: 10000\n 3: 10000\n 4: 100\nmain:50:1\n 0: 1\n 20: 40 checksum:40\n";
    let reader = afterburner::toolchain::autofdo::check_gcc().unwrap();
    let bytes = gcov_afdo::convert(text, reader).unwrap();
    let profile = sandbox.write("onehot.gcov", "");
    std::fs::write(&profile, bytes).unwrap();
    let src = sandbox.path().join("src");
    let counts = compile_with_profile(&src, "onehot.c", &profile);
    // The loop's blocks carry the profile's 10000 (gcc's propagation may
    // add the entry's 100 to the header), scaled for a gcc that reads no
    // summary.
    let scale = gcc_count_scale();
    assert!(
        counts
            .get("checksum")
            .is_some_and(|c| (10_000 * scale..=10_100 * scale).contains(c)),
        "{counts:?}"
    );
    assert!(counts.get("fill").is_none_or(|c| *c == 0), "{counts:?}");
}

/// Two callers of a loop too large for -O2 to inline unasked.
const CALLS_C: &str = "int work(int *a, int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    {
      s += a[i] * a[i] ^ (s >> 3);
      if (s & 1) s += a[i] / 3; else s -= a[i] % 7;
      s ^= (a[i] << 2) + (s >> 5);
      s += (a[i] * 13) ^ (s >> 7);
      if (s > 1000000) s = s / 5 + a[i];
      s += (a[i] * 17) ^ (s >> 11);
    }
  return s;
}

int caller_one(int *a, int n)
{
  return work(a, n) + 1;
}

int caller_two(int *a, int n)
{
  return work(a, n) + 2;
}
";

/// `caller_one` ran `work` inlined, one timer sample on its loop: what a
/// request's path looks like in a recording (most of its lines at 0 or 1).
const ONE_SAMPLE: &str = "caller_one:3:1\n 0: 1\n 2: 1\n 2: work:1\n  4: 1\n  5: 0\n  6: 0\n  7: 0\n  8: 0\n  9: 0\n  10: 0\n  11: 0\n";

/// Whether gcc -O2 with the profile `bytes` inlines `work` into
/// `caller_one`, as `-fopt-info-inline` says.
fn inlines_work(sandbox: &Sandbox, bytes: &[u8]) -> bool {
    let profile = sandbox.write("calls.gcov", "");
    std::fs::write(&profile, bytes).unwrap();
    sandbox.write("calls.c", CALLS_C);
    let out = Command::new("gcc")
        .current_dir(sandbox.path())
        .args(["-O2", "-c", "-fopt-info-inline-optimized", "calls.c"])
        .arg(format!("-fauto-profile={}", profile.display()))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    said.contains("into caller_one")
}

/// The installed gcc's reader where it is one of gcc 12 to 15's (version
/// 2, no summary); else the part is skipped, saying `why`.
fn v2_gcc_or_skip(why: &str) -> Option<gcov_afdo::Reader> {
    if !served_gcc_or_skip() {
        return None;
    }
    let reader = afterburner::toolchain::autofdo::check_gcc().unwrap();
    if reader.layout() != Layout::V2 {
        skip_part(why);
        return None;
    }
    Some(reader)
}

/// gcc 12 to 15 call a count hot from 2 up, whatever the profile's scale
/// (they read no summary): a call whose inlined copy got one sample is
/// "cold" and not inlined where the profiled binary had it inlined. The
/// writer scales every count for them (`V2_COUNT_SCALE`), so it is.
#[test]
fn one_timer_sample_on_an_inlined_call_is_hot_to_gcc() {
    let Some(reader) = v2_gcc_or_skip("this gcc reads a summary and scales counts itself (gcc 16)")
    else {
        return;
    };
    let sandbox = Sandbox::with_fixture("onehot");
    assert!(inlines_work(
        &sandbox,
        &gcov_afdo::convert(ONE_SAMPLE, reader).unwrap()
    ));
    // The same samples unscaled: gcc calls the call cold.
    let mut unscaled = gcov_afdo::parse_llvm_text(ONE_SAMPLE).unwrap();
    for f in &mut unscaled {
        fold_discriminators(f);
    }
    let bytes = gcov_afdo::write_layout(&unscaled, Layout::V2);
    assert!(!inlines_work(&sandbox, &bytes));
}

const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "afdo"
optimize = ["autofdo"]
sample_event = "cpu-clock"

[[workload]]
name = "loop"
run = "{bin.hotpath} 1000000"
train_run = "{bin.hotpath} 200000000"
figures = [{ name = "checksum", regex = "checksum ([0-9]+)" }]

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
seed = 42
"#;

/// The whole path with gcc on timer samples (no PMU needed): perf record,
/// `create_llvm_prof`'s text, afterburner's gcc-format profile, and a final
/// build with `-fauto-profile=` whose code differs from the baseline's and
/// prints the same checksum. gcc reads the merged profile without a word,
/// and it puts the samples on the hot function, `main`'s loop.
#[test]
fn gcc_autofdo_on_timer_samples_builds_with_a_profile_gcc_reads() {
    if !served_gcc_or_skip() {
        return;
    }
    if !crate::support::perf_timer_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    sandbox.afterburner(&["run"]).assert_ok();
    let profile = sandbox
        .path()
        .join(".afterburner/variants/afdo/profile/gcc-autofdo");
    let merged: Vec<_> = std::fs::read_dir(&profile)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".gcov"))
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    let results = read_json(&only_run_dir(&sandbox).join("results.json"));
    let cflags = results["variants"][1]["cflags"].as_str().unwrap();
    assert!(
        cflags.contains("-fauto-profile=") && cflags.contains("-gdwarf-4"),
        "{cflags}"
    );
    let checksum = crate::support::comparison(&results, "loop", "checksum", "afdo");
    assert_eq!(checksum["ratio"], 1.0, "{checksum:#}");

    let counts = compile_with_profile(&sandbox.path().join("src"), "hotpath.c", &merged[0]);
    assert!(counts.get("main").is_some_and(|c| *c > 0), "{counts:?}");

    let text = |variant: &str| {
        let binary = sandbox
            .path()
            .join(format!(".afterburner/variants/{variant}/build/hotpath"));
        let out = Command::new("objcopy")
            .args(["-O", "binary", "--only-section=.text"])
            .arg(&binary)
            .arg("/dev/stdout")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert_ne!(
        text("baseline"),
        text("afdo"),
        "the profile changed no code"
    );
}

/// A gcc whose AutoFDO reader afterburner has not followed (here a gcc
/// that says it is 17 and reads version 4) is refused by its version
/// before anything is built, never handed a profile it may silently
/// misread.
#[test]
fn gcc_autofdo_refuses_a_gcc_version_it_does_not_write_for() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    let bin = sandbox.path().join("fakebin");
    std::fs::create_dir(&bin).unwrap();
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v gcc"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let gcc = sandbox.write(
        "fakebin/gcc",
        &format!(
            "#!/bin/sh\n[ \"$1\" = -dumpversion ] && {{ echo 17; exit 0; }}\n[ \"$1\" = -print-autofdo-gcov-version ] && {{ echo 4; exit 0; }}\nexec {} \"$@\"\n",
            real.trim()
        ),
    );
    std::fs::set_permissions(&gcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    sandbox
        .afterburner_with_env(&["build"], &[("PATH", &path)])
        .assert_fails_with("variant `afdo`")
        .assert_fails_with("AutoFDO profiles of version 4")
        .assert_fails_with("hint:");
    assert!(
        !sandbox
            .path()
            .join(".afterburner/variants/afdo/build")
            .exists(),
        "something was built before the refusal"
    );
}

/// A profile sampled on one event is not reused for a variant that now
/// names another: the instrumented build is the same, the training is not
/// (seed 000's recipe on Redis moved from perf's default 4 kHz to 20 kHz
/// and kept the 4 kHz profile). Unchanged, the round is skipped.
#[test]
fn another_sample_event_trains_again() {
    if !served_gcc_or_skip() || !crate::support::perf_timer_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("hotpath");
    let experiment = EXPERIMENT.replace("200000000", "20000000");
    sandbox.write("afterburner.toml", &experiment);
    let trained = |run: &crate::support::Run| !run.stderr().contains("profile up to date");
    let sampling = || {
        std::fs::read_to_string(
            sandbox
                .path()
                .join(".afterburner/variants/afdo/profile/gcc-autofdo/raw/sampling.txt"),
        )
        .unwrap()
    };
    assert!(trained(sandbox.afterburner(&["train"]).assert_ok()));
    assert!(sampling().starts_with("cpu-clock "), "{}", sampling());
    let again = sandbox.afterburner(&["train"]);
    assert!(!trained(again.assert_ok()), "{}", again.stderr());

    let period = "sample_event = \"cpu-clock/period=200000/\"";
    sandbox.write(
        "afterburner.toml",
        &experiment.replace("sample_event = \"cpu-clock\"", period),
    );
    let changed = sandbox.afterburner(&["train"]);
    assert!(trained(changed.assert_ok()), "{}", changed.stderr());
    assert!(
        sampling().starts_with("cpu-clock/period=200000/ "),
        "{}",
        sampling()
    );
}

/// A loop that calls out once per element.
const LOOP_WITH_CALL_C: &str = "int g(int);
int f(int *a, int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    s += g(a[i]);
  return s;
}
";

/// gcc -O2's code as `objdump -d` lists it, read into straight-line runs:
/// one sample on the loop's instruction after the call is shared with the
/// call itself (timer samples seldom hit a call line, and gcc reads an
/// unsampled line as cold), while the code before the loop, which a jump
/// leaves, keeps none.
#[test]
fn a_call_shares_the_samples_of_its_straight_line_run() {
    if !served_gcc_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("onehot");
    sandbox.write("loop.c", LOOP_WITH_CALL_C);
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    ok(Command::new("gcc")
        .current_dir(sandbox.path())
        .args(["-O2", "-fPIC", "-shared", "loop.c", "-o", "libloop.so"])
        .output()
        .unwrap());
    let listing = ok(Command::new("objdump")
        .current_dir(sandbox.path())
        .args(["-d", "--no-show-raw-insn", "libloop.so"])
        .output()
        .unwrap());
    let functions = disassembly(&listing);
    let (_, code) = functions
        .iter()
        .find(|(name, _)| *name == "f")
        .unwrap_or_else(|| panic!("no f in:\n{listing}"));
    let text_of = |address: u64| {
        listing
            .lines()
            .find(|l| l.split_once(":\t").map(|(a, _)| a.trim()) == Some(&format!("{address:x}")))
            .unwrap_or_default()
    };
    let call = code
        .iter()
        .position(|i| text_of(i.address).contains("call"))
        .unwrap_or_else(|| panic!("no call in f:\n{listing}"));
    assert!(!code[call].ends_run, "{}", text_of(code[call].address));
    let mut counts: std::collections::BTreeMap<u64, u64> =
        code.iter().map(|i| (i.address, 0)).collect();
    counts.insert(code[call + 1].address, 1);
    spread(&mut counts, &[code.as_slice()]);
    assert!(counts[&code[call].address] > 0, "{counts:?}\n{listing}");
    assert_eq!(counts[&code[call].address], counts[&code[call + 1].address]);
    assert_eq!(counts[&code[0].address], 0, "{counts:?}\n{listing}");
}

/// A loop calling through a pointer, the call's line also holding an
/// inlined function (Redis's `handler->emit(…, sdslen(ele), …)`).
const POINTER_CALL_C: &str = "static inline int len(const char *s) { return s[0] & 7; }

int emit(int *acc, const char *s, int n)
{
  *acc += n * 3 + s[1];
  return *acc;
}

int range(int (*fn)(int *, const char *, int), const char **v, int n)
{
  int acc = 0;
  for (int i = 0; i < n; i++)
    fn(&acc, v[i], len(v[i]));
  return acc;
}
";

/// `range`'s call on line offset 4 went to `emit` (as call chains say),
/// and `len` is inlined on that line.
const POINTER_CALL_PROFILE: &str = "range:30100:100\n 0: 100\n 3: 10000\n 4: 10000 emit:10000\n 4: len:10000\n  0: 10000\n 6: 100\nemit:2000:1000\n 0: 1000\n 2: 1000\n";

/// What gcc's AutoFDO pass says it promoted in `range`, with the profile
/// written plainly or with its call targets as inlined copies.
fn promoted(sandbox: &Sandbox, copies: bool) -> String {
    let reader = afterburner::toolchain::autofdo::check_gcc().unwrap();
    let mut functions = gcov_afdo::parse_llvm_text(POINTER_CALL_PROFILE).unwrap();
    reader.prepare(&mut functions);
    if copies {
        assert_eq!(target_inlines::add(&mut functions), 1);
    }
    let name = if copies { "copies" } else { "plain" };
    let profile = sandbox.write(&format!("{name}.gcov"), "");
    std::fs::write(
        &profile,
        gcov_afdo::write_layout(&functions, reader.layout()),
    )
    .unwrap();
    sandbox.write("pointer.c", POINTER_CALL_C);
    let out = Command::new("gcc")
        .current_dir(sandbox.path())
        .args(["-O2", "-c", "-fdump-ipa-afdo", "pointer.c", "-o"])
        .arg(format!("{name}.o"))
        .arg(format!("-fauto-profile={}", profile.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = std::fs::read_dir(sandbox.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let file = p.file_name().unwrap().to_string_lossy();
            file.starts_with(&format!("{name}.")) && file.ends_with(".afdo")
        })
        .unwrap_or_else(|| panic!("gcc wrote no AutoFDO dump for {name}"));
    std::fs::read_to_string(dump)
        .unwrap()
        .lines()
        .filter(|l| l.contains("speculative call"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// gcc 12 to 15 promote a call through a pointer from the functions inlined
/// at the call, not from the line's call targets: written plainly, gcc
/// leaves the call to `emit` alone; with the target as an inlined copy,
/// it promotes it.
#[test]
fn gcc_promotes_a_call_through_a_pointer_given_its_target_as_an_inlined_copy() {
    if v2_gcc_or_skip("gcc 16's reworked AutoFDO pass: its promotion is not followed here")
        .is_none()
    {
        return;
    }
    let sandbox = Sandbox::with_fixture("onehot");
    let plain = promoted(&sandbox, false);
    assert!(!plain.contains("=> emit"), "{plain}");
    let copies = promoted(&sandbox, true);
    assert!(
        copies.contains("range/") && copies.contains("=> emit/"),
        "{copies}"
    );
}
