//! `[[variant]]`: a build to compare, its optimizations and where its
//! profile comes from.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::{Source, Target};
use crate::toolchain::{BoltProfile, Compiler, Optimization};

/// One way to build or run the target.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// Unique; also the directory name under `variants/`.
    pub name: String,
    /// The compiler this variant builds with (the target's unless it says).
    pub compiler: Compiler,
    /// Optimizations applied in order.
    pub optimize: Vec<Optimization>,
    /// Extra compile flags, appended after the optimizations'.
    pub cflags: String,
    /// Extra link flags.
    pub ldflags: String,
    /// Environment for the variant's runs (e.g. `LD_PRELOAD`).
    pub env: BTreeMap<String, String>,
    /// Binaries used as they are, not built (absolute paths).
    pub prebuilt: Option<BTreeMap<String, PathBuf>>,
    /// Overrides of `{params.KEY}` for this variant's runs.
    pub params: BTreeMap<String, String>,
    /// gcc PGO with `-fprofile-partial-training` in the final build.
    pub partial_training: bool,
    /// The perf event AutoFDO or sampled BOLT samples, when the variant
    /// names one.
    pub sample_event: Option<String>,
    /// AutoFDO's call chains where it has no branch stacks (`call_chains`):
    /// how perf unwinds them, `None` for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_chains: Option<crate::toolchain::sampling::Unwind>,
    /// Where BOLT's profile comes from.
    pub bolt_profile: BoltProfile,
    /// Where a Go variant's PGO profile comes from (`pgo_source`; by
    /// default `perf` when no training workload passes `{profile}`).
    pub go_pgo: crate::toolchain::GoPgoSource,
    /// The `-march` level when `optimize` has `march`: `native`, or the
    /// level the variant names (`x86-64-v3`); `None` without `march`.
    pub march: Option<String>,
    /// How training takes its services' counters (`train_stop`).
    #[serde(skip_serializing_if = "TrainStop::is_stop")]
    pub train_stop: TrainStop,
    /// System settings written before each of its runs and put back after.
    pub system: Vec<crate::system::Setting>,
    /// A profile brought from elsewhere (`profile =`): its files, which
    /// stand in for training; empty when the variant trains.
    pub brought: Vec<crate::toolchain::formats::brought::BroughtFile>,
    /// The axis values of a variant a `[[matrix]]` made (`compiler`,
    /// `optimize`, `params.KEY`, `env.KEY` → value); empty otherwise.
    pub axes: BTreeMap<String, String>,
    /// Where its profile is trained when not on the target's source: a
    /// stale profile, from another revision (`profile_from`).
    pub profile_from: Option<ProfileFrom>,
    /// The whole variant built from another source or revision (`source`
    /// on a variant; `check --rev` adds such variants): its every stage,
    /// where a stale variant's `profile_from` is its training's only.
    pub source: Option<ProfileFrom>,
    /// Where its training rounds' profiles come from, chosen once here
    /// (a source of `profiles/` makes them).
    #[serde(skip)]
    pub profile_origin: ProfileOrigin,
    /// The earlier variant whose first training round's profile this one
    /// shares: the same instrumented build, trained by the same runs
    /// (`pgo+lto` shares `pgo`'s); chosen once here, checked when training.
    pub profile_donor: Option<String>,
    /// Which of a variant's independent recordings this one is, where the
    /// file asked for several (`recordings = N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<Recording>,
}

/// One of `recordings = N`'s variants: its profile trained and recorded
/// on its own, like the others', so their spread is the recording's.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Recording {
    /// The variant as the file names it (`gcc-autofdo` of `gcc-autofdo.2`).
    pub of: String,
    /// 1 to N.
    pub index: u32,
}

/// Where a variant's profiles come from, chosen when the experiment is
/// resolved: each is one source in `profiles/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileOrigin {
    /// Trained here: the training workloads run each round's build.
    Trained,
    /// Trained here, and the target's services are recorded by attaching
    /// to them over each training workload's window where a round samples.
    Attached,
    /// Files brought from elsewhere (`profile =`) stand in for training.
    Brought,
    /// Trained on another revision (`profile_from`) and applied to this
    /// one; `attach` as for [`ProfileOrigin::Attached`].
    Stale { attach: bool },
}

/// `profile_from`: the other revision a stale profile is trained on, with
/// the same training workloads and toolchain options as this revision's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileFrom {
    pub source: Source,
    /// Gitignore-style patterns a `path` source's fingerprint leaves out.
    pub exclude: Vec<String>,
}

impl Variant {
    /// Whether building this variant needs a training profile.
    pub fn needs_profile(&self) -> bool {
        self.optimize.iter().any(|o| o.needs_profile())
    }

    /// The variant's training rounds, in order.
    pub fn rounds(&self) -> Vec<&'static dyn crate::toolchain::Round> {
        crate::toolchain::rounds(&self.optimize, self.compiler, self.profile_sources())
    }

    /// Where its profiles come from, where an optimization offers a choice.
    pub fn profile_sources(&self) -> crate::toolchain::RoundChoices {
        crate::toolchain::RoundChoices {
            bolt: self.bolt_profile,
            go: self.go_pgo,
        }
    }

    /// The source `stage` is built from, and the patterns its fingerprint
    /// leaves out: a stale variant's instrumented builds are of its
    /// `profile_from` source, a variant with a `source` of its own is built
    /// from it, everything else from the target's.
    pub fn stage_source<'a>(
        &'a self,
        target: &'a Target,
        stage: crate::toolchain::Stage,
    ) -> (&'a Source, &'a [String]) {
        match (&self.profile_from, stage) {
            (Some(from), crate::toolchain::Stage::Instrumented(_)) => (&from.source, &from.exclude),
            _ => match &self.source {
                Some(own) => (&own.source, &own.exclude),
                None => (&target.source, &target.exclude),
            },
        }
    }

    /// Whether the variant uses binaries that exist already.
    pub fn is_prebuilt(&self) -> bool {
        self.prebuilt.is_some()
    }
}

/// How an instrumented variant's training takes the counters of the
/// services it started (`train_stop` on the variant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainStop {
    /// Each service writes its counters as it exits, when it is stopped.
    #[default]
    Stop,
    /// Each service is preloaded with the dump shim, and dumps its counters
    /// while it runs at the end of each training workload; it is then
    /// stopped (what it counts after the dump adds to them).
    Dump,
}

impl TrainStop {
    pub fn is_stop(&self) -> bool {
        *self == TrainStop::Stop
    }
}
