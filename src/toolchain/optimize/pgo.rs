//! `pgo`: instrumented profile-guided optimization with the variant's own
//! compiler — build instrumented, train, rebuild with the profile (gcc's
//! `-fprofile-generate`, clang's IR instrumentation, `go build -pgo`).

use anyhow::Result;

use super::{clang_profile_requirements_for, Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{pgo_for, BoltProfile, Compiler, Pgo};

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

    fn rounds(&self, compiler: Compiler, _bolt: BoltProfile) -> Vec<&'static dyn Pgo> {
        vec![pgo_for(compiler)]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        // gcc needs only itself; go a Go new enough (doctor's go section).
        if variant.is_some_and(|v| v.compiler == Compiler::Go) {
            return vec![super::go_pgo_requirement()];
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
        Ok(())
    }
}
