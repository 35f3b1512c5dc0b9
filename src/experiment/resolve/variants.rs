//! Validation of `[[variant]]`: names, compilers, the `optimize` stack and
//! each optimization's options, prebuilt binaries and per-variant params.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::super::raw::RawVariant;
use super::super::{
    resolve_path, ProfileFrom, ProfileOrigin, Recorded, Target, TrainStop, Variant,
};
use super::Cx;
use crate::experiment::ExperimentError;
use crate::toolchain::sampling::Unwind;
use crate::toolchain::{BoltProfile, Compiler, GoPgoSource, Optimization, RoundChoices};

impl Cx<'_> {
    /// A variant's name, checked: usable as a directory name, and not
    /// one an earlier variant took.
    fn variant_name<'v>(
        &self,
        v: &'v RawVariant,
        seen: &mut BTreeSet<String>,
    ) -> Result<&'v String, ExperimentError> {
        let name = v.name.get_ref();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+.-".contains(c));
        if !valid {
            return Err(self.invalid(
                v.name.span(),
                format!("variant name `{name}` is not usable as a directory name"),
                "use letters, digits, '_', '+', '.' and '-' only, e.g. \"pgo+lto\"",
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(self.invalid(
                v.name.span(),
                format!("variant `{name}` is defined twice"),
                "give each [[variant]] its own name",
            ));
        }
        Ok(name)
    }

    pub(super) fn variants(
        &self,
        raw: &[RawVariant],
        target: &Target,
        params: &BTreeMap<String, String>,
        dir: &Path,
        trains_with_profile: bool,
    ) -> Result<Vec<Variant>, ExperimentError> {
        let compiler = target.compiler;
        if raw.is_empty() {
            return Ok(vec![baseline(compiler)]);
        }
        let mut seen = BTreeSet::new();
        raw.iter()
            .map(|v| {
                let name = self.variant_name(v, &mut seen)?;
                let compiler = match &v.compiler {
                    None => compiler,
                    Some(c) => self.variant_compiler(c, target)?,
                };
                let optimize = self.optimizations(v, compiler)?;
                let prebuilt = v
                    .prebuilt
                    .as_ref()
                    .map(|p| self.prebuilt(p, &optimize, target, dir))
                    .transpose()?;
                let mut own = BTreeMap::new();
                for (key, value) in &v.params {
                    if !params.contains_key(key) {
                        return Err(self.invalid(
                            value.span(),
                            format!(
                                "variant `{name}` sets `{key}`, which [params] does not define"
                            ),
                            format!(
                                "add `{key} = …` to [params]: the value the other variants use"
                            ),
                        ));
                    }
                    own.insert(key.clone(), self.param_text(value)?);
                }
                let brought = self.brought(v, compiler, &optimize, dir)?;
                let ProfileOptions {
                    partial_training,
                    sample_event,
                    call_chains,
                    sources,
                } = self.profile_options(v, compiler, &optimize, trains_with_profile)?;
                // A brought profile decides which round reads it.
                let sources =
                    super::brought_profile::sources(&brought, &optimize, compiler, sources);
                let march = self.march(v, &optimize)?;
                let profile_from = self.profile_from(v, &optimize, dir)?;
                let profile_origin = origin(&brought, profile_from.as_ref(), target);
                let source = v
                    .source
                    .as_ref()
                    .map(|s| {
                        Ok::<_, ExperimentError>(ProfileFrom {
                            source: self.source(s, dir)?,
                            exclude: s.get_ref().exclude.clone(),
                        })
                    })
                    .transpose()?;
                let train_stop = self.train_stop(v, compiler, &optimize, sources)?;
                if let (Some(count), Some(_)) = (&v.recordings, &v.recording) {
                    if !optimize.iter().any(|o| o.needs_profile()) {
                        return Err(self.invalid(
                            count.span(),
                            format!("variant `{}`: recordings, but its optimize list trains no profile", v.recording.as_ref().map_or(name.as_str(), |r| r.of.as_str())),
                            "give it an optimization that trains one (pgo, cspgo, autofdo, bolt), or remove recordings",
                        ));
                    }
                }
                Ok(Variant {
                    name: name.clone(),
                    compiler,
                    optimize,
                    cflags: v.cflags.clone().unwrap_or_default(),
                    ldflags: v.ldflags.clone().unwrap_or_default(),
                    env: v.env.clone(),
                    prebuilt,
                    params: own,
                    partial_training,
                    sample_event,
                    call_chains,
                    bolt_profile: sources.bolt,
                    go_pgo: sources.go,
                    march,
                    train_stop,
                    system: self.system_settings(v)?,
                    brought,
                    axes: v.axes.clone(),
                    profile_from,
                    source,
                    profile_origin,
                    profile_donor: None,
                    recording: v.recording.clone(),
                })
            })
            .collect()
    }

    /// `system = { thp = "never", "vm.swappiness" = 10 }`: each setting's
    /// file checked now; only root may write them.
    fn system_settings(
        &self,
        v: &RawVariant,
    ) -> Result<Vec<crate::system::Setting>, ExperimentError> {
        let mut out = Vec::new();
        for (key, value) in &v.system {
            let text = self.param_text(value)?;
            let setting = crate::system::resolve(key, &text).map_err(|why| {
                self.invalid(
                    value.span(),
                    format!("system setting `{key}` = \"{text}\" cannot be applied"),
                    why,
                )
            })?;
            if !crate::toolchain::tools::is_root() {
                return Err(self.invalid(
                    value.span(),
                    format!("system setting `{key}` needs root: afterburner writes {} before each run of `{}` and puts it back after", setting.path.display(), v.name.get_ref()),
                    "run afterburner as root (sudo), or drop `system` from the variant",
                ));
            }
            out.push(setting);
        }
        Ok(out)
    }

    /// The `-march` level of a variant with `march` in `optimize`.
    fn march(
        &self,
        v: &RawVariant,
        optimize: &[Optimization],
    ) -> Result<Option<String>, ExperimentError> {
        let wanted = optimize.contains(&Optimization::MARCH);
        match &v.march {
            None => Ok(wanted.then(|| "native".to_owned())),
            Some(m) if !wanted => Err(self.invalid(
                m.span(),
                "march is the -march level of optimize = [\"march\"]",
                "add \"march\" to the variant's optimize list, or remove march",
            )),
            Some(m) => {
                let level = m.get_ref();
                let valid = !level.is_empty()
                    && level
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
                if !valid {
                    return Err(self.invalid(
                        m.span(),
                        format!("`{level}` is not a -march level"),
                        "use \"native\" (this CPU) or a level such as \"x86-64-v3\" (see `gcc -march=help` or `clang --print-supported-cpus`)",
                    ));
                }
                Ok(Some(level.clone()))
            }
        }
    }

    /// `train_stop`: "dump" only where training instruments a C or C++
    /// build (gcc or clang PGO).
    fn train_stop(
        &self,
        v: &RawVariant,
        compiler: Compiler,
        optimize: &[Optimization],
        sources: RoundChoices,
    ) -> Result<TrainStop, ExperimentError> {
        let Some(word) = &v.train_stop else {
            return Ok(TrainStop::Stop);
        };
        let stop = match word.get_ref().as_str() {
            "stop" => TrainStop::Stop,
            "dump" => TrainStop::Dump,
            other => {
                return Err(self.invalid(
                    word.span(),
                    format!("unknown train_stop `{other}`"),
                    "use \"stop\" (services write their counters as they exit) or \"dump\" (afterburner has them dumped while they run, then stops them)",
                ))
            }
        };
        let instrumented = optimize
            .iter()
            .any(|o| o.dumps_counters(compiler, sources.unprobed()));
        if stop == TrainStop::Dump && !instrumented {
            return Err(self.invalid(
                word.span(),
                "train_stop = \"dump\" dumps the counters of an instrumented build (gcc or clang PGO)",
                "use it on a C or C++ variant with optimize = [\"pgo\", …], or remove it",
            ));
        }
        Ok(stop)
    }

    /// The options of one kind of profile: `partial_training` (gcc PGO),
    /// `bolt_profile` (BOLT), `pgo_source` (Go PGO), `sample_event`
    /// (AutoFDO, sampled BOLT, Go PGO from perf).
    fn profile_options(
        &self,
        v: &RawVariant,
        compiler: Compiler,
        optimize: &[Optimization],
        trains_with_profile: bool,
    ) -> Result<ProfileOptions, ExperimentError> {
        let partial_training = match &v.partial_training {
            Some(p) if *p.get_ref() => {
                if compiler != Compiler::Gcc || !optimize.contains(&Optimization::PGO) {
                    return Err(self.invalid(
                        p.span(),
                        "partial_training is an option of gcc's PGO",
                        "use it on a variant with optimize = [\"pgo\", …] and compiler = \"gcc\"",
                    ));
                }
                true
            }
            _ => false,
        };
        let bolt_profile = match &v.bolt_profile {
            None => BoltProfile::Auto,
            Some(b) if !optimize.contains(&Optimization::BOLT) => {
                return Err(self.invalid(
                    b.span(),
                    "bolt_profile says where BOLT's profile comes from",
                    "use it on a variant with optimize = [\"bolt\", …], or remove it",
                ));
            }
            Some(b) => BoltProfile::from_name(b.get_ref()).ok_or_else(|| {
                self.invalid(
                    b.span(),
                    format!("unknown bolt_profile `{}`", b.get_ref()),
                    "use \"instrumented\" (llvm-bolt -instrument, no PMU needed), \"sampled\" (perf record, then perf2bolt) or \"auto\" (sampled where the CPU has LBR)",
                )
            })?,
        };
        let go_pgo = self.go_pgo_source(v, compiler, optimize, trains_with_profile)?;
        let sources = RoundChoices {
            bolt: bolt_profile,
            go: go_pgo,
        };
        let samples = optimize
            .iter()
            .any(|o| o.samples(compiler, sources.unprobed()));
        let sample_event = match &v.sample_event {
            Some(e) if !samples => {
                return Err(self.invalid(
                    e.span(),
                    "sample_event is the perf event of sampled training runs (AutoFDO, BOLT with bolt_profile = \"sampled\", Go PGO with pgo_source = \"perf\")",
                    "use it on a variant with optimize = [\"autofdo\", …], with optimize = [\"bolt\"] and bolt_profile = \"sampled\", or a Go variant with pgo_source = \"perf\"; or remove it",
                ));
            }
            Some(e)
                if e.get_ref().trim().is_empty() || e.get_ref().contains(char::is_whitespace) =>
            {
                return Err(self.invalid(
                    e.span(),
                    "sample_event must be one perf event",
                    "e.g. sample_event = \"cpu-clock\" (see `perf list`)",
                ));
            }
            e => e.as_ref().map(|e| e.get_ref().clone()),
        };
        let call_chains = self.call_chains(v, optimize)?;
        Ok(ProfileOptions {
            partial_training,
            sample_event,
            call_chains,
            sources,
        })
    }

    /// `call_chains` of an AutoFDO variant: how its samples' call chains
    /// are unwound, `None` for none.
    fn call_chains(
        &self,
        v: &RawVariant,
        optimize: &[Optimization],
    ) -> Result<Option<Unwind>, ExperimentError> {
        let Some(chains) = &v.call_chains else {
            return Ok(None);
        };
        if !optimize.contains(&Optimization::AUTOFDO) {
            return Err(self.invalid(
                chains.span(),
                "call_chains is how AutoFDO's training samples record call chains",
                "use it on a variant with optimize = [\"autofdo\", …], or remove it",
            ));
        }
        match chains.get_ref().as_str() {
            "none" => Ok(None),
            "fp" => Ok(Some(Unwind::FramePointers)),
            "dwarf" => Ok(Some(Unwind::Dwarf)),
            other => Err(self.invalid(
                chains.span(),
                format!("call_chains = \"{other}\" is not a way to record call chains"),
                "use \"dwarf\" (perf --call-graph dwarf: any build), \"fp\" (-g: code built with frame pointers) or \"none\"",
            )),
        }
    }

    /// Where a Go variant's PGO profile comes from: `pgo_source` when it
    /// says, else the program's own CPU profiles where a training workload
    /// passes `{profile}`, else perf samples.
    fn go_pgo_source(
        &self,
        v: &RawVariant,
        compiler: Compiler,
        optimize: &[Optimization],
        trains_with_profile: bool,
    ) -> Result<GoPgoSource, ExperimentError> {
        let go_pgo = compiler == Compiler::Go && optimize.contains(&Optimization::PGO);
        let Some(source) = &v.pgo_source else {
            return Ok(if go_pgo && !trains_with_profile {
                GoPgoSource::Perf
            } else {
                GoPgoSource::Cpuprofile
            });
        };
        if !go_pgo {
            return Err(self.invalid(
                source.span(),
                "pgo_source says where Go PGO's profile comes from",
                "use it on a variant with compiler = \"go\" and optimize = [\"pgo\"], or remove it",
            ));
        }
        let chosen = GoPgoSource::from_name(source.get_ref()).ok_or_else(|| {
            self.invalid(
                source.span(),
                format!("unknown pgo_source `{}`", source.get_ref()),
                "use \"perf\" (training sampled with perf record -g, any Go program) or \"cpuprofile\" (the program writes its own CPU profile where {profile} points)",
            )
        })?;
        if chosen == GoPgoSource::Cpuprofile && !trains_with_profile {
            return Err(self.invalid(
                source.span(),
                "pgo_source = \"cpuprofile\" reads the CPU profiles training runs write where {profile} points, and no training workload or service passes {profile}",
                "pass {profile} to the program's profiling flag (train_run = \"{bin.app} -cpuprofile {profile} …\"), or use pgo_source = \"perf\", which samples any Go program with perf record -g",
            ));
        }
        Ok(chosen)
    }

    fn prebuilt(
        &self,
        raw: &Spanned<BTreeMap<String, String>>,
        optimize: &[Optimization],
        target: &Target,
        dir: &Path,
    ) -> Result<BTreeMap<String, PathBuf>, ExperimentError> {
        if !optimize.is_empty() {
            return Err(self.invalid(
                raw.span(),
                "a prebuilt variant cannot also be optimized: afterburner does not build it",
                "drop `optimize` from this variant, or drop `prebuilt` so afterburner builds it",
            ));
        }
        let missing: Vec<&String> = target
            .binaries
            .keys()
            .filter(|b| !raw.get_ref().contains_key(*b))
            .collect();
        let unknown: Vec<&String> = raw
            .get_ref()
            .keys()
            .filter(|b| !target.binaries.contains_key(*b))
            .collect();
        if !missing.is_empty() || !unknown.is_empty() {
            return Err(self.invalid(
                raw.span(),
                format!(
                    "prebuilt must name exactly the target's binaries: missing {missing:?}, unknown {unknown:?}"
                ),
                format!(
                    "write prebuilt = {{ {} }}",
                    target
                        .binaries
                        .keys()
                        .map(|b| format!("{b} = \"/path/to/{b}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(raw
            .get_ref()
            .iter()
            .map(|(k, v)| (k.clone(), resolve_path(dir, v)))
            .collect())
    }

    fn optimizations(
        &self,
        v: &RawVariant,
        compiler: Compiler,
    ) -> Result<Vec<Optimization>, ExperimentError> {
        let mut out: Vec<Optimization> = Vec::new();
        for word in &v.optimize {
            let o = Optimization::from_name(word.get_ref()).map_err(|hint| {
                self.invalid(
                    word.span(),
                    format!("unknown or unsupported optimization `{}`", word.get_ref()),
                    hint,
                )
            })?;
            if out.contains(&o) {
                return Err(self.invalid(
                    word.span(),
                    format!("`{}` is listed twice", word.get_ref()),
                    "list each optimization once",
                ));
            }
            if let Err(hint) = o.supports(compiler) {
                return Err(self.invalid(
                    word.span(),
                    format!(
                        "`{}` is not available with {}",
                        word.get_ref(),
                        compiler.name()
                    ),
                    hint,
                ));
            }
            out.push(o);
        }
        let profiles: Vec<&str> = out
            .iter()
            .filter(|o| o.is_compiler_profile())
            .map(|o| o.word())
            .collect();
        if profiles.len() > 1 {
            // At the second of them.
            let second = v
                .optimize
                .iter()
                .filter(|w| {
                    Optimization::from_name(w.get_ref()).is_ok_and(|o| o.is_compiler_profile())
                })
                .nth(1)
                .map_or_else(|| v.name.span(), Spanned::span);
            return Err(self.invalid(
                second,
                format!(
                    "{} each make the compiler's profile; a build reads one",
                    profiles.join(" and ")
                ),
                format!(
                    "pick one of {} (the others stack with any of them)",
                    crate::toolchain::ALL
                        .iter()
                        .filter(|o| o.is_compiler_profile())
                        .map(|o| o.word())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(out)
    }
}

/// The profile options of one variant, validated.
struct ProfileOptions {
    partial_training: bool,
    sample_event: Option<String>,
    call_chains: Option<Unwind>,
    /// `bolt_profile` and `pgo_source`.
    sources: RoundChoices,
}

/// Where a variant's profiles come from: the files it brings, else
/// training on another revision (`profile_from`) or here; a target whose
/// services are recorded over each workload's window has them attached
/// to in sampled rounds.
fn origin(
    brought: &[crate::toolchain::formats::brought::BroughtFile],
    profile_from: Option<&ProfileFrom>,
    target: &Target,
) -> ProfileOrigin {
    let attach = target.services.iter().any(|s| s.record == Recorded::Window);
    match (brought.is_empty(), profile_from, attach) {
        (false, _, _) => ProfileOrigin::Brought,
        (true, Some(_), attach) => ProfileOrigin::Stale { attach },
        (true, None, true) => ProfileOrigin::Attached,
        (true, None, false) => ProfileOrigin::Trained,
    }
}

/// The one variant of a file that lists none.
fn baseline(compiler: Compiler) -> Variant {
    Variant {
        name: "baseline".to_owned(),
        compiler,
        optimize: Vec::new(),
        cflags: String::new(),
        ldflags: String::new(),
        env: BTreeMap::new(),
        prebuilt: None,
        params: BTreeMap::new(),
        partial_training: false,
        sample_event: None,
        call_chains: None,
        bolt_profile: BoltProfile::Auto,
        go_pgo: GoPgoSource::default(),
        march: None,
        train_stop: TrainStop::Stop,
        system: Vec::new(),
        brought: Vec::new(),
        axes: BTreeMap::new(),
        profile_from: None,
        source: None,
        profile_origin: ProfileOrigin::Trained,
        profile_donor: None,
        recording: None,
    }
}
