//! `cspgo`: clang's context-sensitive IR PGO — IR PGO, then a second
//! instrumented round after inlining (`-fcs-profile-generate`), both
//! profiles merged into the one the final build reads.

use anyhow::Result;

use super::{clang_profile_requirements_for, Optimize, Requirement, VariantSetup};
use crate::env::Environment;
use crate::toolchain::{ProfileSources, Compiler, Pgo, CLANG_CS_PGO, CLANG_IR_PGO};

pub struct Word;

impl Optimize for Word {
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
        super::clang_only(self.word(), "clang's context-sensitive PGO (-fcs-profile-generate)", compiler)
    }

    fn is_compiler_profile(&self) -> bool {
        true
    }

    fn needs_profile(&self) -> bool {
        true
    }

    fn rounds(&self, _compiler: Compiler, _sources: ProfileSources) -> Vec<&'static dyn Pgo> {
        vec![&CLANG_IR_PGO, &CLANG_CS_PGO]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        clang_profile_requirements_for(variant, true)
    }
}
