//! clang's instrumented PGO, IR-level (`-fprofile-generate`, `pgo`) or
//! front-end (`-fprofile-instr-generate`, `pgo-frontend`, source-level
//! counters): training with `LLVM_PROFILE_FILE` naming one raw profile per
//! process (`%p`) and binary (`%m`) so concurrent processes never clobber
//! each other, `llvm-profdata merge` into `merged-<hash>.profdata`, then
//! `-fprofile-use=` (`-fprofile-instr-use=`) that file.
//!
//! Context-sensitive PGO (`cspgo`) is a second round after IR PGO: built
//! with the IR profile applied (so after inlining) and
//! `-fcs-profile-generate`, trained again, and its raw profiles merged with
//! the IR profile into the one file the final build uses.

use std::path::PathBuf;

use anyhow::Result;

use crate::toolchain::formats::brought::Format;
use crate::toolchain::matching::Matched;
use crate::toolchain::optimize::{Requirement, VariantSetup};
use crate::toolchain::round::{Accepts, Round};
use crate::toolchain::{
    find_files, llvm, merged_profiles, no_profile_error, raw_dir, require_merged, tools, Compiler,
    Flags, StageDirs,
};

/// One of clang's instrumentations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instrumentation {
    /// `-fprofile-generate` / `-fprofile-use=`.
    Ir,
    /// `-fprofile-instr-generate` / `-fprofile-instr-use=`.
    Frontend,
    /// `-fcs-profile-generate` on top of an IR profile.
    ContextSensitive,
}

/// clang's instrumented PGO of one kind.
pub struct ClangPgo {
    pub kind: Instrumentation,
}

/// IR-level instrumentation (`optimize = ["pgo"]` with clang).
pub static CLANG_IR_PGO: ClangPgo = ClangPgo {
    kind: Instrumentation::Ir,
};
/// Front-end instrumentation (`optimize = ["pgo-frontend"]`).
pub static CLANG_FRONTEND_PGO: ClangPgo = ClangPgo {
    kind: Instrumentation::Frontend,
};
/// The second round of `optimize = ["cspgo"]`.
pub static CLANG_CS_PGO: ClangPgo = ClangPgo {
    kind: Instrumentation::ContextSensitive,
};

pub(super) const RAW_EXTENSION: &str = "profraw";
pub(super) const MERGED_EXTENSION: &str = "profdata";

impl Round for ClangPgo {
    fn name(&self) -> &'static str {
        match self.kind {
            Instrumentation::Ir => "clang-pgo",
            Instrumentation::Frontend => "clang-pgo-frontend",
            Instrumentation::ContextSensitive => "cspgo",
        }
    }

    fn instrumentation_symbols(&self) -> &'static [&'static str] {
        // compiler-rt's profile runtime, linked by -fprofile-generate.
        &["__llvm_profile_"]
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        let generate = match self.kind {
            Instrumentation::Ir => "-fprofile-generate",
            Instrumentation::Frontend => "-fprofile-instr-generate",
            Instrumentation::ContextSensitive => "-fcs-profile-generate",
        };
        flags.cflags.push(generate.to_owned());
        flags.cflags.push("-fprofile-update=atomic".to_owned());
        flags.ldflags.push(generate.to_owned());
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn merged_extension(&self) -> &'static str {
        MERGED_EXTENSION
    }

    fn dumps_counters(&self) -> bool {
        true
    }

    fn accepts(&self) -> Accepts {
        match self.kind {
            Instrumentation::ContextSensitive => Accepts::NOTHING,
            Instrumentation::Ir | Instrumentation::Frontend => Accepts {
                formats: &[Format::PROFRAW, Format::PROFDATA],
                said: ".profraw or .profdata files",
            },
        }
    }

    fn matched(&self, files: &[PathBuf], binaries: &[PathBuf]) -> Result<Option<Matched>> {
        let hashes = self.kind != Instrumentation::ContextSensitive;
        super::clang_match::matched(&llvm::find_llvm_profdata()?, files, binaries, hashes).map(Some)
    }

    fn instruments_final_code(&self) -> bool {
        self.kind == Instrumentation::ContextSensitive
    }

    fn replaces_earlier(&self) -> bool {
        self.kind == Instrumentation::ContextSensitive
    }

    fn training_env(&self, dirs: &StageDirs) -> Vec<(String, String)> {
        raw_profile_env(dirs)
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = raw_profiles(dirs)?;
        let mut inputs = Vec::new();
        if self.kind == Instrumentation::ContextSensitive {
            // The IR round's profile, beside this round's directory.
            let ir = dirs.profile.with_file_name(CLANG_IR_PGO.name());
            inputs.extend(require_merged(&ir, MERGED_EXTENSION)?);
        }
        inputs.extend(raw);
        Ok(vec![crate::toolchain::merge::profdata_merge(
            &llvm::find_llvm_profdata()?,
            dirs,
            &[],
            &inputs,
            MERGED_EXTENSION,
        )?])
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        let merged = merged_or_missing(dirs);
        let option = if self.kind == Instrumentation::Frontend {
            "-fprofile-instr-use"
        } else {
            "-fprofile-use"
        };
        flags.cflags.push(format!("{option}={}", merged.display()));
        flags.ldflags.push(format!("{option}={}", merged.display()));
    }
}

/// LLVM's raw profiles, as clang's and rustc's instrumented binaries
/// write them: `LLVM_PROFILE_FILE` names one per process (`%p`) and binary
/// (`%m`) under the round's `raw/`.
pub(super) fn raw_profile_env(dirs: &StageDirs) -> Vec<(String, String)> {
    let pattern = raw_dir(dirs).join(format!("%p-%m.{RAW_EXTENSION}"));
    vec![(
        "LLVM_PROFILE_FILE".to_owned(),
        pattern.to_string_lossy().into_owned(),
    )]
}

/// The raw profiles training left, or the error saying it left none.
pub(super) fn raw_profiles(dirs: &StageDirs) -> Result<Vec<PathBuf>> {
    let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
    if raw.is_empty() {
        return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION));
    }
    Ok(raw)
}

/// The merged profile a build applies. Training checked that it exists; a
/// missing one is named all the same, so the compiler's own error says
/// what it looked for.
pub(super) fn merged_or_missing(dirs: &StageDirs) -> PathBuf {
    merged_profiles(&dirs.profile, MERGED_EXTENSION)
        .into_iter()
        .next()
        .unwrap_or_else(|| {
            dirs.profile
                .join(format!("merged-missing.{MERGED_EXTENSION}"))
        })
}

/// The checks of clang's instrumented profiles: `llvm-profdata` to merge
/// them, and the profile runtime Debian ships apart from clang
/// (`libclang-rt-N-dev`, named after the clang that is installed, or, before
/// clang is, the one apt would install); `clang` itself too for a
/// clang-only optimization.
fn profile_requirements(clang_only: bool) -> Vec<Requirement> {
    let runtime =
        llvm::clang_major_installed_or_candidate().map(|m| format!("libclang-rt-{m}-dev"));
    let clang = clang_only.then(|| Requirement::tool("clang", "clang"));
    let profile = [
        llvm::llvm_profdata_requirement(),
        Requirement {
            need: format!(
                "clang's profile runtime ({})",
                runtime.as_deref().unwrap_or("libclang-rt-N-dev")
            ),
            present: runtime.as_deref().is_some_and(tools::package_installed),
            packages: runtime.clone().into_iter().collect(),
            note: runtime
                .is_none()
                .then(|| "install clang first: the package is named after its version".to_owned()),
            optional: false,
        },
    ];
    clang.into_iter().chain(profile).collect()
}

/// [`profile_requirements`] where a variant compiles with clang (or for
/// `doctor`, always).
pub fn profile_requirements_for(
    variant: Option<&VariantSetup>,
    clang_only: bool,
) -> Vec<Requirement> {
    if variant.is_some_and(|v| v.compiler != Compiler::Clang) {
        return Vec::new();
    }
    profile_requirements(clang_only)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontend_instrumentation_uses_the_instr_flags() {
        let dirs = StageDirs {
            build: "/b".into(),
            profile: "/p".into(),
        };
        let mut flags = Flags::default();
        CLANG_FRONTEND_PGO.instrument(&mut flags, &dirs);
        CLANG_FRONTEND_PGO.use_profile(&mut flags, &dirs);
        assert!(flags
            .cflags
            .contains(&"-fprofile-instr-generate".to_owned()));
        assert!(flags
            .cflags
            .iter()
            .any(|f| f.starts_with("-fprofile-instr-use=/p/merged-")));
        assert!(!flags.cflags.iter().any(|f| f == "-fprofile-generate"));
    }

    #[test]
    fn training_env_names_one_file_per_process_and_binary() {
        let dirs = StageDirs {
            build: "/b".into(),
            profile: "/p".into(),
        };
        let env = CLANG_IR_PGO.training_env(&dirs);
        assert_eq!(
            env,
            vec![(
                "LLVM_PROFILE_FILE".to_owned(),
                "/p/raw/%p-%m.profraw".to_owned()
            )]
        );
    }
}
