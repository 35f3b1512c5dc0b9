//! `pgo`: instrumented profile-guided optimization with the variant's own
//! compiler — build instrumented, train, rebuild with the profile (gcc's
//! `-fprofile-generate`, clang's IR instrumentation, `go build -pgo` from
//! the program's own CPU profiles or from `perf record -g` samples, whose
//! rounds are Go's: [`crate::toolchain::go`]).
//!
//! The instrumented rounds live here: gcc's ([`gcc`]), clang's three
//! kinds ([`clang`]: IR, front-end, context-sensitive) and rustc's
//! ([`rust`], whose profiles clang's reader matches), with how each
//! profile is matched against its binaries ([`gcc_match`],
//! [`clang_match`]).

pub mod clang;
mod clang_match;
pub mod gcc;
mod gcc_match;
pub mod rust;

use anyhow::Result;

use crate::env::Environment;
use crate::toolchain::optimize::{Optimize, Requirement, VariantSetup};
use crate::toolchain::round::Round;
use crate::toolchain::{go, rustc, Compiler, GoPgoSource, RoundChoices};

pub struct Pgo;

impl Optimize for Pgo {
    fn word(&self) -> &'static str {
        "pgo"
    }

    fn describe(&self) -> &'static str {
        "instrumented profile-guided optimization: build instrumented, train, rebuild with the profile (gcc, clang, go, rustc)"
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

    fn rounds(&self, compiler: Compiler, sources: RoundChoices) -> Vec<&'static dyn Round> {
        vec![round_of(compiler, sources.go)]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        // gcc needs only itself; go a Go new enough (doctor's go section),
        // and perf and llvm-symbolizer where it samples.
        match variant.map(|v| (v.compiler, v.go_pgo)) {
            Some((Compiler::Go, go_pgo)) => return go::pgo_requirements(go_pgo),
            Some((Compiler::Rustc, _)) => return vec![rustc::profdata_requirement()],
            _ => {}
        }
        clang::profile_requirements_for(variant, false)
    }

    fn check(&self, variant: &VariantSetup) -> Result<()> {
        match variant.compiler {
            Compiler::Go => go::check(variant)?,
            // Refused before any build: another LLVM release's
            // llvm-profdata could not merge what training writes.
            Compiler::Rustc => {
                rustc::llvm_profdata()?;
            }
            Compiler::Gcc | Compiler::Clang => {}
        }
        Ok(())
    }
}

/// The PGO round of a compiler (for Go, of where its profile comes from).
pub fn round_of(compiler: Compiler, go: GoPgoSource) -> &'static dyn Round {
    match (compiler, go) {
        (Compiler::Gcc, _) => &gcc::GccPgo,
        (Compiler::Clang, _) => &clang::CLANG_IR_PGO,
        (Compiler::Go, GoPgoSource::Cpuprofile) => &go::cpuprofile::GoPgo,
        (Compiler::Go, GoPgoSource::Perf) => &go::perf::GoPerfPgo,
        (Compiler::Rustc, _) => &rust::RustPgo,
    }
}
