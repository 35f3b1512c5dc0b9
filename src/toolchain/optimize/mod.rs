//! The words of a variant's `optimize` list, one file each.
//!
//! Each optimization is one implementation of [`Optimize`] in a file of its
//! own: its word and one-line description (from which `doctor`, `--help`
//! and the JSON Schema list it), the compilers it works with, the flags each
//! build gets, its training rounds, and the tools it needs (from which the
//! install hints and `doctor`'s checks come).
//!
//! To add one: write `toolchain/optimize/<word>.rs` with `pub struct Word;`
//! implementing [`Optimize`], and add its module's name to the list in
//! `optimizations!` below. Nothing else names it, unless another part needs
//! to ask for it by name (a variant option that belongs to it, such as
//! `bolt_profile`): then give it a constant on [`Optimization`].

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use anyhow::Result;

use super::tools;
use super::{BoltProfile, Compiler, Flags, GoPgoSource, Pgo, ProfileSources};
use crate::env::Environment;

/// Declares each optimization's module and lists them, in the order
/// `doctor`, `--help` and the schema show them. The one list of them.
macro_rules! optimizations {
    ($($word:ident),* $(,)?) => {
        $(mod $word;)*

        /// Every optimization a variant can name.
        pub const ALL: &[Optimization] = &[$(Optimization(&$word::Word)),*];
    };
}

optimizations! {
    pgo,
    pgo_frontend,
    cspgo,
    autofdo,
    bolt,
    lto,
    march,
    o3,
    nosi,
    noplt,
}

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
    fn rounds(&self, _compiler: Compiler, _sources: ProfileSources) -> Vec<&'static dyn Pgo> {
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
    /// The perf event of sampled training runs, when the variant names one.
    pub sample_event: Option<&'a str>,
}

/// One requirement `doctor` checks, and whether this machine meets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// What is needed, e.g. "llvm-profdata".
    pub need: String,
    /// Whether this machine has it.
    pub present: bool,
    /// Debian packages that provide it, when apt can.
    pub packages: Vec<String>,
    /// What to do when apt cannot (or why it matters).
    pub note: Option<String>,
    /// Whether the optimization works without it (less well, or in one
    /// of its modes only): a missing optional requirement is said, not
    /// counted against readiness.
    pub optional: bool,
}

impl Requirement {
    /// A command, present when it is on the PATH.
    pub fn tool(command: &str, package: &str) -> Self {
        Requirement {
            need: command.to_owned(),
            present: tools::is_installed(command),
            packages: vec![package.to_owned()],
            note: None,
            optional: false,
        }
    }

    /// A fact about the machine that apt cannot change.
    pub fn fact(need: &str, present: bool, note: &str) -> Self {
        Requirement {
            need: need.to_owned(),
            present,
            packages: Vec::new(),
            note: Some(note.to_owned()),
            optional: false,
        }
    }

    /// The same, with `note` said when it is missing.
    #[must_use]
    pub fn note(mut self, note: &str) -> Self {
        self.note = Some(note.to_owned());
        self
    }

    /// The same, not required.
    #[must_use]
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
}

/// One word of a variant's `optimize` list: a handle on its
/// implementation, compared, printed and recorded by its word.
#[derive(Clone, Copy)]
pub struct Optimization(&'static dyn Optimize);

impl Optimization {
    pub const PGO: Optimization = Optimization(&pgo::Word);
    pub const BOLT: Optimization = Optimization(&bolt::Word);
    pub const AUTOFDO: Optimization = Optimization(&autofdo::Word);
    pub const MARCH: Optimization = Optimization(&march::Word);
    pub const LTO: Optimization = Optimization(&lto::Word);
    pub const O3: Optimization = Optimization(&o3::Word);

    /// Parse a word; the error is a hint naming what works.
    pub fn from_name(name: &str) -> Result<Self, String> {
        ALL.iter()
            .find(|o| o.word() == name || o.aliases().contains(&name))
            .copied()
            .ok_or_else(|| format!("available optimizations: {}", available()))
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

/// The refusal of a C-compiler optimization in a Go variant.
fn c_and_cpp_only(word: &str, compiler: Compiler) -> Result<(), String> {
    match compiler {
        Compiler::Gcc | Compiler::Clang => Ok(()),
        Compiler::Go => Err(format!(
            "`{word}` applies to C and C++ compilers; with compiler = \"go\" use optimize = [\"pgo\"]"
        )),
    }
}

/// The refusal of a clang-only optimization with another compiler.
fn clang_only(word: &str, what: &str, compiler: Compiler) -> Result<(), String> {
    match compiler {
        Compiler::Clang => Ok(()),
        _ => Err(format!(
            "`{word}` is {what}; use compiler = \"clang\", or `pgo` with this compiler"
        )),
    }
}

/// The checks of clang's instrumented profiles: `llvm-profdata` to merge
/// them, and the profile runtime Debian ships apart from clang
/// (`libclang-rt-N-dev`, named after the clang that is installed, or, before
/// clang is, the one apt would install); `clang` itself too for a
/// clang-only optimization.
fn clang_profile_requirements(clang_only: bool) -> Vec<Requirement> {
    let runtime =
        super::clang_major_installed_or_candidate().map(|m| format!("libclang-rt-{m}-dev"));
    let clang = clang_only.then(|| Requirement::tool("clang", "clang"));
    let profile = [
        llvm_profdata_requirement(),
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

/// `llvm-profdata` of the installed clang's release, which clang's
/// profiles are merged with.
pub fn llvm_profdata_requirement() -> Requirement {
    let package = super::llvm_package();
    Requirement {
        need: format!("llvm-profdata of clang's release ({package})"),
        present: super::find_llvm_profdata().is_ok(),
        packages: vec![package],
        note: None,
        optional: false,
    }
}

/// Go's PGO: a Go of 1.21 or newer (Debian 12's golang-go is 1.19, so
/// apt's default package is no remedy: the note says what is).
pub fn go_pgo_requirement() -> Requirement {
    Requirement::fact(
        "Go >= 1.21 (on the PATH, /usr/lib/go-1.2x/bin or /usr/local/go/bin)",
        super::go_find::find_pgo_go().is_some(),
        super::go_find::INSTALL_HINT,
    )
}

/// `clang_profile_requirements` where a variant compiles with clang (or
/// for `doctor`, always).
fn clang_profile_requirements_for(
    variant: Option<&VariantSetup>,
    clang_only: bool,
) -> Vec<Requirement> {
    if variant.is_some_and(|v| v.compiler != Compiler::Clang) {
        return Vec::new();
    }
    clang_profile_requirements(clang_only)
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
                o.rounds(Compiler::Clang, ProfileSources::INSTRUMENTED)
            } else {
                o.rounds(Compiler::Gcc, ProfileSources::INSTRUMENTED)
            };
            assert_eq!(o.needs_profile(), !rounds.is_empty(), "{}", o.word());
        }
    }
}
