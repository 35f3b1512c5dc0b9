//! Compilers and feedback-directed optimizations: which exist, what flags
//! each adds at which build stage, and where profiles live.

mod gcc_pgo;
pub mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use gcc_pgo::{find_gcda_files, GCDA_EXTENSION};

/// The C/C++ compiler family an experiment builds with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compiler {
    Gcc,
    Clang,
}

impl Compiler {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "gcc" => Some(Compiler::Gcc),
            "clang" => Some(Compiler::Clang),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang",
        }
    }

    /// The C compiler command (`CC`).
    pub fn cc(self) -> &'static str {
        self.name()
    }

    /// The C++ compiler command (`CXX`).
    pub fn cxx(self) -> &'static str {
        match self {
            Compiler::Gcc => "g++",
            Compiler::Clang => "clang++",
        }
    }

    /// The Debian package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc g++",
            Compiler::Clang => "clang",
        }
    }

    /// First line of `CC --version`, or `None` when the compiler is missing.
    pub fn version(self) -> Option<String> {
        let out =
            crate::process::capture(self.cc(), &["--version"], Duration::from_secs(10)).ok()?;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimization {
    /// Instrumented profile-guided optimization: build instrumented, train, rebuild.
    Pgo,
    /// Link-time optimization.
    Lto,
    /// `-march=native -mtune=native`.
    March,
    /// `-O3` instead of the project's level.
    O3,
}

impl Optimization {
    /// Parse a word; the error is a hint naming what works.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "pgo" => Ok(Optimization::Pgo),
            "lto" => Ok(Optimization::Lto),
            "march" => Ok(Optimization::March),
            "o3" | "O3" => Ok(Optimization::O3),
            "bolt" | "autofdo" | "cspgo" | "csirpgo" => Err(format!(
                "`{name}` is planned but not built yet; available now: pgo, lto, march, o3"
            )),
            _ => Err("available optimizations: pgo, lto, march, o3".to_owned()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Optimization::Pgo => "pgo",
            Optimization::Lto => "lto",
            Optimization::March => "march",
            Optimization::O3 => "o3",
        }
    }

    /// Whether this optimization needs a training profile before its final build.
    pub fn needs_profile(self) -> bool {
        self == Optimization::Pgo
    }

    /// Whether `compiler` can apply it here; the error is a hint.
    pub fn supported_by(self, compiler: Compiler) -> Result<(), String> {
        match (self, compiler) {
            (Optimization::Pgo, Compiler::Clang) => Err(
                "clang PGO (llvm-profdata) is not built yet; use compiler = \"gcc\" for pgo"
                    .to_owned(),
            ),
            _ => Ok(()),
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

/// The flags `optimize` adds for `stage`. The instrumented stage applies only
/// the instrumentation (LTO and friends would slow training for nothing);
/// the final stage applies the whole stack in order.
pub fn optimization_flags(
    compiler: Compiler,
    optimize: &[Optimization],
    stage: Stage,
    dirs: &StageDirs,
) -> Flags {
    let mut flags = Flags::default();
    for o in optimize {
        match (o, stage) {
            (Optimization::Pgo, Stage::Instrumented) => gcc_pgo::instrument_flags(&mut flags, dirs),
            (Optimization::Pgo, Stage::Final) => gcc_pgo::use_flags(&mut flags, dirs),
            (_, Stage::Instrumented) => {}
            (Optimization::Lto, Stage::Final) => match compiler {
                Compiler::Gcc => flags.both(&["-flto=auto"]),
                Compiler::Clang => flags.both(&["-flto=thin"]),
            },
            (Optimization::March, Stage::Final) => flags.both(&["-march=native", "-mtune=native"]),
            (Optimization::O3, Stage::Final) => flags.cflags.push("-O3".to_owned()),
        }
    }
    flags
}

/// Check that a training run left a profile; the error tells what to do.
pub fn check_profile(profile_dir: &Path) -> Result<usize, String> {
    let found = find_gcda_files(profile_dir).len();
    if found == 0 {
        return Err(format!(
            "no profile (*.{GCDA_EXTENSION}) was written to {}.\nhint: did the training workloads run the instrumented binaries ({{bin.NAME}}) and exit normally? A process killed by a signal writes no profile.",
            profile_dir.display()
        ));
    }
    Ok(found)
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
        assert!(Optimization::from_name("bolt")
            .unwrap_err()
            .contains("not built yet"));
        assert!(Optimization::from_name("fast")
            .unwrap_err()
            .contains("pgo, lto"));
        assert!(Optimization::Pgo.supported_by(Compiler::Clang).is_err());
    }
}
