//! The check after every build stage that its binaries are what the
//! variant's name says: built by its compiler, with the switches its words
//! add (read back from the binaries, [`crate::toolchain::recorded`]), and,
//! before training, with the instrumentation its training needs. A build
//! that ignored afterburner's CC or CFLAGS stops here, before anything is
//! measured; a few objects without the flags (assembly, bundled code built
//! with its own) are a warning.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::experiment::{Experiment, Variant};
use crate::toolchain::recorded::{self, Verification};
use crate::toolchain::{expected_switches, march_switch, Compiler, Stage, VariantDirs};

/// Verify `stage` of `variant` from its `binaries` (and for a cargo
/// target, the rustc command lines `logged`): the record of what was
/// checked, or the error naming what the build ignored.
pub(super) fn stage(
    experiment: &Experiment,
    variant: &Variant,
    stage: Stage,
    dirs: &VariantDirs,
    binaries: &[PathBuf],
    log: &Path,
    logged: &[recorded::Unit],
) -> Result<Verification> {
    let compiler = variant.compiler;
    let (mut expected, runtimes) = expected_switches(
        compiler,
        &variant.optimize,
        variant.profile_sources(),
        stage,
        dirs,
    );
    if let Some(level) = &variant.march {
        expected.push(recorded::Expected {
            from: "march".to_owned(),
            switch: march_switch(level, compiler),
        });
    }
    let go = crate::toolchain::go::find_pgo_go().map_or_else(
        || "go".to_owned(),
        |g| g.path.to_string_lossy().into_owned(),
    );
    let seen = recorded::verify(compiler, &expected, &runtimes, binaries, &go, logged)?;
    let problems = problems(&seen);
    let what = format!("variant `{}` ({} build)", variant.name, stage.name());
    if problems.errors.is_empty() {
        for warning in &problems.warnings {
            crate::progress::warn(format_args!("{what}: {warning}"));
        }
        return Ok(seen);
    }
    bail!(
        "{what} is not what its name says:\n{}{}\nhint: {}; build log: {}",
        problems.errors.iter().fold(String::new(), |mut out, e| {
            let _ = writeln!(out, "  - {e}");
            out
        }),
        cause(&problems.ignored, compiler),
        if compiler == Compiler::Rustc {
            "afterburner runs cargo itself for a cargo target: unset CARGO_ENCODED_RUSTFLAGS, and see which crates' command lines lack the switch in the build log".to_owned()
        } else {
            remedy(&experiment.file)
        },
        log.display()
    );
}

/// What a verification found wrong, and which of afterburner's variables
/// the build seems to have ignored.
#[derive(Debug, Default)]
struct Problems {
    errors: Vec<String>,
    warnings: Vec<String>,
    /// `CC`, `CFLAGS`, `LDFLAGS`, in that order, each once.
    ignored: Vec<&'static str>,
}

impl Problems {
    fn ignored(&mut self, variable: &'static str) {
        if !self.ignored.contains(&variable) {
            self.ignored.push(variable);
        }
    }
}

/// The errors and warnings of a verification.
fn problems(seen: &Verification) -> Problems {
    let mut out = Problems::default();
    if seen.not_verified.is_some() {
        return out;
    }
    wrong_compiler(seen, &mut out);
    let units = seen.units_from.as_str();
    let flags = flags_variable(seen);
    if seen.units == 0 && !seen.switches.is_empty() {
        let said = seen
            .switches
            .iter()
            .map(|s| format!("{} ({})", s.switch, s.from))
            .collect::<Vec<_>>()
            .join(", ");
        out.errors.push(if flags == "RUSTFLAGS" {
            format!("cargo's log names no rustc command line of its crates, so none shows {said}")
        } else {
            format!(
                "no object in its binaries records how it was compiled, so none shows {said}: afterburner's CFLAGS carry {}, which would have recorded it",
                record_flag(seen)
            )
        });
        out.ignored(flags);
    }
    for s in seen.switches.iter().filter(|_| seen.units > 0) {
        let total = s.with + s.without;
        if s.with == 0 && s.without > 0 {
            out.errors.push(format!(
                "{} ({}): none of its {total} recorded {units} has it",
                s.switch, s.from
            ));
            out.ignored(flags);
        } else if s.without > 0 {
            out.warnings.push(format!(
                "{} of {total} recorded {units} lack {} ({}): code the project compiles with its own flags (assembly, bundled libraries)?",
                s.without, s.switch, s.from
            ));
        }
    }
    for i in &seen.instrumentation {
        if i.found == Some(0) {
            out.errors.push(format!(
                "its instrumented build has no instrumentation ({} symbols for `{}`): training would write no profile",
                i.symbols.iter().map(|p| format!("{p}*")).collect::<Vec<_>>().join(", "),
                i.from
            ));
            out.ignored("CFLAGS");
            out.ignored("LDFLAGS");
        }
    }
    out
}

/// The error when the binaries name another compiler than the variant's.
fn wrong_compiler(seen: &Verification, out: &mut Problems) {
    let (gcc, clang) = seen.comment_names();
    let units = |name: &str| seen.unit_compilers.get(name).copied().unwrap_or(0);
    let rustc = seen
        .compiler_seen
        .iter()
        .any(|c| c.starts_with("rustc version"));
    let wrong = match seen.compiler.as_str() {
        "clang" => !clang && !seen.compiler_seen.is_empty(),
        "gcc" => clang && units("gcc") == 0,
        "rustc" => !rustc && !seen.compiler_seen.is_empty(),
        _ => false,
    };
    if wrong {
        let by = if gcc && !clang { "gcc" } else { "clang" };
        out.errors.push(format!(
            "it names compiler = \"{}\" but its binaries were compiled by {by} (their .comment: {})",
            seen.compiler,
            seen.compiler_seen.join("; ")
        ));
        out.ignored("CC");
    }
}

/// The variable whose flags a build that lacks them ignored.
fn flags_variable(seen: &Verification) -> &'static str {
    if seen.compiler == Compiler::Rustc.name() {
        "RUSTFLAGS"
    } else {
        "CFLAGS"
    }
}

/// The switch afterburner adds so that the compiler records its command
/// line.
fn record_flag(seen: &Verification) -> &'static str {
    Compiler::from_name(&seen.compiler)
        .and_then(recording_flag)
        .unwrap_or("-frecord-gcc-switches")
}

/// The likely cause, naming the variables the build ignored.
fn cause(ignored: &[&str], compiler: Compiler) -> String {
    if compiler == Compiler::Rustc {
        return "likely cause: the project's build overrides what afterburner gives cargo (`CARGO_ENCODED_RUSTFLAGS` in the environment, or a build script that runs rustc itself); measured as it is, this build would be reported under a name it does not have".to_owned();
    }
    let names = ignored
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let example = match ignored.first() {
        Some(&"CC") => format!("`CC = gcc` replaces the CC={} afterburner passes", compiler.cc()),
        _ => "`CFLAGS = -O2 -Wall` replaces the CFLAGS afterburner passes, and `CFLAGS += -O2` after them undoes their level".to_owned(),
    };
    format!(
        "likely cause: the build sets {names} itself, ignoring afterburner's (in a Makefile, {example}); measured as it is, this build would be reported under a name it does not have"
    )
}

/// A hint for a failed build of a clang variant whose log shows gcc
/// refusing clang's options: the build ran gcc, whatever CC said.
pub(super) fn clang_flags_given_to_gcc(compiler: Compiler, log_tail: &str) -> Option<String> {
    (compiler == Compiler::Clang
        && log_tail.contains("gcc: error: unrecognized command-line option"))
    .then(|| {
        "\nhint: gcc was given clang's flags: the build sets `CC` itself (a Makefile's `CC = gcc` replaces the CC=clang afterburner passes); pass it through: `make CC=\"$CC\" CFLAGS=\"$CFLAGS\" LDFLAGS=\"$LDFLAGS\"`".to_owned()
    })
}

/// How to pass afterburner's variables through.
fn remedy(file: &Path) -> String {
    format!(
        "pass afterburner's variables through in the target's `build` ({}): `make CC=\"$CC\" CXX=\"$CXX\" CFLAGS=\"$CFLAGS\" CXXFLAGS=\"$CXXFLAGS\" LDFLAGS=\"$LDFLAGS\"`; for CMake, `cmake -DCMAKE_C_COMPILER=\"$CC\" -DCMAKE_C_FLAGS=\"$CFLAGS\" -DCMAKE_EXE_LINKER_FLAGS=\"$LDFLAGS\" …`; or have the Makefile take them from the environment (`CC ?= gcc`, `CFLAGS ?= -O2`)",
        file.display()
    )
}

/// The switch that makes `compiler` record each object's command line
/// (added to every C and C++ build's CFLAGS, and gcc's LDFLAGS), or `None`
/// for Go, whose build information is always there, and rustc, whose
/// command lines cargo's log holds.
pub(super) fn recording_flag(compiler: Compiler) -> Option<&'static str> {
    match compiler {
        Compiler::Gcc => Some("-frecord-gcc-switches"),
        Compiler::Clang => Some("-frecord-command-line"),
        Compiler::Go | Compiler::Rustc => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::recorded::SwitchSeen;

    fn seen(
        compiler: &str,
        comment: &[&str],
        units: usize,
        switches: &[(usize, usize)],
    ) -> Verification {
        Verification {
            compiler: compiler.to_owned(),
            compiler_seen: comment.iter().map(|c| (*c).to_owned()).collect(),
            units_from: "command lines".to_owned(),
            units,
            unit_compilers: [(compiler.to_owned(), units)].into_iter().collect(),
            switches: switches
                .iter()
                .map(|&(with, without)| SwitchSeen {
                    switch: "-O3".to_owned(),
                    from: "o3".to_owned(),
                    with,
                    without,
                    unrecorded: 0,
                })
                .collect(),
            ..Verification::default()
        }
    }

    const GCC: &str = "GCC: (Debian 12.2.0-14) 12.2.0";
    const CLANG: &str = "Debian clang version 14.0.6";

    #[test]
    fn a_clang_variant_built_by_gcc_names_cc() {
        let p = problems(&seen("clang", &[GCC], 0, &[]));
        assert_eq!(p.ignored, ["CC"]);
        assert!(p.errors[0].contains("compiled by gcc"), "{:?}", p.errors);
        // clang's binaries name gcc too (the crt objects): not an error.
        assert!(problems(&seen("clang", &[GCC, CLANG], 1, &[(1, 0)]))
            .errors
            .is_empty());
        // A gcc variant whose objects clang compiled.
        let mut by_clang = seen("gcc", &[GCC, CLANG], 1, &[]);
        by_clang.unit_compilers = [("clang".to_owned(), 1)].into_iter().collect();
        assert_eq!(problems(&by_clang).ignored, ["CC"]);
    }

    #[test]
    fn no_object_with_the_flags_is_an_error_and_a_few_a_warning() {
        let none = problems(&seen("gcc", &[GCC], 0, &[(0, 0)]));
        assert_eq!(none.ignored, ["CFLAGS"]);
        assert!(
            none.errors[0].contains("-frecord-gcc-switches"),
            "{:?}",
            none.errors
        );
        let lacking = problems(&seen("gcc", &[GCC], 3, &[(0, 3)]));
        assert!(
            lacking.errors[0].contains("none of its 3 recorded command lines"),
            "{:?}",
            lacking.errors
        );
        let some = problems(&seen("gcc", &[GCC], 40, &[(28, 12)]));
        assert!(some.errors.is_empty());
        assert!(
            some.warnings[0].starts_with("12 of 40 recorded command lines lack -O3"),
            "{:?}",
            some.warnings
        );
        // A baseline claims no switch: a build that records nothing is fine.
        assert!(problems(&seen("gcc", &[GCC], 0, &[])).errors.is_empty());
    }

    #[test]
    fn a_clang_build_that_gcc_refused_says_cc_was_ignored() {
        let log = "gcc -O2 -c main.c -frecord-command-line\ngcc: error: unrecognized command-line option ‘-frecord-command-line’";
        let hint = clang_flags_given_to_gcc(Compiler::Clang, log).unwrap();
        assert!(hint.contains("sets `CC` itself"), "{hint}");
        assert_eq!(clang_flags_given_to_gcc(Compiler::Gcc, log), None);
        assert_eq!(
            clang_flags_given_to_gcc(Compiler::Clang, "main.c:1: error: x"),
            None
        );
    }

    #[test]
    fn an_instrumented_build_without_its_runtime_is_refused() {
        let mut s = seen("gcc", &[GCC], 1, &[]);
        s.instrumentation.push(recorded::InstrumentationSeen {
            from: "pgo".to_owned(),
            symbols: vec!["__gcov_".to_owned()],
            found: Some(0),
            binaries: 1,
        });
        let p = problems(&s);
        assert!(p.errors[0].contains("__gcov_*"), "{:?}", p.errors);
        assert_eq!(p.ignored, ["CFLAGS", "LDFLAGS"]);
        // A stripped binary cannot say: no error.
        s.instrumentation[0].found = None;
        assert!(problems(&s).errors.is_empty());
    }
}
