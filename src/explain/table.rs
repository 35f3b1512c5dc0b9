//! A table of text cells and its three drawings: for the terminal (columns
//! padded), as Markdown and as HTML. Every table of `afterburner explain`
//! and of its sections in report.md and report.html is drawn here.

use std::fmt::Write as _;

/// A table: a header, rows of cells, and which columns are numbers
/// (aligned right).
pub(super) struct Table {
    pub(super) header: Vec<String>,
    pub(super) right: Vec<bool>,
    pub(super) rows: Vec<Vec<String>>,
}

/// Columns padded to their widest cell, numbers aligned right.
pub(super) fn draw_text(table: &Table) -> String {
    let widths: Vec<usize> = (0..table.header.len())
        .map(|c| {
            table
                .rows
                .iter()
                .map(|r| r[c].chars().count())
                .chain([table.header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s = String::from(" ");
        for (c, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[c].saturating_sub(cell.chars().count()));
            s.push(' ');
            if table.right[c] {
                s.push_str(&pad);
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&pad);
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = line(&table.header);
    for row in &table.rows {
        out.push_str(&line(row));
    }
    out
}

/// As a Markdown table, `|` in a cell escaped.
pub(super) fn draw_markdown(table: &Table) -> String {
    let mut out = format!("| {} |\n", table.header.join(" | "));
    let rule: Vec<&str> = table
        .right
        .iter()
        .map(|r| if *r { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "| {} |", rule.join(" | "));
    for row in &table.rows {
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// As an HTML table, every cell escaped.
pub(super) fn draw_html(table: &Table) -> String {
    let mut out = String::from("<table><tr>");
    for (c, h) in table.header.iter().enumerate() {
        let style = if table.right[c] {
            ""
        } else {
            " style=\"text-align:left\""
        };
        let _ = write!(out, "<th{style}>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for (c, cell) in row.iter().enumerate() {
            // The report's style aligns cells right but the first.
            let style = if table.right[c] {
                ""
            } else {
                " style=\"text-align:left\""
            };
            let _ = write!(out, "<td{style}>{}</td>", esc(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// `text` escaped for HTML.
pub(super) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
