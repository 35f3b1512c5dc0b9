//! `recordings = N` on a variant: N variants `NAME.1` … `NAME.N`, alike
//! but for their profile, each trained and recorded on its own (they
//! never share one), so a report can say how much a share moves from one
//! recording to the next.

use super::super::raw::RawVariant;
use super::Cx;
use crate::experiment::{ExperimentError, Recording};

/// The most recordings one variant may ask for: each is a training build,
/// its training runs and a final build.
const MOST: i64 = 20;

impl Cx<'_> {
    /// Each variant with `recordings = N` replaced by its N recordings.
    pub(super) fn expand_recordings(
        &self,
        raw: Vec<RawVariant>,
    ) -> Result<Vec<RawVariant>, ExperimentError> {
        let mut out = Vec::with_capacity(raw.len());
        for v in raw {
            let Some(count) = &v.recordings else {
                out.push(v);
                continue;
            };
            let n = *count.get_ref();
            let name = v.name.get_ref().clone();
            if !(2..=MOST).contains(&n) {
                return Err(self.invalid(
                    count.span(),
                    format!("variant `{name}`: recordings = {n} is not 2 to {MOST}"),
                    "ask for 3 or more to see how far one recording's profile moves the result, or remove recordings",
                ));
            }
            let not_trained = if v.prebuilt.is_some() {
                Some("its binaries are prebuilt")
            } else if v.profile.is_some() {
                Some("its profile is brought (`profile`)")
            } else if v.profile_from.is_some() {
                Some("its profile is trained on another revision (`profile_from`)")
            } else {
                None
            };
            if let Some(why) = not_trained {
                return Err(self.invalid(
                    count.span(),
                    format!("variant `{name}`: recordings needs a profile trained here, and {why}"),
                    "remove recordings from this variant",
                ));
            }
            for index in 1..=u32::try_from(n).unwrap_or(1) {
                let mut one = v.clone();
                one.name = toml::Spanned::new(v.name.span(), format!("{name}.{index}"));
                one.recording = Some(Recording {
                    of: name.clone(),
                    index,
                });
                out.push(one);
            }
        }
        Ok(out)
    }
}

/// The names the file gives its variants with `recordings`, once each.
pub(super) fn recorded_names(raw: &[RawVariant]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for of in raw
        .iter()
        .filter_map(|v| v.recording.as_ref())
        .map(|r| &r.of)
    {
        if !names.contains(of) {
            names.push(of.clone());
        }
    }
    names
}
