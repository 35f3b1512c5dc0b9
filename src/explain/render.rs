//! Drawing an [`Explanation`]: a table per workload and variant, by object
//! then by function, as terminal text (`afterburner explain`), Markdown
//! (`report.md`) or HTML (`report.html`).

use std::fmt::Write as _;

use super::diff::{Difference, FunctionChange};
use super::simulation::{SimulatedRun, Simulation};
use super::table::{draw_html, draw_markdown, draw_text, esc, Table};
use super::Explanation;
use crate::units::grouped;

/// Which differences to draw, and how many functions of each.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// Only this variant (default: every one against the baseline).
    pub variant: Option<&'a str>,
    /// Only this workload (default: every one).
    pub workload: Option<&'a str>,
    /// Functions shown per difference, largest change first.
    pub top: usize,
}

impl Selection<'_> {
    fn wants(&self, d: &Difference) -> bool {
        self.variant.is_none_or(|v| v == d.variant) && self.workload.is_none_or(|w| w == d.workload)
    }
}

/// What a reader needs to read the numbers, said once above the tables.
const READING: &str = "Instructions per counted run, or per request for a service counted over a load's window (callgrind, averaged over the counted runs); a function's own instructions, not what it calls. Fragments and clones (`.cold`, `.part.N`, `.isra.N`, `.constprop.N`, BOLT's `/N`) are one row, their names under pieces: `+name` only in the variant, `-name` only in the baseline. `gone` is a function the variant no longer runs (often inlined into its caller), `new` one only the variant runs. `of total` is the change against the baseline's total.";

/// The explanation as terminal text, for `afterburner explain`.
pub fn text(explanation: &Explanation, selection: &Selection) -> String {
    let mut out = format!(
        "run {}: where the instructions went\n{READING}\n",
        explanation.run_id
    );
    for d in explanation
        .differences
        .iter()
        .filter(|d| selection.wants(d))
    {
        let _ = write!(
            out,
            "\nworkload `{}`: `{}` against `{}` ({})\n\n",
            d.workload,
            d.variant,
            explanation.baseline,
            total_line(d)
        );
        out.push_str(&draw_text(&objects(d, &explanation.baseline)));
        out.push('\n');
        out.push_str(&draw_text(&functions(
            d,
            &explanation.baseline,
            selection.top,
        )));
        out.push_str(&rest_line(d, selection.top));
    }
    for note in &explanation.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// A few lines for the terminal summary: per workload and variant, the
/// functions whose instructions changed most.
pub fn summary(explanation: &Explanation) -> String {
    const SHOWN: usize = 3;
    let mut out = String::new();
    for d in &explanation.differences {
        let top: Vec<String> = d
            .functions
            .iter()
            .filter(|f| changes(f))
            .take(SHOWN)
            .map(|f| format!("{} {} ({})", f.function, signed(f.change()), f.object))
            .collect();
        if !top.is_empty() {
            let _ = writeln!(out, "  {} / {}: {}", d.workload, d.variant, top.join(", "));
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("\nwhere the instructions went (`afterburner explain` shows more):\n{out}")
}

/// The section "Where the instructions went" of `report.md`.
pub fn markdown(explanation: &Explanation, top: usize) -> String {
    let mut out = format!("## Where the instructions went\n\n{READING}\n\n");
    for d in &explanation.differences {
        let _ = write!(
            out,
            "### Workload `{}`: `{}` against `{}`\n\n{}.\n\n",
            d.workload,
            d.variant,
            explanation.baseline,
            total_line(d)
        );
        out.push_str(&draw_markdown(&objects(d, &explanation.baseline)));
        out.push('\n');
        out.push_str(&draw_markdown(&functions(d, &explanation.baseline, top)));
        out.push('\n');
        let rest = rest_line(d, top);
        if !rest.is_empty() {
            let _ = writeln!(out, "{}", rest.trim());
        }
    }
    for note in &explanation.notes {
        let _ = writeln!(out, "- {note}");
    }
    out.push('\n');
    out.push_str(&super::binary::markdown(&explanation.binaries));
    out
}

/// The section "Where the instructions went" of `report.html`.
pub fn html(explanation: &Explanation, top: usize) -> String {
    let mut out = format!(
        "<h2>Where the instructions went</h2>\n<p>{}</p>\n",
        code_spans(&esc(READING))
    );
    let drawn = largest_changes(explanation, MAX_FLAME_GRAPHS);
    for (i, d) in explanation.differences.iter().enumerate() {
        let _ = writeln!(
            out,
            "<h3>Workload {}: {} against {}</h3>\n<p>{}</p>",
            esc(&d.workload),
            esc(&d.variant),
            esc(&explanation.baseline),
            esc(&total_line(d))
        );
        out.push_str(&draw_html(&objects(d, &explanation.baseline)));
        out.push_str(&draw_html(&functions(d, &explanation.baseline, top)));
        let rest = rest_line(d, top);
        if !rest.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", esc(rest.trim()));
        }
        if drawn.contains(&i) {
            flame_graph(&mut out, d, &explanation.baseline);
        } else {
            let _ = writeln!(
                out,
                "<p>No flame graph here: the page draws the {MAX_FLAME_GRAPHS} largest changes of the total only (each is 100–300 KB).</p>"
            );
        }
    }
    if !explanation.notes.is_empty() {
        out.push_str("<ul>");
        for note in &explanation.notes {
            let _ = write!(out, "<li>{}</li>", esc(note));
        }
        out.push_str("</ul>\n");
    }
    let binaries = super::binary::text(&explanation.binaries);
    if !binaries.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Binaries</h3>\n<pre>{}</pre>",
            esc(binaries.trim())
        );
    }
    out
}

/// What `explain --simulate` found, as terminal text, labelled a model.
pub fn simulation_text(simulation: &Simulation) -> String {
    let mut out = format!(
        "run {}: simulated caches and branches\n{SIMULATION_READING}\n",
        simulation.run_id
    );
    for (workload, rows) in by_workload(simulation) {
        let _ = write!(out, "\nworkload `{workload}`\n\n");
        out.push_str(&draw_text(&simulated_table(&rows)));
    }
    out
}

/// The section "Simulated caches and branches" of `report.md`, when
/// `explain --simulate` ran.
pub fn simulation_markdown(simulation: &Simulation) -> String {
    let mut out = format!("## Simulated caches and branches\n\n{SIMULATION_READING}\n\n");
    for (workload, rows) in by_workload(simulation) {
        let _ = write!(out, "### Workload `{workload}`\n\n");
        out.push_str(&draw_markdown(&simulated_table(&rows)));
        out.push('\n');
    }
    out
}

/// The section "Simulated caches and branches" of `report.html`.
pub fn simulation_html(simulation: &Simulation) -> String {
    let mut out = format!(
        "<h2>Simulated caches and branches</h2>\n<p>{}</p>\n",
        esc(SIMULATION_READING)
    );
    for (workload, rows) in by_workload(simulation) {
        let _ = writeln!(out, "<h3>Workload {}</h3>", esc(workload));
        out.push_str(&draw_html(&simulated_table(&rows)));
    }
    out
}

/// The simulated runs grouped by workload, in their order.
fn by_workload(simulation: &Simulation) -> Vec<(&str, Vec<&SimulatedRun>)> {
    let mut groups: Vec<(&str, Vec<&SimulatedRun>)> = Vec::new();
    for run in &simulation.runs {
        match groups.last_mut() {
            Some((workload, rows)) if *workload == run.workload => rows.push(run),
            _ => groups.push((&run.workload, vec![run])),
        }
    }
    groups
}

/// What a reader of the simulation needs to know first.
const SIMULATION_READING: &str = "A model, not this CPU: callgrind's simulation (--cache-sim=yes --branch-sim=yes) of an L1 and a last-level cache shaped like this machine's and a simple branch predictor, one run per variant. Use it to see which code mispredicts or misses; the bench's own metrics judge the variants.";

fn simulated_table(rows: &[&SimulatedRun]) -> Table {
    let top = |found: &Option<(super::parse::FunctionKey, u64)>| {
        found.as_ref().map_or_else(String::new, |(key, n)| {
            format!("{} ({})", shorten(&key.function, 40), grouped(*n as f64))
        })
    };
    Table {
        header: [
            "variant",
            "instructions",
            "branches",
            "mispredicted",
            "rate",
            "L1 misses",
            "LL misses",
            "most mispredicted",
            "most L1 misses",
        ]
        .map(str::to_owned)
        .to_vec(),
        right: vec![false, true, true, true, true, true, true, false, false],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.variant.clone(),
                    grouped(r.instructions as f64),
                    grouped(r.branches() as f64),
                    grouped(r.mispredicted() as f64),
                    if r.branches() == 0 {
                        String::new()
                    } else {
                        format!(
                            "{:.2}%",
                            100.0 * r.mispredicted() as f64 / r.branches() as f64
                        )
                    },
                    grouped(r.l1_misses() as f64),
                    grouped(r.ll_misses() as f64),
                    top(&r.most_mispredicted),
                    top(&r.most_l1_misses),
                ]
            })
            .collect(),
    }
}

/// Flame graphs a page draws at most: a matrix of variants over a query
/// set would otherwise make it megabytes.
const MAX_FLAME_GRAPHS: usize = 6;

/// The indices of the `most` differences whose totals changed most,
/// relatively.
fn largest_changes(explanation: &Explanation, most: usize) -> Vec<usize> {
    let relative = |d: &Difference| {
        if d.baseline_total == 0.0 {
            0.0
        } else {
            ((d.variant_total - d.baseline_total) / d.baseline_total).abs()
        }
    };
    let mut order: Vec<usize> = (0..explanation.differences.len()).collect();
    order.sort_by(|&a, &b| {
        relative(&explanation.differences[b]).total_cmp(&relative(&explanation.differences[a]))
    });
    order.truncate(most);
    order
}

/// The differential flame graph of `d`, or why there is none.
fn flame_graph(out: &mut String, d: &Difference, baseline: &str) {
    let title = format!("{} against {baseline}, workload {}", d.variant, d.workload);
    match super::flame::differential_svg(&d.stacks.0, &d.stacks.1, &title) {
        Ok(svg) => {
            let _ = writeln!(
                out,
                "<p>Differential flame graph: widths are the variant's instructions, red where a stack runs more than in the baseline, blue where it runs fewer (stacks estimated from callgrind's call graph, a callee's cost split over its callers in proportion).</p>\n<div class=\"flame\" style=\"overflow-x:auto\">{svg}</div>"
            );
        }
        Err(error) => {
            let _ = writeln!(out, "<p>No flame graph: {}</p>", esc(&format!("{error:#}")));
        }
    }
}

fn total_line(d: &Difference) -> String {
    format!(
        "{} and {} counted runs; total {} → {} instructions per {}, {} ({})",
        d.runs.0,
        d.runs.1,
        grouped(d.baseline_total),
        grouped(d.variant_total),
        if d.per_request { "request" } else { "run" },
        signed(d.variant_total - d.baseline_total),
        percent(d.variant_total - d.baseline_total, d.baseline_total)
    )
}

fn objects(d: &Difference, baseline: &str) -> Table {
    Table {
        header: ["object", baseline, &d.variant, "change", "of total"]
            .map(str::to_owned)
            .to_vec(),
        right: vec![false, true, true, true, true],
        rows: d
            .objects
            .iter()
            .filter(|o| o.baseline != 0.0 || o.variant != 0.0)
            .map(|o| {
                vec![
                    o.object.clone(),
                    grouped(o.baseline),
                    grouped(o.variant),
                    signed(o.change()),
                    percent(o.change(), d.baseline_total),
                ]
            })
            .collect(),
    }
}

fn functions(d: &Difference, baseline: &str, top: usize) -> Table {
    Table {
        header: [
            "function", "object", baseline, &d.variant, "change", "of total", "", "pieces",
        ]
        .map(str::to_owned)
        .to_vec(),
        right: vec![false, false, true, true, true, true, false, false],
        rows: d
            .functions
            .iter()
            .filter(|f| changes(f))
            .take(top)
            .map(|f| {
                vec![
                    shorten(&f.function, 60),
                    f.object.clone(),
                    grouped(f.baseline),
                    grouped(f.variant),
                    signed(f.change()),
                    percent(f.change(), d.baseline_total),
                    presence(f).to_owned(),
                    pieces(f),
                ]
            })
            .collect(),
    }
}

/// Whether a function's change shows as a whole instruction (the table
/// lists only those: the rest are the same on both sides).
fn changes(f: &FunctionChange) -> bool {
    f.change().abs() >= 0.5
}

/// What the changed functions below the top ones add up to.
fn rest_line(d: &Difference, top: usize) -> String {
    let rest: Vec<&FunctionChange> = d
        .functions
        .iter()
        .filter(|f| changes(f))
        .skip(top)
        .collect();
    let changed = rest.len();
    if changed == 0 {
        return String::new();
    }
    let sum: f64 = rest.iter().map(|f| f.change()).sum();
    let (functions, change) = if changed == 1 {
        ("function that changes", "")
    } else {
        ("functions that change", " in all")
    };
    format!(
        "  … and {changed} more {functions}, by {} instructions{change}\n",
        signed(sum)
    )
}

/// `gone` (only in the baseline), `new` (only in the variant), or nothing.
fn presence(f: &FunctionChange) -> &'static str {
    match (f.baseline_names.is_empty(), f.variant_names.is_empty()) {
        (false, true) => "gone",
        (true, false) => "new",
        _ => "",
    }
}

/// The names of a function's pieces where they are not just its own name:
/// plain on both sides, `+` only in the variant, `-` only in the baseline.
fn pieces(f: &FunctionChange) -> String {
    let names: std::collections::BTreeSet<&String> =
        f.baseline_names.iter().chain(&f.variant_names).collect();
    if names.iter().all(|n| **n == f.function) {
        return String::new();
    }
    let more = names.len().saturating_sub(MAX_PIECES);
    let mut listed: Vec<String> = names
        .into_iter()
        .take(MAX_PIECES)
        .map(
            |n| match (f.baseline_names.contains(n), f.variant_names.contains(n)) {
                (true, false) => format!("-{n}"),
                (false, true) => format!("+{n}"),
                _ => n.clone(),
            },
        )
        .collect();
    if more > 0 {
        listed.push(format!("and {more} more"));
    }
    listed.join(" ")
}

/// Names of pieces listed per function (code without symbols has many).
const MAX_PIECES: usize = 4;

/// A change with its sign (`+1,200`, `-3,400`, `0`).
fn signed(n: f64) -> String {
    if n.round() > 0.0 {
        format!("+{}", grouped(n))
    } else {
        grouped(n)
    }
}

/// `part` as a signed percentage of `whole`.
fn percent(part: f64, whole: f64) -> String {
    if whole == 0.0 {
        return String::new();
    }
    format!("{:+.2}%", 100.0 * part / whole)
}

/// At most `max` characters, the cut marked.
fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_owned();
    }
    let kept: String = name.chars().take(max - 1).collect();
    format!("{kept}…")
}

/// Markdown's `code` as HTML's `<code>`, in text already escaped.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::diff::ObjectChange;

    fn change(name: &str, b: f64, v: f64, b_names: &[&str], v_names: &[&str]) -> FunctionChange {
        FunctionChange {
            object: "hot".to_owned(),
            function: name.to_owned(),
            baseline: b,
            variant: v,
            baseline_names: b_names.iter().map(|n| (*n).to_owned()).collect(),
            variant_names: v_names.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    fn explanation() -> Explanation {
        Explanation {
            run_id: "20261125-083856".to_owned(),
            baseline: "base".to_owned(),
            differences: vec![Difference {
                workload: "w".to_owned(),
                variant: "pgo".to_owned(),
                runs: (2, 2),
                per_request: false,
                baseline_total: 1000.0,
                variant_total: 705.0,
                functions: vec![
                    change("mix", 300.0, 0.0, &["mix"], &[]),
                    change("a|b<c>", 0.0, 5.0, &[], &["a|b<c>.cold"]),
                    change("main", 700.0, 700.0, &["main"], &["main"]),
                ],
                objects: vec![ObjectChange {
                    object: "hot".to_owned(),
                    baseline: 1000.0,
                    variant: 705.0,
                }],
                stacks: Default::default(),
            }],
            notes: vec!["a note".to_owned()],
            binaries: Vec::new(),
        }
    }

    #[test]
    fn tables_mark_gone_and_new_functions_and_escape_names() {
        let e = explanation();
        let md = markdown(&e, 10);
        assert!(
            md.contains("| mix | hot | 300 | 0 | -300 | -30.00% | gone |  |"),
            "{md}"
        );
        assert!(
            md.contains("| a\\|b<c> | hot | 0 | 5 | +5 | +0.50% | new | +a\\|b<c>.cold |"),
            "{md}"
        );
        assert!(md.contains("- a note"), "{md}");
        assert!(
            !md.contains("| main |"),
            "unchanged functions are left out: {md}"
        );
        let many = change(
            crate::explain::parse::NO_SYMBOL,
            1.0,
            2.0,
            &["0x1", "0x2", "0x3"],
            &["0x4", "0x5", "0x6"],
        );
        assert_eq!(pieces(&many), "-0x1 -0x2 -0x3 +0x4 and 2 more");
        let html = html(&e, 10);
        assert!(
            html.contains("a|b&lt;c&gt;") && !html.contains("<c>"),
            "{html}"
        );
        let all = Selection {
            variant: None,
            workload: None,
            top: 1,
        };
        let text = text(&e, &all);
        assert!(
            text.contains("… and 1 more function that changes, by +5"),
            "{text}"
        );
        let other = Selection {
            variant: Some("lto"),
            ..all
        };
        assert!(!super::text(&e, &other).contains("workload `w`"));
    }

    #[test]
    fn the_page_draws_flame_graphs_of_the_largest_changes_only() {
        let mut e = explanation();
        let one = e.differences[0].clone();
        e.differences = (0..8)
            .map(|i| Difference {
                variant_total: 1000.0 - f64::from(i) * 10.0,
                ..one.clone()
            })
            .collect();
        assert_eq!(largest_changes(&e, 6), [7, 6, 5, 4, 3, 2]);
        let page = html(&e, 3);
        assert_eq!(page.matches("the page draws the 6 largest").count(), 2);
    }

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(grouped(8_004_000.0), "8,004,000");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(signed(-3_499_000.0), "-3,499,000");
        assert_eq!(signed(1500.0), "+1,500");
        assert_eq!(signed(0.2), "0");
        assert_eq!(percent(-3_499_000.0, 8_147_155.0), "-42.95%");
        assert_eq!(shorten("abcdef", 4), "abc…");
    }

    #[test]
    fn the_report_shows_the_binaries_when_there_are_some() {
        let mut e = explanation();
        assert!(!markdown(&e, 10).contains("### Binaries"));
        assert!(!html(&e, 10).contains("<h3>Binaries</h3>"));
        e.binaries.push(crate::explain::binary::Facts {
            variant: "pgo".to_owned(),
            binary: "a<b>".to_owned(),
            bytes: 1234,
            text_bytes: Some(567),
            functions: Some(8),
            cold: Some(1),
            bolt: None,
            coverage: None,
            coverage_problem: None,
        });
        let md = markdown(&e, 10);
        assert!(md.contains("| pgo | a<b> | 1234 | 567 | 8 | 1 |"), "{md}");
        let page = html(&e, 10);
        assert!(
            page.contains("<h3>Binaries</h3>") && page.contains("a&lt;b&gt;"),
            "{page}"
        );
    }
}
