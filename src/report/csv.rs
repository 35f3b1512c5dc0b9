//! CSV: one row per workload, metric and variant, with the summary and the
//! comparison against the baseline (empty for the baseline itself), for
//! spreadsheets.

use std::fmt::Write as _;

use anyhow::Result;

use super::exporter::Exporter;
use crate::analysis::Results;

/// Renders results as CSV.
pub struct Csv;

const HEADER: &str = "workload,metric,unit,variant,n,mean,stddevp,cv,median,min,max,ratio,ci_low,ci_high,p_value,verdict,estimate,mean_ratio";

/// Quote a field when it holds a comma, a quote or a newline (RFC 4180).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn describe(&self) -> &'static str {
        "the summary and comparisons as CSV, a row per workload, metric and variant"
    }

    fn render(&self, results: &Results) -> Result<Vec<u8>> {
        let mut out = format!("{HEADER}\n");
        for m in &results.measurements {
            let s = &m.summary;
            let _ = write!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                field(&m.workload),
                field(&m.metric.name),
                field(&m.metric.unit),
                field(&m.variant),
                s.n,
                s.mean,
                s.stddevp,
                s.cv,
                s.median,
                s.min,
                s.max
            );
            let comparison = results.comparisons.iter().find(|c| {
                c.workload == m.workload && c.metric == m.metric.name && c.variant == m.variant
            });
            match comparison {
                Some(c) => {
                    let o = &c.outcome;
                    let p = o.p_value.map_or(String::new(), |p| p.to_string());
                    let mean = o.mean_ratio.map_or(String::new(), |r| r.to_string());
                    let _ = writeln!(
                        out,
                        ",{},{},{},{p},{},{},{mean}",
                        o.ratio,
                        o.ci_low,
                        o.ci_high,
                        field(&o.verdict.to_string()),
                        field(o.estimate.label())
                    );
                }
                None => out.push_str(",,,,,,,\n"),
            }
        }
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_and_quotes_are_quoted() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn header_has_one_column_per_value() {
        assert_eq!(HEADER.split(',').count(), 18);
    }
}
