//! `pgo-frontend`: clang's front-end (source-level) instrumentation,
//! `-fprofile-instr-generate` and `-fprofile-instr-use=`, instead of IR-level.

use anyhow::Result;

use super::{clang_profile_requirements_for, Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{ProfileSources, Compiler, Pgo, CLANG_FRONTEND_PGO};

pub struct Word;

impl Optimize for Word {
    fn word(&self) -> &'static str {
        "pgo-frontend"
    }

    fn describe(&self) -> &'static str {
        "clang's front-end (source-level) instrumentation instead of IR-level"
    }

    fn qualifier(&self) -> Option<&'static str> {
        Some("clang")
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        super::clang_only(self.word(), "clang's source-level instrumentation (-fprofile-instr-generate)", compiler)
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, _compiler: Compiler, _sources: ProfileSources) -> Vec<&'static dyn Pgo> {
        vec![&CLANG_FRONTEND_PGO]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        clang_profile_requirements_for(variant, true)
    }
}
