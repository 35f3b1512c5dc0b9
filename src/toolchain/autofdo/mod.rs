//! AutoFDO: a sampled profile instead of an instrumented one. The profiled
//! build is the finished code plus line tables; training runs it under
//! `perf record` (branch stacks, `-b`, where the CPU has LBR);
//! each recording becomes a sample profile for each binary: with branch
//! stacks through `create_llvm_prof`, without (timer samples) through
//! afterburner's own conversion ([`from_ip`]). For clang ([`clang`]),
//! `llvm-profdata merge -sample` merges them across
//! workloads and binaries and the final build reads it with
//! `-fprofile-sample-use=`. For gcc ([`gcc`]), each is written as text,
//! merged and converted to gcc's own format
//! ([`crate::toolchain::formats::gcov_afdo`]: Debian's
//! `create_gcov` writes one gcc 12 rejects), read with `-fauto-profile=`.
//!
//! Sampling needs a PMU. Where perf has none (most VMs) the variant is
//! refused, saying so, unless it names a software event itself
//! (`sample_event = "cpu-clock"`): timer samples give a weaker profile with
//! no branch data, but exercise the whole path; a recording with call
//! chains (the variant's `call_chains`, or one brought recorded with `-g`
//! or `--call-graph dwarf`) also names where calls through pointers went
//! ([`call_targets`]), which gcc is given as inlined copies
//! ([`target_inlines`]).
//!
//! The word `autofdo` is this folder's [`AutoFdo`].

mod call_targets;
mod callee_entries;
pub mod clang;
mod create_llvm_prof;
pub mod from_ip;
pub mod gcc;
pub mod straight_runs;
pub mod target_inlines;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

pub use gcc::check_gcc;

use crate::env::Environment;
use crate::toolchain::formats::gcov_afdo::Instance;
use crate::toolchain::matching::{self, Counts};
use crate::toolchain::merge::Convert;
use crate::toolchain::optimize::{c_and_cpp_only, Optimize, Requirement, VariantSetup};
use crate::toolchain::round::Round;
use crate::toolchain::sampling::{self, CallGraph, Sampler};
use crate::toolchain::{llvm, merged_profiles, Compiler, Flags, RoundChoices, StageDirs};

/// How long one conversion may take.
const TIMEOUT: Duration = Duration::from_mins(10);

pub struct AutoFdo;

impl Optimize for AutoFdo {
    fn word(&self) -> &'static str {
        "autofdo"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["afdo"]
    }

    fn describe(&self) -> &'static str {
        "sampled FDO: perf record of an ordinary build, converted to the compiler's sample profile (afterburner names each sampled address's inline stack with llvm-symbolizer and writes clang's or gcc's format itself; create_llvm_prof only for branch stacks). Without LBR (timer samples) line hotness, no branch edges (call targets only from recordings brought with call chains): from none to most of instrumented PGO's savings, by program and compiler (docs/case-studies/autofdo-timer-samples.md)"
    }

    fn qualifier(&self) -> Option<&'static str> {
        Some("clang, gcc 12 to 16; a PMU, or timer samples with sample_event = \"cpu-clock\"")
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Clang | Compiler::Gcc => Ok(()),
            Compiler::Go => c_and_cpp_only(self.word(), compiler),
            // LLVM's sample profile reaches rustc only through the unstable
            // -Zprofile-sample-use (nightly).
            Compiler::Rustc => Err(format!(
                "rustc reads a sample profile only on nightly (-Zprofile-sample-use), and afterburner builds with stable rustc; a cargo target takes {}",
                crate::toolchain::optimize::rust_words()
            )),
        }
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, compiler: Compiler, _sources: RoundChoices) -> Vec<&'static dyn Round> {
        vec![for_compiler(compiler)]
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        // Refused before anything is built where the machine cannot sample.
        sampling::sampling(variant.sampling, &SAMPLER).map_err(anyhow::Error::msg)?;
        if variant.compiler == Compiler::Gcc {
            // A gcc whose reader was not followed is refused by name.
            check_gcc()?;
        }
        Ok(())
    }

    fn requirements(&self, env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        let gcc_only = variant.is_some_and(|v| v.compiler == Compiler::Gcc);
        let gcc = variant.is_none_or(|v| v.compiler == Compiler::Gcc);
        let mut needs = vec![
            Requirement::tool("perf", "linux-perf"),
            Requirement::tool("objdump", "binutils").note(
                "the round lists every instruction of a sampled function with it, so lines without samples are known cold",
            ),
            Requirement::tool("llvm-symbolizer", "llvm").note(
                "the round names each sampled address's inline stack from the DWARF with it and writes the compiler's profile itself",
            ),
        ];
        // create_llvm_prof only where the recordings hold branch stacks
        // (LBR ranges); timer samples are converted by afterburner.
        let converter = Requirement::tool("create_llvm_prof", "autofdo")
            .note("converts recordings with branch stacks (LBR)");
        needs.push(if env.lbr {
            converter
        } else {
            converter.optional()
        });
        if gcc {
            let served = check_gcc();
            let note = served
                .as_ref()
                .err()
                .map(|e| format!("{e:#}"))
                .unwrap_or_default();
            let need = Requirement::fact(
                &match &served {
                    Ok(reader) => {
                        format!("the installed gcc's AutoFDO reader ({})", reader.describe())
                    }
                    Err(_) => "a gcc whose AutoFDO reader afterburner writes for (gcc 12 to 16)"
                        .to_owned(),
                },
                served.is_ok(),
                &note,
            );
            // Only a gcc variant needs it; `doctor` alone shows it as optional.
            needs.push(if variant.is_some() {
                need
            } else {
                need.optional()
            });
        }
        if !gcc_only {
            needs.push(llvm::llvm_profdata_requirement().note("clang's autofdo merges with it"));
        }
        needs.extend([
            Requirement::fact(
                "hardware counters",
                env.perf_counters,
                "sampling needs a PMU: without one, autofdo variants are refused; use pgo or bolt (instrumented), or sample_event = \"cpu-clock\" for a weak timer-sampled profile",
            ),
            Requirement::fact(
                "branch stacks (LBR)",
                env.lbr,
                "without LBR, AutoFDO profiles have no branch or call-target data (but from recordings brought with call chains) and are much weaker",
            )
            .optional(),
        ]);
        needs
    }
}

/// The AutoFDO round of `compiler` (clang's or gcc's; Go is refused when
/// the experiment is read).
pub fn for_compiler(compiler: Compiler) -> &'static dyn Round {
    match compiler {
        Compiler::Gcc => &gcc::GccAutoFdo,
        Compiler::Clang | Compiler::Go | Compiler::Rustc => &clang::AutoFdo,
    }
}

/// AutoFDO's part in the messages about sampling.
pub const SAMPLER: Sampler = Sampler {
    what: "AutoFDO",
    instead: "use optimize = [\"pgo\"] (instrumented: needs no PMU), or `bolt` (instrumented too)",
    default_event: None,
    // No chains unless the variant asks (`call_chains = "dwarf"` or "fp"):
    // with DWARF chains recorded (afterburner 1890307) Debian 12's Redis
    // kept no more of PGO's cut than without (clang 14 85%, 75%, 88% on
    // get, set and zrange where an earlier run without had 112%, 84%,
    // 89%), at 60 times the recording's size (240 MB for a 5 s window).
    call_graph: CallGraph::Never,
};

/// `with_lbr` for a recording with branch stacks, else afterburner's own
/// conversion in `dialect`.
fn either(
    recording: &Path,
    binary: &Path,
    out: &Path,
    with_lbr: Option<Convert>,
    dialect: from_ip::Dialect,
) -> Result<Option<PathBuf>> {
    match with_lbr {
        Some(converter) => converter(recording, binary, out, true),
        None => from_ip::convert(recording, binary, out, dialect),
    }
}

/// What to do when no recording holds a sample of the binaries (both rounds).
const NO_SAMPLES_HINT: &str = "the training workloads must run the profiled binaries ({bin.NAME}) long enough to be sampled (perf samples about 4000 times a second)";

/// The final build of either round: the profiled build's debug flags, and
/// `OPTION=merged profile` in CFLAGS and LDFLAGS (LTO reads it at link).
fn use_merged(
    flags: &mut Flags,
    dirs: &StageDirs,
    debug: &[&str],
    (extension, option): (&str, &str),
) {
    flags.cflags.extend(debug.iter().map(|f| (*f).to_owned()));
    let merged = merged_profiles(&dirs.profile, extension)
        .into_iter()
        .next()
        .unwrap_or_else(|| dirs.profile.join(format!("merged-missing.{extension}")));
    let option = format!("{option}={}", merged.display());
    flags.cflags.push(option.clone());
    flags.ldflags.push(option);
}

/// Each AutoFDO function's samples (its lines' and those of what it
/// inlines) under its compared name ([`matching::c_symbol`]).
fn add_instances(functions: Vec<Instance>, counts: &mut Counts) {
    for f in functions {
        *counts
            .entry(matching::c_symbol(&f.name).to_owned())
            .or_default() += f.total();
    }
}
