//! `split-functions`: clang's machine function splitting driven by the
//! PGO profile. Training is clang's IR-instrumented PGO; the final build
//! reads the profile and adds `-fsplit-machine-functions`, which moves the
//! blocks the profile never saw run out of their functions into cold
//! fragments (`foo.cold`, in `.text.split.`), so the hot code of each
//! function packs into fewer cache lines and pages. The code generator
//! does it, after inlining and layout, where the profile's counts are
//! exact: what BOLT's `-split-functions` does after the link, done at
//! compile time.
//!
//! clang only (x86-64 ELF; newer releases on 64-bit Arm too): whether this
//! clang can is probed, not assumed from its version. gcc's PGO already
//! splits hot from cold code (`-freorder-blocks-and-partition` is on with
//! `-fprofile-use`), so with gcc the word is refused, pointing to `pgo`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Result;

use crate::env::Environment;
use crate::toolchain::matching::Matched;
use crate::toolchain::optimize::{clang_only, Optimize, Requirement, VariantSetup};
use crate::toolchain::pgo::clang::{self, CLANG_IR_PGO};
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::{Compiler, Flags, RoundChoices, StageDirs};

/// The flag of the final build.
const FLAG: &str = "-fsplit-machine-functions";

pub struct SplitFunctions;

impl Optimize for SplitFunctions {
    fn word(&self) -> &'static str {
        "split-functions"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["mfs", "split-machine-functions"]
    }

    fn describe(&self) -> &'static str {
        "clang's machine function splitting from the PGO profile: IR PGO, then -fsplit-machine-functions moves the blocks training never ran into cold fragments"
    }

    fn qualifier(&self) -> Option<&'static str> {
        Some("clang, x86-64")
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        clang_only(
            self.word(),
            "clang's machine function splitting (-fsplit-machine-functions); gcc's `pgo` splits hot from cold code already (-freorder-blocks-and-partition comes with -fprofile-use)",
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
        vec![&SplittingRound]
    }

    fn requirements(&self, _env: &Environment, variant: Option<&VariantSetup>) -> Vec<Requirement> {
        let mut needs = clang::profile_requirements_for(variant, true);
        if variant.is_none_or(|v| v.compiler == Compiler::Clang) {
            let probed = clang_splits();
            let need = Requirement::fact(
                &format!("clang that takes {FLAG} (x86-64 ELF)"),
                probed.is_ok(),
                probed.as_ref().err().map_or("", String::as_str),
            );
            needs.push(if variant.is_some() {
                need
            } else {
                need.optional()
            });
        }
        needs
    }

    fn check(&self, _variant: &VariantSetup) -> Result<()> {
        clang_splits().map_err(|why| {
            anyhow::anyhow!("`split-functions` cannot run here: {why}\nhint: use `pgo` (the same profile, without the splitting), or build on x86-64 with a clang that has {FLAG}")
        })
    }
}

/// clang's IR PGO round whose final build also splits: its training,
/// merge, brought files and profile check are IR PGO's.
pub struct SplittingRound;

impl Round for SplittingRound {
    fn name(&self) -> &'static str {
        "clang-pgo-mfs"
    }

    fn instrument(&self, flags: &mut Flags, dirs: &StageDirs) {
        CLANG_IR_PGO.instrument(flags, dirs);
    }

    fn training_env(&self, dirs: &StageDirs) -> Vec<(String, String)> {
        CLANG_IR_PGO.training_env(dirs)
    }

    fn raw_extension(&self) -> &'static str {
        CLANG_IR_PGO.raw_extension()
    }

    fn merge(&self, dirs: &StageDirs, binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        CLANG_IR_PGO.merge(dirs, binaries)
    }

    fn merged_extension(&self) -> &'static str {
        CLANG_IR_PGO.merged_extension()
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        CLANG_IR_PGO.profile_files(profile_dir)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        CLANG_IR_PGO.use_profile(flags, dirs);
        // At link too: an LTO link generates the code, and splits it there.
        flags.cflags.push(FLAG.to_owned());
        flags.ldflags.push(FLAG.to_owned());
    }

    fn dumps_counters(&self) -> bool {
        CLANG_IR_PGO.dumps_counters()
    }

    fn accepts(&self) -> Accepts {
        CLANG_IR_PGO.accepts()
    }

    fn matched(&self, files: &[PathBuf], binaries: &[PathBuf]) -> Result<Option<Matched>> {
        CLANG_IR_PGO.matched(files, binaries)
    }
}

/// Whether the installed clang takes `-fsplit-machine-functions` for the
/// code it generates here (it refuses the flag for a target it cannot
/// split), probed by compiling an empty file until it succeeds (a failure
/// before `doctor` installs clang is not kept); `Err` has clang's words.
fn clang_splits() -> Result<(), String> {
    // Only a success is kept: a failure (no clang yet) is probed again,
    // after `doctor` installs clang.
    static SPLITS: OnceLock<()> = OnceLock::new();
    if SPLITS.get().is_some() {
        return Ok(());
    }
    let out = crate::process::capture(
        Compiler::Clang.cc(),
        &["-x", "c", "-c", FLAG, "-o", "/dev/null", "/dev/null"],
        Duration::from_secs(30),
    )
    .map_err(|e| format!("clang did not run: {e:#}"))?;
    if out.success() {
        let _ = SPLITS.set(());
        return Ok(());
    }
    let said = out
        .stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no reason given")
        .trim()
        .to_owned();
    Err(format!("clang refuses {FLAG}: {said}"))
}

#[cfg(test)]
mod tests {
    use crate::toolchain::{
        optimization_flags, Compiler, Optimization, RoundChoices, Stage, VariantDirs,
    };

    #[test]
    fn the_final_build_splits_on_the_ir_profile_and_gcc_is_refused() {
        let split = Optimization::from_name("mfs").unwrap();
        assert_eq!(split.word(), "split-functions");
        let dirs = VariantDirs {
            build: "/w/build".into(),
            profiles: "/w/profile".into(),
        };
        let flags = |stage| {
            optimization_flags(
                Compiler::Clang,
                &[split, Optimization::LTO],
                RoundChoices::INSTRUMENTED,
                stage,
                &dirs,
            )
        };
        let first = flags(Stage::FIRST);
        assert!(first.cflags.contains(&"-fprofile-generate".to_owned()));
        assert!(!first.cflags.contains(&super::FLAG.to_owned()));
        let last = flags(Stage::Final);
        assert!(last
            .cflags
            .iter()
            .any(|f| f.starts_with("-fprofile-use=/w/profile/clang-pgo-mfs/")));
        assert!(last.cflags.contains(&super::FLAG.to_owned()));
        assert!(last.ldflags.contains(&super::FLAG.to_owned()));
        let why = split.supports(Compiler::Gcc).unwrap_err();
        assert!(why.contains("-freorder-blocks-and-partition"), "{why}");
        assert!(split.supports(Compiler::Go).is_err());
    }
}
