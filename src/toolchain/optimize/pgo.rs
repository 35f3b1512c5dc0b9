//! `pgo`: instrumented profile-guided optimization with the variant's own
//! compiler — build instrumented, train, rebuild with the profile (gcc's
//! `-fprofile-generate`, clang's IR instrumentation, `go build -pgo` from
//! the program's own CPU profiles or from `perf record -g` samples).

use anyhow::Result;

use super::{clang_profile_requirements_for, Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{go_perf, pgo_for, sampling, symbolize, Compiler, GoPgoSource, Pgo, ProfileSources};

pub struct Word;

impl Optimize for Word {
    fn word(&self) -> &'static str {
        "pgo"
    }

    fn describe(&self) -> &'static str {
        "instrumented profile-guided optimization: build instrumented, train, rebuild with the profile (gcc, clang, go)"
    }

    fn supports(&self, _compiler: Compiler) -> Result<(), String> {
        Ok(())
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, compiler: Compiler, sources: ProfileSources) -> Vec<&'static dyn Pgo> {
        vec![pgo_for(compiler, sources.go)]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        // gcc needs only itself; go a Go new enough (doctor's go section),
        // and perf and llvm-symbolizer where it samples.
        if let Some(v) = variant.filter(|v| v.compiler == Compiler::Go) {
            let mut needs = vec![super::go_pgo_requirement()];
            if v.go_pgo == GoPgoSource::Perf {
                needs.extend(go_perf_requirements());
            }
            return needs;
        }
        clang_profile_requirements_for(variant, false)
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        if variant.compiler == Compiler::Go && crate::toolchain::go_find::find_pgo_go().is_none() {
            anyhow::bail!(
                "Go PGO needs Go 1.21 or newer, and this machine has none\nhint: {}",
                crate::toolchain::go_find::INSTALL_HINT
            );
        }
        if variant.compiler == Compiler::Go && variant.go_pgo == GoPgoSource::Perf {
            sampling::sampling(variant.sample_event, &go_perf::SAMPLER)
                .map_err(anyhow::Error::msg)?;
            if symbolize::find_symbolizer().is_none() {
                anyhow::bail!(
                    "Go PGO from perf samples names the sampled addresses with llvm-symbolizer, which is missing\nhint: {}",
                    symbolize::SYMBOLIZER_HINT
                );
            }
        }
        Ok(())
    }
}

/// What Go PGO from perf samples needs beside Go: perf to sample,
/// llvm-symbolizer to name the addresses.
fn go_perf_requirements() -> Vec<Requirement> {
    vec![
        Requirement::tool("perf", "linux-perf"),
        Requirement {
            need: "llvm-symbolizer".to_owned(),
            present: symbolize::find_symbolizer().is_some(),
            packages: vec!["llvm".to_owned()],
            note: Some("Go PGO from perf samples (pgo_source = \"perf\") names sampled addresses with it".to_owned()),
            optional: false,
        },
    ]
}
