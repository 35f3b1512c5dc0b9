//! `autofdo`: sampled FDO — `perf record` of an ordinary build, converted
//! to a sample profile (clang; gcc 12 through afterburner's own writer of
//! gcc's format; needs a PMU, or `sample_event`).

use anyhow::Result;

use super::{Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{autofdo, sampling, ProfileSources, Compiler, Pgo};

pub struct Word;

impl Optimize for Word {
    fn word(&self) -> &'static str {
        "autofdo"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["afdo"]
    }

    fn describe(&self) -> &'static str {
        "sampled FDO: perf record of an ordinary build, converted to a sample profile (clang: create_llvm_prof; gcc 12: afterburner names each sampled address's inline stack with llvm-symbolizer and writes gcc's -fauto-profile format, create_llvm_prof only for branch stacks). Without LBR (timer samples) only line hotness, no branch edges or call targets: measured here, about a third of instrumented PGO's instruction savings (gcc 12: 11.3% vs 35.4% on a hot loop, 1.6% vs 6.2% on SQLite; on Redis gcc 12 gained nothing, clang 44–68% of gcc PGO)"
    }

    fn qualifier(&self) -> Option<&'static str> {
        Some("clang, gcc 12; needs a PMU")
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Clang | Compiler::Gcc => Ok(()),
            Compiler::Go => super::c_and_cpp_only(self.word(), compiler),
        }
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, compiler: Compiler, _sources: ProfileSources) -> Vec<&'static dyn Pgo> {
        vec![autofdo::for_compiler(compiler)]
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        // Refused before anything is built where the machine cannot sample.
        sampling::sampling(variant.sample_event, &autofdo::SAMPLER).map_err(anyhow::Error::msg)?;
        if variant.compiler == Compiler::Gcc {
            // A gcc whose reader was not followed is refused by name.
            autofdo::check_gcc()?;
        }
        Ok(())
    }

    fn requirements(&self, env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        // gcc's round converts and merges in afterburner: no llvm-profdata.
        let gcc_only = variant.is_some_and(|v| v.compiler == Compiler::Gcc);
        let gcc = variant.is_none_or(|v| v.compiler == Compiler::Gcc);
        let mut needs = vec![Requirement::tool("perf", "linux-perf")];
        if gcc {
            needs.push(Requirement::tool("objdump", "binutils").note(
                "gcc's round lists every instruction of a sampled function with it, so lines without samples are known cold",
            ));
            needs.push(Requirement::tool("llvm-symbolizer", "llvm").note(
                "gcc's round names each sampled address's inline stack from the DWARF with it, and writes gcc 12's -fauto-profile format itself (Debian's create_gcov writes one gcc 12 rejects)",
            ));
        }
        // clang's round converts with create_llvm_prof; gcc's only where
        // the recordings hold branch stacks (LBR ranges).
        let converter = Requirement::tool("create_llvm_prof", "autofdo");
        needs.push(if gcc_only {
            let with_lbr = converter.note("gcc's round converts recordings with branch stacks (LBR) with it");
            if env.lbr { with_lbr } else { with_lbr.optional() }
        } else {
            converter
        });
        if gcc {
            let served = autofdo::check_gcc();
            let note = served.as_ref().err().map(ToString::to_string).unwrap_or_default();
            let need = Requirement::fact("gcc 12 (the AutoFDO format afterburner writes for gcc)", served.is_ok(), &note);
            // Only a gcc variant needs it; `doctor` alone shows it as optional.
            needs.push(if variant.is_some() { need } else { need.optional() });
        }
        if !gcc_only {
            needs.push(Requirement::tool("llvm-profdata", "llvm").note("clang's autofdo merges with it"));
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
                "without LBR, AutoFDO profiles have no branch or call-target data and are much weaker",
            )
            .optional(),
        ]);
        needs
    }
}
