//! A check as JUnit XML, the report format CI systems read (GitHub
//! Actions' test reporters, GitLab's `artifacts:reports:junit`, Jenkins):
//! one `<testsuite>` per rule, one `<testcase>` per workload × variant ×
//! headline metric, a `<failure>` with the figures where the rule failed.
//! Written with `quick-xml`, which escapes every attribute and text.

use anyhow::Result;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::{Outcome, Status, Suite};

/// The outcome as a JUnit XML document.
pub fn render(outcome: &Outcome) -> Result<Vec<u8>> {
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
                outcome.count(Status::Failed).to_string().as_str(),
            ),
            ("errors", "0"),
            (
                "skipped",
                outcome.count(Status::Skipped).to_string().as_str(),
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

fn write_suite(w: &mut Writer<Vec<u8>>, outcome: &Outcome, suite: &Suite) -> std::io::Result<()> {
    let count = |status| suite.cases.iter().filter(|c| c.status == status).count();
    w.create_element("testsuite")
        .with_attributes([
            ("name", suite.name.as_str()),
            ("tests", suite.cases.len().to_string().as_str()),
            ("failures", count(Status::Failed).to_string().as_str()),
            ("errors", "0"),
            ("skipped", count(Status::Skipped).to_string().as_str()),
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
                        match case.status {
                            Status::Failed => {
                                let body = clean(&format!(
                                    "{}\n\n{}\n\n{}",
                                    case.message, suite.rule, case.statistics
                                ));
                                w.create_element("failure")
                                    .with_attributes([
                                        ("message", message.as_str()),
                                        ("type", "afterburner.check"),
                                    ])
                                    .write_text_content(BytesText::new(body.trim_end()))?;
                            }
                            Status::Skipped => {
                                w.create_element("skipped")
                                    .with_attribute(("message", message.as_str()))
                                    .write_empty()?;
                            }
                            Status::Passed => {}
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
