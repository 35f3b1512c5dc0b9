//! The renderers under snapshot tests: from a fixed results.json (a real
//! run of the hotpath fixture: baseline, gcc PGO and -O3; wall, user,
//! `max_rss` and callgrind instructions), the terminal summary, report.md,
//! the CSV and the HTML page, so that a change of layout shows as a diff
//! to review (`cargo insta review`, or `INSTA_UPDATE=always cargo test`
//! and `git diff`), not as a surprise.

use afterburner::analysis::Results;
use afterburner::report::exporter;

const HOTPATH: &str = include_str!("../fixtures/results/hotpath.json");

/// A real run of two slowserver variants behind a closed HTTP load, two
/// instances each (the second slow on purpose): loads, instances, CPU
/// utilization, warnings.
const INSTANCES: &str = include_str!("../fixtures/results/instances.json");

fn render(format: &str) -> String {
    render_from(HOTPATH, format)
}

fn render_from(fixture: &str, format: &str) -> String {
    let results: Results = serde_json::from_str(fixture).unwrap();
    let bytes = exporter(format).unwrap().render(&results).unwrap();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn terminal_summary() {
    insta::assert_snapshot!(render("text"));
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(render("markdown"));
}

#[test]
fn csv_export() {
    insta::assert_snapshot!(render("csv"));
}

#[test]
fn html_page() {
    insta::assert_snapshot!(render("html"));
}

#[test]
fn load_markdown_report() {
    insta::assert_snapshot!(render_from(INSTANCES, "markdown"));
}

#[test]
fn load_terminal_summary() {
    insta::assert_snapshot!(render_from(INSTANCES, "text"));
}

#[test]
fn benchpress_export() {
    insta::assert_snapshot!(render_from(INSTANCES, "benchpress"));
}

/// results.json is the format the others are drawn from: reading and
/// writing it again changes nothing.
#[test]
fn json_export_round_trips() {
    let again: serde_json::Value = serde_json::from_str(&render("json")).unwrap();
    let fixed: serde_json::Value = serde_json::from_str(HOTPATH).unwrap();
    assert_eq!(again, fixed);
    let again: serde_json::Value = serde_json::from_str(&render_from(INSTANCES, "json")).unwrap();
    let fixed: serde_json::Value = serde_json::from_str(INSTANCES).unwrap();
    assert_eq!(again, fixed);
}

/// With `[report] gain_reference = "pgo"`: the share of pgo's gain that
/// -O3 reaches, in report.md and the terminal summary (wall: pgo's own
/// gain is not significant, so no interval; instructions: exact counts).
#[test]
fn share_of_gain_section() {
    let mut results: Results = serde_json::from_str(HOTPATH).unwrap();
    let group = afterburner::experiment::GainGroup {
        base: results.baseline.clone(),
        reference: "pgo".to_owned(),
        variants: Vec::new(),
    };
    results.gain_shares = vec![afterburner::analysis::share::compute(&results, &group)];
    let markdown =
        String::from_utf8(exporter("markdown").unwrap().render(&results).unwrap()).unwrap();
    let section = markdown
        .split("\n## ")
        .find(|s| s.starts_with("Share of"))
        .unwrap();
    let text = String::from_utf8(exporter("text").unwrap().render(&results).unwrap()).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("share of"))
        .take_while(|l| !l.is_empty())
        .collect();
    insta::assert_snapshot!(format!("## {section}\n---\n{}", lines.join("\n")));
}

/// Regression (issue 47): the terminal summary showed the median per-round
/// ratio while results.json's `ratio` was the ratio of means. Every
/// headline's line in the summary shows results.json's own `ratio` and
/// interval, whichever estimate decided.
#[test]
fn the_summary_shows_the_ratio_results_json_holds() {
    for fixture in [HOTPATH, INSTANCES] {
        let results: Results = serde_json::from_str(fixture).unwrap();
        let text = render_from(fixture, "text");
        let summary = text.split("\n\n").next().unwrap();
        let headlines: Vec<_> = results
            .comparisons
            .iter()
            .filter(|c| results.primary_metric(&c.workload) == Some(c.metric.as_str()))
            .collect();
        assert!(!headlines.is_empty());
        for c in headlines {
            let o = &c.outcome;
            let shown = format!("{:.3} [{:.3}, {:.3}]", o.ratio, o.ci_low, o.ci_high);
            assert!(
                summary
                    .lines()
                    .any(|l| l.contains(&c.variant) && l.contains(&shown)),
                "{shown} of {} not in:\n{summary}",
                c.variant
            );
        }
    }
}
