//! A check as JUnit XML, the report format CI systems read (GitHub
//! Actions' test reporters, GitLab's `artifacts:reports:junit`, Jenkins):
//! one `<testsuite>` per rule, one `<testcase>` per workload × variant ×
//! headline metric, a `<failure>` with the figures where the rule failed.
//! Written with `quick-xml`, which escapes every attribute and text.

use anyhow::Result;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::{Findings, Inconclusive, Status, Suite};

/// The outcome as a JUnit XML document.
pub fn render(outcome: &Findings) -> Result<Vec<u8>> {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let total = outcome.suites.iter().map(|s| s.cases.len()).sum::<usize>();
    writer
        .create_element("testsuites")
        .with_attributes([
            (
                "name",
                format!("afterburner check {}", outcome.target).as_str(),
            ),
            ("tests", total.to_string().as_str()),
            (
                "failures",
                failures(outcome, |s| outcome.count(s)).to_string().as_str(),
            ),
            ("errors", "0"),
            (
                "skipped",
                skipped(outcome, |s| outcome.count(s)).to_string().as_str(),
            ),
        ])
        .write_inner_content(|w| {
            for suite in &outcome.suites {
                write_suite(w, outcome, suite)?;
            }
            Ok(())
        })?;
    let mut bytes = writer.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}

fn write_suite(w: &mut Writer<Vec<u8>>, outcome: &Findings, suite: &Suite) -> std::io::Result<()> {
    let count = |status| suite.cases.iter().filter(|c| c.status == status).count();
    w.create_element("testsuite")
        .with_attributes([
            ("name", suite.name.as_str()),
            ("tests", suite.cases.len().to_string().as_str()),
            ("failures", failures(outcome, count).to_string().as_str()),
            ("errors", "0"),
            ("skipped", skipped(outcome, count).to_string().as_str()),
        ])
        .write_inner_content(|w| {
            w.create_element("properties").write_inner_content(|w| {
                for (name, value) in [
                    ("run", outcome.run_id.as_str()),
                    ("target", outcome.target.as_str()),
                    ("rule", suite.rule.as_str()),
                ] {
                    w.create_element("property")
                        .with_attributes([("name", name), ("value", &clean(value))])
                        .write_empty()?;
                }
                Ok(())
            })?;
            for case in &suite.cases {
                let classname = format!("{}.{}", outcome.target, case.workload);
                let name = format!("{} {}", case.variant, case.metric);
                w.create_element("testcase")
                    .with_attributes([
                        ("classname", classname.as_str()),
                        ("name", name.as_str()),
                        ("time", "0"),
                    ])
                    .write_inner_content(|w| {
                        let message = clean(&case.message);
                        let as_failure = case.status == Status::Failed
                            || (case.status == Status::Inconclusive
                                && outcome.inconclusive == Inconclusive::Fail);
                        match case.status {
                            _ if as_failure => {
                                let body = clean(&format!(
                                    "{}\n\n{}\n\n{}",
                                    case.message, suite.rule, case.statistics
                                ));
                                let kind = if case.status == Status::Failed {
                                    "afterburner.check"
                                } else {
                                    "afterburner.check.inconclusive"
                                };
                                w.create_element("failure")
                                    .with_attributes([
                                        ("message", message.as_str()),
                                        ("type", kind),
                                    ])
                                    .write_text_content(BytesText::new(body.trim_end()))?;
                            }
                            Status::Skipped | Status::Inconclusive => {
                                w.create_element("skipped")
                                    .with_attribute(("message", message.as_str()))
                                    .write_empty()?;
                            }
                            Status::Passed | Status::Failed => {}
                        }
                        w.create_element("system-out")
                            .write_text_content(BytesText::new(&message))?;
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    Ok(())
}

/// Text XML 1.0 can hold: control characters other than tab and newline
/// (a tool's stray escape code) dropped.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// JUnit's failures: the failed cases, and the inconclusive ones under
/// `--inconclusive fail`.
fn failures(outcome: &Findings, count: impl Fn(Status) -> usize) -> usize {
    count(Status::Failed)
        + match outcome.inconclusive {
            Inconclusive::Fail => count(Status::Inconclusive),
            Inconclusive::Pass => 0,
        }
}

/// JUnit's skipped: the skipped cases, and the inconclusive ones (with
/// their reason) under `--inconclusive pass`.
fn skipped(outcome: &Findings, count: impl Fn(Status) -> usize) -> usize {
    count(Status::Skipped)
        + match outcome.inconclusive {
            Inconclusive::Fail => 0,
            Inconclusive::Pass => count(Status::Inconclusive),
        }
}
