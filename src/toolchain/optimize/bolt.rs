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
        // The release is found, not listed (bolt::find_tool): clang's
        // where it has BOLT, else the newest of at least bolt::MINIMUM.
        let package = bolt::package();
        let chosen = bolt::chosen();
        let tool = |name: &str| Requirement {
            need: match (&chosen, name) {
                (Some(c), "llvm-bolt") => format!("llvm-bolt ({}: {})", c.path.display(), c.why),
                _ => format!("{name} (BOLT {} or newer)", bolt::MINIMUM),
            },
            present: bolt::find_tool(name).is_ok(),
            packages: package.clone().into_iter().collect(),
            note: package.is_none().then(bolt::install_hint),
            optional: false,
        };
        let bolt = tool("llvm-bolt");
        let merge = tool("merge-fdata");
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
