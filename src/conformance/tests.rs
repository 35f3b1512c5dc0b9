//! The suite's tests: one per procedure (the short mode), the pending rows
//! (`-- --ignored`), the docs table's rows equal to the code's, and the
//! long mode that regenerates it.

use super::*;

/// Measure the rows of procedure `name` (short mode) and assert every one
/// not pending is plausible at its nominal ([`SHORT_TAIL`]: the table's
/// long mode holds it to two standard errors); print each.
fn holds(name: &str) {
    let rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| r.procedure.name == name && r.pending().is_none())
        .collect();
    assert!(!rows.is_empty(), "no rows of {name:?}");
    let started = std::time::Instant::now();
    let measured = measure_all(&rows, false);
    println!("{name}: {} rows in {:.1?}", rows.len(), started.elapsed());
    let mut failed = Vec::new();
    for (row, m) in rows.iter().zip(&measured) {
        println!(
            "{}: {}/{} ({:.1}%, tail {:.4})",
            row.label(),
            m.events,
            m.trials,
            m.rate() * 100.0,
            m.tail(row.expect)
        );
        if !m.plausible(row.expect) {
            failed.push(format!(
                "{}: {:.1}% in {} trials, expected {:?} (one-sided binomial tail {:.5} < {SHORT_TAIL})",
                row.label(),
                m.rate() * 100.0,
                m.trials,
                row.expect,
                m.tail(row.expect)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "rows that do not hold:\n{}",
        failed.join("\n")
    );
}

#[test]
fn bench_verdicts() {
    holds("bench verdict");
}

#[test]
fn bench_intervals() {
    holds("bench interval");
}

#[test]
fn report_family() {
    holds("report family (4 variants × 3 workloads × 3 metrics)");
}

#[test]
fn race_replay() {
    holds("race replay (6 candidates)");
}

#[test]
fn paired_gate_false_alarms() {
    holds("paired gate (`check --rev`)");
}

#[test]
fn paired_gate_passes_no_regression() {
    holds("paired gate (`check --rev`) ");
}

#[test]
fn budget_gate_false_alarms() {
    holds("paired gate (`check --rev --budget`)");
}

#[test]
fn budget_gate_passes() {
    holds("paired gate (`check --rev --budget`) ");
}

#[test]
fn lookback_gate_false_alarms() {
    holds("lookback gate (`check --against`)");
}

#[test]
fn lookback_gate_passes_no_regression() {
    holds("lookback gate (`check --against`) ");
}

/// Every procedure has rows, and a test above runs them.
#[test]
fn every_procedure_has_rows() {
    let rows = rows();
    for p in PROCEDURES {
        assert!(
            rows.iter().any(|r| std::ptr::eq(r.procedure, p)),
            "{} has no rows",
            p.name
        );
    }
    for (p, s, _, _) in PENDING {
        assert!(
            rows.iter()
                .any(|r| r.procedure.name == *p && r.shape.name.starts_with(s)),
            "PENDING names no row: {p} {s}"
        );
    }
}

/// The rows that wait for a change: asserted once it lands (remove them
/// from [`PENDING`] then).
#[test]
#[ignore = "the rows that wait for a change: asserted once it lands"]
fn pending_rows_hold() {
    let rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| r.pending().is_some())
        .collect();
    let measured = measure_all(&rows, false);
    let failed: Vec<String> = rows
        .iter()
        .zip(&measured)
        .filter(|(r, m)| !m.plausible(r.expect))
        .map(|(r, m)| {
            format!(
                "{}: {:.1}% in {} trials ({})",
                r.label(),
                m.rate() * 100.0,
                m.trials,
                r.pending().unwrap_or("")
            )
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// How many times the trials a row outside its bound is measured again
/// with, in the long mode.
const AGAIN: u32 = 10;

fn measuring_md() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/measuring.md")
}

/// docs/measuring.md's table has one line per row, in order (a row added
/// here without regenerating the table, or the reverse, fails), and every
/// line not pending says it held in the long mode.
#[test]
fn docs_table_has_every_row_and_each_holds() {
    let doc = std::fs::read_to_string(measuring_md()).unwrap();
    assert_eq!(
        table::keys_in(&doc),
        table::keys(&rows()),
        "regenerate it: {}",
        table::COMMAND
    );
    let failing = table::failing_in(&doc);
    assert!(
        failing.is_empty(),
        "rows the long mode measured outside their nominal:\n{}",
        failing.join("\n")
    );
}

/// The exact binomial tail, against SciPy's `binom.sf(k - 1, n, p)`.
#[test]
fn binomial_tail_matches_scipy() {
    let cases = [
        (40, 9, 0.05, 0.000_129_581_848_490_865_17),
        (60, 10, 0.05, 0.000_738_031_350_678_329),
        (1000, 70, 0.05, 0.003_474_358_698_846_083_3),
        (40, 0, 0.05, 1.0),
        (300, 30, 0.1, 0.528_142_430_186_882_8),
        (1000, 30, 0.025, 0.179_334_011_095_077_96),
    ];
    for (n, k, p, scipy) in cases {
        let tail = Measured {
            events: k,
            trials: n,
        }
        .tail(Expect::AtMost(p));
        assert!(
            (tail - scipy).abs() <= 1e-9 * scipy.max(1e-300) + 1e-15,
            "binom.sf({}, {n}, {p}): {tail} vs {scipy}",
            k.saturating_sub(1)
        );
    }
    // A power: 40 of 40 at a nominal 90% is as likely as 0 misses of 40
    // at 10%: P(X ≤ 40) = 1; 36 of 40 is P(misses ≥ 4 | 10%).
    let power = |events| Measured { events, trials: 40 }.tail(Expect::AtLeast(0.9));
    assert!((power(40) - 1.0).abs() < 1e-12);
    assert!(
        (power(36) - 0.576_869_346_906_997_4).abs() < 1e-9,
        "{}",
        power(36)
    );
}

/// The table: every row (at its long trial count with
/// `AFTERBURNER_CONFORMANCE=long`, minutes on a release build), written
/// into docs/measuring.md.
#[test]
#[ignore = "the long mode: regenerates docs/measuring.md's table"]
fn regenerate_docs_table() {
    // `AFTERBURNER_CONFORMANCE_ROWS=TEXT`: only the rows whose label holds
    // it, printed and not written; `AFTERBURNER_CONFORMANCE_TRIALS=N`
    // measures them at N trials (the same seed: a longer look at a row).
    if let Ok(only) = std::env::var("AFTERBURNER_CONFORMANCE_ROWS") {
        let rows: Vec<Row> = rows()
            .into_iter()
            .filter(|r| r.label().contains(&only))
            .collect();
        let trials: Option<u32> = std::env::var("AFTERBURNER_CONFORMANCE_TRIALS")
            .ok()
            .and_then(|n| n.parse().ok());
        let measured = match trials {
            Some(n) => rows.iter().map(|r| r.measure(n)).collect(),
            None => measure_all(&rows, long_mode()),
        };
        for (row, m) in rows.iter().zip(measured) {
            println!(
                "{}: {}/{} ({:.1}%)",
                row.label(),
                m.events,
                m.trials,
                m.rate() * 100.0
            );
        }
        return;
    }
    let rows = rows();
    let mut measured = measure_all(&rows, long_mode());
    // A row outside its bound is looked at again with ten times the
    // trials (the same seeded stream, extended), and that count stands:
    // at the nominal rate itself one row in forty lies beyond two standard
    // errors by chance, and a table of a hundred rows would always show
    // some; a true excess stays beyond them at ten times the trials.
    for (row, m) in rows.iter().zip(measured.iter_mut()) {
        if !m.holds(row.expect) {
            let again = row.measure(m.trials * AGAIN);
            println!(
                "{}: {}/{} outside, measured again: {}/{}",
                row.label(),
                m.events,
                m.trials,
                again.events,
                again.trials
            );
            *m = again;
        }
    }
    // The commit, "-dirty" when the code (not the docs this writes)
    // differs from it.
    let git = |args: &[&str]| std::process::Command::new("git").args(args).output().ok();
    let commit = git(&["rev-parse", "--short", "HEAD"])
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let clean = git(&[
        "diff",
        "--quiet",
        "HEAD",
        "--",
        "src",
        "Cargo.toml",
        "Cargo.lock",
    ])
    .is_some_and(|o| o.status.success());
    let revision = if clean {
        commit
    } else {
        format!("{commit}-dirty")
    };
    let table = table::render(&rows, &measured, &revision);
    println!("{table}");
    let path = measuring_md();
    let doc = std::fs::read_to_string(&path).unwrap();
    let doc = table::replace(&doc, &table).expect("docs/measuring.md has the table's markers");
    std::fs::write(&path, doc).unwrap();
}
