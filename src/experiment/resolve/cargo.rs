//! Validation of a cargo target (`[target] cargo = { … }`): a Rust
//! package afterburner builds with cargo itself, so that every word
//! reaches rustc as RUSTFLAGS and cargo's release profile; and the refusal
//! of a build command that runs cargo, whose binaries would otherwise be
//! built without any of the variant's flags (they go to CFLAGS, which
//! rustc never reads).

use std::collections::BTreeMap;
use std::path::PathBuf;

use toml::Spanned;

use super::super::raw::{RawCargo, RawTarget};
use super::super::{Cargo, ExperimentError, Target};
use super::Cx;
use crate::toolchain::Compiler;

/// How a target is built: its command, binaries, cargo package and
/// compiler.
pub(super) struct HowBuilt {
    pub build: String,
    pub binaries: BTreeMap<String, PathBuf>,
    pub cargo: Option<Cargo>,
    pub compiler: Compiler,
}

impl Cx<'_> {
    /// How a cargo target is built.
    pub(super) fn cargo_target(
        &self,
        raw: &RawTarget,
        cargo: &Spanned<RawCargo>,
    ) -> Result<HowBuilt, ExperimentError> {
        let said = |key: &str| {
            format!("a cargo target has no `{key}`: afterburner runs cargo itself, each variant's words in RUSTFLAGS and cargo's release profile")
        };
        if let Some(build) = &raw.build {
            return Err(self.invalid(build.span(), said("build"), "remove build; cargo = { package = \"…\", bins = [\"…\"], features = [\"…\"] } says what to build"));
        }
        if let Some(binaries) = &raw.binaries {
            return Err(self.invalid(
                binaries.span(),
                said("binaries"),
                "remove binaries: cargo's `bins` names them, and templates use {bin.NAME} of each",
            ));
        }
        if let Some(compiler) = raw
            .compiler
            .as_ref()
            .filter(|c| c.get_ref() != Compiler::Rustc.name())
        {
            return Err(self.invalid(
                compiler.span(),
                format!("compiler = \"{}\" with a cargo target", compiler.get_ref()),
                "remove compiler: a cargo target is built by rustc (C code its crates build compiles with gcc through the cc crate)",
            ));
        }
        let c = cargo.get_ref();
        if c.bins.is_empty() {
            return Err(self.invalid(
                cargo.span(),
                "cargo = { … } names no binary",
                "name the binaries to build and run: cargo = { bins = [\"NAME\"] } (the [[bin]] names of Cargo.toml, or the package's name)",
            ));
        }
        for word in c.bins.iter().chain(&c.features).chain(&c.package) {
            if word.trim().is_empty() || word.contains(char::is_whitespace) {
                return Err(self.invalid(
                    cargo.span(),
                    format!("`{word}` in cargo = {{ … }} is not a name"),
                    "write each package, binary and feature as cargo names it, without spaces",
                ));
            }
        }
        let cargo = Cargo {
            package: c.package.clone(),
            bins: c.bins.clone(),
            features: c.features.clone(),
        };
        let binaries = c
            .bins
            .iter()
            .map(|b| (b.clone(), Cargo::binary(b)))
            .collect();
        Ok(HowBuilt {
            build: cargo.command(),
            binaries,
            cargo: Some(cargo),
            compiler: Compiler::Rustc,
        })
    }
}

impl Cx<'_> {
    /// A variant's own `compiler`: rustc only for a cargo target, and a
    /// cargo target only with rustc.
    pub(super) fn variant_compiler(
        &self,
        name: &Spanned<String>,
        target: &Target,
    ) -> Result<Compiler, ExperimentError> {
        let compiler = self.compiler(name)?;
        let cargo = target.cargo.is_some();
        if cargo != (compiler == Compiler::Rustc) {
            let hint = if cargo {
                "remove compiler: the target is a cargo package, which rustc builds"
            } else {
                "remove compiler, or make the target a cargo package (cargo = { bins = [\"NAME\"] })"
            };
            return Err(self.invalid(
                name.span(),
                format!(
                    "compiler = \"{}\" on a {} target",
                    name.get_ref(),
                    if cargo { "cargo" } else { "C, C++ or Go" }
                ),
                hint,
            ));
        }
        Ok(compiler)
    }
}

/// A build command that runs `cargo build` (or `cargo install`) is
/// refused with the cargo target's form.
pub(super) fn cargo_build_refused(build: &Spanned<String>) -> Result<(), String> {
    let words: Vec<&str> = build.get_ref().split_whitespace().collect();
    let runs_cargo = words
        .windows(2)
        .any(|w| w[0] == "cargo" && matches!(w[1], "build" | "install" | "rustc"));
    if runs_cargo {
        return Err("afterburner's flags reach rustc only when it runs cargo itself: remove build and binaries and write cargo = { bins = [\"NAME\"] } (package = \"…\" for a workspace member, features = [\"…\"])".to_owned());
    }
    Ok(())
}
