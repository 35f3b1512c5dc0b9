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
        let source = &raw.get_ref().source;
        Ok(Some(ProfileFrom {
            source: self.source(source, dir)?,
            exclude: source.get_ref().exclude.clone(),
        }))
    }
}
