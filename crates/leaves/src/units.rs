//! Durations as users write them (`500ms`, `30s`, `10m`, `1h`), in the
//! experiment file and on the command line alike. A leaf: no crate imports.

use std::time::Duration;

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
