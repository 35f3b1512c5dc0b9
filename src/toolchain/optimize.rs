//! The words of a variant's `optimize` list, each one implementation of
//! [`Optimize`]: its word and one-line description (from which `doctor`,
//! `--help` and the JSON Schema list it), the compilers it works with, the
//! flags each build gets, its training rounds ([`Round`], which carry the
//! rest: the brought files they read, how their profile is matched), and
//! the tools it needs (from which the install hints and `doctor`'s checks
//! come).
//!
//! To add one: a flag-only word is `toolchain/flags/<word>.rs`, a
//! profile-based technique a folder `toolchain/<word>/` (its word's struct
//! and its rounds); either has a unit struct named for it (`pub struct
//! Pgo;`) implementing [`Optimize`], and `module::Struct` goes into the
//! list in `optimizations!` (`toolchain/mod.rs`). Nothing else names it, unless another part needs
//! to ask for it by name (a variant option that belongs to it, such as
//! `bolt_profile`): then give it a constant on [`Optimization`].

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use anyhow::Result;

pub use super::requirement::Requirement;

use super::formats::brought::Format;
use super::recorded::Switch;
use super::round::Round;
use super::{BoltProfile, Compiler, Flags, GoPgoSource, RoundChoices, ALL};
use crate::env::Environment;

/// One optimization: a word of `optimize`, and what it does to a variant's
/// builds. Only the word, its description and the compilers it supports
/// are required; an optimization that only adds flags leaves the rest.
pub trait Optimize: Sync {
    /// The word in `optimize = [...]`, also its name in records.
    fn word(&self) -> &'static str;
    /// Other spellings the experiment file may use.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One line: what it does (shown by `doctor`, `--help`, the schema).
    fn describe(&self) -> &'static str;
    /// What limits it, after its word in the list of words (`clang`).
    fn qualifier(&self) -> Option<&'static str> {
        None
    }
    /// Whether `compiler` can apply it; the error is a hint.
    fn supports(&self, compiler: Compiler) -> Result<(), String>;
    /// Whether it makes the compiler's own profile (a variant has at most
    /// one: they would fight over `-fprofile-use`).
    fn is_compiler_profile(&self) -> bool {
        false
    }
    /// Whether it needs a training profile before the final build.
    fn needs_profile(&self) -> bool {
        false
    }
    /// Its training rounds with `compiler`, in order.
    fn rounds(&self, _compiler: Compiler, _sources: RoundChoices) -> Vec<&'static dyn Round> {
        Vec::new()
    }
    /// Whether its rounds profile the linked binary, and so come after
    /// every compile-time round (BOLT rewrites the finished binary).
    fn rounds_after_link(&self) -> bool {
        false
    }
    /// Flags of every build, instrumented ones too: those that shape the
    /// code a profile is matched against (gcc refuses a -O2 profile in a
    /// -O3 build).
    fn every_stage_flags(&self, _compiler: Compiler, _flags: &mut Flags) {}
    /// Flags of the builds of the finished code (the final build, and a
    /// round that instruments it) but not of a compiler instrumentation
    /// round, which they would only slow (LTO).
    fn finished_code_flags(&self, _compiler: Compiler, _flags: &mut Flags) {}
    /// What the flags it `added` to a build leave in the compiler's record
    /// of each object's command line, checked after every build before it
    /// is measured ([`super::recorded`]): by default each compile flag as
    /// the compilers record it ([`Switch::from_flags`]).
    fn recorded(&self, _compiler: Compiler, added: &Flags) -> Vec<Switch> {
        Switch::from_flags(added)
    }
    /// What it needs on this machine: for `doctor`, every mode of it
    /// (`variant` is `None`); for a run, what this variant's builds and
    /// training use. Both `doctor --fix` and a run install what is
    /// missing from this one list (see `doctor::requirements`).
    fn requirements(
        &self,
        _env: &Environment,
        _variant: Option<&VariantSetup>,
    ) -> Vec<Requirement> {
        Vec::new()
    }
    /// Check that this machine can apply it to a variant, once what
    /// [`Optimize::requirements`] lists is installed (sampling refused
    /// where the CPU cannot sample).
    fn check(&self, _variant: &VariantSetup) -> Result<()> {
        Ok(())
    }
}

/// What of a variant an optimization's checks look at.
#[derive(Debug, Clone, Copy)]
pub struct VariantSetup<'a> {
    pub compiler: Compiler,
    pub bolt_profile: BoltProfile,
    /// Where a Go variant's PGO profile comes from.
    pub go_pgo: GoPgoSource,
    /// The perf event of sampled training runs, when the variant names
    /// one, and AutoFDO's call chains.
    pub sampling: crate::toolchain::sampling::Asked<'a>,
}

/// One word of a variant's `optimize` list: a handle on its
/// implementation, compared, printed and recorded by its word.
#[derive(Clone, Copy)]
pub struct Optimization(pub(super) &'static dyn Optimize);

impl Optimization {
    /// Parse a word; the error is a hint naming what works.
    pub fn from_name(name: &str) -> Result<Self, String> {
        ALL.iter()
            .find(|o| o.word() == name || o.aliases().contains(&name))
            .copied()
            .ok_or_else(|| format!("available optimizations: {}", available()))
    }

    /// Whether training runs instrumented C or C++ binaries whose counters
    /// the dump shim can have written while they run (`train_stop =
    /// "dump"`).
    pub fn dumps_counters(self, compiler: Compiler, sources: RoundChoices) -> bool {
        self.rounds(compiler, sources)
            .iter()
            .any(|r| r.dumps_counters())
    }

    /// Whether its training samples with perf (`sample_event` applies).
    pub fn samples(self, compiler: Compiler, sources: RoundChoices) -> bool {
        self.rounds(compiler, sources).iter().any(|r| r.samples())
    }

    /// The profile sources under which a brought file of `kind` stands in
    /// for this optimization's one training round with `compiler` (an
    /// `.fdata` is what instrumented BOLT writes, a perf recording what
    /// sampled BOLT converts): `chosen` where the choice does not change
    /// the round. `Err` says what it reads instead, or that it takes none.
    pub fn brought_sources(
        self,
        compiler: Compiler,
        format: Format,
        chosen: RoundChoices,
    ) -> Result<RoundChoices, String> {
        let single = |sources: RoundChoices| match self.rounds(compiler, sources).as_slice() {
            [round] => Some(*round),
            _ => None,
        };
        let mut reads: Vec<&str> = Vec::new();
        for candidate in RoundChoices::CHOICES {
            let Some(round) = single(candidate) else {
                continue;
            };
            let accepts = round.accepts();
            if accepts.formats.contains(&format) {
                // A choice the round does not depend on stays the variant's.
                let same =
                    |other: RoundChoices| single(other).is_some_and(|r| r.name() == round.name());
                let any_bolt = BoltProfile::EXPLICIT
                    .iter()
                    .all(|&bolt| same(RoundChoices { bolt, ..candidate }));
                let any_go = GoPgoSource::ALL
                    .iter()
                    .all(|&go| same(RoundChoices { go, ..candidate }));
                return Ok(RoundChoices {
                    bolt: if any_bolt {
                        chosen.bolt
                    } else {
                        candidate.bolt
                    },
                    go: if any_go { chosen.go } else { candidate.go },
                });
            }
            if !accepts.said.is_empty() && !reads.contains(&accepts.said) {
                reads.push(accepts.said);
            }
        }
        if reads.is_empty() {
            return Err(format!(
                "`{}` with {} takes no brought profile",
                self.word(),
                compiler.name()
            ));
        }
        Err(format!(
            "`{}` with {} reads {}",
            self.word(),
            compiler.name(),
            reads.join(" or ")
        ))
    }
}

crate::named_handle!(Optimization, Optimize, word, Optimization::from_name);

impl fmt::Display for Optimization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl schemars::JsonSchema for Optimization {
    fn schema_name() -> Cow<'static, str> {
        "Optimization".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let words: Vec<serde_json::Value> = ALL
            .iter()
            .map(|o| serde_json::json!({"description": o.describe(), "type": "string", "const": o.word()}))
            .collect();
        schemars::json_schema!({
            "description": "One word of a variant's `optimize` list.",
            "oneOf": words,
        })
    }
}

/// The words `optimize` takes, with what limits each, for hints.
pub fn available() -> String {
    ALL.iter()
        .map(|o| match o.qualifier() {
            Some(q) => format!("{} ({q})", o.word()),
            None => o.word().to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table of words and what each does, for `--help` and the docs.
pub fn table() -> String {
    let width = ALL.iter().map(|o| o.word().len()).max().unwrap_or(0);
    let mut out = String::new();
    for o in ALL {
        let _ = writeln!(out, "  {:width$}  {}", o.word(), o.describe());
    }
    out
}

/// The refusal of a C-compiler optimization in a Go variant or a cargo
/// target's.
pub(super) fn c_and_cpp_only(word: &str, compiler: Compiler) -> Result<(), String> {
    match compiler {
        Compiler::Gcc | Compiler::Clang => Ok(()),
        Compiler::Go => Err(format!(
            "`{word}` applies to C and C++ compilers; with compiler = \"go\" use optimize = [\"pgo\"]"
        )),
        Compiler::Rustc => Err(format!(
            "rustc has no `{word}`; a cargo target takes {}",
            rust_words()
        )),
    }
}

/// The words a cargo target takes, for refusals: those whose `supports`
/// takes rustc. A refusal asks while the list is being made, and is told
/// nothing (it is not listed, whatever it says).
pub(super) fn rust_words() -> String {
    thread_local! {
        static LISTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if LISTING.with(std::cell::Cell::get) {
        return String::new();
    }
    LISTING.with(|l| l.set(true));
    let words = ALL
        .iter()
        .filter(|o| o.supports(Compiler::Rustc).is_ok())
        .map(|o| format!("`{}`", o.word()))
        .collect::<Vec<_>>()
        .join(", ");
    LISTING.with(|l| l.set(false));
    words
}

/// The refusal of a clang-only optimization with another compiler.
pub(super) fn clang_only(word: &str, what: &str, compiler: Compiler) -> Result<(), String> {
    match compiler {
        Compiler::Clang => Ok(()),
        Compiler::Rustc => Err(format!(
            "`{word}` is {what}, which stable rustc does not offer; a cargo target takes {}",
            rust_words()
        )),
        _ => Err(format!(
            "`{word}` is {what}; use compiler = \"clang\", or `pgo` with this compiler"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_and_alias_names_one_optimization() {
        let mut seen = std::collections::BTreeSet::new();
        for o in ALL {
            for word in std::iter::once(o.word()).chain(o.aliases().iter().copied()) {
                assert!(seen.insert(word), "`{word}` names two optimizations");
                assert_eq!(Optimization::from_name(word), Ok(*o));
            }
            assert!(!o.describe().contains('\n'), "{}: one line", o.word());
        }
    }

    #[test]
    fn records_hold_the_word_and_read_it_back() {
        let json = serde_json::to_string(&[Optimization::PGO, Optimization::BOLT]).unwrap();
        assert_eq!(json, r#"["pgo","bolt"]"#);
        let back: Vec<Optimization> = serde_json::from_str(r#"["cspgo","o3"]"#).unwrap();
        assert_eq!(back[1], Optimization::O3);
        assert_eq!(back[0].word(), "cspgo");
        let err = serde_json::from_str::<Vec<Optimization>>(r#"["fast"]"#).unwrap_err();
        assert!(err.to_string().contains("available optimizations"), "{err}");
    }

    #[test]
    fn profile_words_need_a_profile_and_flag_words_do_not() {
        for o in ALL {
            let rounds = if o.supports(Compiler::Clang).is_ok() {
                o.rounds(Compiler::Clang, RoundChoices::INSTRUMENTED)
            } else {
                o.rounds(Compiler::Gcc, RoundChoices::INSTRUMENTED)
            };
            assert_eq!(o.needs_profile(), !rounds.is_empty(), "{}", o.word());
        }
    }

    #[test]
    fn a_refusal_for_rustc_names_the_words_a_cargo_target_takes() {
        let noplt = Optimization::from_name("noplt").unwrap();
        let said = noplt.supports(Compiler::Rustc).unwrap_err();
        assert_eq!(
            said,
            "rustc has no `noplt`; a cargo target takes `pgo`, `bolt`, `lto`, `march`, `o3`"
        );
    }
}
