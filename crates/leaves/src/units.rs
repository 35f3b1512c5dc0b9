//! Durations as users write them (`500ms`, `30s`, `10m`, `1h`), in the
//! experiment file and on the command line alike, and counts as reports
//! write them (`12,345`). A leaf: no crate imports.

use std::time::Duration;

/// A count rounded to a whole number, with thousands separators:
/// `12,345`, `-3,400`.
pub fn grouped(n: f64) -> String {
    let whole = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    if n.round() < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Parse a duration such as `500ms`, `30s`, `10m`, `1h` (a bare number is
/// seconds); `None` for anything else, a negative number, or one too large
/// for a `Duration`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands_rounded_and_signed() {
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(grouped(1000.0), "1,000");
        assert_eq!(grouped(1_234_567.6), "1,234,568");
        assert_eq!(grouped(-3400.0), "-3,400");
        assert_eq!(grouped(-0.4), "0");
    }
}
