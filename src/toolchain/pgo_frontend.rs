//! `pgo-frontend`: clang's front-end (source-level) instrumentation,
//! `-fprofile-instr-generate` and `-fprofile-instr-use=`, instead of IR-level.

use anyhow::Result;

use crate::env::Environment;
use crate::toolchain::optimize::{clang_only, Optimize, Requirement, VariantSetup};
use crate::toolchain::pgo::clang;
use crate::toolchain::round::Round;
use crate::toolchain::{Compiler, RoundChoices};

pub struct PgoFrontend;

impl Optimize for PgoFrontend {
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
        clang_only(
            self.word(),
            "clang's source-level instrumentation (-fprofile-instr-generate)",
            compiler,
        )
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, _compiler: Compiler, _sources: RoundChoices) -> Vec<&'static dyn Round> {
        vec![&clang::CLANG_FRONTEND_PGO]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        clang::profile_requirements_for(variant, true)
    }
}
