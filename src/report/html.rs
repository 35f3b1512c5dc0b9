//! `report.html`: one self-contained page (no network, no script) with a
//! race's leaderboard and charts, the summary, an SVG chart per workload and
//! metric (every repetition per variant, and each ratio with its confidence
//! interval), the rules, the warnings and the environment.

use std::fmt::Write as _;

use anyhow::Result;

use super::exporter::Exporter;
use super::format::{improvement, scale_for};
use super::sections::{headline, load_charts, nodes, race};
use crate::analysis::results::{ComparisonEntry, Measurement};
use crate::analysis::Results;
use crate::stats::Verdict;

/// Renders results as a self-contained HTML page.
pub struct Html;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}\
th:first-child,td:first-child{text-align:left}.faster{color:#1a7f37;font-weight:600}.slower{color:#c62828;font-weight:600}\
.nsd{color:#555}pre{background:#f6f6f6;padding:1em;overflow:auto}svg{background:#fcfcfc;border:1px solid #ddd;margin:.5em 0}";

/// Escape text for HTML.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn verdict_class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::Same => "same",
        Verdict::Undecided => "undecided",
    }
}

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn describe(&self) -> &'static str {
        "report.html: one self-contained page with charts"
    }

    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>afterburner: {t}</title><style>{STYLE}</style></head><body>\n<h1>afterburner report: {t}</h1>\n<p>Run {id}: {r} counted repetitions per variant after {w} warmup, interleaved in rounds shuffled with seed {seed}; baseline <code>{b}</code>.</p>\n",
            t = esc(&results.target),
            id = esc(&results.run_id),
            r = results.repetitions,
            w = results.warmup,
            seed = results.seed,
            b = esc(&results.baseline)
        );
        race::html(&mut out, results, esc);
        out.push_str(&headline::html(results, esc));
        for group in results.groups() {
            section(&mut out, results, &group.rows, &group.comparisons);
        }
        nodes::html(&mut out, results, esc);
        load_charts::render(&mut out, results, esc);
        if let Some(explained) = &results.explained {
            out.push_str(&crate::explain::render::html(
                explained,
                super::markdown::EXPLAIN_TOP,
            ));
        }
        if let Some(simulated) = &results.simulated {
            out.push_str(&crate::explain::render::simulation_html(simulated));
        }
        let _ = writeln!(out, "<h2>How verdicts are decided</h2><ul>");
        for rule in results.rules() {
            let _ = writeln!(out, "<li>{}</li>", esc(rule));
        }
        let _ = writeln!(out, "</ul>");
        if !results.warnings.is_empty() {
            let _ = writeln!(out, "<h2>Warnings</h2><ul>");
            for w in &results.warnings {
                let _ = writeln!(out, "<li>{}</li>", esc(&w.message));
            }
            let _ = writeln!(out, "</ul>");
        }
        let _ = writeln!(
            out,
            "<h2>Environment</h2><pre>{}</pre></body></html>",
            esc(&results.environment.render_text())
        );
        Ok(out.into_bytes())
    }
}

fn section(
    out: &mut String,
    results: &Results,
    rows: &[&Measurement],
    comparisons: &[&ComparisonEntry],
) {
    let Some(first) = rows.first() else { return };
    let scale = scale_for(&first.metric.unit, first.summary.mean);
    let unit = scale.label(&first.metric.unit);
    let _ = writeln!(
        out,
        "<h2>{} / {} ({}, {} is better)</h2>\n<table><tr><th>variant</th><th>mean</th><th>STDDEVP</th><th>STDDEVP/Mean</th><th>Opt/Default</th><th>{:.0}% CI</th><th>verdict</th></tr>",
        esc(&first.workload),
        esc(&first.metric.name),
        esc(unit),
        if first.metric.lower_is_better { "lower" } else { "higher" },
        results.confidence * 100.0
    );
    for m in rows {
        let c = comparisons.iter().find(|c| c.variant == m.variant);
        let (ratio, ci, verdict) = match c {
            Some(c) => (
                format!("{:.3}", c.outcome.ratio),
                format!("{:.3}–{:.3}", c.outcome.ci_low, c.outcome.ci_high),
                format!(
                    "<span class=\"{}\">{}</span> ({})",
                    verdict_class(c.outcome.verdict),
                    c.outcome.verdict,
                    improvement(c.outcome.improvement_pct)
                ),
            ),
            None => ("1.000".to_owned(), String::new(), "baseline".to_owned()),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}%</td><td>{ratio}</td><td>{ci}</td><td>{verdict}</td></tr>",
            esc(&m.variant),
            scale.show(m.summary.mean),
            scale.show(m.summary.stddevp),
            m.summary.cv * 100.0
        );
    }
    let _ = writeln!(out, "</table>");
    strip_plot(out, rows, unit, |v| v * scale.factor, scale.decimals);
    ratio_plot(out, comparisons);
}

/// An axis label short enough for the chart's margin: values of a million
/// or more in SI prefixes to six significant digits ("601.586 M" for
/// 601,586,206 instructions, which in full did not fit), others with the
/// table's decimals.
fn axis_label(value: f64, decimals: usize) -> String {
    let magnitude = value.abs();
    let (factor, prefix) = match magnitude {
        m if m >= 1e12 => (1e12, "T"),
        m if m >= 1e9 => (1e9, "G"),
        m if m >= 1e6 => (1e6, "M"),
        _ => return format!("{value:.decimals$}"),
    };
    format!("{:.3} {prefix}", value / factor)
}

/// Every repetition of every variant as a dot, with the mean as a bar.
fn strip_plot(
    out: &mut String,
    rows: &[&Measurement],
    unit: &str,
    scaled: impl Fn(f64) -> f64,
    decimals: usize,
) {
    let (width, height, left, top, bottom) = (720.0, 220.0, 110.0, 15.0, 40.0);
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|m| m.samples.iter().map(|v| scaled(*v)))
        .collect();
    let (mut low, mut high) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    if !low.is_finite() {
        return;
    }
    let pad = ((high - low) * 0.1).max(high.abs() * 0.01).max(1e-9);
    low -= pad;
    high += pad;
    let y = |v: f64| top + (high - v) / (high - low) * (height - top - bottom);
    let band = (width - left - 10.0) / rows.len() as f64;
    let _ = writeln!(out, "<svg width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"repetitions per variant\">");
    for (label, v) in [(high, high), (low, low)] {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{} {}</text>",
            left - 6.0,
            y(v) + 4.0,
            axis_label(label, decimals),
            esc(unit)
        );
    }
    for (i, m) in rows.iter().enumerate() {
        let cx = left + band * (i as f64 + 0.5);
        for (k, v) in m.samples.iter().enumerate() {
            let jitter = (k as f64 / m.samples.len().max(1) as f64 - 0.5) * band * 0.4;
            let _ = writeln!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#1f77b4\" fill-opacity=\"0.6\"/>",
                cx + jitter,
                y(scaled(*v))
            );
        }
        let my = y(scaled(m.summary.mean));
        let _ = writeln!(out, "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{my:.1}\" y2=\"{my:.1}\" stroke=\"#d62728\" stroke-width=\"2\"/>", cx - band * 0.3, cx + band * 0.3);
        let _ = writeln!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            height - 15.0,
            esc(&m.variant)
        );
    }
    let _ = writeln!(out, "</svg>");
}

/// Each ratio against the baseline with its interval, around a line at 1.
fn ratio_plot(out: &mut String, comparisons: &[&ComparisonEntry]) {
    if comparisons.is_empty() {
        return;
    }
    let (width, row, left) = (720.0, 26.0, 140.0);
    let height = row * comparisons.len() as f64 + 30.0;
    let (mut low, mut high) = comparisons.iter().fold((1.0_f64, 1.0_f64), |(l, h), c| {
        (l.min(c.outcome.ci_low), h.max(c.outcome.ci_high))
    });
    let pad = ((high - low) * 0.1).max(0.005);
    low -= pad;
    high += pad;
    let x = |v: f64| left + (v - low) / (high - low) * (width - left - 20.0);
    let _ = writeln!(out, "<svg width=\"{width}\" height=\"{height:.0}\" role=\"img\" aria-label=\"ratio to baseline with confidence interval\">");
    let _ = writeln!(out, "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"5\" y2=\"{1:.1}\" stroke=\"#999\" stroke-dasharray=\"4\"/><text x=\"{0:.1}\" y=\"{2:.1}\" font-size=\"11\" text-anchor=\"middle\">1.0</text>", x(1.0), height - 20.0, height - 6.0);
    for (i, c) in comparisons.iter().enumerate() {
        let cy = 15.0 + row * i as f64;
        let color = match c.outcome.verdict {
            Verdict::Faster => "#1a7f37",
            Verdict::Slower => "#c62828",
            Verdict::Same => "#357",
            Verdict::Undecided => "#777",
        };
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{cy:.1}\" y2=\"{cy:.1}\" stroke=\"{color}\" stroke-width=\"3\"/><circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{:.3}</text>",
            left - 8.0,
            cy + 4.0,
            esc(&c.variant),
            x(c.outcome.ci_low),
            x(c.outcome.ci_high),
            x(c.outcome.ratio),
            x(c.outcome.ci_high) + 6.0,
            cy + 4.0,
            c.outcome.ratio
        );
    }
    let _ = writeln!(out, "</svg>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_of_large_counts_fit_the_margin() {
        assert_eq!(axis_label(601_586_206.0, 0), "601.586 M");
        assert_eq!(axis_label(13_569_457_000.0, 0), "13.569 G");
        assert_eq!(axis_label(171.3, 2), "171.30");
        assert!(axis_label(-2.5e6, 0).starts_with("-2.500 M"));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }
}
