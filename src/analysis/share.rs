//! "Share of R's gain": with `[report] gain_reference = "R"`, for each
//! workload, judged metric and variant V (neither the baseline B nor R),
//! how much of R's gain over B that V reaches, `(mean_B − mean_V) /
//! (mean_B − mean_R)`, with Fieller's interval ([`crate::stats::fieller`]):
//! AutoFDO's share of instrumented PGO's gain, a stale profile's share of a
//! fresh one's.
//!
//! The reference is read from the run's experiment file each time a report
//! is drawn, so a run benched before the file named one gets the section
//! from `afterburner report`.

use super::headline::counts_work;
use super::results::{GainShares, Measurement, RecordedShare, Results, ShareEntry, WarningEntry};
use crate::experiment::GainGroup;
use crate::stats::fieller::{share_of_gain, share_of_gain_paired, FiellerSet, GainShare, Group};

/// Read the run's `[report] gain_reference` and `[[report.gain]]` and,
/// where they name one (or the run has a stale variant:
/// [`default_reference`]), put every share of each reference's gain into
/// `results`. A file that is gone costs nothing; one that names no variant
/// of this run costs the section, with a warning that says why.
pub fn attach(results: &mut Results) {
    let names: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let mut recorded: Vec<&str> = Vec::new();
    for of in results.variants.iter().filter_map(|v| v.recording.as_ref()) {
        if !recorded.contains(&of.of.as_str()) {
            recorded.push(&of.of);
        }
    }
    let settings =
        crate::experiment::report_settings(&results.experiment, names.into_iter(), &recorded);
    let settings = match settings {
        Ok(settings) => settings,
        Err(crate::experiment::ExperimentError::Read { .. }) => {
            crate::experiment::ReportSettings::default()
        }
        Err(error) => {
            results.warnings.push(warning(format!(
                "no section \"Share of a reference's gain\": {error}"
            )));
            // A stale run still gets its default reference, as before.
            crate::experiment::ReportSettings::default()
        }
    };
    let mut groups: Vec<GainGroup> = settings
        .gain_reference
        // A run with a stale profile measures it against the fresh one.
        .or_else(|| {
            settings
                .gains
                .is_empty()
                .then(|| default_reference(results))
                .flatten()
        })
        .map(|reference| GainGroup {
            base: results.baseline.clone(),
            reference,
            variants: Vec::new(),
        })
        .into_iter()
        .collect();
    groups.extend(settings.gains);
    let mut all = Vec::new();
    for group in &groups {
        let shares = compute(results, group);
        if shares.shares.is_empty() {
            results.warnings.push(warning(format!(
                "no section \"Share of `{r}`'s gain\": no judged metric has two or more samples of `{b}`, `{r}` and a third variant",
                b = group.base,
                r = group.reference,
            )));
        } else {
            all.push(shares);
        }
    }
    results.gain_shares = all;
}

fn warning(message: String) -> WarningEntry {
    WarningEntry {
        workload: None,
        metric: None,
        variant: None,
        message,
    }
}

/// Every variant's share of `group.reference`'s gain over `group.base`
/// (every variant but those two, or those `group.variants` names), per
/// workload and judged metric (one with comparisons), at the report's
/// confidence; and each variant with `recordings`, across them.
pub fn compute(results: &Results, group: &GainGroup) -> GainShares {
    let (base, reference) = (group.base.as_str(), group.reference.as_str());
    let mut shares = Vec::new();
    for (workload, metrics) in judged(results) {
        let primary = results.primary_metric(workload);
        for metric in metrics {
            let measured = |variant: &str| {
                results.measurements.iter().find(|m| {
                    m.workload == workload && m.metric.name == metric && m.variant == variant
                })
            };
            let (Some(b), Some(r)) = (measured(base), measured(reference)) else {
                continue;
            };
            for v in &results.variants {
                let of = v.recording.as_ref().map(|r| r.of.as_str());
                let measured_here = if group.variants.is_empty() {
                    v.name != base && v.name != reference
                } else {
                    group.measures(&v.name, of)
                };
                if !measured_here {
                    continue;
                }
                let Some((found, paired)) =
                    measured(&v.name).and_then(|m| share(b, m, r, results.confidence))
                else {
                    continue;
                };
                let (ci_low, ci_high) = match found.interval {
                    FiellerSet::Bounded { low, high } => (Some(low), Some(high)),
                    FiellerSet::Unbounded => (None, None),
                };
                shares.push(ShareEntry {
                    workload: workload.to_owned(),
                    metric: metric.to_owned(),
                    variant: v.name.clone(),
                    primary: primary == Some(metric),
                    share: found.estimate,
                    ci_low,
                    ci_high,
                    bounded: ci_low.is_some(),
                    paired,
                    df: found.df,
                });
            }
        }
    }
    let across_recordings = across_recordings(results, &shares);
    GainShares {
        base: base.to_owned(),
        reference: reference.to_owned(),
        rule: rule(results, group, &shares, !across_recordings.is_empty()),
        shares,
        across_recordings,
    }
}

/// Each variant with recordings, per workload and metric where every one
/// of its recordings has a bounded share: their mean and Student's t
/// interval across them ([`crate::stats::mean_t`]).
fn across_recordings(results: &Results, shares: &[ShareEntry]) -> Vec<RecordedShare> {
    let mut out: Vec<RecordedShare> = Vec::new();
    for s in shares {
        let Some(of) = results
            .variants
            .iter()
            .find(|v| v.name == s.variant)
            .and_then(|v| v.recording.as_ref())
            .map(|r| &r.of)
        else {
            continue;
        };
        if out
            .iter()
            .any(|o| o.workload == s.workload && o.metric == s.metric && &o.variant == of)
        {
            continue;
        }
        let recordings = results
            .variants
            .iter()
            .filter(|v| v.recording.as_ref().is_some_and(|r| &r.of == of));
        let values: Option<Vec<f64>> = recordings
            .map(|v| {
                shares
                    .iter()
                    .find(|e| {
                        e.workload == s.workload && e.metric == s.metric && e.variant == v.name
                    })
                    .filter(|e| e.bounded)
                    .and_then(|e| e.share)
            })
            .collect();
        let Some(values) = values else { continue };
        let Some(found) = crate::stats::mean_t::interval(&values, results.confidence) else {
            continue;
        };
        out.push(RecordedShare {
            workload: s.workload.clone(),
            metric: s.metric.clone(),
            variant: of.clone(),
            primary: s.primary,
            shares: values,
            share: found.mean,
            ci_low: found.low,
            ci_high: found.high,
            df: found.df,
        });
    }
    out
}

/// `variant`'s share of `reference`'s gain over `baseline`, and whether it
/// was taken on paired rounds: paired when the three ran in the same rounds
/// (an interleaved bench), as the comparisons are; `None` with fewer than
/// two samples of any.
fn share(
    baseline: &Measurement,
    variant: &Measurement,
    reference: &Measurement,
    confidence: f64,
) -> Option<(GainShare, bool)> {
    if baseline.rounds == variant.rounds && baseline.rounds == reference.rounds {
        let paired = share_of_gain_paired(
            &baseline.samples,
            &variant.samples,
            &reference.samples,
            confidence,
        )?;
        return Some((paired, true));
    }
    let [b, v, r] = [baseline, variant, reference].map(|m| Group::of(&m.samples));
    Some((share_of_gain(&b?, &v?, &r?, confidence), false))
}

/// The judged metrics of each workload, in results order: the headline
/// metric first, the work next, then the others as compared.
fn judged(results: &Results) -> Vec<(&str, Vec<&str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in &results.comparisons {
        match out.iter_mut().find(|(w, _)| *w == c.workload) {
            Some((_, metrics)) if !metrics.contains(&c.metric.as_str()) => metrics.push(&c.metric),
            Some(_) => {}
            None => out.push((&c.workload, vec![&c.metric])),
        }
    }
    for (workload, metrics) in &mut out {
        let primary = results.primary_metric(workload);
        metrics.sort_by_key(|m| {
            if Some(*m) == primary {
                0
            } else if counts_work(m) {
                1
            } else {
                2
            }
        });
    }
    out
}

/// The rule in one sentence, naming the forms of the interval `shares`
/// used.
fn rule(results: &Results, group: &GainGroup, shares: &[ShareEntry], recorded: bool) -> String {
    let reference = &group.reference;
    let paired = shares.iter().any(|s| s.paired);
    let unpaired = shares.iter().any(|s| !s.paired);
    let form = match (paired, unpaired) {
        (true, false) => "each round's two differences from the baseline (the variant's and the reference's, runs interleaved in rounds) one observation, t at rounds − 1 degrees of freedom",
        (false, _) => "each variant's runs an independent sample with its own variance, t at Satterthwaite's degrees of freedom (Hasler, Vonk & Hothorn 2008)",
        (true, true) => "each round's two differences from the baseline one observation where the three ran in the same rounds (t at rounds − 1 degrees of freedom), elsewhere each variant's runs an independent sample with its own variance (t at Satterthwaite's degrees of freedom; results.json's `paired` says which)",
    };
    let across = if recorded {
        format!(" A variant with several recordings (`recordings = N`: each its own profile, trained and recorded alone) also gets the mean of its recordings' shares with Student's t interval across them (mean ± t at recordings − 1 degrees of freedom × their standard error), where every recording's share is bounded: how far the result moves from one recording to the next; `{b}` and `{reference}` are measured once, so their own noise is in every recording's share alike and not in that interval.", b = group.base)
    } else {
        String::new()
    };
    format!(
        "Share = (mean of `{b}` − mean of the variant) / (mean of `{b}` − mean of `{reference}`), the fraction of `{reference}`'s gain the variant reaches (100% = all of it, 0% = none, below 0% = worse than `{b}`); its {c}% interval by Fieller's method (Fieller 1954) for a ratio whose numerator and denominator share `{b}`'s runs, {form}; where `{reference}`'s own gain is not significantly different from zero at that level the interval has no finite bounds, and neither it nor the share is given.{across}",
        b = group.base,
        c = tidy(results.confidence * 100.0),
    )
}

fn tidy(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The gain reference a run with a stale variant (`profile_from`: trained
/// on another revision) gets when its experiment names none: the first
/// fresh variant built like the first stale one (same optimizations, same
/// compiler), other than the baseline.
pub fn default_reference(results: &Results) -> Option<String> {
    let stale = results.variants.iter().find(|v| v.profile_from.is_some())?;
    results
        .variants
        .iter()
        .find(|v| {
            v.name != results.baseline
                && v.profile_from.is_none()
                && v.optimize == stale.optimize
                && v.compiler_version == stale.compiler_version
        })
        .map(|v| v.name.clone())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `reference`'s gain over the run's baseline, for every other variant.
    fn against(results: &Results, reference: &str) -> GainGroup {
        GainGroup {
            base: results.baseline.clone(),
            reference: reference.to_owned(),
            variants: Vec::new(),
        }
    }

    fn hotpath() -> Results {
        serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json")).unwrap()
    }

    /// Neither the baseline nor the reference gets a row; the headline
    /// metric (wall) leads, the instructions follow, then the rest.
    #[test]
    fn every_other_variant_gets_a_row_per_judged_metric_time_first() {
        let results = hotpath();
        let shares = compute(&results, &against(&results, "pgo"));
        let rows: Vec<(&str, &str, bool)> = shares
            .shares
            .iter()
            .map(|s| (s.metric.as_str(), s.variant.as_str(), s.primary))
            .collect();
        assert_eq!(
            rows,
            [
                ("wall", "o3", true),
                ("instructions", "o3", false),
                ("user", "o3", false),
                ("max_rss", "o3", false),
            ]
        );
        // o3 counts what the baseline counts: none of pgo's gain.
        let instructions = &shares.shares[1];
        assert_eq!(instructions.share, Some(0.0));
        assert!(instructions.bounded);
        let against_o3 = compute(&results, &against(&results, "o3"));
        // o3's instructions are the baseline's: no gain, no interval.
        let pgo = against_o3
            .shares
            .iter()
            .find(|s| crate::metric::MetricId::INSTRUCTIONS.is(&s.metric))
            .unwrap();
        assert_eq!(
            (pgo.variant.as_str(), pgo.share, pgo.bounded),
            ("pgo", None, false)
        );
    }

    /// Interleaved rounds pair the runs; a variant that misses a round (a
    /// failed run) is taken unpaired, and the rule names both forms.
    #[test]
    fn rounds_in_common_pair_the_runs_and_a_missing_one_unpairs_them() {
        let mut results = hotpath();
        let paired = compute(&results, &against(&results, "pgo"));
        assert!(paired.shares.iter().all(|s| s.paired), "{paired:?}");
        assert!((paired.shares[0].df - 5.0).abs() < 1e-12);
        assert!(!paired.rule.contains("Satterthwaite"), "{}", paired.rule);
        let wall = results
            .measurements
            .iter_mut()
            .find(|m| m.metric.is(&crate::metric::MetricId::WALL) && m.variant == "o3")
            .unwrap();
        wall.rounds.pop();
        wall.samples.pop();
        let mixed = compute(&results, &against(&results, "pgo"));
        assert!(
            !mixed.shares[0].paired && mixed.shares[1].paired,
            "{mixed:?}"
        );
        assert!(mixed.rule.contains("Satterthwaite"), "{}", mixed.rule);
        assert!(mixed.rule.contains("rounds − 1"), "{}", mixed.rule);
    }

    /// The run's experiment file decides: gone, nothing; naming a variant
    /// the run lacks, a warning and no section; naming one, the section.
    #[test]
    fn the_runs_experiment_file_names_the_reference() {
        let dir = tempfile::tempdir().unwrap();
        let mut results = hotpath();
        results.experiment = dir.path().join("afterburner.toml");
        let warnings = results.warnings.len();
        attach(&mut results);
        assert!(results.gain_shares.is_empty());
        assert_eq!(results.warnings.len(), warnings);
        fs_err::write(&results.experiment, "[report]\ngain_reference = \"pgo2\"\n").unwrap();
        attach(&mut results);
        assert!(results.gain_shares.is_empty());
        let last = &results.warnings.last().unwrap().message;
        assert!(last.contains("afterburner.toml:2:"), "{last}");
        assert!(last.contains("names no variant"), "{last}");
        fs_err::write(&results.experiment, "[report]\ngain_reference = \"pgo\"\n").unwrap();
        attach(&mut results);
        assert_eq!(results.gain_shares[0].reference, "pgo");
    }

    /// A run of `base`, `ref` (10% faster) and three recordings `x.1` …
    /// `x.3` of `x`, whose true shares of `ref`'s gain are `truth`, each
    /// run's wall time off by lognormal noise of `noise`, over `rounds`
    /// interleaved rounds: analysed as a bench is.
    fn recorded_run(
        rng: &mut crate::rng::Rng,
        truth: [f64; 3],
        noise: f64,
        rounds: u32,
    ) -> Results {
        use crate::measure::{InstructionCounter, Metric, RunRecord};
        let names = ["base", "ref", "x.1", "x.2", "x.3"];
        let wall = Metric::builtin(crate::metric::Builtin::WALL, InstructionCounter::Callgrind);
        let mut meta = crate::runs::BenchMeta::for_tests(&names, &["w"], rounds, vec![wall]);
        for (i, v) in meta.variants.iter_mut().skip(2).enumerate() {
            v.recording = Some(crate::experiment::Recording {
                of: "x".to_owned(),
                index: u32::try_from(i).unwrap() + 1,
            });
        }
        let scale = |name: &str| match name {
            "base" => 1.0,
            "ref" => 0.9,
            _ => 1.0 - 0.1 * truth[usize::from(name.as_bytes()[2] - b'1')],
        };
        let mut runs = Vec::new();
        for round in 1..=rounds {
            for name in names {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ~1e8 ns
                let ns = (1e8 * scale(name) * (noise * rng.normal()).exp()) as u64;
                runs.push(RunRecord::timing_for_tests(round, name, "w", ns));
            }
        }
        super::super::analyze::analyze(&meta, &runs)
    }

    fn group_x() -> GainGroup {
        GainGroup {
            base: "base".to_owned(),
            reference: "ref".to_owned(),
            variants: vec!["x".to_owned()],
        }
    }

    /// Each recording gets its own share; `x` gets their mean and the t
    /// interval across them, and the group measures only what it names.
    #[test]
    fn recordings_get_their_shares_and_one_across_them() {
        let mut rng = crate::rng::Rng::new(1);
        let results = recorded_run(&mut rng, [0.5, 0.6, 0.8], 1e-5, 5);
        let shares = compute(&results, &group_x());
        let each: Vec<(&str, f64)> = shares
            .shares
            .iter()
            .map(|s| (s.variant.as_str(), s.share.unwrap()))
            .collect();
        assert_eq!(each.len(), 3, "{each:?}");
        for ((name, share), want) in each.iter().zip([0.5, 0.6, 0.8]) {
            assert!((share - want).abs() < 0.01, "{name}: {share}");
        }
        let [across] = &shares.across_recordings[..] else {
            panic!("{:?}", shares.across_recordings)
        };
        assert_eq!((across.variant.as_str(), across.shares.len()), ("x", 3));
        let want = crate::stats::mean_t::interval(&across.shares, 0.95).unwrap();
        assert!((across.share - 0.633).abs() < 0.01, "{across:?}");
        assert!(
            (across.ci_low - want.low).abs() < 1e-12 && (across.ci_high - want.high).abs() < 1e-12
        );
        assert!(
            shares.rule.contains("Student's t interval across them"),
            "{}",
            shares.rule
        );
        // Without recordings in the group, no row across them.
        let one = GainGroup {
            variants: vec!["x.2".to_owned()],
            ..group_x()
        };
        let only = compute(&results, &one);
        assert_eq!(only.shares.len(), 1);
        assert!(only.across_recordings.is_empty());
        assert!(!only.rule.contains("across them"), "{}", only.rule);
    }

    /// The truth known: recordings whose true shares are drawn from a
    /// normal distribution around 60% (sd 10 points), measured with 0.3%
    /// noise per run; the 95% interval across three recordings covers the
    /// mean of that distribution in about 95% of 300 simulated runs.
    #[test]
    fn the_interval_across_recordings_covers_the_true_mean_share() {
        let mut rng = crate::rng::Rng::new(7);
        let trials = 300;
        let mut covered = 0;
        for _ in 0..trials {
            let truth = [0.0; 3].map(|_| 0.6 + 0.1 * rng.normal());
            let results = recorded_run(&mut rng, truth, 0.003, 5);
            let shares = compute(&results, &group_x());
            let across = &shares.across_recordings[0];
            covered += usize::from(across.ci_low <= 0.6 && 0.6 <= across.ci_high);
        }
        // Binomial(300, 0.95): 275 to 293 holds about 99.6% of the mass.
        assert!((275..=293).contains(&covered), "{covered} of {trials}");
    }

    /// hotpath's run (baseline, pgo, o3) with a fourth variant, `stale`:
    /// `pgo` again, its profile from another revision.
    pub(crate) fn with_stale(optimize_like: &str) -> Results {
        let mut results: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        let like = results
            .variants
            .iter()
            .find(|v| v.name == optimize_like)
            .unwrap();
        let stale = crate::runs::VariantInfo {
            name: "stale".to_owned(),
            profile_from: Some("git https://example.org/x.git @ v1 (0123abcd)".to_owned()),
            profile_mismatch: Some(crate::toolchain::mismatch::ProfileMismatch {
                warnings: 7,
                changed: 2,
                moved: 3,
                missing: 1,
                changed_names: vec!["walk".to_owned(), "main".to_owned()],
            }),
            ..like.clone()
        };
        results.variants.push(stale);
        results
    }

    #[test]
    fn the_fresh_variant_built_alike_is_the_default_reference() {
        assert_eq!(
            default_reference(&with_stale("pgo")).as_deref(),
            Some("pgo")
        );
        // A stale o3 is measured against the fresh o3: same optimize.
        assert_eq!(default_reference(&with_stale("o3")).as_deref(), Some("o3"));
        let plain: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        assert_eq!(default_reference(&plain), None);
    }
}
