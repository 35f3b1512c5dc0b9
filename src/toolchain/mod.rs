//! Compilers and feedback-directed optimizations: which exist, what flags
//! each adds at which build stage, and where profiles live.
//!
//! Arranged by technique: each word of `optimize` is one [`Optimize`]
//! (registered once, in `optimizations!` below), a profile-based one a
//! folder with its training rounds ([`Round`]): [`pgo`] (gcc's and clang's
//! instrumentation), [`go`] (Go's PGO rounds), [`autofdo`], [`bolt`],
//! clang's variants of instrumented PGO ([`pgo_frontend`], [`cspgo`]) and
//! its machine function splitting on the PGO profile
//! ([`split_functions`]); the words that only add flags are in [`flags`].
//! The file formats profiles come in are [`formats`]; what several
//! techniques share is beside them (sampling with perf, merging, weights,
//! the profile check in [`matching`], finding LLVM's tools and others).

pub mod formats;
pub mod go;
pub mod llvm;
pub mod matching;
mod merge;
pub mod mismatch;
pub mod optimize;
pub mod recorded;
pub mod recording_cost;
pub mod requirement;
pub mod round;
pub mod rustc;
pub mod sampling;
pub mod symbolize;
pub mod tools;
pub mod weights;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

pub use llvm::find_llvm_profdata;
pub use optimize::{Optimization, Optimize};
pub use round::Round;

/// Declares each optimization's module and lists them, in the order
/// `doctor`, `--help` and the schema show them: the one list of them. A
/// technique is a folder of its own (`toolchain/<word>/`, its word's struct and
/// its rounds), a flag-only word a file under `toolchain/flags/`.
macro_rules! optimizations {
    (
        techniques: [$($technique:ident :: $tword:ident),* $(,)?],
        flags: [$($flag:ident :: $fword:ident),* $(,)?] $(,)?
    ) => {
        $(pub mod $technique;)*

        /// The words that only add flags, a file each.
        pub mod flags {
            $(pub mod $flag;)*
        }

        /// Every optimization a variant can name.
        pub const ALL: &[Optimization] = &[
            $(Optimization(&$technique::$tword),)*
            $(Optimization(&flags::$flag::$fword),)*
        ];
    };
}

optimizations! {
    techniques: [
        pgo::Pgo,
        pgo_frontend::PgoFrontend,
        cspgo::Cspgo,
        autofdo::AutoFdo,
        bolt::Bolt,
        split_functions::SplitFunctions,
    ],
    flags: [
        lto::Lto,
        march::March,
        o3::O3,
        nosi::NoSemanticInterposition,
        noplt::NoPlt,
    ],
}

/// The optimizations other parts ask for by name (a variant option that
/// belongs to one of them).
impl Optimization {
    pub const PGO: Optimization = Optimization(&pgo::Pgo);
    pub const BOLT: Optimization = Optimization(&bolt::Bolt);
    pub const MARCH: Optimization = Optimization(&flags::march::March);
    pub const LTO: Optimization = Optimization(&flags::lto::Lto);
    pub const O3: Optimization = Optimization(&flags::o3::O3);
    pub const AUTOFDO: Optimization = Optimization(&autofdo::AutoFdo);
}

/// The toolchain an experiment builds with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compiler {
    Gcc,
    Clang,
    /// The Go toolchain (`go build`); cgo code compiles with gcc.
    Go,
    /// rustc, run by cargo for a cargo target (`[target] cargo`); C code
    /// its crates build compiles with gcc.
    Rustc,
}

impl Compiler {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "gcc" => Some(Compiler::Gcc),
            "clang" => Some(Compiler::Clang),
            "go" => Some(Compiler::Go),
            "rustc" => Some(Compiler::Rustc),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang",
            Compiler::Go => "go",
            Compiler::Rustc => "rustc",
        }
    }

    /// The C compiler command (`CC`; for Go, what cgo uses; for Rust, what
    /// the `cc` crate uses).
    pub fn cc(self) -> &'static str {
        match self {
            Compiler::Gcc | Compiler::Go | Compiler::Rustc => "gcc",
            Compiler::Clang => "clang",
        }
    }

    /// The C++ compiler command (`CXX`).
    pub fn cxx(self) -> &'static str {
        match self {
            Compiler::Gcc | Compiler::Go | Compiler::Rustc => "g++",
            Compiler::Clang => "clang++",
        }
    }

    /// The Debian package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc g++",
            Compiler::Clang => "clang",
            Compiler::Go => "golang-go (PGO needs Go 1.21 or newer)",
            Compiler::Rustc => rustc::PACKAGES,
        }
    }

    /// First line of `CC --version` (`go version` for Go, `rustc
    /// --version` for Rust), or `None` when the compiler is missing.
    pub fn version(self) -> Option<String> {
        let go = go::find_pgo_go().map(|g| g.path.to_string_lossy().into_owned());
        let (program, arg) = match self {
            Compiler::Go => (go.as_deref().unwrap_or("go"), "version"),
            Compiler::Rustc => ("rustc", "--version"),
            _ => (self.cc(), "--version"),
        };
        let out = crate::process::capture(program, &[arg], Duration::from_secs(10)).ok()?;
        out.success().then(|| {
            out.stdout
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
    }
}

/// Where BOLT's profile comes from (`bolt_profile` on a variant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BoltProfile {
    /// Sampled where the CPU has LBR and perf may record it, else
    /// instrumented.
    #[default]
    Auto,
    /// `llvm-bolt -instrument`: needs no PMU.
    Instrumented,
    /// `perf record` (with `-b` where the CPU has LBR), then `perf2bolt`.
    Sampled,
}

impl BoltProfile {
    /// The choices that name a kind of round (not `auto`, which probes
    /// the machine).
    pub const EXPLICIT: [BoltProfile; 2] = [BoltProfile::Sampled, BoltProfile::Instrumented];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(BoltProfile::Auto),
            "instrumented" => Some(BoltProfile::Instrumented),
            "sampled" => Some(BoltProfile::Sampled),
            _ => None,
        }
    }

    /// Whether training samples with perf instead of instrumenting.
    pub fn is_sampled(self) -> bool {
        match self {
            BoltProfile::Auto => sampling::lbr_sampling_works(),
            BoltProfile::Instrumented => false,
            BoltProfile::Sampled => true,
        }
    }
}

/// Where Go PGO's profile comes from (`pgo_source` on a Go variant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GoPgoSource {
    /// The program writes its own CPU profile where `{profile}` points
    /// (`-cpuprofile {profile}`); `go tool pprof -proto` merges them.
    #[default]
    Cpuprofile,
    /// Training runs under `perf record -g`; afterburner converts the
    /// samples into a pprof profile (any Go program, no flag needed).
    Perf,
}

impl GoPgoSource {
    /// Every choice.
    pub const ALL: [GoPgoSource; 2] = [GoPgoSource::Cpuprofile, GoPgoSource::Perf];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "cpuprofile" => Some(GoPgoSource::Cpuprofile),
            "perf" => Some(GoPgoSource::Perf),
            _ => None,
        }
    }
}

/// Which training round an optimization that offers a choice runs (its
/// profile sampled or instrumented): BOLT's (`bolt_profile`) and Go PGO's
/// (`pgo_source`). Not a profile source (`profiles::ProfileSource`: where
/// a round's profile comes from) nor an origin (`ProfileOrigin`: which of
/// those a variant chose).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundChoices {
    pub bolt: BoltProfile,
    pub go: GoPgoSource,
}

impl RoundChoices {
    /// Instrumented BOLT and Go's own CPU profiles: the choice that needs
    /// neither a PMU nor perf (tests, `doctor`).
    pub const INSTRUMENTED: RoundChoices = RoundChoices {
        bolt: BoltProfile::Instrumented,
        go: GoPgoSource::Cpuprofile,
    };

    /// The same with `auto` taken as instrumented, so that asking a
    /// word's rounds what they do probes nothing (only an explicit
    /// `bolt_profile = "sampled"` samples for sure).
    #[must_use]
    pub fn unprobed(self) -> RoundChoices {
        RoundChoices {
            bolt: match self.bolt {
                BoltProfile::Auto => BoltProfile::Instrumented,
                explicit => explicit,
            },
            ..self
        }
    }

    /// Every explicit choice, each round a brought profile might stand in
    /// for: sampled BOLT before instrumented, Go's own CPU profiles before
    /// perf's (the order a refusal lists what they read).
    pub const CHOICES: [RoundChoices; 4] = [
        RoundChoices {
            bolt: BoltProfile::Sampled,
            go: GoPgoSource::Cpuprofile,
        },
        RoundChoices {
            bolt: BoltProfile::Instrumented,
            go: GoPgoSource::Cpuprofile,
        },
        RoundChoices {
            bolt: BoltProfile::Sampled,
            go: GoPgoSource::Perf,
        },
        RoundChoices {
            bolt: BoltProfile::Instrumented,
            go: GoPgoSource::Perf,
        },
    ];
}

/// Which build of a variant is being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The instrumented (or profiled) build of training round N, from 0:
    /// earlier rounds' profiles applied, round N's instrumentation added.
    Instrumented(usize),
    /// The build that is benchmarked: every round's profile applied.
    Final,
}

impl Stage {
    /// The first training round's build.
    pub const FIRST: Stage = Stage::Instrumented(0);

    /// `instrumented`, `instrumented-2`, … or `final`; names files too.
    pub fn name(self) -> String {
        match self {
            Stage::Instrumented(0) => "instrumented".to_owned(),
            Stage::Instrumented(round) => format!("instrumented-{}", round + 1),
            Stage::Final => "final".to_owned(),
        }
    }

    /// What training round `round` contributes to this build.
    pub fn phase_of(self, round: usize) -> Phase {
        match self {
            Stage::Final => Phase::Use,
            Stage::Instrumented(r) if round < r => Phase::Use,
            Stage::Instrumented(r) if round == r => Phase::Instrument,
            Stage::Instrumented(_) => Phase::Off,
        }
    }
}

/// A training round's part in one build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A later round: not applied yet.
    Off,
    /// This round's instrumented build.
    Instrument,
    /// A finished round: its merged profile is applied.
    Use,
}

/// Compile and link flags an optimization stack adds, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Flags {
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    /// For the Go toolchain (`GOFLAGS`).
    pub goflags: Vec<String>,
    /// For rustc (`RUSTFLAGS`, given to every crate of a cargo target).
    pub rustflags: Vec<String>,
    /// Settings of cargo's release profile, as cargo's environment takes
    /// them (`CARGO_PROFILE_RELEASE_LTO=fat`).
    pub cargo: Vec<String>,
}

impl Flags {
    fn both(&mut self, flags: &[&str]) {
        self.cflags.extend(flags.iter().map(|f| (*f).to_owned()));
        self.ldflags.extend(flags.iter().map(|f| (*f).to_owned()));
    }

    /// The same flags for a cargo target: each link flag reaches rustc's
    /// linker as `-Clink-arg=` (BOLT's `-Wl,--emit-relocs`). A C compile
    /// flag has no meaning to rustc; the words that add one refuse
    /// `rustc`, so none is here to drop.
    #[must_use]
    fn for_rustc(mut self) -> Flags {
        self.rustflags.extend(
            self.ldflags
                .drain(..)
                .map(|flag| format!("-Clink-arg={flag}")),
        );
        self.cflags.clear();
        self
    }
}

/// Where one training round of a variant builds and keeps its profile.
#[derive(Debug, Clone)]
pub struct StageDirs {
    /// The directory the build command runs in (every stage, in turn).
    pub build: PathBuf,
    /// Where this round's training writes and the later builds read its
    /// profile: raw files per training workload under `raw/<workload>/`,
    /// the merged profile beside them.
    pub profile: PathBuf,
}

/// A variant's build directory and the root of its per-round profiles.
#[derive(Debug, Clone)]
pub struct VariantDirs {
    pub build: PathBuf,
    /// `profile/<round>/` below this, one per training round.
    pub profiles: PathBuf,
}

impl VariantDirs {
    /// The directories of one training round.
    pub fn round(&self, round: &dyn Round) -> StageDirs {
        StageDirs {
            build: self.build.clone(),
            profile: self.profiles.join(round.name()),
        }
    }
}

/// The training rounds of an optimization stack, in the order they run:
/// the compiler's profile first (two rounds for context-sensitive PGO),
/// BOLT last because it rewrites the finished binary.
pub fn rounds(
    optimize: &[Optimization],
    compiler: Compiler,
    sources: RoundChoices,
) -> Vec<&'static dyn Round> {
    word_rounds(optimize, compiler, sources)
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// [`rounds`], each with the word it belongs to.
fn word_rounds(
    optimize: &[Optimization],
    compiler: Compiler,
    sources: RoundChoices,
) -> Vec<(Optimization, &'static dyn Round)> {
    let (after_link, compile_time): (Vec<&Optimization>, Vec<&Optimization>) =
        optimize.iter().partition(|o| o.rounds_after_link());
    compile_time
        .into_iter()
        .chain(after_link)
        .flat_map(|o| o.rounds(compiler, sources).into_iter().map(|r| (*o, r)))
        .collect()
}

/// What adds a part of a build's flags: a word itself, or one of its
/// training rounds in its part of the build.
#[derive(Clone, Copy)]
enum Contributor {
    Word(Optimization),
    Round(Optimization, &'static dyn Round, Phase),
}

/// The flags `optimize` adds for `stage`. Each training round adds its
/// instrumentation in its own round and its profile in every later build.
/// A round that profiles the finished code (BOLT, context-sensitive PGO)
/// is built with the whole stack, exactly like the final build; a compiler
/// instrumentation round gets only the instrumentation and the optimization
/// level (LTO would slow training for nothing, but the level changes the
/// code the profile must match). The final stage applies everything.
pub fn optimization_flags(
    compiler: Compiler,
    optimize: &[Optimization],
    sources: RoundChoices,
    stage: Stage,
    dirs: &VariantDirs,
) -> Flags {
    let mut flags = Flags::default();
    for (_, part) in contributions(compiler, optimize, sources, stage, dirs) {
        flags.cflags.extend(part.cflags);
        flags.ldflags.extend(part.ldflags);
        flags.goflags.extend(part.goflags);
        flags.rustflags.extend(part.rustflags);
        flags.cargo.extend(part.cargo);
    }
    flags
}

/// What `stage`'s binaries must show of `optimize` ([`recorded`]): each
/// switch its words and rounds declare for the flags they add, and the
/// runtime of the round this stage instruments.
pub fn expected_switches(
    compiler: Compiler,
    optimize: &[Optimization],
    sources: RoundChoices,
    stage: Stage,
    dirs: &VariantDirs,
) -> (Vec<recorded::Expected>, Vec<recorded::Instrumentation>) {
    let mut switches: Vec<recorded::Expected> = Vec::new();
    let mut runtimes = Vec::new();
    for (who, flags) in contributions(compiler, optimize, sources, stage, dirs) {
        if flags == Flags::default() {
            continue;
        }
        let (word, declared) = match who {
            Contributor::Word(o) => (o, o.recorded(compiler, &flags)),
            Contributor::Round(o, round, phase) => {
                let prefixes = round.instrumentation_symbols();
                if phase == Phase::Instrument && !prefixes.is_empty() {
                    runtimes.push(recorded::Instrumentation {
                        from: o.word().to_owned(),
                        prefixes,
                    });
                }
                (o, round.recorded(phase, &flags))
            }
        };
        for switch in declared {
            if !switches.iter().any(|e| e.switch == switch) {
                switches.push(recorded::Expected {
                    from: word.word().to_owned(),
                    switch,
                });
            }
        }
    }
    (switches, runtimes)
}

/// The flags of `stage`, by who adds them, in the order they are given
/// (for rustc, as rustc takes them: [`Flags::for_rustc`]).
fn contributions(
    compiler: Compiler,
    optimize: &[Optimization],
    sources: RoundChoices,
    stage: Stage,
    dirs: &VariantDirs,
) -> Vec<(Contributor, Flags)> {
    let parts = contributions_as_written(compiler, optimize, sources, stage, dirs);
    if compiler != Compiler::Rustc {
        return parts;
    }
    parts
        .into_iter()
        .map(|(who, flags)| (who, flags.for_rustc()))
        .collect()
}

fn contributions_as_written(
    compiler: Compiler,
    optimize: &[Optimization],
    sources: RoundChoices,
    stage: Stage,
    dirs: &VariantDirs,
) -> Vec<(Contributor, Flags)> {
    let mut parts = Vec::new();
    let rounds = word_rounds(optimize, compiler, sources);
    let whole_stack = match stage {
        Stage::Final => true,
        Stage::Instrumented(r) => rounds
            .get(r)
            .is_some_and(|(_, p)| p.instruments_final_code()),
    };
    for (i, (word, pgo)) in rounds.iter().enumerate() {
        let round_dirs = dirs.round(*pgo);
        let mut flags = Flags::default();
        let phase = stage.phase_of(i);
        match phase {
            Phase::Instrument => pgo.instrument(&mut flags, &round_dirs),
            Phase::Use => {
                // A later round's profile that already holds this one's.
                let superseded = rounds
                    .iter()
                    .enumerate()
                    .skip(i + 1)
                    .any(|(k, (_, later))| {
                        later.replaces_earlier() && stage.phase_of(k) == Phase::Use
                    });
                if !superseded {
                    pgo.use_profile(&mut flags, &round_dirs);
                }
            }
            Phase::Off => {}
        }
        parts.push((Contributor::Round(*word, *pgo, phase), flags));
    }
    // Flags that shape the code a profile is matched against go into
    // every stage (-O3); the rest only into builds of the finished code.
    for o in optimize {
        let mut flags = Flags::default();
        o.every_stage_flags(compiler, &mut flags);
        parts.push((Contributor::Word(*o), flags));
    }
    if whole_stack {
        for o in optimize {
            let mut flags = Flags::default();
            o.finished_code_flags(compiler, &mut flags);
            parts.push((Contributor::Word(*o), flags));
        }
    }
    parts
}

/// The flags of `optimize = ["march"]` at `level`: `native` also tunes for
/// this CPU; a named level (`x86-64-v3`) keeps the compiler's generic
/// tuning, so the binary runs well on every CPU of that level. Applied to
/// every stage, instrumented ones too, so training runs the code the final
/// build optimizes.
pub fn march_flags(level: &str, compiler: Compiler) -> Vec<String> {
    if compiler == Compiler::Rustc {
        return vec![format!("-Ctarget-cpu={level}")];
    }
    if level == "native" {
        vec!["-march=native".to_owned(), "-mtune=native".to_owned()]
    } else {
        vec![format!("-march={level}")]
    }
}

/// What `march` at `level` leaves in the record ([`march_flags`]): the
/// level as given, except that gcc writes `-march=native` as the CPU it
/// found, so there only "not the default `x86-64`" is known.
pub fn march_switch(level: &str, compiler: Compiler) -> recorded::Switch {
    if compiler == Compiler::Rustc {
        let said = format!("-Ctarget-cpu={level}");
        return recorded::Switch {
            test: recorded::Test::Last {
                family: "-Ctarget-cpu=".to_owned(),
                is: said.clone(),
            },
            said,
            at_lto_link: true,
        };
    }
    let said = format!("-march={level}");
    let test = if level == "native" && compiler == Compiler::Gcc {
        recorded::Test::LastNot {
            family: "-march=".to_owned(),
            not: "-march=x86-64".to_owned(),
        }
    } else {
        recorded::Test::Last {
            family: "-march=".to_owned(),
            is: said.clone(),
        }
    };
    recorded::Switch {
        said,
        test,
        at_lto_link: true,
    }
}

/// Where training runs write raw profiles, before `collect` files them.
pub fn raw_dir(dirs: &StageDirs) -> PathBuf {
    dirs.profile.join(RAW_DIR)
}

/// The folder of a profile directory where training's raw profiles land.
pub const RAW_DIR: &str = "raw";

/// Move the `*.<extension>` files training left directly in `raw/` into
/// `raw/<workload>/`, each with what its recording cost where it has one
/// (`<name>.cost.json`, [`recording_cost`]).
fn stash_raw(dirs: &StageDirs, extension: &str, workload: &str) -> Result<()> {
    let raw = raw_dir(dirs);
    let target = raw.join(workload);
    fs_err::create_dir_all(&target)?;
    for entry in fs_err::read_dir(&raw)?.flatten() {
        let path = entry.path();
        if path.is_file() && path.extension().is_some_and(|e| e == extension) {
            fs_err::rename(&path, target.join(entry.file_name()))?;
            let cost = path.with_extension("cost.json");
            if cost.is_file() {
                fs_err::rename(&cost, target.join(cost.file_name().unwrap_or_default()))?;
            }
        }
    }
    Ok(())
}

/// The error when training left no profile, with what to check.
fn no_profile_error(dir: &Path, extension: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "no profile (*.{extension}) was written to {}\nhint: did the training workloads run the instrumented binaries ({{bin.NAME}}) and exit normally? A process killed by a signal writes no profile.",
        dir.display()
    )
}

/// Merged profiles are named `merged-…` (by content hash where one file
/// serves the whole build), so build keys and people notice a changed profile.
const MERGED_PREFIX: &str = "merged-";

/// The merged profiles (`merged-*.<extension>`) under `dir`.
fn merged_profiles(dir: &Path, extension: &str) -> Vec<PathBuf> {
    find_files(dir, extension)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(MERGED_PREFIX))
        })
        .collect()
}

/// The merged profiles under `dir`, or the error saying training left none.
fn require_merged(dir: &Path, extension: &str) -> anyhow::Result<Vec<PathBuf>> {
    let found = merged_profiles(dir, extension);
    if found.is_empty() {
        return Err(no_profile_error(dir, extension));
    }
    Ok(found)
}

/// Replace earlier merged profiles in `dir` with `staging`, renamed to
/// `merged-<hash>.<extension>` after its content.
fn store_merged(dir: &Path, staging: &Path, extension: &str) -> anyhow::Result<PathBuf> {
    for old in merged_profiles(dir, extension) {
        fs_err::remove_file(old)?;
    }
    let hash = crate::digest::sha256_file(staging)?;
    let merged = dir.join(format!("{MERGED_PREFIX}{}.{extension}", &hash[..16]));
    fs_err::rename(staging, &merged)?;
    Ok(merged)
}

/// All files under `dir` with `extension`, sorted.
pub fn find_files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> VariantDirs {
        VariantDirs {
            build: PathBuf::from("/w/variants/pgo/build"),
            profiles: PathBuf::from("/w/variants/pgo/profile"),
        }
    }

    // Regression: gcc-best (`["pgo", "o3", "lto", "bolt"]`) failed to build
    // SQLite with "number of counters in profile data for function
    // 'parseModifier' does not match" because -O3 was only in the final
    // build, not in the instrumented one the profile came from.
    #[test]
    fn o3_is_in_the_instrumented_stage_the_profile_comes_from() {
        for compiler in [Compiler::Gcc, Compiler::Clang] {
            for stage in [Stage::FIRST, Stage::Final] {
                let f = optimization_flags(
                    compiler,
                    &[Optimization::PGO, Optimization::O3, Optimization::LTO],
                    RoundChoices::INSTRUMENTED,
                    stage,
                    &dirs(),
                );
                assert!(f.cflags.iter().any(|c| c == "-O3"), "{:?}", f.cflags);
            }
        }
    }

    #[test]
    fn instrumented_stage_only_instruments() {
        let f = optimization_flags(
            Compiler::Gcc,
            &[Optimization::PGO, Optimization::LTO],
            RoundChoices::INSTRUMENTED,
            Stage::FIRST,
            &dirs(),
        );
        assert!(f.cflags.iter().any(|c| c == "-fprofile-generate"));
        assert!(!f.cflags.iter().any(|c| c.starts_with("-flto")));
        assert!(f.ldflags.iter().any(|c| c == "-fprofile-generate"));
    }

    #[test]
    fn final_stage_stacks_in_order() {
        let f = optimization_flags(
            Compiler::Gcc,
            &[Optimization::PGO, Optimization::LTO],
            RoundChoices::INSTRUMENTED,
            Stage::Final,
            &dirs(),
        );
        let use_at = f.cflags.iter().position(|c| c == "-fprofile-use").unwrap();
        let lto_at = f.cflags.iter().position(|c| c == "-flto=auto").unwrap();
        assert!(use_at < lto_at);
        assert!(f
            .cflags
            .contains(&"-fprofile-dir=/w/variants/pgo/profile/gcc-pgo".to_owned()));
        assert!(f.ldflags.contains(&"-flto=auto".to_owned()));
    }

    #[test]
    fn unknown_words_get_hints() {
        assert_eq!(
            Optimization::from_name("csirpgo").map(|o| o.word()),
            Ok("cspgo")
        );
        assert!(Optimization::from_name("fast")
            .unwrap_err()
            .contains("pgo, pgo-frontend (clang), cspgo (clang)"));
    }

    #[test]
    fn pgo_then_bolt_is_two_rounds_and_bolt_sees_the_whole_stack() {
        let stack = [Optimization::PGO, Optimization::LTO, Optimization::BOLT];
        let rounds = rounds(&stack, Compiler::Gcc, RoundChoices::INSTRUMENTED);
        assert_eq!(
            rounds.iter().map(|r| r.name()).collect::<Vec<_>>(),
            ["gcc-pgo", "bolt"]
        );
        let first = optimization_flags(
            Compiler::Gcc,
            &stack,
            RoundChoices::INSTRUMENTED,
            Stage::Instrumented(0),
            &dirs(),
        );
        assert!(first.cflags.contains(&"-fprofile-generate".to_owned()));
        assert!(!first.cflags.iter().any(|f| f.starts_with("-flto")));
        assert!(!first.ldflags.contains(&"-Wl,--emit-relocs".to_owned()));
        // BOLT's round instruments the finished code: PGO's profile, LTO
        // and the relocations BOLT needs, exactly as the final build.
        let second = optimization_flags(
            Compiler::Gcc,
            &stack,
            RoundChoices::INSTRUMENTED,
            Stage::Instrumented(1),
            &dirs(),
        );
        let last = optimization_flags(
            Compiler::Gcc,
            &stack,
            RoundChoices::INSTRUMENTED,
            Stage::Final,
            &dirs(),
        );
        assert_eq!(second, last);
        assert!(last.cflags.contains(&"-fprofile-use".to_owned()));
        assert!(last.cflags.contains(&"-flto=auto".to_owned()));
        assert!(last.ldflags.contains(&"-Wl,--emit-relocs".to_owned()));
        assert!(!last.cflags.contains(&"-fprofile-generate".to_owned()));
        assert!(last
            .cflags
            .contains(&"-fno-reorder-blocks-and-partition".to_owned()));
    }

    #[test]
    fn cspgo_instruments_after_ir_pgo_and_the_final_build_uses_only_the_merged_profile() {
        let stack = [Optimization::from_name("cspgo").unwrap(), Optimization::LTO];
        let rounds = rounds(&stack, Compiler::Clang, RoundChoices::INSTRUMENTED);
        assert_eq!(
            rounds.iter().map(|r| r.name()).collect::<Vec<_>>(),
            ["clang-pgo", "cspgo"]
        );
        let second = optimization_flags(
            Compiler::Clang,
            &stack,
            RoundChoices::INSTRUMENTED,
            Stage::Instrumented(1),
            &dirs(),
        );
        assert!(second.cflags.contains(&"-fcs-profile-generate".to_owned()));
        assert!(second
            .cflags
            .iter()
            .any(|f| f.starts_with("-fprofile-use=/w/variants/pgo/profile/clang-pgo/")));
        assert!(second.cflags.contains(&"-flto=thin".to_owned()));
        let last = optimization_flags(
            Compiler::Clang,
            &stack,
            RoundChoices::INSTRUMENTED,
            Stage::Final,
            &dirs(),
        );
        let uses: Vec<&String> = last
            .cflags
            .iter()
            .filter(|f| f.starts_with("-fprofile-use="))
            .collect();
        assert_eq!(uses.len(), 1, "{uses:?}");
        assert!(uses[0].starts_with("-fprofile-use=/w/variants/pgo/profile/cspgo/"));
    }
}
