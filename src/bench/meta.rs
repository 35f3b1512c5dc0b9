//! `meta.json`'s plan: the metrics a bench records, each variant's build,
//! the environment, the seed and a unique run id.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};

use super::sequential;
use crate::build;
use crate::context::Context;
use crate::env::Environment;
use crate::measure::{InstructionCounter, Metric};
use crate::metric::{Builtin, MetricId};
use crate::runs::{BenchMeta, Judging, VariantInfo, SCHEMA_VERSION};
use crate::served;
use crate::toolchain::Stage;

/// A variant's system settings as results record them.
pub(super) fn system_of(
    v: &crate::experiment::Variant,
) -> std::collections::BTreeMap<String, String> {
    v.system
        .iter()
        .map(|s| (s.key.clone(), s.value.clone()))
        .collect()
}

/// The metrics a bench of `e` records: the built-in ones asked for, each
/// workload's figures and load metrics, each service's, and instructions
/// per request where a load's services are counted over its window.
pub(super) fn metrics(
    e: &crate::experiment::Experiment,
    counter: InstructionCounter,
) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = e
        .bench
        .metrics
        .iter()
        .map(|m| Metric::builtin(*m, counter))
        .collect();
    for workload in e.workloads.iter().filter(|w| w.role.benches()) {
        let loads = workload.load.iter().flat_map(served::load_metrics);
        for metric in workload.figures.iter().map(Metric::figure).chain(loads) {
            if !metrics.iter().any(|m| m.name == metric.name) {
                metrics.push(metric);
            }
        }
    }
    metrics.extend(served::service_metrics(e));
    if e.bench.metrics.contains(&Builtin::INSTRUCTIONS)
        && counter == InstructionCounter::Callgrind
        && e.workloads.iter().any(|w| {
            w.role.benches() && w.load.is_some() && served::counted(w.load.as_ref(), counter)
        })
    {
        // Judged as the counter's counts are: by their measured spread. A
        // server's background threads run in the window too, so identical
        // short runs differ (~20% per request for 100 memcached gets) while
        // long ones agree (±0.2% for 50,000).
        metrics.push(MetricId::instructions_per_request(counter.precision()));
    }
    metrics
}

/// The match figures of each of the variant's profiles, where checked.
fn profiles_of(
    cx: &Context,
    v: &crate::experiment::Variant,
) -> Vec<crate::toolchain::matching::ProfileMatch> {
    let dirs = cx.workdir.variant_dirs(&v.name);
    v.rounds()
        .into_iter()
        .filter_map(|round| {
            let stage = dirs.round(round);
            let mut matched = crate::toolchain::matching::read(&stage.profile)?;
            matched.recordings =
                crate::toolchain::recording_cost::read_all(&crate::toolchain::raw_dir(&stage));
            Some(matched)
        })
        .collect()
}

/// How a variant of `prebuilt` binaries was "built": not by afterburner,
/// and not verified.
fn prebuilt_info(
    v: &crate::experiment::Variant,
    binaries: &std::collections::BTreeMap<String, PathBuf>,
) -> VariantInfo {
    VariantInfo {
        name: v.name.clone(),
        optimize: Vec::new(),
        compiler_version: "prebuilt".to_owned(),
        cflags: String::new(),
        ldflags: String::new(),
        goflags: String::new(),
        rustflags: String::new(),
        cargo: String::new(),
        env: v.env.clone(),
        binaries: binaries.clone(),
        build_log: PathBuf::new(),
        axes: v.axes.clone(),
        recording: v.recording.clone(),
        system: system_of(v),
        profile_from: None,
        profile_mismatch: None,
        profiles: Vec::new(),
        build_shared_from: None,
        verified: Some(crate::toolchain::recorded::Verification::skipped(
            v.compiler,
            "prebuilt binaries are not verified",
        )),
    }
}

pub(super) fn bench_meta(
    cx: &Context,
    environment: Environment,
    counter: InstructionCounter,
) -> Result<BenchMeta> {
    let e = &cx.experiment;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seed = e
        .bench
        .seed
        .unwrap_or_else(|| u64::from(now.subsec_nanos()) ^ now.as_secs());
    let metrics = metrics(e, counter);
    let judging = judging(e, &metrics);
    let variants = e
        .variants
        .iter()
        .map(|v| {
            if let Some(binaries) = &v.prebuilt {
                return Ok(prebuilt_info(v, binaries));
            }
            let record = build::current(&cx.workdir, &v.name, Stage::Final)
                .context("invariant: bindings were loaded from this record")?;
            let profile_mismatch = profile_mismatch(v, &record.log);
            Ok(VariantInfo {
                name: v.name.clone(),
                optimize: v.optimize.clone(),
                compiler_version: record.compiler_version,
                cflags: record.cflags,
                ldflags: record.ldflags,
                goflags: record.goflags,
                rustflags: record.rustflags,
                cargo: record.cargo,
                env: v.env.clone(),
                binaries: record.binaries,
                build_log: record.log,
                axes: v.axes.clone(),
                recording: v.recording.clone(),
                system: system_of(v),
                profile_from: profile_from(cx, v),
                profile_mismatch,
                profiles: profiles_of(cx, v),
                build_shared_from: record.shared_from,
                verified: record.verified,
            })
        })
        .collect::<Result<_>>()?;
    Ok(BenchMeta {
        schema_version: SCHEMA_VERSION,
        run_id: run_id(now.as_secs(), &cx.workdir.runs()),
        experiment: e.file.clone(),
        target: e.target.name.clone(),
        seed,
        repetitions: e.bench.repetitions,
        warmup: e.bench.warmup,
        instruction_repetitions: e.bench.instruction_repetitions,
        confidence: e.bench.confidence,
        equivalence: e.bench.equivalence,
        aslr: e.bench.aslr,
        pinning: if e.bench.pin {
            crate::pinning::default_split(&crate::pinning::allowed(), !e.target.services.is_empty())
        } else {
            None
        },
        instruction_counter: counter,
        metrics,
        variants,
        workload_sets: e.workload_sets.clone(),
        training_workloads: e
            .workloads
            .iter()
            .filter(|w| w.role.trains())
            .map(|w| w.name.clone())
            .collect(),
        workloads: e
            .workloads
            .iter()
            .filter(|w| w.role.benches())
            .map(|w| w.name.clone())
            .collect(),
        environment,
        revision: crate::source::fetch(&e.target.source, &cx.workdir.root)
            .ok()
            .and_then(|dir| crate::source::revision(&e.target.source, &dir)),
        sequential: sequential::meta(e),
        stopped: None,
        race: race_meta(e, counter)?,
        judging,
        load_path: None,
    })
}

/// The mismatch warnings of a gcc or clang variant's profiled final build
/// ([`crate::toolchain::mismatch`]); none for other variants.
fn profile_mismatch(
    v: &crate::experiment::Variant,
    log: &Path,
) -> Option<crate::toolchain::mismatch::ProfileMismatch> {
    let compiled = matches!(
        v.compiler,
        crate::toolchain::Compiler::Gcc | crate::toolchain::Compiler::Clang
    );
    (compiled && v.needs_profile())
        .then(|| crate::toolchain::mismatch::count_in_log(log))
        .flatten()
}

/// A stale variant's other revision, as its results name it.
fn profile_from(cx: &Context, v: &crate::experiment::Variant) -> Option<String> {
    let from = v.profile_from.as_ref()?;
    let revision = crate::source::fetch(&from.source, &cx.workdir.root)
        .ok()
        .and_then(|dir| crate::source::revision(&from.source, &dir));
    Some(crate::source::describe(&from.source, revision.as_deref()))
}

/// Each bench workload's headline metric and whether its runs last a
/// fixed time.
fn judging(
    e: &crate::experiment::Experiment,
    metrics: &[Metric],
) -> std::collections::BTreeMap<String, Judging> {
    e.workloads
        .iter()
        .filter(|w| w.role.benches())
        .filter_map(|w| {
            let counted = |id: &MetricId| metrics.iter().any(|m| m.is(id));
            // In a run of fixed duration the instruction total is not judged
            // (a faster build does more in the time): such a workload keeps
            // time in its headline unless its service is counted per request.
            let per_request = MetricId::InstructionsPerRequest;
            let instructions = e
                .bench
                .primary_instructions
                .then(|| {
                    if w.load.is_some() && counted(&per_request) {
                        per_request.clone()
                    } else {
                        MetricId::INSTRUCTIONS
                    }
                })
                .filter(|id| *id == per_request || !served::fixed_duration(w));
            let primary = match instructions {
                Some(id) => id.to_string(),
                None => sequential::primary_metric(w, metrics)?.name.clone(),
            };
            Some((
                w.name.clone(),
                Judging {
                    primary,
                    fixed_duration: served::fixed_duration(w),
                },
            ))
        })
        .collect()
}

/// A sortable, unique run id: UTC date and time, plus a suffix on collision.
pub(crate) fn run_id(unix_secs: u64, runs: &Path) -> String {
    let base = crate::env::format_utc(unix_secs)
        .replace([':', '-'], "")
        .replace('T', "-")
        .replace('Z', "");
    let mut id = base.clone();
    let mut n = 1;
    while runs.join(&id).exists() {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

/// A race's plan (`afterburner race`), none for a bench of the full design.
/// A work screen with nothing this machine's counter can count is refused.
fn race_meta(
    e: &crate::experiment::Experiment,
    counter: InstructionCounter,
) -> Result<Option<crate::runs::RaceMeta>> {
    if e.bench.race.is_some()
        && e.race.screen.is_some()
        && !e
            .workloads
            .iter()
            .any(|w| w.role.benches() && served::counted(w.load.as_ref(), counter))
    {
        anyhow::bail!(
            "{}: [race] screen = \"instructions\" reads the instruction counts, and {} counts no bench workload here (it counts a closed load's window under callgrind only)\nhint: give a bench workload a set amount of work (a `run` command, or a load of `requests = N` or iterations), or remove screen",
            e.file.display(),
            counter.name()
        );
    }
    Ok(e.bench.race.map(|full_rounds| crate::runs::RaceMeta {
        plan: crate::stats::race::RacePlan::new(
            e.bench.confidence,
            e.variants.len(),
            e.race.min,
            e.race.max,
            e.race.equivalence,
        ),
        budget_s: e.race.budget.as_secs_f64(),
        full_rounds,
        left_out: e.race.left_out.clone(),
        screen: e.race.screen,
    }))
}
