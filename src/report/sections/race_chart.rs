//! report.html's race charts, drawn as SVG: survivors by round (a lane per
//! candidate from the first round to the last it ran, an × at its drop,
//! above them how many were alive after each round with the looks ticked)
//! and each candidate against the leader, the margin of "same" shaded.

use std::fmt::Write as _;

use crate::analysis::race::{RaceResult, Standing};

const WIDTH: f64 = 720.0;
/// Height of a candidate's lane.
const LANE: f64 = 22.0;
/// Top of the alive strip, and its height at every candidate alive.
const STRIP_TOP: f64 = 32.0;
const STRIP: f64 = 32.0;
/// Top of the first lane (below the strip and the looks' labels).
const LANES_TOP: f64 = 86.0;
const IN_RACE: &str = "#1f77b4";
const OUT: &str = "#b0b0b0";
const CROSS: &str = "#c62828";

/// Where rounds go across: round `r` ends at `x(r)`.
struct Across {
    left: f64,
    column: f64,
}

impl Across {
    fn x(&self, rounds: u32) -> f64 {
        self.left + self.column * f64::from(rounds)
    }
}

/// Pixels for a label of `chars` characters at 12px, within bounds.
fn room(chars: usize, low: f64, high: f64) -> f64 {
    (chars as f64 * 7.0 + 16.0).clamp(low, high)
}

/// The left margin: room for the longest candidate's name.
fn names_room(race: &RaceResult) -> f64 {
    let longest = race.standings.iter().map(|s| s.candidate.chars().count());
    room(longest.max().unwrap_or(0), 70.0, 240.0)
}

/// "Survivors by round": one lane per candidate in the standings' order.
pub fn survivors(out: &mut String, race: &RaceResult, esc: fn(&str) -> String) {
    let n = race.standings.len();
    if n == 0 {
        return;
    }
    let rounds = race
        .standings
        .iter()
        .map(|s| s.rounds)
        .chain([
            race.rounds,
            u32::try_from(race.alive_by_round.len()).unwrap_or(0),
            1,
        ])
        .max()
        .unwrap_or(1);
    let labels = race.standings.iter().map(|s| label(s).chars().count());
    let left = names_room(race);
    let right = room(labels.max().unwrap_or(0), 60.0, 240.0);
    let across = Across {
        left,
        column: (WIDTH - left - right) / f64::from(rounds),
    };
    let height = LANES_TOP + LANE * n as f64 + 8.0;
    let _ = writeln!(
        out,
        "<svg width=\"{WIDTH}\" height=\"{height:.0}\" role=\"img\" aria-label=\"survivors by round\"><text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"600\">Survivors by round</text>"
    );
    alive_strip(out, race, &across, n);
    look_ticks(out, race, &across, rounds, height);
    for (i, s) in race.standings.iter().enumerate() {
        lane(out, s, &across, LANES_TOP + LANE * (i as f64 + 0.5), esc);
    }
    let _ = writeln!(out, "</svg>");
}

/// A tick under the strip at each look, a faint line down the lanes, and
/// the look's round where it does not crowd the one before.
fn look_ticks(out: &mut String, race: &RaceResult, across: &Across, rounds: u32, height: f64) {
    let axis = STRIP_TOP + STRIP;
    let mut labelled = f64::NEG_INFINITY;
    for &look in race.looks.iter().filter(|&&l| l <= rounds) {
        let x = across.x(look);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{axis:.1}\" y2=\"{:.1}\" stroke=\"#999\"/><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{LANES_TOP:.1}\" y2=\"{:.1}\" stroke=\"#ddd\" stroke-dasharray=\"3\"/>",
            axis + 5.0,
            height - 8.0,
        );
        if x - labelled >= 14.0 {
            labelled = x;
            let _ = write!(
                out,
                "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{look}</text>",
                axis + 15.0,
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">looks</text>",
        across.left - 8.0,
        axis + 15.0
    );
}

/// The strip above the lanes: how many were alive after each round.
fn alive_strip(out: &mut String, race: &RaceResult, across: &Across, n: usize) {
    let bottom = STRIP_TOP + STRIP;
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">alive</text>",
        across.left - 8.0,
        bottom - 4.0
    );
    let mut shown = None;
    for (r, &alive) in (1..).zip(&race.alive_by_round) {
        let h = STRIP * f64::from(alive) / n as f64;
        let x = across.x(r - 1);
        let _ = writeln!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#9ecae1\"><title>after round {r}: {alive} of {n} alive</title></rect>",
            x + 0.5,
            bottom - h,
            (across.column - 1.0).max(0.5),
        );
        // The count where it changes, so the strip reads without hovering.
        if shown != Some(alive) {
            shown = Some(alive);
            let _ = writeln!(
                out,
                "<text class=\"alive\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{alive}</text>",
                x + 1.0,
                bottom - h - 2.0
            );
        }
    }
}

/// A survivor's status, or whom a dropped candidate was slower than.
fn label(s: &Standing) -> String {
    match (&s.dropped_by, s.dropped_at) {
        (Some(by), Some(at)) if s.rounds > at => format!("by {by}; ran on as the reference"),
        (Some(by), _) => format!("by {by}"),
        _ => s.status.clone(),
    }
}

/// One candidate's lane at height `cy`: its bar, its × and its label.
fn lane(out: &mut String, s: &Standing, across: &Across, cy: f64, esc: fn(&str) -> String) {
    let dropped = s.status == "dropped";
    // Screened by work: out, grey, with no × (no look dropped it).
    let out_of_race = dropped || s.status == "screened";
    let end = across.x(s.rounds);
    let _ = writeln!(
        out,
        "<g class=\"lane\"><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"10\" rx=\"2\" fill=\"{}\"><title>{}: {}, {} rounds</title></rect>",
        across.left - 8.0,
        cy + 4.0,
        esc(&s.candidate),
        across.left,
        cy - 5.0,
        end - across.left,
        if out_of_race { OUT } else { IN_RACE },
        esc(&s.candidate),
        esc(&s.status),
        s.rounds,
    );
    let mut text_x = end + 6.0;
    if dropped {
        let x = across.x(s.dropped_at.unwrap_or(s.rounds));
        let _ = writeln!(
            out,
            "<path class=\"drop\" d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" stroke=\"{CROSS}\" stroke-width=\"2\"/>",
            x - 4.0,
            cy - 4.0,
            x + 4.0,
            cy + 4.0,
            x - 4.0,
            cy + 4.0,
            x + 4.0,
            cy - 4.0,
        );
        text_x = text_x.max(x + 8.0);
    }
    let _ = writeln!(
        out,
        "<text x=\"{text_x:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text></g>",
        cy + 4.0,
        esc(&label(s))
    );
}

/// Ratios across on a log scale: a ratio and its inverse equally far from
/// 1, as the margin of "same" is.
struct LogScale {
    left: f64,
    low: f64,
    high: f64,
}

impl LogScale {
    fn x(&self, ratio: f64) -> f64 {
        self.left + (ratio.ln() - self.low) / (self.high - self.low) * (WIDTH - self.left - 60.0)
    }
}

/// Each candidate's ratio against the leader with its interval (at the
/// look that dropped it, or the last), the margin of "same" shaded around
/// 1; nothing when no candidate has an interval.
pub fn against_leader(out: &mut String, race: &RaceResult, esc: fn(&str) -> String) {
    if race.standings.iter().all(|s| s.against_leader.is_none()) {
        return;
    }
    let (same_low, same_high) = (1.0 / (1.0 + race.equivalence), 1.0 + race.equivalence);
    let (low, high) = race
        .standings
        .iter()
        .filter_map(|s| s.against_leader)
        .fold((same_low, same_high), |(l, h), i| {
            (l.min(i.low), h.max(i.high))
        });
    let pad = ((high / low).ln() * 0.05).max(0.005);
    let scale = LogScale {
        left: names_room(race),
        low: low.ln() - pad,
        high: high.ln() + pad,
    };
    let height = 30.0 + LANE * race.standings.len() as f64 + 24.0;
    let bottom = height - 20.0;
    let one = scale.x(1.0);
    // At least 2 px wide, so a margin narrow beside wide intervals shows.
    let band = (scale.x(same_high) - scale.x(same_low)).max(2.0);
    let _ = writeln!(
        out,
        "<svg width=\"{WIDTH}\" height=\"{height:.0}\" role=\"img\" aria-label=\"each candidate against the leader\"><text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"600\">Against the leader (log scale; above 1 is worse)</text><rect x=\"{:.1}\" y=\"24\" width=\"{band:.1}\" height=\"{:.1}\" fill=\"#e3efe3\"/><line x1=\"{one:.1}\" x2=\"{one:.1}\" y1=\"24\" y2=\"{bottom:.1}\" stroke=\"#999\" stroke-dasharray=\"4\"/><text x=\"{one:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">1.0 (±{}%: the same)</text>",
        scale.x(same_low),
        bottom - 24.0,
        height - 6.0,
        crate::stats::tidy(race.equivalence * 100.0),
    );
    for (i, s) in race.standings.iter().enumerate() {
        interval_row(out, s, &scale, 30.0 + LANE * (i as f64 + 0.5), esc);
    }
    let _ = writeln!(out, "</svg>");
}

/// One candidate's row at height `cy`: its interval, or the leader's dot
/// at 1.
fn interval_row(
    out: &mut String,
    s: &Standing,
    scale: &LogScale,
    cy: f64,
    esc: fn(&str) -> String,
) {
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
        scale.left - 8.0,
        cy + 4.0,
        esc(&s.candidate)
    );
    let color = if s.status == "dropped" { OUT } else { IN_RACE };
    if s.status == "screened" {
        // No interval: screened by work, never set against the leader.
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{OUT}\">screened by work, no interval</text>",
            scale.left,
            cy + 4.0
        );
        return;
    }
    let Some(iv) = s.against_leader else {
        let _ = writeln!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            scale.x(1.0),
            scale.x(1.0) + 8.0,
            cy + 4.0,
            esc(&s.status)
        );
        return;
    };
    let _ = writeln!(
        out,
        "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{cy:.1}\" y2=\"{cy:.1}\" stroke=\"{color}\" stroke-width=\"3\"/><circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{:.3}</text>",
        scale.x(iv.low),
        scale.x(iv.high),
        scale.x(iv.ratio),
        scale.x(iv.high) + 6.0,
        cy + 4.0,
        iv.ratio
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::race::RaceCost;
    use crate::stats::race::Interval;

    fn esc(text: &str) -> String {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    }

    fn standing(name: &str, status: &str, rounds: u32, dropped_at: Option<u32>) -> Standing {
        Standing {
            candidate: name.to_owned(),
            status: status.to_owned(),
            rounds,
            against_leader: (status != "leader").then_some(Interval {
                ratio: 1.5,
                low: 1.2,
                high: 1.9,
                level: 0.01,
                df: 4.0,
            }),
            dropped_by: dropped_at.map(|_| "o2".to_owned()),
            dropped_at,
            reason: None,
            instructions_ratio: None,
        }
    }

    /// Four candidates: two left after 5 rounds, `-O0` dropped at the look
    /// after 2, the baseline at the look after 3 (it runs on as the
    /// reference); a name from the user's file with markup in it.
    fn race() -> RaceResult {
        RaceResult {
            outcome: "undecided".to_owned(),
            survivors: vec!["o2".to_owned(), "<o3&\"x\">".to_owned()],
            leader: Some("o2".to_owned()),
            rounds: 5,
            alive_by_round: vec![4, 3, 2, 2, 2],
            looks: vec![2, 3, 4, 5],
            equivalence: 0.02,
            pairs: 6,
            pair_alpha: 0.05 / 6.0,
            standings: vec![
                standing("o2", "leader", 5, None),
                standing("<o3&\"x\">", "alive", 5, None),
                standing("o0", "dropped", 2, Some(2)),
                standing("baseline", "dropped", 5, Some(3)),
            ],
            cost: RaceCost {
                runs: 14,
                full_runs: 40,
                full_rounds: 10,
                seconds: 1.4,
                full_seconds: 4.0,
            },
            reuse: crate::analysis::race::RaceReuse::default(),
            left_out: Vec::new(),
            method: String::new(),
        }
    }

    #[test]
    fn survivors_by_round_has_a_lane_per_candidate_and_an_x_per_drop() {
        let mut svg = String::new();
        survivors(&mut svg, &race(), esc);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(">Survivors by round</text>"), "{svg}");
        assert_eq!(svg.matches("<g class=\"lane\">").count(), 4, "{svg}");
        assert_eq!(svg.matches("class=\"drop\"").count(), 2, "{svg}");
        // The lanes in the standings' order.
        let at = |name: &str| svg.find(&format!(">{name}</text>")).unwrap();
        assert!(at("o2") < at("&lt;o3&amp;&quot;x&quot;&gt;"));
        assert!(at("o0") < at("baseline"));
        // The alive counts: each round's, and the count where it changes.
        for (r, alive) in [(1, 4), (2, 3), (3, 2), (4, 2), (5, 2)] {
            assert!(
                svg.contains(&format!("after round {r}: {alive} of 4 alive")),
                "{svg}"
            );
        }
        let shown: Vec<&str> = svg
            .split("<text class=\"alive\"")
            .skip(1)
            .map(|t| t.split('>').nth(1).unwrap().trim_end_matches("</text"))
            .collect();
        assert_eq!(shown, ["4", "3", "2"]);
        // A tick per look, each drop labelled by its leader.
        for look in 2..=5 {
            assert!(svg.contains(&format!("text-anchor=\"middle\">{look}</text>")));
        }
        assert!(svg.contains(">by o2</text>"), "{svg}");
        assert!(
            svg.contains(">by o2; ran on as the reference</text>"),
            "{svg}"
        );
    }

    /// Candidate names come from the user's file: never markup in the page.
    #[test]
    fn candidate_names_are_escaped() {
        let mut race = race();
        race.standings[2].dropped_by = Some("<o3&\"x\">".to_owned());
        let mut svg = String::new();
        survivors(&mut svg, &race, esc);
        against_leader(&mut svg, &race, esc);
        assert!(!svg.contains("<o3"), "{svg}");
        // Its lane's name and tooltip, the drop it made, its interval's row.
        assert_eq!(svg.matches("&lt;o3&amp;&quot;x&quot;&gt;").count(), 4);
    }

    #[test]
    fn against_the_leader_shades_the_margin_and_draws_each_interval() {
        let mut svg = String::new();
        against_leader(&mut svg, &race(), esc);
        assert!(svg.contains("fill=\"#e3efe3\""), "{svg}");
        assert!(svg.contains("±2%: the same"), "{svg}");
        assert_eq!(svg.matches("stroke-width=\"3\"").count(), 3, "{svg}");
        assert!(svg.contains(">leader</text>"), "{svg}");
        // No interval at all (a race that never looked): no chart.
        let mut race = race();
        for s in &mut race.standings {
            s.against_leader = None;
        }
        let mut empty = String::new();
        against_leader(&mut empty, &race, esc);
        assert!(empty.is_empty());
    }

    /// Forty rounds: every look ticked, its round written only where it
    /// does not run into the one before.
    #[test]
    fn crowded_looks_are_ticked_but_not_all_labelled() {
        let mut race = race();
        race.rounds = 40;
        race.looks = vec![2, 3, 4, 5, 7, 9, 12, 15, 19, 24, 30, 38, 40];
        race.alive_by_round = vec![2; 40];
        for s in &mut race.standings[..2] {
            s.rounds = 40;
        }
        let mut svg = String::new();
        survivors(&mut svg, &race, esc);
        assert_eq!(svg.matches("stroke=\"#999\"/>").count(), 13, "{svg}");
        let labels = svg
            .matches("font-size=\"10\" text-anchor=\"middle\">")
            .count();
        assert!((2..13).contains(&labels), "{labels}: {svg}");
        assert!(svg.contains("text-anchor=\"middle\">40</text>"), "{svg}");
    }

    /// A results.json from before the rounds were recorded: lanes still,
    /// no strip, a drop marked at its last round.
    #[test]
    fn an_older_results_json_still_draws() {
        let mut race = race();
        race.alive_by_round.clear();
        race.looks.clear();
        for s in &mut race.standings {
            s.dropped_at = None;
        }
        let mut svg = String::new();
        survivors(&mut svg, &race, esc);
        assert_eq!(svg.matches("<g class=\"lane\">").count(), 4);
        assert_eq!(svg.matches("class=\"drop\"").count(), 2);
        assert!(!svg.contains("alive</title>"));
    }
}
