//! Build one stage of one variant in its own directory, with afterburner's
//! flags injected through CC, CXX, CFLAGS, CXXFLAGS and LDFLAGS, skipping the
//! build when a record of the same inputs is on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::digest::hex;
use crate::experiment::template::{Bindings, Template};
use crate::experiment::{Experiment, Source, Variant};
use crate::process::{describe_status, quote_output, run_timed, TimedIo};
use crate::source::tree::Manifest;
use crate::toolchain::{optimization_flags, Compiler, Flags, Phase, Stage, VariantDirs};
use crate::workdir::{tail, Workdir};

mod cargo;
mod verify;

pub use crate::toolchain::recorded::Verification;

/// What a finished build left, saved beside it as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildRecord {
    pub variant: String,
    pub stage: Stage,
    /// SHA-256 of every input; equal keys mean nothing to rebuild.
    pub key: String,
    pub cc: String,
    /// First line of `CC --version`.
    pub compiler_version: String,
    pub cflags: String,
    pub ldflags: String,
    /// Go build flags; empty for C and C++.
    #[serde(default)]
    pub goflags: String,
    /// A cargo target's RUSTFLAGS and release-profile settings; empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rustflags: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cargo: String,
    /// Binary name → absolute path.
    pub binaries: BTreeMap<String, PathBuf>,
    /// How long the build command ran, in seconds.
    pub seconds: f64,
    /// The build's combined stdout and stderr.
    pub log: PathBuf,
    /// What went into the key, so the next build can say why it reruns;
    /// absent in records of older versions.
    #[serde(default)]
    pub inputs: Option<Inputs>,
    /// The earlier variant whose build this is, where it is the very same
    /// build (a twin that differs only in how it runs, e.g. a runtime
    /// setting): its binaries are run, not built again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_from: Option<String>,
    /// What was verified of the binaries before they were used: the
    /// compiler they name and the switches the variant's words add;
    /// absent in records of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Verification>,
}

/// Whether `build_stage` ran the build command, and why.
#[derive(Debug, Clone)]
pub enum BuildOutcome {
    /// Built, for the reason given ("first build", "src/foo.c changed",
    /// "flags changed", …).
    Built(BuildRecord, String),
    UpToDate(BuildRecord),
    /// The same build as the named earlier variant's, whose binaries it
    /// runs.
    Shared(BuildRecord, String),
}

impl BuildOutcome {
    pub fn record(&self) -> &BuildRecord {
        match self {
            BuildOutcome::Built(r, _) | BuildOutcome::UpToDate(r) | BuildOutcome::Shared(r, _) => r,
        }
    }
}

/// Everything a build depends on, hashed into its key and kept in its
/// record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// The source's description (path, package, repository, URL).
    source: String,
    /// A `path` source's files with their stamps; empty for fetched
    /// sources, which do not change once fetched.
    files: Manifest,
    build: String,
    cc: String,
    compiler_version: String,
    flags: Composed,
    /// SHA-256 of the profiles this build applies; empty without.
    profile: String,
    /// The training rounds (`bolt` and `bolt-perf` instrument with the
    /// same flags but need different binaries).
    rounds: Vec<String>,
}

impl Inputs {
    /// Why a build with these inputs reruns after one with `before`'s.
    fn why_not(&self, before: Option<&BuildRecord>) -> String {
        let Some(old) = before.and_then(|r| r.inputs.as_ref()) else {
            return if before.is_some() {
                "built by an older afterburner".to_owned()
            } else {
                "first build".to_owned()
            };
        };
        let mut why = Vec::new();
        if old.source != self.source {
            why.push("source changed".to_owned());
        }
        if old.build != self.build {
            why.push("build command changed".to_owned());
        }
        if old.cc != self.cc || old.compiler_version != self.compiler_version {
            why.push(format!(
                "compiler changed ({} → {})",
                old.compiler_version, self.compiler_version
            ));
        }
        if old.flags != self.flags {
            why.push("flags changed".to_owned());
        }
        if old.profile != self.profile {
            why.push("profile changed".to_owned());
        }
        if old.rounds != self.rounds {
            why.push("training rounds changed".to_owned());
        }
        why.extend(crate::source::tree::changes(&old.files, &self.files, 5));
        if why.is_empty() {
            // Same inputs, but the directory holds another build (or its
            // binaries are gone).
            why.push("the build directory no longer holds this build".to_owned());
        }
        why.join(", ")
    }
}

/// Compute the key of `stage` of `variant`: a hash of every input. A final
/// stage that needs a profile fails here when there is none.
fn plan(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
    workdir: &Workdir,
) -> Result<BuildFlags> {
    let compiler = variant.compiler;
    let compiler_version = compiler.version().with_context(|| {
        format!(
            "compiler `{}` not found\nhint: install it with `apt-get install -y {}`",
            compiler.cc(),
            compiler.package()
        )
    })?;
    let dirs = workdir.variant_dirs(&variant.name);
    let composed = compose_flags(experiment, variant, stage, &dirs);
    // The profiles of the rounds this build applies.
    let mut profiles = Vec::new();
    for (i, round) in variant.rounds().into_iter().enumerate() {
        if stage.phase_of(i) == Phase::Use {
            profiles.extend(round.profile_files(&dirs.round(round).profile)?);
        }
    }
    let profile = if profiles.is_empty() {
        String::new()
    } else {
        fingerprint_files(&profiles)?
    };
    let build = build_command(experiment, variant)?;
    // A stale variant's instrumented builds are of its other revision.
    let (source, exclude) = variant.stage_source(&experiment.target, stage);
    let files = match source {
        Source::Path(_) => crate::source::tree::manifest(source_dir, &workdir.root, exclude)?,
        _ => Manifest::new(),
    };
    let inputs = Inputs {
        source: format!("{source:?}"),
        files,
        build: build.clone(),
        cc: compiler.cc().to_owned(),
        compiler_version: compiler_version.clone(),
        flags: composed.clone(),
        profile,
        rounds: variant
            .rounds()
            .iter()
            .map(|r| r.name().to_owned())
            .collect(),
    };
    let key = hex(&Sha256::digest(serde_json::to_vec(&inputs)?));
    Ok(BuildFlags {
        key,
        compiler_version,
        composed,
        build,
        inputs,
    })
}

/// The target's build command with this variant's `{params.KEY}` filled in
/// (e.g. `make MALLOC={params.malloc}`, one allocator per variant).
fn build_command(experiment: &Experiment, variant: &Variant) -> Result<String> {
    let mut params = experiment.params.clone();
    params.extend(variant.params.clone());
    let bindings = Bindings {
        params,
        ..Bindings::default()
    };
    Template::new(experiment.target.build.clone())
        .expand(&bindings)
        .with_context(|| format!("expanding the build command of variant `{}`", variant.name))
}

/// The key of `stage` of `variant` with the variant's own directory
/// written as `{variant}` and its training rounds cut at the stage's: two
/// variants whose stage has the same share key build the same code (their
/// instrumented builds write the same counters, wherever they live).
pub fn share_key(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
    workdir: &Workdir,
) -> Result<String> {
    let mut inputs = plan(experiment, variant, stage, source_dir, workdir)?.inputs;
    if let Stage::Instrumented(round) = stage {
        inputs.rounds.truncate(round + 1);
    }
    let own = format!("{}/", workdir.variant(&variant.name).display());
    let text = serde_json::to_string(&inputs)?.replace(&own, "{variant}/");
    Ok(hex(&Sha256::digest(text.as_bytes())))
}

/// The key `stage` of `variant` would be built with now.
pub fn stage_key(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
    workdir: &Workdir,
) -> Result<String> {
    plan(experiment, variant, stage, source_dir, workdir).map(|f| f.key)
}

/// The record of `stage` if the variant's build directory holds exactly
/// that build now (its marker names the record's key and the binaries exist).
pub fn current(workdir: &Workdir, variant: &str, stage: Stage) -> Option<BuildRecord> {
    let record = load_record(&workdir.build_record(variant, stage))?;
    let marker = |v: &str| fs_err::read_to_string(workdir.build_dir(v).join(BUILT_MARKER)).ok();
    // A shared build is current while its donor's directory holds it.
    let holder = record.shared_from.as_deref().unwrap_or(variant);
    let held = marker(variant)? == record.key && marker(holder)? == record.key;
    (held && record.binaries.values().all(|b| b.is_file())).then_some(record)
}

/// An earlier variant whose final build is current with this very key:
/// the same build (nothing in its inputs names a variant's own directory,
/// no profile), whose binaries a twin that differs only in how it runs may
/// run.
fn twin(
    experiment: &Experiment,
    variant: &Variant,
    workdir: &Workdir,
    key: &str,
) -> Option<(String, BuildRecord)> {
    experiment
        .variants
        .iter()
        .take_while(|v| v.name != variant.name)
        .find_map(|v| {
            let record = current(workdir, &v.name, Stage::Final)?;
            (record.key == key)
                .then(|| (record.shared_from.clone().unwrap_or(v.name.clone()), record))
        })
}

/// Names the key of the build a variant's build directory holds.
const BUILT_MARKER: &str = ".afterburner-built";

/// Build `stage` of `variant` from `source_dir`, unless the build directory
/// already holds a build of the same inputs.
///
/// Both stages of a profiled variant are built in the same directory, one
/// after the other: gcc checksums each function's source path into its
/// profile, so the final build must compile the very paths the instrumented
/// one did (absolute paths, as `CMake` and libtool use, would otherwise fail
/// with `-Werror=coverage-mismatch`).
pub fn build_stage(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
    workdir: &Workdir,
) -> Result<BuildOutcome> {
    let flags = plan(experiment, variant, stage, source_dir, workdir)?;
    if let Some(record) = current(workdir, &variant.name, stage) {
        if record.key == flags.key {
            return Ok(BuildOutcome::UpToDate(record));
        }
    }
    if stage == Stage::Final {
        if let Some((donor, mut record)) = twin(experiment, variant, workdir, &flags.key) {
            record.variant.clone_from(&variant.name);
            record.shared_from = Some(donor.clone());
            fs_err::create_dir_all(workdir.build_dir(&variant.name))?;
            fs_err::write(
                workdir.build_record(&variant.name, stage),
                serde_json::to_vec_pretty(&record)?,
            )?;
            fs_err::write(
                workdir.build_dir(&variant.name).join(BUILT_MARKER),
                &flags.key,
            )?;
            return Ok(BuildOutcome::Shared(record, donor));
        }
    }
    let reason = flags
        .inputs
        .why_not(load_record(&workdir.build_record(&variant.name, stage)).as_ref());
    if let Stage::Instrumented(round) = stage {
        let rounds = variant.rounds();
        let profile_dir = workdir
            .variant_dirs(&variant.name)
            .round(rounds[round])
            .profile;
        if profile_dir.exists() {
            // Counters from another instrumented binary would not match it.
            fs_err::remove_dir_all(&profile_dir)?;
        }
    }
    let key = flags.key.clone();
    let record = run_build(experiment, variant, stage, source_dir, workdir, flags)?;
    fs_err::write(
        workdir.build_record(&variant.name, stage),
        serde_json::to_vec_pretty(&record)?,
    )?;
    fs_err::write(workdir.build_dir(&variant.name).join(BUILT_MARKER), key)?;
    Ok(BuildOutcome::Built(record, reason))
}

struct BuildFlags {
    key: String,
    compiler_version: String,
    composed: Composed,
    /// The build command, placeholders filled in.
    build: String,
    inputs: Inputs,
}

/// Whether `stage` applies a first-round profile shared from another
/// variant (its `match.json` says whose): the final build, or a later
/// round's instrumented build of the whole stack (BOLT after PGO).
fn applies_shared_profile(variant: &Variant, stage: Stage, dirs: &VariantDirs) -> bool {
    let applies = match stage {
        Stage::Final => true,
        Stage::Instrumented(round) => round > 0,
    };
    let Some(first) = variant.rounds().first().copied() else {
        return false;
    };
    applies
        && variant.profile_donor.is_some()
        && crate::toolchain::matching::read(&dirs.round(first).profile)
            .is_some_and(|m| m.shared_from.is_some())
}

/// The flags a build gets, each a space-separated string.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Composed {
    pub cflags: String,
    pub ldflags: String,
    /// Go build flags (`GOFLAGS`); empty for C and C++.
    pub goflags: String,
    /// A cargo target's `RUSTFLAGS`.
    #[serde(default)]
    pub rustflags: String,
    /// A cargo target's release-profile settings (`KEY=VALUE` words of
    /// cargo's environment).
    #[serde(default)]
    pub cargo: String,
}

fn run_build(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    source_dir: &Path,
    workdir: &Workdir,
    flags: BuildFlags,
) -> Result<BuildRecord> {
    let build_dir = workdir.build_dir(&variant.name);
    if build_dir.exists() {
        fs_err::remove_dir_all(&build_dir)?;
    }
    copy_tree(source_dir, &build_dir, &workdir.root)?;
    let logs = workdir.variant_logs(&variant.name);
    fs_err::create_dir_all(&logs)?;
    let log = logs.join(format!("build-{}.log", stage.name()));
    let compiler = variant.compiler;
    let (mut command, cargo_host) =
        build_command_with_env(experiment, variant, stage, workdir, &flags, &build_dir)?;
    let io = TimedIo {
        stdout: log.clone(),
        stderr: log.clone(),
    };
    let start = Instant::now();
    let timed =
        run_timed(&mut command, &io, experiment.target.build_timeout).with_context(|| {
            format!(
                "building variant `{}` ({} stage); log: {}",
                variant.name,
                stage.name(),
                log.display()
            )
        })?;
    if !timed.status.success() {
        let output = tail(&log, 20);
        bail!(
            "building variant `{}` ({} stage) failed with {}\n{}\nfull log: {}\nhint: the build ran `{}` in {} with {}{}",
            variant.name,
            stage.name(),
            describe_status(timed.status),
            quote_output(&output),
            log.display(),
            flags.build,
            build_dir.display(),
            flags.composed.said(),
            verify::clang_flags_given_to_gcc(compiler, &output).unwrap_or_default(),
        );
    }
    let (root, logged) = match &cargo_host {
        Some((target_dir, host)) => (
            cargo::host_dir(target_dir, host),
            cargo::rustc_lines(target_dir, &log)?,
        ),
        None => (build_dir.clone(), Vec::new()),
    };
    let binaries = locate_binaries(experiment, &root, &log)?;
    let paths: Vec<PathBuf> = binaries.values().cloned().collect();
    let dirs = workdir.variant_dirs(&variant.name);
    // Before anything rewrites the binaries (BOLT) or runs them.
    let verified = verify::stage(experiment, variant, stage, &dirs, &paths, &log, &logged)?;
    for (i, round) in variant.rounds().into_iter().enumerate() {
        round.post_link(stage.phase_of(i), &paths, &dirs.round(round))?;
    }
    Ok(BuildRecord {
        variant: variant.name.clone(),
        stage,
        key: flags.key,
        cc: compiler.cc().to_owned(),
        compiler_version: flags.compiler_version,
        cflags: flags.composed.cflags,
        ldflags: flags.composed.ldflags,
        goflags: flags.composed.goflags,
        rustflags: flags.composed.rustflags,
        cargo: flags.composed.cargo,
        binaries,
        seconds: start.elapsed().as_secs_f64(),
        log,
        inputs: Some(flags.inputs),
        shared_from: None,
        verified: Some(verified),
    })
}

/// The build command of `stage`, to run in `build_dir` with afterburner's
/// variables: CC, CXX, CFLAGS, CXXFLAGS, LDFLAGS, GOFLAGS (and the PATH of
/// a Go new enough for PGO); for a cargo target, cargo's settings, and
/// where cargo builds for which host (its binaries of an earlier build
/// removed first).
fn build_command_with_env(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    workdir: &Workdir,
    flags: &BuildFlags,
    build_dir: &Path,
) -> Result<(Command, Option<(PathBuf, String)>)> {
    let compiler = variant.compiler;
    let mut command = Command::new("sh");
    command
        .args(["-c", &flags.build])
        .current_dir(build_dir)
        .env("CC", compiler.cc())
        .env("CXX", compiler.cxx())
        .env("CFLAGS", &flags.composed.cflags)
        .env("CXXFLAGS", &flags.composed.cflags)
        .env("LDFLAGS", &flags.composed.ldflags);
    if !flags.composed.goflags.is_empty() {
        command.env("GOFLAGS", &flags.composed.goflags);
    }
    let cargo_host = match compiler {
        Compiler::Rustc => {
            let target_dir = workdir.cargo_target_dir(&variant.name, stage);
            let host = cargo::host()?;
            cargo::clear_binaries(experiment, &cargo::host_dir(&target_dir, &host))?;
            cargo::configure(&mut command, &flags.composed, &target_dir, &host);
            Some((target_dir, host))
        }
        _ => None,
    };
    if compiler == Compiler::Go {
        // Debian's golang-1.2x packages put no `go` on the PATH.
        if let Some(path) = crate::toolchain::go::path_with_pgo_go() {
            command.env("PATH", path);
        }
    }
    Ok((command, cargo_host))
}

/// The target's binaries below `root` (the build directory, or a cargo
/// target's directory for the host).
fn locate_binaries(
    experiment: &Experiment,
    root: &Path,
    log: &Path,
) -> Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    for (name, relative) in &experiment.target.binaries {
        let path = root.join(relative);
        if experiment.target.cargo.is_some() && !path.is_file() {
            bail!(
                "cargo built the package but binary `{name}` is not at {}\nhint: name the package's binaries in cargo = {{ bins = [...] }} of {} (the [[bin]] names of its Cargo.toml, or the package's name); build log: {}",
                path.display(),
                experiment.file.display(),
                log.display()
            );
        }
        if !path.is_file() {
            bail!(
                "the build succeeded but binary `{name}` is not at {}\nhint: fix `binaries` in {} (paths are relative to the build directory); build log: {}",
                path.display(),
                experiment.file.display(),
                log.display()
            );
        }
        out.insert(name.clone(), path);
    }
    Ok(out)
}

/// CFLAGS and LDFLAGS for a stage: the user's environment first (added to,
/// never replaced), then the project's, the optimizations', the variant's.
pub fn compose_flags(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    dirs: &VariantDirs,
) -> Composed {
    let mut opt = optimization_flags(
        variant.compiler,
        &variant.optimize,
        variant.profile_sources(),
        stage,
        dirs,
    );
    if let Some(level) = &variant.march {
        let march = crate::toolchain::march_flags(level, variant.compiler);
        if variant.compiler == Compiler::Rustc {
            opt.rustflags.extend(march);
        } else {
            opt.cflags.extend(march.iter().cloned());
            opt.ldflags.extend(march);
        }
    }
    if variant.partial_training && stage == Stage::Final {
        opt.cflags.push("-fprofile-partial-training".to_owned());
    }
    if variant.profile_from.is_some() && stage == Stage::Final {
        // A profile of another revision: its mismatches are warned about
        // (and counted in the report), not fatal.
        opt.cflags
            .extend(crate::toolchain::mismatch::stale_warning_flags(
                variant.compiler,
            ));
    }
    if variant.compiler == Compiler::Gcc
        && variant.profile_from.is_none()
        && applies_shared_profile(variant, stage, dirs)
    {
        // A profile trained in another build directory: gcc checksums a
        // function's source path into its counters, and a build that names
        // its sources by absolute path would fail on the directory alone;
        // the moved functions keep their profile, and are counted.
        opt.cflags.push("-Wno-error=coverage-mismatch".to_owned());
    }
    if let Some(record) = verify::recording_flag(variant.compiler) {
        // The compiler records each object's command line in it, so the
        // build can be checked for these very flags before it is measured
        // (`verify`); code is unchanged. gcc's at the link too: its LTO
        // link records its own units only when given it (clang's ThinLTO
        // keeps the objects' record, and LDFLAGS that reach a gcc the
        // build chose would fail on clang's option).
        opt.cflags.insert(0, record.to_owned());
        if variant.compiler == Compiler::Gcc {
            opt.ldflags.insert(0, record.to_owned());
        }
    }
    if variant.compiler == Compiler::Clang {
        // Debug info a project asks for itself (Redis builds with -g) in
        // DWARF 4: valgrind 3.19 cannot read clang 14's default DWARF 5 and
        // gives up on the binary, so callgrind could not count it. Code is
        // unchanged, and no debug info is added where none was asked for.
        opt.cflags.insert(0, "-fdebug-default-version=4".to_owned());
    }
    with_the_users(experiment, variant, opt)
}

/// The flags of a build in order: the user's environment first (added
/// to, never replaced), then the project's, `opt` (the optimizations'),
/// the variant's own.
fn with_the_users(experiment: &Experiment, variant: &Variant, opt: Flags) -> Composed {
    let join = |parts: Vec<String>| {
        parts
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let user = |key: &str| std::env::var(key).unwrap_or_default();
    let cflags = join(
        [
            vec![user("CFLAGS"), experiment.target.cflags.clone()],
            opt.cflags,
            vec![variant.cflags.clone()],
        ]
        .concat(),
    );
    let ldflags = join(
        [
            vec![user("LDFLAGS"), experiment.target.ldflags.clone()],
            opt.ldflags,
            vec![variant.ldflags.clone()],
        ]
        .concat(),
    );
    let goflags = join([vec![user("GOFLAGS")], opt.goflags].concat());
    let rustflags = if variant.compiler == Compiler::Rustc {
        join([vec![user("RUSTFLAGS")], opt.rustflags].concat())
    } else {
        String::new()
    };
    Composed {
        cflags,
        ldflags,
        goflags,
        rustflags,
        cargo: opt.cargo.join(" "),
    }
}

impl Composed {
    /// The variables a build was given, for messages.
    fn said(&self) -> String {
        let mut out = format!(
            "CFLAGS=\"{}\" LDFLAGS=\"{}\" GOFLAGS=\"{}\"",
            self.cflags, self.ldflags, self.goflags
        );
        if !self.rustflags.is_empty() || !self.cargo.is_empty() {
            out = format!("RUSTFLAGS=\"{}\" {} {out}", self.rustflags, self.cargo);
        }
        out
    }
}

/// Read a build record; a missing or unreadable one means "not built".
pub fn load_record(path: &Path) -> Option<BuildRecord> {
    let text = fs_err::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Copy a source tree with `cp -a` (keeping timestamps, which make relies
/// on), leaving out the work directory when it lies inside the tree.
fn copy_tree(from: &Path, to: &Path, workdir: &Path) -> Result<()> {
    fs_err::create_dir_all(to)?;
    let skip = std::path::absolute(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    let mut args: Vec<PathBuf> = Vec::new();
    for entry in fs_err::read_dir(from)?.flatten() {
        let path = entry.path();
        let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        if absolute != skip {
            args.push(path);
        }
    }
    if args.is_empty() {
        return Ok(());
    }
    let mut command = Command::new("cp");
    command.arg("-a").args(&args).arg(to);
    let out = crate::process::capture_command(&mut command, Duration::from_mins(10))?;
    if !out.success() {
        bail!(
            "copying {} to {} failed:\n{}",
            from.display(),
            to.display(),
            out.stderr.trim()
        );
    }
    Ok(())
}

/// SHA-256 over the contents of files (profiles), so a changed profile
/// changes the build key.
fn fingerprint_files(files: &[PathBuf]) -> Result<String> {
    let mut hasher = Sha256::new();
    for f in files {
        hasher.update(f.to_string_lossy().as_bytes());
        hasher.update(fs_err::read(f)?);
    }
    Ok(hex(&hasher.finalize()))
}
