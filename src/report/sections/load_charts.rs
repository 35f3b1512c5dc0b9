//! SVG charts of load workloads for `report.html`: latency by percentile
//! (the HdrHistogram plot: the x axis stretches the tail, 90% → 99% →
//! 99.9% equally spaced) and the per-interval time series, one line per
//! variant.

use std::fmt::Write as _;

use crate::analysis::results::{LoadCurves, Results};

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// A line per variant: name and points (x, y).
type Lines<'a> = Vec<(&'a str, Vec<(f64, f64)>)>;

/// One section per load workload: its latency curve and time series.
pub fn render(out: &mut String, results: &Results, esc: impl Fn(&str) -> String) {
    let mut workloads: Vec<&str> = results.loads.iter().map(|l| l.workload.as_str()).collect();
    workloads.dedup();
    for workload in workloads {
        let curves: Vec<&LoadCurves> = results
            .loads
            .iter()
            .filter(|l| l.workload == workload)
            .collect();
        let _ = writeln!(
            out,
            "<h2>{} / latency by percentile (ms)</h2><p>The last counted run of each variant; the axis spreads the tail: 90%, 99%, 99.9% and 99.99% are equally spaced.</p>",
            esc(workload)
        );
        let lines: Lines = curves
            .iter()
            .map(|c| {
                let points = c
                    .percentiles
                    .iter()
                    .map(|p| (tail_x(p.percentile), p.ms))
                    .collect();
                (c.variant.as_str(), points)
            })
            .collect();
        let ticks = [
            (0.0, "0%"),
            (1.0, "90%"),
            (2.0, "99%"),
            (3.0, "99.9%"),
            (4.0, "99.99%"),
        ];
        chart(out, &lines, &ticks, "ms", true, &esc);
        let _ = writeln!(
            out,
            "<h2>{} / per interval: p99 latency (ms) and throughput (req/s)</h2>",
            esc(workload)
        );
        let p99 = series_lines(&curves, |r| r.p99_ms);
        let rate = series_lines(&curves, |r| r.achieved_rps);
        let end = curves
            .iter()
            .flat_map(|c| c.series.iter().map(|r| r.time_s))
            .fold(0.0_f64, f64::max);
        let labels: Vec<(f64, String)> = (0..=4)
            .map(|i| {
                (
                    end * f64::from(i) / 4.0,
                    format!("{:.0}s", end * f64::from(i) / 4.0),
                )
            })
            .collect();
        let ticks: Vec<(f64, &str)> = labels.iter().map(|(x, l)| (*x, l.as_str())).collect();
        chart(out, &p99, &ticks, "ms", false, &esc);
        chart(out, &rate, &ticks, "req/s", false, &esc);
        let busy: Lines = curves
            .iter()
            .filter(|c| !c.cpu.is_empty())
            .map(|c| {
                let points = c.cpu.iter().map(|r| (r.time_s, r.total.busy())).collect();
                (c.variant.as_str(), points)
            })
            .collect();
        if !busy.is_empty() {
            let _ = writeln!(
                out,
                "<h2>{} / CPU busy per interval (%, the whole machine: user + system + steal)</h2>",
                esc(workload)
            );
            chart(out, &busy, &ticks, "%", false, &esc);
        }
    }
}

/// One line per variant of a time-series column against time.
fn series_lines<'a>(
    curves: &[&'a LoadCurves],
    column: impl Fn(&crate::load::SeriesRow) -> f64,
) -> Lines<'a> {
    curves
        .iter()
        .map(|c| {
            let points = c.series.iter().map(|r| (r.time_s, column(r))).collect();
            (c.variant.as_str(), points)
        })
        .collect()
}

/// The x position of a percentile on the tail-stretching axis.
fn tail_x(percentile: f64) -> f64 {
    let rest = (1.0 - percentile / 100.0).max(1e-5);
    (-rest.log10()).min(5.0)
}

/// A number for an axis label: no decimals for large values.
fn label(v: f64, unit: &str) -> String {
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.3} {unit}")
    }
}

/// A line chart with a legend; `ticks` label the x axis. With `log_y` the
/// y axis is logarithmic (latency curves span microseconds to seconds).
fn chart(
    out: &mut String,
    lines: &Lines,
    ticks: &[(f64, &str)],
    unit: &str,
    log_y: bool,
    esc: &impl Fn(&str) -> String,
) {
    let (width, height, left, right, top, bottom) = (760.0, 260.0, 110.0, 130.0, 15.0, 35.0);
    let points = lines.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0_f64);
    let mut y_min = f64::INFINITY;
    for (x, y) in points {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y1 = y1.max(*y);
        if *y > 0.0 {
            y_min = y_min.min(*y);
        }
    }
    for (x, _) in ticks {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
    }
    if !x0.is_finite() || x1 <= x0 {
        return;
    }
    let top_value = if y1 > 0.0 { y1 } else { 1.0 };
    let log_y = log_y && y_min.is_finite() && top_value > y_min;
    let (lo, hi) = if log_y {
        (y_min.log10(), top_value.log10() + 0.05)
    } else {
        (0.0, top_value * 1.1)
    };
    let sx = |x: f64| left + (x - x0) / (x1 - x0) * (width - left - right);
    let sy = |y: f64| {
        let v = if log_y { y.max(y_min).log10() } else { y };
        top + (hi - v) / (hi - lo) * (height - top - bottom)
    };
    let _ = writeln!(out, "<svg width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"line chart, {unit}\">");
    let _ = writeln!(
        out,
        "<line x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{:.1}\" stroke=\"#999\"/><line x1=\"{left}\" x2=\"{:.1}\" y1=\"{2:.1}\" y2=\"{2:.1}\" stroke=\"#999\"/>",
        height - bottom,
        width - right,
        height - bottom
    );
    let bottom_value = if log_y { y_min } else { 0.0 };
    for v in [bottom_value, top_value] {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            left - 5.0,
            sy(v) + 4.0,
            esc(&label(v, unit))
        );
    }
    if log_y {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"#777\">log scale</text>",
            left - 5.0,
            (top + height - bottom) / 2.0
        );
    }
    for (x, label) in ticks {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            sx(*x),
            height - bottom + 15.0,
            esc(label)
        );
    }
    for (i, (name, points)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        let _ = writeln!(
            out,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        let ly = top + 16.0 * i as f64 + 8.0;
        let _ = writeln!(
            out,
            "<line x1=\"{0:.1}\" x2=\"{1:.1}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"3\"/><text x=\"{2:.1}\" y=\"{3:.1}\" font-size=\"12\">{4}</text>",
            width - right + 10.0,
            width - right + 30.0,
            width - right + 35.0,
            ly + 4.0,
            esc(name)
        );
    }
    let _ = writeln!(out, "</svg>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_axis_spaces_nines_evenly() {
        assert!((tail_x(0.0) - 0.0).abs() < 1e-12);
        assert!((tail_x(90.0) - 1.0).abs() < 1e-9);
        assert!((tail_x(99.9) - 3.0).abs() < 1e-9);
        assert!((tail_x(100.0) - 5.0).abs() < 1e-9);
    }
}
