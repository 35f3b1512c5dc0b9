//! `pgo`: instrumented profile-guided optimization with the variant's own
//! compiler — build instrumented, train, rebuild with the profile (gcc's
//! `-fprofile-generate`, clang's IR instrumentation, `go build -pgo`).

use anyhow::Result;

use super::{clang_profile_needs, clang_profile_requirements, Needs, Optimize, Requirement, VariantSetup};
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

    fn needs(&self, variant: &VariantSetup) -> Result<Needs> {
        Ok(clang_profile_needs(variant.compiler))
    }

    fn requirements(&self, _env: &Environment) -> Vec<Requirement> {
        // gcc and go need only themselves.
        clang_profile_requirements(false)
    }
}
