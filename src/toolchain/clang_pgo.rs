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

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::{
    find_files, merged_profiles, no_profile_error, raw_dir, require_merged, Compiler, Flags, Pgo,
    StageDirs,
};

/// One of clang's instrumentations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `-fprofile-generate` / `-fprofile-use=`.
    Ir,
    /// `-fprofile-instr-generate` / `-fprofile-instr-use=`.
    Frontend,
    /// `-fcs-profile-generate` on top of an IR profile.
    ContextSensitive,
}

/// clang's instrumented PGO of one kind.
pub struct ClangPgo {
    pub kind: Kind,
}

/// IR-level instrumentation (`optimize = ["pgo"]` with clang).
pub static CLANG_IR_PGO: ClangPgo = ClangPgo { kind: Kind::Ir };
/// Front-end instrumentation (`optimize = ["pgo-frontend"]`).
pub static CLANG_FRONTEND_PGO: ClangPgo = ClangPgo {
    kind: Kind::Frontend,
};
/// The second round of `optimize = ["cspgo"]`.
pub static CLANG_CS_PGO: ClangPgo = ClangPgo {
    kind: Kind::ContextSensitive,
};

const RAW_EXTENSION: &str = "profraw";
const MERGED_EXTENSION: &str = "profdata";

impl Pgo for ClangPgo {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Ir => "clang-pgo",
            Kind::Frontend => "clang-pgo-frontend",
            Kind::ContextSensitive => "cspgo",
        }
    }

    fn instrument(&self, flags: &mut Flags, _dirs: &StageDirs) {
        let generate = match self.kind {
            Kind::Ir => "-fprofile-generate",
            Kind::Frontend => "-fprofile-instr-generate",
            Kind::ContextSensitive => "-fcs-profile-generate",
        };
        flags.cflags.push(generate.to_owned());
        flags.cflags.push("-fprofile-update=atomic".to_owned());
        flags.ldflags.push(generate.to_owned());
    }

    fn raw_extension(&self) -> &'static str {
        RAW_EXTENSION
    }

    fn instruments_final_code(&self) -> bool {
        self.kind == Kind::ContextSensitive
    }

    fn replaces_earlier(&self) -> bool {
        self.kind == Kind::ContextSensitive
    }

    fn training_env(&self, dirs: &StageDirs) -> Vec<(String, String)> {
        let pattern = raw_dir(dirs).join(format!("%p-%m.{RAW_EXTENSION}"));
        vec![(
            "LLVM_PROFILE_FILE".to_owned(),
            pattern.to_string_lossy().into_owned(),
        )]
    }

    fn merge(&self, dirs: &StageDirs, _binaries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let raw = find_files(&raw_dir(dirs), RAW_EXTENSION);
        if raw.is_empty() {
            return Err(no_profile_error(&raw_dir(dirs), RAW_EXTENSION));
        }
        let mut inputs = Vec::new();
        if self.kind == Kind::ContextSensitive {
            // The IR round's profile, beside this round's directory.
            let ir = dirs.profile.with_file_name(CLANG_IR_PGO.name());
            inputs.extend(require_merged(&ir, MERGED_EXTENSION)?);
        }
        inputs.extend(raw);
        Ok(vec![super::merge::profdata_merge(
            dirs,
            &[],
            &inputs,
            MERGED_EXTENSION,
        )?])
    }

    fn profile_files(&self, profile_dir: &Path) -> Result<Vec<PathBuf>> {
        require_merged(profile_dir, MERGED_EXTENSION)
    }

    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs) {
        // Training checked that the profile exists; name a missing one so
        // clang's own error says what it looked for.
        let merged = merged_profiles(&dirs.profile, MERGED_EXTENSION)
            .into_iter()
            .next();
        let merged = merged.unwrap_or_else(|| {
            dirs.profile
                .join(format!("merged-missing.{MERGED_EXTENSION}"))
        });
        let option = if self.kind == Kind::Frontend {
            "-fprofile-instr-use"
        } else {
            "-fprofile-use"
        };
        flags.cflags.push(format!("{option}={}", merged.display()));
        flags.ldflags.push(format!("{option}={}", merged.display()));
    }
}

/// `llvm-profdata` of the installed clang's own LLVM release (raw profile
/// formats change between releases): `/usr/lib/llvm-N/bin/llvm-profdata`
/// or `llvm-profdata-N`; where clang's release is unknown (a clang of
/// one's own), the unversioned one.
pub fn find_llvm_profdata() -> Result<String> {
    let major = Compiler::Clang.version().and_then(|v| clang_major(&v));
    if let Some(m) = major {
        if let Some(path) = super::llvm::tool_of("llvm-profdata", m) {
            return Ok(path.to_string_lossy().into_owned());
        }
        let versioned = format!("llvm-profdata-{m}");
        if super::tools::is_installed(&versioned) {
            return Ok(versioned);
        }
    }
    if major.is_none() && super::tools::is_installed("llvm-profdata") {
        return Ok("llvm-profdata".to_owned());
    }
    let package = llvm_package();
    bail!("llvm-profdata{} is missing, so clang's profiles cannot be merged\nhint: install it with `apt-get install -y {package}`", major.map(|m| format!(" {m} (clang {m}'s release)")).unwrap_or_default())
}

/// The package of the LLVM tools of clang's release (`llvm-N`), or of
/// apt's default (`llvm`) where clang's release is unknown.
pub fn llvm_package() -> String {
    clang_major_installed_or_candidate().map_or("llvm".to_owned(), |m| format!("llvm-{m}"))
}

/// The major version in `clang --version`'s first line.
pub fn clang_major(version_line: &str) -> Option<u32> {
    let at = version_line.find("version ")? + "version ".len();
    version_line[at..].split('.').next()?.trim().parse().ok()
}

/// The major version of the installed clang, or where clang is missing,
/// of the clang `apt-get install clang` would bring (`apt-cache policy`'s
/// candidate), so the profile runtime's package (`libclang-rt-N-dev`) goes
/// into the same apt-get call as clang itself.
pub fn clang_major_installed_or_candidate() -> Option<u32> {
    if let Some(line) = super::Compiler::Clang.version() {
        return clang_major(&line);
    }
    let out = crate::process::capture(
        "apt-cache",
        &["policy", "clang"],
        std::time::Duration::from_secs(30),
    )
    .ok()?;
    candidate_major(&out.stdout)
}

/// The major version of `Candidate: 1:14.0-55.7~deb12u1` in `apt-cache
/// policy` output.
fn candidate_major(policy: &str) -> Option<u32> {
    let candidate = policy
        .lines()
        .find_map(|l| l.trim().strip_prefix("Candidate:"))?
        .trim();
    let version = candidate.split_once(':').map_or(candidate, |(_, v)| v);
    version.split(['.', '-', '~']).next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_major_version_apt_would_install() {
        let policy =
            "clang:\n  Installed: (none)\n  Candidate: 1:14.0-55.7~deb12u1\n  Version table:\n";
        assert_eq!(candidate_major(policy), Some(14));
        assert_eq!(
            candidate_major("clang:\n  Candidate: 1:18.0-59~exp2\n"),
            Some(18)
        );
        assert_eq!(candidate_major("clang:\n  Candidate: (none)\n"), None);
    }

    #[test]
    fn parses_clang_major() {
        assert_eq!(clang_major("Debian clang version 14.0.6"), Some(14));
        assert_eq!(
            clang_major("clang version 18.1.3 (Fedora 18.1.3-1)"),
            Some(18)
        );
        assert_eq!(clang_major("gcc (Debian 12.2.0) 12.2.0"), None);
    }

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
