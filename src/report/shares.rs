//! The shares of a run as one markdown table, for a case study: a row per
//! workload, a column per measured variant of each reference's gain
//! (`[[report.gain]]`: each compiler against its own `-O2` and PGO), each
//! cell the work's share (instructions, or instructions per request) with
//! its interval across recordings where the variant has them, and the
//! reference's own cut; then a line saying when, on what and how.

use std::fmt::Write as _;

use anyhow::Result;

use super::exporter::Exporter;
use super::sections::share::{base, percent};
use crate::analysis::headline::counts_work;
use crate::analysis::results::GainShares;
use crate::analysis::Results;

pub struct Shares;

impl Exporter for Shares {
    fn name(&self) -> &'static str {
        "shares"
    }

    fn describe(&self) -> &'static str {
        "each variant's share of its reference's cut in instructions as one markdown table (a row per workload; across recordings where it has them), with the machine and date"
    }

    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        Ok(table(results).into_bytes())
    }
}

/// A measured variant of one group: its name as the file gives it, and
/// whether it has recordings.
struct Column<'a> {
    group: &'a GainShares,
    variant: String,
    recorded: bool,
}

fn columns(results: &Results) -> Vec<Column<'_>> {
    let mut out: Vec<Column> = Vec::new();
    for group in &results.gain_shares {
        for s in group.shares.iter().filter(|s| counts_work(&s.metric)) {
            let of = results
                .variants
                .iter()
                .find(|v| v.name == s.variant)
                .and_then(|v| v.recording.as_ref())
                .map(|r| r.of.clone());
            let (variant, recorded) = match of {
                Some(of) => (of, true),
                None => (s.variant.clone(), false),
            };
            if !out
                .iter()
                .any(|c| std::ptr::eq(c.group, group) && c.variant == variant)
            {
                out.push(Column {
                    group,
                    variant,
                    recorded,
                });
            }
        }
    }
    out
}

fn table(results: &Results) -> String {
    let columns = columns(results);
    if columns.is_empty() {
        return "No shares of a reference's gain in instructions in this run: name a `gain_reference` or `[[report.gain]]` in its experiment file and count instructions.\n".to_owned();
    }
    let mut out = String::from("| workload |");
    for c in &columns {
        let _ = write!(out, " `{}` of `{}`'s cut |", c.variant, c.group.reference);
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(columns.len()));
    out.push('\n');
    let mut workloads: Vec<&str> = Vec::new();
    for c in &columns {
        for s in &c.group.shares {
            if counts_work(&s.metric) && !workloads.contains(&s.workload.as_str()) {
                workloads.push(&s.workload);
            }
        }
    }
    for workload in workloads {
        let _ = write!(out, "| {workload} |");
        for c in &columns {
            let _ = write!(out, " {} |", cell(results, c, workload));
        }
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&provenance(results, &columns));
    out
}

/// "74% (60% to 88%, 3 recordings) of −5.7%": the share (the mean across
/// recordings, with their interval; else the one share and its Fieller
/// interval) and the reference's own cut against the base.
fn cell(results: &Results, c: &Column, workload: &str) -> String {
    let metric = c
        .group
        .shares
        .iter()
        .find(|s| s.workload == workload && counts_work(&s.metric))
        .map(|s| s.metric.as_str());
    let Some(metric) = metric else {
        return "–".to_owned();
    };
    let cut = match (
        results.mean(workload, base(results, c.group), metric),
        results.mean(workload, &c.group.reference, metric),
    ) {
        (Some(b), Some(r)) if b > 0.0 => format!(" of {:+.1}%", (r / b - 1.0) * 100.0),
        _ => String::new(),
    };
    let share = if c.recorded {
        c.group
            .across_recordings
            .iter()
            .find(|a| a.workload == workload && a.metric == metric && a.variant == c.variant)
            .map(|a| {
                format!(
                    "{} ({} to {}, {} recordings)",
                    percent(a.share),
                    percent(a.ci_low),
                    percent(a.ci_high),
                    a.shares.len()
                )
            })
    } else {
        c.group
            .shares
            .iter()
            .find(|s| s.workload == workload && s.metric == metric && s.variant == c.variant)
            .and_then(|s| match (s.share, s.ci_low, s.ci_high) {
                (Some(x), Some(low), Some(high)) => Some(format!(
                    "{} ({} to {}, one recording)",
                    percent(x),
                    percent(low),
                    percent(high)
                )),
                _ => None,
            })
    };
    share.map_or_else(
        || format!("– (no bounded share{cut})"),
        |share| format!("{share}{cut}"),
    )
}

/// When, on what machine and with which compilers, and how a cell's
/// interval was taken.
fn provenance(results: &Results, columns: &[Column]) -> String {
    let env = &results.environment;
    let mut compilers: Vec<&str> = Vec::new();
    for c in columns {
        let version = results
            .variants
            .iter()
            .find(|v| {
                v.name == c.variant || v.recording.as_ref().is_some_and(|r| r.of == c.variant)
            })
            .map(|v| v.compiler_version.as_str());
        if let Some(v) = version.filter(|v| !v.is_empty() && !compilers.contains(v)) {
            compilers.push(v);
        }
    }
    format!(
        "*{date}, {cpu} ({cpus} logical CPUs{vm}), {distro}, kernel {kernel}; {compilers}; target revision {revision}. Each cell: the variant's share of the reference's cut in the work (callgrind's count) over the base, (base − variant) / (base − reference); with recordings, the mean of each recording's share and its {c:.0}% Student's t interval across them, else Fieller's interval. Base and reference per column: {groups}.*\n",
        date = env.captured_at.get(..10).unwrap_or(&env.captured_at),
        cpu = env.cpu_model.as_deref().unwrap_or("an unknown CPU"),
        cpus = env.logical_cpus,
        vm = if env.virtualized { ", a VM" } else { "" },
        distro = env.distro.as_deref().unwrap_or("an unknown system"),
        kernel = env.kernel.as_deref().unwrap_or("unknown"),
        compilers = compilers.join(", "),
        revision = results.revision.as_deref().unwrap_or("unknown"),
        c = results.confidence * 100.0,
        groups = {
            let mut groups: Vec<String> = Vec::new();
            for g in columns.iter().map(|c| {
                format!("`{}` from `{}`", c.group.reference, base(results, c.group))
            }) {
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
            groups.join("; ")
        },
    )
}
