//! Validation of a variant's `profile_from = { source = { … } }`: a stale
//! profile, trained on another revision of the source with the variant's
//! own training workloads and toolchain options.

use std::path::Path;

use super::super::raw::RawVariant;
use super::super::ProfileFrom;
use super::Cx;
use crate::experiment::ExperimentError;
use crate::toolchain::Optimization;

impl Cx<'_> {
    /// The variant's `profile_from`, its source checked as a target's is;
    /// only a variant that trains a profile may name one.
    pub(super) fn profile_from(
        &self,
        v: &RawVariant,
        optimize: &[Optimization],
        dir: &Path,
    ) -> Result<Option<ProfileFrom>, ExperimentError> {
        let Some(raw) = &v.profile_from else {
            return Ok(None);
        };
        if !optimize.iter().any(|o| o.needs_profile()) {
            return Err(self.invalid(
                raw.span(),
                format!(
                    "variant `{}` sets profile_from, but none of its optimizations trains a profile",
                    v.name.get_ref()
                ),
                "give it optimize = [\"pgo\"] (or another optimization that trains: autofdo, bolt, cspgo), or remove profile_from",
            ));
        }
        if v.profile.is_some() {
            return Err(self.invalid(
                raw.span(),
                format!(
                    "variant `{}` brings its profile (`profile`), and profile_from names a revision to train it on",
                    v.name.get_ref()
                ),
                "keep one: `profile` (files collected elsewhere) or profile_from (trained here on another revision)",
            ));
        }
        let source = &raw.get_ref().source;
        Ok(Some(ProfileFrom {
            source: self.source(source, dir)?,
            exclude: source.get_ref().exclude.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::experiment::{load_str, Source};
    use crate::toolchain::{Stage, VariantDirs};

    const STALE: &str = r#"
[target]
name = "walk"
source = { path = "rev2" }
build = "make"
binaries = { walk = "walk" }

[[variant]]
name = "none"

[[variant]]
name = "stale"
optimize = ["pgo"]
profile_from = { source = { git = "https://example.org/walk.git", rev = "v1" } }

[[workload]]
name = "loop"
run = "{bin.walk}"
"#;

    #[test]
    fn a_stale_variant_instruments_the_other_revision_and_builds_this_one() {
        let e = load_str(Path::new("/exp/a.toml"), STALE, false).unwrap();
        let stale = &e.variants[1];
        let old = Source::Git {
            url: "https://example.org/walk.git".to_owned(),
            rev: Some("v1".to_owned()),
        };
        assert_eq!(stale.stage_source(&e.target, Stage::FIRST).0, &old);
        assert_eq!(
            stale.stage_source(&e.target, Stage::Final).0,
            &Source::Path(PathBuf::from("/exp/rev2"))
        );
        let dirs = VariantDirs {
            build: "/w/b".into(),
            profiles: "/w/p".into(),
        };
        let final_flags = crate::build::compose_flags(&e, stale, Stage::Final, &dirs).cflags;
        // Later flags win: the mismatch warnings are on and not errors.
        assert!(
            final_flags.ends_with("-Wmissing-profile -Wno-error=coverage-mismatch"),
            "{final_flags}"
        );
        let instrumented = crate::build::compose_flags(&e, stale, Stage::FIRST, &dirs).cflags;
        assert!(
            !instrumented.contains("coverage-mismatch"),
            "{instrumented}"
        );
    }

    #[test]
    fn profile_from_takes_what_a_source_takes_and_says_so() {
        let bad = STALE.replace("rev = \"v1\"", "sha256 = \"00\"");
        let err = load_str(Path::new("/exp/a.toml"), &bad, false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`sha256` only applies to a url source"),
            "{err}"
        );
        assert!(err.contains("a.toml:"), "{err}");
    }
}
