//! `cspgo`: clang's context-sensitive IR PGO — IR PGO, then a second
//! instrumented round after inlining (`-fcs-profile-generate`), both
//! profiles merged into the one the final build reads.

use anyhow::Result;

use crate::env::Environment;
use crate::toolchain::optimize::{clang_only, Optimize, Requirement, VariantSetup};
use crate::toolchain::pgo::clang;
use crate::toolchain::round::Round;
use crate::toolchain::{Compiler, RoundChoices};

pub struct Cspgo;

impl Optimize for Cspgo {
    fn word(&self) -> &'static str {
        "cspgo"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["csirpgo", "cs-pgo"]
    }

    fn describe(&self) -> &'static str {
        "clang's context-sensitive IR PGO: IR PGO, then a second instrumented round after inlining (-fcs-profile-generate), both profiles merged"
    }

    fn qualifier(&self) -> Option<&'static str> {
        Some("clang")
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        clang_only(
            self.word(),
            "clang's context-sensitive PGO (-fcs-profile-generate)",
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
        vec![&clang::CLANG_IR_PGO, &clang::CLANG_CS_PGO]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        clang::profile_requirements_for(variant, true)
    }
}
