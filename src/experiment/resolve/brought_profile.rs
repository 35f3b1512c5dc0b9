//! Validation of a variant's `profile =`: a profile brought from elsewhere
//! instead of training. Each file must exist, be of a kind afterburner
//! reads (by its first bytes, else its name) and fit the variant's one
//! profiled optimization; weights as a training workload's.

use std::path::Path;

use toml::Spanned;

use super::super::raw::{RawProfile, RawProfileFile, RawVariant};
use super::super::resolve_path;
use super::Cx;
use crate::experiment::ExperimentError;
use crate::toolchain::formats::brought::{detect, BroughtFile, Format};
use crate::toolchain::{weights, Compiler, Optimization, RoundChoices};

impl Cx<'_> {
    /// The brought profile's files, checked against the variant's
    /// optimizations; empty when the variant trains.
    pub(super) fn brought(
        &self,
        v: &RawVariant,
        compiler: Compiler,
        optimize: &[Optimization],
        dir: &Path,
    ) -> Result<Vec<BroughtFile>, ExperimentError> {
        let Some(raw) = &v.profile else {
            return Ok(Vec::new());
        };
        let profiled: Vec<&Optimization> = optimize.iter().filter(|o| o.needs_profile()).collect();
        let [optimization] = profiled.as_slice() else {
            return Err(self.invalid(
                raw.span(),
                format!(
                    "a brought profile stands in for one training round, and variant `{}` has {}",
                    v.name.get_ref(),
                    if profiled.is_empty() { "none".to_owned() } else {
                        profiled.iter().map(|o| format!("`{}`", o.word())).collect::<Vec<_>>().join(" and ")
                    }
                ),
                "give `profile` to a variant with one profiled optimization (pgo, autofdo or bolt), or train it (drop `profile`)",
            ));
        };
        let entries = match raw.get_ref() {
            RawProfile::One(path) => vec![(path.clone(), 1)],
            RawProfile::Many(list) => list
                .iter()
                .map(|e| match e {
                    RawProfileFile::Path(p) => (p.clone(), 1),
                    RawProfileFile::Weighted { path, weight } => (path.clone(), *weight),
                })
                .collect(),
        };
        if entries.is_empty() {
            return Err(self.invalid(
                raw.span(),
                "`profile` lists no file",
                "name a profile file or directory, or drop `profile` to train",
            ));
        }
        let files: Vec<BroughtFile> = entries
            .into_iter()
            .map(|(path, weight)| {
                self.brought_file(raw, &path, weight, (**optimization, compiler), dir)
            })
            .collect::<Result<_, _>>()?;
        // One merge reads them all: one format (a .profdata with .profraw
        // files, an archive with a tree are one).
        if let Some(odd) = files
            .iter()
            .find(|f| f.format.family() != files[0].format.family())
        {
            return Err(self.invalid(
                raw.span(),
                format!(
                    "brought profile `{}` is a {}, and `{}` a {}: one round merges one kind",
                    odd.path.display(),
                    odd.format.describe(),
                    files[0].path.display(),
                    files[0].format.describe()
                ),
                "bring files of one kind for this variant",
            ));
        }
        Ok(files)
    }

    fn brought_file(
        &self,
        raw: &Spanned<RawProfile>,
        written: &str,
        weight: i64,
        (optimization, compiler): (Optimization, Compiler),
        dir: &Path,
    ) -> Result<BroughtFile, ExperimentError> {
        let path = resolve_path(dir, written);
        if !path.exists() {
            return Err(self.invalid(
                raw.span(),
                format!("brought profile `{}` does not exist", path.display()),
                "copy the profile here, or fix the path (relative to the experiment file)",
            ));
        }
        let weight = u32::try_from(weight)
            .ok()
            .filter(|w| (1..=weights::MAX).contains(w))
            .ok_or_else(|| {
                self.invalid(
                    raw.span(),
                    format!("weight = {weight} of `{written}` is out of range"),
                    format!(
                        "use a whole number from 1 to {} (how many times the file counts)",
                        weights::MAX
                    ),
                )
            })?;
        let format = detect(&path).map_err(|why| {
            self.invalid(
                raw.span(),
                format!("brought profile `{written}`: {why}"),
                format!(
                    "bring one of the formats afterburner reads: {}",
                    Format::all_described()
                ),
            )
        })?;
        optimization
            .brought_sources(compiler, format, RoundChoices::INSTRUMENTED)
            .map_err(|why| {
            self.invalid(
                raw.span(),
                format!("brought profile `{written}` is a {}, and {why}", format.describe()),
                "bring the kind the variant's optimization reads, or change `optimize` to one that reads it",
            )
        })?;
        Ok(BroughtFile {
            path,
            weight,
            format,
        })
    }
}

/// The profile sources a brought profile implies: which of its
/// optimization's rounds reads the files' kind (an `.fdata` is what
/// instrumented BOLT writes, a perf recording what sampled BOLT converts,
/// a `.pprof` what Go's own CPU profiles are); `chosen` without a profile.
pub(super) fn sources(
    brought: &[BroughtFile],
    optimize: &[Optimization],
    compiler: Compiler,
    chosen: RoundChoices,
) -> RoundChoices {
    let (Some(file), Some(optimization)) =
        (brought.first(), optimize.iter().find(|o| o.needs_profile()))
    else {
        return chosen;
    };
    // `brought` checked that the format fits.
    optimization
        .brought_sources(compiler, file.format, chosen)
        .unwrap_or(chosen)
}

#[cfg(test)]
mod tests {
    use crate::experiment::resolve::load_str;

    fn experiment(dir: &std::path::Path, profile: &str) -> String {
        let text = format!(
            "[target]\nname = \"t\"\nsource = {{ path = \".\" }}\nbuild = \"make\"\nbinaries = {{ t = \"t\" }}\ncompiler = \"clang\"\n\n[[variant]]\nname = \"pgo\"\noptimize = [\"bolt\"]\nprofile = {profile}\n\n[[workload]]\nname = \"w\"\nrun = \"{{bin.t}}\"\n"
        );
        let path = dir.join("afterburner.toml");
        std::fs::write(&path, &text).unwrap();
        text
    }

    #[test]
    fn files_of_two_kinds_and_weights_out_of_range_are_refused_at_their_line() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.fdata"), "1 main 0 1 main 4 0 5\n").unwrap();
        std::fs::write(tmp.path().join("b.perf.data"), b"PERFILE2").unwrap();
        let path = tmp.path().join("afterburner.toml");
        let text = experiment(tmp.path(), "[\"a.fdata\", \"b.perf.data\"]");
        let error = load_str(&path, &text, false).unwrap_err().to_string();
        assert!(error.contains("afterburner.toml:11"), "{error}");
        assert!(error.contains("one round merges one kind"), "{error}");
        let text = experiment(tmp.path(), "[{ path = \"a.fdata\", weight = 0 }]");
        let error = load_str(&path, &text, false).unwrap_err().to_string();
        assert!(error.contains("weight = 0"), "{error}");
        let text = experiment(tmp.path(), "[{ path = \"a.fdata\", weight = 3 }]");
        let e = load_str(&path, &text, false).unwrap();
        let v = &e.variants[0];
        assert_eq!(v.brought[0].weight, 3);
        assert_eq!(v.bolt_profile, crate::toolchain::BoltProfile::Instrumented);
    }
}
