//! `report.html` in a real browser: headless Chromium loads it, shows every
//! variant and every chart, logs no script error, and leaves a screenshot in
//! `target/tmp/report.png`.

use std::process::Command;
use std::time::Duration;

use afterburner::process::capture_command;

use crate::support::{only_run_dir, Sandbox};

const AB: &str = r#"
[target]
name = "html"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "loop"
run = "{bin.hotpath} 300000"

[bench]
repetitions = 4
warmup = 0
metrics = ["wall", "instructions"]
"#;

fn chromium(args: &[&str], url: &str) -> afterburner::process::Captured {
    let profile = tempfile::tempdir().unwrap();
    let mut command = Command::new("chromium");
    // The flags this machine needs: no sandbox as root, no GPU, and no
    // background network traffic (there is no network to reach).
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--enable-logging=stderr", "--v=0"])
        .args(args)
        .arg(url);
    capture_command(&mut command, Duration::from_mins(2)).unwrap()
}

#[test]
fn html_report_renders_in_chromium_with_every_variant() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", AB);
    sandbox.afterburner(&["run"]).assert_ok();
    let page = only_run_dir(&sandbox).join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page must not load anything"
    );
    // (The flame graph of "Where the instructions went" follows them.)
    let charts = html
        .split("<h2>Where the instructions went</h2>")
        .next()
        .unwrap();
    assert_eq!(
        charts.matches("<svg").count(),
        4,
        "a repetition chart and a ratio chart per metric"
    );
    if !afterburner::toolchain::tools::is_installed("chromium") {
        crate::support::skip(crate::support::Lack::Installed(
            "the browser half: chromium is not installed (.ci/run installs it)",
        ));
        return;
    }
    let url = format!("file://{}", page.display());
    let dom = chromium(&["--dump-dom"], &url);
    assert!(dom.success(), "{}", dom.stderr);
    for needle in [
        "baseline",
        "pgo",
        "loop / wall",
        "loop / instructions",
        "Environment",
    ] {
        assert!(dom.stdout.contains(needle), "rendered page lacks {needle}");
    }
    assert!(
        !dom.stderr.contains("Uncaught"),
        "script error:\n{}",
        dom.stderr
    );
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1100,1400",
        ],
        &url,
    );
    assert!(out.success(), "{}", out.stderr);
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "screenshot too small to show anything"
    );
    eprintln!("screenshot: {}", shot.display());
}
