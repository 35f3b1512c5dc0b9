//! Which variants share a training profile, decided once, from the file:
//! a variant shares the first training round's profile of the first
//! variant before it whose round would be instrumented the same way and
//! trained by the same runs — the same compiler and round, the same
//! instrumented-build flags (the `-O` level and every-stage words such as
//! `march` and `o3`; LTO and BOLT act after instrumentation, so `pgo`,
//! `pgo+lto` and `pgo+bolt` agree, except that a cargo target's `lto` sets
//! its codegen units in every stage), the same cflags, params, environment,
//! system settings and sampling, and not one of several recordings
//! (`recordings = N`: each trains its own). Later rounds instrument the code the
//! earlier profiles shaped and are trained by each variant. Whether the
//! share holds on this machine (the same build inputs, a profile that does
//! not name its build directory) is checked when training
//! (`profiles::shared`).

use std::path::PathBuf;

use super::super::{ProfileOrigin, Variant};
use crate::toolchain::{optimization_flags, Stage, VariantDirs};

/// Set each variant's `profile_donor`.
pub(super) fn assign(variants: &mut [Variant]) {
    let identities: Vec<Option<String>> = variants.iter().map(identity).collect();
    for i in 0..variants.len() {
        variants[i].profile_donor = identities[i].as_ref().and_then(|id| {
            identities[..i]
                .iter()
                .position(|other| other.as_ref() == Some(id))
                .map(|d| variants[d].name.clone())
        });
    }
}

/// What makes a variant's first round's profile what it is; `None` where
/// it is not trained here (prebuilt, brought, trained on another revision)
/// or there is no round.
fn identity(v: &Variant) -> Option<String> {
    let trained_here = matches!(
        v.profile_origin,
        ProfileOrigin::Trained | ProfileOrigin::Attached
    );
    if !trained_here || v.prebuilt.is_some() || v.profile_from.is_some() || !v.brought.is_empty() {
        return None;
    }
    let round = v.rounds().first()?.name();
    let placeholder = VariantDirs {
        build: PathBuf::from("{variant}/build"),
        profiles: PathBuf::from("{variant}/profile"),
    };
    let flags = optimization_flags(
        v.compiler,
        &v.optimize,
        v.profile_sources(),
        Stage::Instrumented(0),
        &placeholder,
    );
    Some(
        format!(
            "{:?}|{round}|{flags:?}|{:?}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
            v.compiler,
            v.march,
            v.cflags,
            v.ldflags,
            v.env,
            v.params,
            v.system,
            v.train_stop,
            v.sample_event,
            // Not `profile_sources`: where later rounds' profiles come from
            // (BOLT's instrumented or sampled) is no part of the first's, whose
            // round name says how it is made.
            v.profile_origin,
            v.source,
            // Each of `recordings = N` records its own profile.
            v.recording
        ) + &v.call_chains.map(|u| format!("|{u:?}")).unwrap_or_default(),
    )
}
