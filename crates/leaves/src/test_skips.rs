//! Unit tests that skip say so where `.ci/run` counts skips: a line in
//! `AFTERBURNER_SKIP_LEDGER` (the integration tests' support module writes
//! the same file), besides stderr, which `cargo test` hides for a pass.

/// The calling test skips (all or part of it) for `why`.
pub fn skip(why: &str) {
    use std::io::Write as _;
    eprintln!("SKIP: {why}");
    let Some(ledger) = std::env::var_os("AFTERBURNER_SKIP_LEDGER") else {
        return;
    };
    let test = std::thread::current()
        .name()
        .unwrap_or("a unit test")
        .to_owned();
    let line = format!("skip\t{test}\t{}\n", why.replace(['\t', '\n'], " "));
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ledger)
        .and_then(|mut f| f.write_all(line.as_bytes()));
}
