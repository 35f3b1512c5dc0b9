//! Compilers and feedback-directed optimizations: which exist, what flags
//! each adds at which build stage, and where profiles live.

pub mod bolt;
mod clang_pgo;
mod gcc_pgo;
mod go_pgo;
pub mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use bolt::Bolt;
pub use clang_pgo::{clang_major, find_llvm_profdata, ClangPgo, CLANG_FRONTEND_PGO, CLANG_IR_PGO};
pub use gcc_pgo::GccPgo;
pub use go_pgo::{profile_path as go_profile_path, GoPgo};

/// The toolchain an experiment builds with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compiler {
    Gcc,
    Clang,
    /// The Go toolchain (`go build`); cgo code compiles with gcc.
    Go,
}

impl Compiler {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "gcc" => Some(Compiler::Gcc),
            "clang" => Some(Compiler::Clang),
            "go" => Some(Compiler::Go),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang",
            Compiler::Go => "go",
        }
    }

    /// The C compiler command (`CC`; for Go, what cgo uses).
    pub fn cc(self) -> &'static str {
        match self {
            Compiler::Gcc | Compiler::Go => "gcc",
            Compiler::Clang => "clang",
        }
    }

    /// The C++ compiler command (`CXX`).
    pub fn cxx(self) -> &'static str {
        match self {
            Compiler::Gcc | Compiler::Go => "g++",
            Compiler::Clang => "clang++",
        }
    }

    /// The Debian package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc g++",
            Compiler::Clang => "clang",
            Compiler::Go => "golang-go (PGO needs Go 1.21 or newer)",
        }
    }

    /// First line of `CC --version` (`go version` for Go), or `None` when
    /// the compiler is missing.
    pub fn version(self) -> Option<String> {
        let (program, arg) = match self {
            Compiler::Go => ("go", "version"),
            _ => (self.cc(), "--version"),
        };
        let out = crate::process::capture(program, &[arg], Duration::from_secs(10)).ok()?;
        out.success().then(|| {
            out.stdout
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
    }
}

/// One word of a variant's `optimize` list.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Optimization {
    /// Instrumented profile-guided optimization: build instrumented, train, rebuild.
    Pgo,
    /// clang's front-end (source-level) instrumentation instead of IR-level.
    #[serde(rename = "pgo-frontend")]
    PgoFrontend,
    /// Link-time optimization.
    Lto,
    /// `-march=native -mtune=native`.
    March,
    /// `-O3` instead of the project's level.
    O3,
    /// Post-link layout optimization with `llvm-bolt`, from an instrumented run.
    Bolt,
}

impl Optimization {
    /// Parse a word; the error is a hint naming what works.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "pgo" => Ok(Optimization::Pgo),
            "pgo-frontend" => Ok(Optimization::PgoFrontend),
            "lto" => Ok(Optimization::Lto),
            "march" => Ok(Optimization::March),
            "o3" | "O3" => Ok(Optimization::O3),
            "bolt" => Ok(Optimization::Bolt),
            "autofdo" => Err("`autofdo` is planned but not built yet (it also needs hardware counters, ideally LBR: see `afterburner doctor`); available now: pgo, pgo-frontend (clang), lto, march, o3, bolt".to_owned()),
            "cspgo" | "csirpgo" => Err(format!(
                "`{name}` is planned but not built yet; available now: pgo, pgo-frontend (clang), lto, march, o3, bolt"
            )),
            _ => Err("available optimizations: pgo, pgo-frontend (clang), lto, march, o3, bolt".to_owned()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Optimization::Pgo => "pgo",
            Optimization::PgoFrontend => "pgo-frontend",
            Optimization::Lto => "lto",
            Optimization::March => "march",
            Optimization::O3 => "o3",
            Optimization::Bolt => "bolt",
        }
    }

    /// Whether this optimization needs a training profile before its final build.
    pub fn needs_profile(self) -> bool {
        matches!(
            self,
            Optimization::Pgo | Optimization::PgoFrontend | Optimization::Bolt
        )
    }

    /// Whether `compiler` can apply it; the error is a hint.
    pub fn supported_by(self, compiler: Compiler) -> Result<(), String> {
        match (self, compiler) {
            (Optimization::PgoFrontend, Compiler::Clang) | (Optimization::Pgo, _) => Ok(()),
            (Optimization::PgoFrontend, _) => Err(
                "`pgo-frontend` is clang's source-level instrumentation (-fprofile-instr-generate); use compiler = \"clang\", or `pgo` with this compiler".to_owned(),
            ),
            (_, Compiler::Gcc | Compiler::Clang) => Ok(()),
            (Optimization::Bolt, Compiler::Go) => Err("BOLT on Go binaries is not supported here; use optimize = [\"pgo\"]".to_owned()),
            (_, Compiler::Go) => Err(format!(
                "`{}` applies to C and C++ compilers; with compiler = \"go\" use optimize = [\"pgo\"]",
                self.name()
            )),
        }
    }
}

/// Which build of a variant is being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The instrumented build that training runs write profiles from.
    Instrumented,
    /// The build that is benchmarked.
    Final,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Instrumented => "instrumented",
            Stage::Final => "final",
        }
    }
}

/// Compile and link flags an optimization stack adds, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Flags {
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    /// For the Go toolchain (`GOFLAGS`).
    pub goflags: Vec<String>,
}

impl Flags {
    fn both(&mut self, flags: &[&str]) {
        self.cflags.extend(flags.iter().map(|f| (*f).to_owned()));
        self.ldflags.extend(flags.iter().map(|f| (*f).to_owned()));
    }
}

/// Where one variant's build and profile live.
#[derive(Debug, Clone)]
pub struct StageDirs {
    /// The directory the build command runs in.
    pub build: PathBuf,
    /// Where training runs write and the final build reads the profile.
    pub profile: PathBuf,
}

/// The flags `optimize` adds for `stage`. For compiler PGO the instrumented
/// stage applies only the instrumentation (LTO and friends would slow
/// training for nothing); BOLT instruments the finished binary, so there the
/// instrumented stage is built exactly like the final one. The final stage
/// applies the whole stack in order.
pub fn optimization_flags(
    compiler: Compiler,
    optimize: &[Optimization],
    stage: Stage,
    dirs: &StageDirs,
) -> Flags {
    let mut flags = Flags::default();
    let whole_stack = stage == Stage::Final || optimize.contains(&Optimization::Bolt);
    for o in optimize {
        match (o, stage) {
            (Optimization::Pgo, Stage::Instrumented) => {
                pgo_for(compiler).instrument(&mut flags, dirs);
            }
            (Optimization::Pgo, Stage::Final) => pgo_for(compiler).use_profile(&mut flags, dirs),
            (Optimization::PgoFrontend, Stage::Instrumented) => {
                CLANG_FRONTEND_PGO.instrument(&mut flags, dirs);
            }
            (Optimization::PgoFrontend, Stage::Final) => {
                CLANG_FRONTEND_PGO.use_profile(&mut flags, dirs);
            }
            // BOLT rewrites the linked binary; it needs the relocations kept.
            (Optimization::Bolt, _) => Bolt.instrument(&mut flags, dirs),
            (_, Stage::Instrumented) if !whole_stack => {}
            (Optimization::Lto, _) => match compiler {
                Compiler::Gcc | Compiler::Go => flags.both(&["-flto=auto"]),
                Compiler::Clang => flags.both(&["-flto=thin"]),
            },
            (Optimization::March, _) => flags.both(&["-march=native", "-mtune=native"]),
            (Optimization::O3, _) => flags.cflags.push("-O3".to_owned()),
        }
    }
    flags
}

/// An instrumented profile-guided optimizer: instrument → collect (training
/// runs) → merge → use. One implementation per compiler.
pub trait Pgo {
    /// Add the instrumented build's flags.
    fn instrument(&self, flags: &mut Flags, dirs: &StageDirs);
    /// Environment for training runs of the instrumented binaries.
    fn training_env(&self, dirs: &StageDirs) -> Vec<(String, String)>;
    /// After training: turn what the runs wrote into what the final build
    /// reads; returns those files. Fails, saying why, when training left none.
    fn merge(&self, dirs: &StageDirs) -> anyhow::Result<Vec<PathBuf>>;
    /// The merged profile's files, for the build key; fails when absent.
    fn profile_files(&self, profile_dir: &Path) -> anyhow::Result<Vec<PathBuf>>;
    /// Add the final build's flags.
    fn use_profile(&self, flags: &mut Flags, dirs: &StageDirs);
    /// Rewrite the linked binaries of `stage` in place (BOLT); most
    /// optimizers work at compile time and do nothing here.
    fn post_link(
        &self,
        _stage: Stage,
        _binaries: &[PathBuf],
        _dirs: &StageDirs,
    ) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The profile-guided optimizer of a variant, if it has one: BOLT, or the
/// compiler's PGO.
pub fn profiler(optimize: &[Optimization], compiler: Compiler) -> Option<&'static dyn Pgo> {
    if optimize.contains(&Optimization::Bolt) {
        Some(&Bolt)
    } else if optimize.contains(&Optimization::Pgo) {
        Some(pgo_for(compiler))
    } else if optimize.contains(&Optimization::PgoFrontend) {
        Some(&CLANG_FRONTEND_PGO)
    } else {
        None
    }
}

/// The PGO implementation of a compiler.
pub fn pgo_for(compiler: Compiler) -> &'static dyn Pgo {
    match compiler {
        Compiler::Gcc => &GccPgo,
        Compiler::Clang => &CLANG_IR_PGO,
        Compiler::Go => &GoPgo,
    }
}

/// The error when training left no profile, with what to check.
fn no_profile_error(dir: &Path, extension: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "no profile (*.{extension}) was written to {}\nhint: did the training workloads run the instrumented binaries ({{bin.NAME}}) and exit normally? A process killed by a signal writes no profile.",
        dir.display()
    )
}

/// Merged profiles are named `merged-…` (by content hash where one file
/// serves the whole build), so build keys and people notice a changed profile.
const MERGED_PREFIX: &str = "merged-";

/// The merged profiles (`merged-*.<extension>`) under `dir`.
fn merged_profiles(dir: &Path, extension: &str) -> Vec<PathBuf> {
    find_files(dir, extension)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(MERGED_PREFIX))
        })
        .collect()
}

/// The merged profiles under `dir`, or the error saying training left none.
fn require_merged(dir: &Path, extension: &str) -> anyhow::Result<Vec<PathBuf>> {
    let found = merged_profiles(dir, extension);
    if found.is_empty() {
        return Err(no_profile_error(dir, extension));
    }
    Ok(found)
}

/// Replace earlier merged profiles in `dir` with `staging`, renamed to
/// `merged-<hash>.<extension>` after its content.
fn store_merged(dir: &Path, staging: &Path, extension: &str) -> anyhow::Result<PathBuf> {
    for old in merged_profiles(dir, extension) {
        fs_err::remove_file(old)?;
    }
    let hash = crate::source::sha256_file(staging)?;
    let merged = dir.join(format!("{MERGED_PREFIX}{}.{extension}", &hash[..16]));
    fs_err::rename(staging, &merged)?;
    Ok(merged)
}

/// All files under `dir` with `extension`, sorted.
pub fn find_files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> StageDirs {
        StageDirs {
            build: PathBuf::from("/w/variants/pgo/build"),
            profile: PathBuf::from("/w/variants/pgo/profile"),
        }
    }

    #[test]
    fn instrumented_stage_only_instruments() {
        let f = optimization_flags(
            Compiler::Gcc,
            &[Optimization::Pgo, Optimization::Lto],
            Stage::Instrumented,
            &dirs(),
        );
        assert!(f.cflags.iter().any(|c| c == "-fprofile-generate"));
        assert!(!f.cflags.iter().any(|c| c.starts_with("-flto")));
        assert!(f.ldflags.iter().any(|c| c == "-fprofile-generate"));
    }

    #[test]
    fn final_stage_stacks_in_order() {
        let f = optimization_flags(
            Compiler::Gcc,
            &[Optimization::Pgo, Optimization::Lto],
            Stage::Final,
            &dirs(),
        );
        let use_at = f.cflags.iter().position(|c| c == "-fprofile-use").unwrap();
        let lto_at = f.cflags.iter().position(|c| c == "-flto=auto").unwrap();
        assert!(use_at < lto_at);
        assert!(f
            .cflags
            .contains(&"-fprofile-dir=/w/variants/pgo/profile".to_owned()));
        assert!(f.ldflags.contains(&"-flto=auto".to_owned()));
    }

    #[test]
    fn unknown_words_get_hints() {
        assert!(Optimization::from_name("autofdo")
            .unwrap_err()
            .contains("not built yet"));
        assert!(Optimization::from_name("fast")
            .unwrap_err()
            .contains("pgo, pgo-frontend (clang), lto"));
    }
}
