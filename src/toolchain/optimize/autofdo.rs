//! `autofdo`: sampled FDO — `perf record` of an ordinary build, converted
//! to a sample profile (clang; needs a PMU, or `sample_event`).

use anyhow::Result;

use super::{Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{autofdo, sampling, BoltProfile, Compiler, Pgo};

pub struct Word;

impl Optimize for Word {
    fn word(&self) -> &'static str {
        "autofdo"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["afdo"]
    }

    fn describe(&self) -> &'static str {
        "sampled FDO: perf record of an ordinary build, converted to a sample profile (create_llvm_prof)"
    }

    fn qualifier(&self) -> Option<&'static str> {
        Some("clang; needs a PMU")
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Clang => Ok(()),
            Compiler::Gcc => Err(autofdo::GCC_REFUSAL.to_owned()),
            Compiler::Go => super::c_and_cpp_only(self.word(), compiler),
        }
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, compiler: Compiler, _bolt: BoltProfile) -> Vec<&'static dyn Pgo> {
        vec![autofdo::for_compiler(compiler)]
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        // Refused before anything is built where the machine cannot sample.
        sampling::sampling(variant.sample_event, &autofdo::SAMPLER).map_err(anyhow::Error::msg)?;
        Ok(())
    }

    fn requirements(&self, env: &Environment, _variant: Option<&VariantSetup>) -> Vec<Requirement> {
        vec![
            Requirement::tool("perf", "linux-perf"),
            Requirement::tool("create_llvm_prof", "autofdo"),
            Requirement::tool("llvm-profdata", "llvm"),
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
        ]
    }
}
