//! "Stale profiles": for a run with a variant whose profile was trained on
//! another revision (`profile_from`), none (the baseline) vs fresh vs
//! stale — what each was trained on, what the compiler said about the
//! profile it was given ([`crate::toolchain::mismatch`]) and, from the
//! "Share of a reference's gain" section, how much of the fresh profile's
//! gain the stale one keeps (the fresh variant is that section's default
//! reference: [`crate::analysis::share::default_reference`]).

use std::fmt::Write as _;

use crate::analysis::Results;
use crate::metric::MetricId;
use crate::runs::VariantInfo;

/// How a variant's profile relates to the source it was built from.
fn role(v: &VariantInfo, baseline: &str) -> Option<&'static str> {
    if v.profile_from.is_some() {
        Some("stale")
    } else if v.profile_mismatch.is_some() {
        Some("fresh")
    } else if v.name == baseline {
        Some("none")
    } else {
        None
    }
}

/// The share cell of a variant: per workload, the headline metric's share
/// where the reference's own gain on it is significant, and the
/// instructions' ("objects: 98% instructions").
fn share_cells(results: &Results, variant: &str) -> String {
    // The stale profile's share is that of the run's first reference.
    let Some(shares) = results.gain_shares.first() else {
        return "–".to_owned();
    };
    if variant == shares.reference {
        return "100% (reference)".to_owned();
    }
    let cells: Vec<String> = shares
        .shares
        .iter()
        .filter(|s| s.variant == variant && (s.primary || MetricId::INSTRUCTIONS.is(&s.metric)))
        .filter_map(|s| {
            let share = s.share.filter(|_| s.bounded)?;
            Some(format!(
                "{}: {:.0}% {}",
                s.workload,
                share * 100.0,
                s.metric
            ))
        })
        .collect();
    if cells.is_empty() {
        "–".to_owned()
    } else {
        cells.join("; ")
    }
}

/// Changed functions a report names, at most (results.json keeps more).
const NAMES_SHOWN: usize = 5;

/// The mismatch cells: changed functions (with the first names), moved
/// functions, functions without a profile, warning lines.
fn mismatch_cells(v: &VariantInfo) -> [String; 4] {
    let Some(m) = &v.profile_mismatch else {
        return ["–", "–", "–", "–"].map(str::to_owned);
    };
    let names = if m.changed_names.is_empty() {
        String::new()
    } else {
        let shown = &m.changed_names[..m.changed_names.len().min(NAMES_SHOWN)];
        let more = if (m.changed as usize) > shown.len() {
            ", …"
        } else {
            ""
        };
        format!(" ({}{more})", shown.join(", "))
    };
    [
        format!("{}{names}", m.changed),
        m.moved.to_string(),
        m.missing.to_string(),
        m.warnings.to_string(),
    ]
}

/// What a variant's profile was trained on.
fn trained_on(results: &Results, v: &VariantInfo, role: &str) -> String {
    match (&v.profile_from, role) {
        (Some(from), _) => from.clone(),
        (None, "fresh") => match &results.revision {
            Some(r) => format!("this revision ({r})"),
            None => "this revision".to_owned(),
        },
        _ => "–".to_owned(),
    }
}

/// The section of report.md; empty unless a variant has a stale profile.
pub fn markdown(results: &Results) -> String {
    if !results.variants.iter().any(|v| v.profile_from.is_some()) {
        return String::new();
    }
    let mut out = String::from(
        "## Stale profiles\n\nA stale variant's profile was trained on another revision (`profile_from`) with the same training workloads and applied to this revision's build. Mismatch: what the compiler warned about the profile in the final build's log (gcc `-Wcoverage-mismatch` and `-Wmissing-profile`, clang's hash-mismatch and `-Wprofile-instr-*` warnings), each function counted once: *changed* functions lost their profile (their control flow no longer matches it), *moved* ones kept it (only their source lines changed), functions *without profile* had none. Share: of the fresh profile's gain over no profile, where that gain is significant.\n\n| Variant | Profile | Trained on | Changed | Moved | Without profile | Warnings | Share of the fresh gain |\n|---|---|---|---|---:|---:|---:|---|\n",
    );
    for v in &results.variants {
        let Some(role) = role(v, &results.baseline) else {
            continue;
        };
        let trained = trained_on(results, v, role);
        let [changed, moved, missing, warnings] = mismatch_cells(v);
        let share = if role == "none" {
            "0% (baseline)".to_owned()
        } else {
            share_cells(results, &v.name)
        };
        let _ = writeln!(
            out,
            "| `{}` | {role} | {trained} | {changed} | {moved} | {missing} | {warnings} | {share} |",
            v.name
        );
    }
    out.push('\n');
    out
}

/// The lines of the terminal summary.
pub fn text(results: &Results) -> String {
    if !results.variants.iter().any(|v| v.profile_from.is_some()) {
        return String::new();
    }
    let mut out = String::from(
        "\nstale profiles (functions changed / moved / without profile, warnings in the final build):\n",
    );
    for v in &results.variants {
        let Some(role) = role(v, &results.baseline) else {
            continue;
        };
        let [changed, moved, missing, warnings] = mismatch_cells(v);
        let _ = writeln!(
            out,
            "  {role:<5} {}  {changed} / {moved} / {missing}, {warnings}{}",
            v.name,
            v.profile_from
                .as_ref()
                .map(|f| format!("  trained on {f}"))
                .unwrap_or_default()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::share::tests::with_stale;

    #[test]
    fn the_section_has_none_fresh_and_stale_with_the_mismatch_figures() {
        let md = markdown(&with_stale("pgo"));
        assert!(md.contains("| `baseline` | none |"), "{md}");
        assert!(
            md.contains("| `stale` | stale | git https://example.org/x.git @ v1 (0123abcd) | 2 (walk, main) | 3 | 1 | 7 |"),
            "{md}"
        );
        // hotpath's pgo has no mismatch record (a run from before them):
        // it is not called fresh.
        assert!(!md.contains("| `pgo` |"), "{md}");
        let plain: Results =
            serde_json::from_str(include_str!("../../../tests/fixtures/results/hotpath.json"))
                .unwrap();
        assert!(markdown(&plain).is_empty());
    }
}
