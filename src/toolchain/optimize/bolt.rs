//! `bolt`: post-link layout optimization with `llvm-bolt`, from an
//! instrumented run (`llvm-bolt -instrument`, no PMU needed) or from
//! `perf record` samples where the CPU has LBR (`bolt_profile`).

use anyhow::Result;

use super::{Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{bolt, bolt_perf, sampling, Bolt, BoltPerf, Compiler, Flags, Pgo, ProfileSources};

pub struct Word;

impl Optimize for Word {
    fn word(&self) -> &'static str {
        "bolt"
    }

    fn describe(&self) -> &'static str {
        "post-link layout optimization with `llvm-bolt`, from an instrumented run"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Gcc | Compiler::Clang => Ok(()),
            Compiler::Go => {
                Err("BOLT on Go binaries is not supported here; use optimize = [\"pgo\"]".to_owned())
            }
        }
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, _compiler: Compiler, sources: ProfileSources) -> Vec<&'static dyn Pgo> {
        if sources.bolt.is_sampled() {
            vec![&BoltPerf]
        } else {
            vec![&Bolt]
        }
    }

    fn rounds_after_link(&self) -> bool {
        true
    }

    fn finished_code_flags(&self, compiler: Compiler, flags: &mut Flags) {
        // gcc splits functions into hot and cold parts (`foo.cold`), most
        // of all with a profile; BOLT 16 instruments such fragments wrongly
        // (SQLite's PGO+LTO build crashed in its first call), and splits
        // better itself (-split-functions).
        if compiler == Compiler::Gcc {
            flags.both(&["-fno-reorder-blocks-and-partition"]);
        }
    }

    fn requirements(&self, env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        // Any llvm-bolt 16 to 18 will do (bolt::find_tool); apt's is bolt-16.
        let mut bolt = Requirement::tool("llvm-bolt-16", "bolt-16");
        bolt.present = bolt::find_tool("llvm-bolt").is_ok();
        let mut merge = Requirement::tool("merge-fdata-16", "bolt-16");
        merge.present = bolt::find_tool("merge-fdata").is_ok();
        let perf = Requirement::tool("perf", "linux-perf");
        let Some(variant) = variant else {
            return vec![
                bolt,
                merge,
                perf.note("only bolt_profile = \"sampled\" records with perf")
                    .optional(),
                Requirement::fact(
                    "branch stacks (LBR), for bolt_profile = \"sampled\" (the default where LBR works)",
                    env.lbr,
                    "without LBR, bolt variants are instrumented; bolt_profile = \"sampled\" with sample_event = \"cpu-clock\" samples addresses only (perf2bolt -nl), a weak profile",
                )
                .optional(),
            ];
        };
        let mut needs = vec![bolt, merge];
        if variant.bolt_profile.is_sampled() {
            needs.push(perf);
        }
        needs
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        if variant.bolt_profile.is_sampled() {
            sampling::sampling(variant.sample_event, &bolt_perf::SAMPLER)
                .map_err(anyhow::Error::msg)?;
        }
        Ok(())
    }
}
