//! `afterburner explain`: where the instructions went, per function, on a
//! fixture where PGO changes one known function (`checksum`, whose loop
//! gcc unrolls once it knows the trip count) and leaves the rest alone.

use crate::support::{only_run_dir, read_json, Sandbox};

const ONEHOT: &str = r#"
[target]
name = "onehot"
source = { path = "src" }
build = "make"
binaries = { onehot = "onehot" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "sums"
run = "{bin.onehot} 1000"
train_run = "{bin.onehot} 300"

[bench]
repetitions = 2
warmup = 0
metrics = ["instructions"]
instruction_repetitions = 2
seed = 7
"#;

/// The cells of the first row of the function table `explain` prints.
fn first_function_row(stdout: &str) -> Vec<String> {
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("function"));
    lines.next().expect("a function table");
    lines
        .next()
        .expect("a row under the function table's header")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[test]
fn explain_puts_the_function_pgo_changed_on_top_with_fewer_instructions() {
    let sandbox = Sandbox::with_fixture("onehot");
    sandbox.write("afterburner.toml", ONEHOT);
    let run = sandbox.afterburner(&["run"]);
    run.assert_ok();
    let run_dir = only_run_dir(&sandbox);
    let meta = read_json(&run_dir.join("meta.json"));
    if meta["instruction_counter"] != "callgrind" {
        // perf counts totals only: explain says so, with what to do.
        sandbox
            .afterburner(&["explain"])
            .assert_fails_with("perf")
            .assert_fails_with("hint:");
        crate::support::skip_part(
            "the per-function check: instructions were counted with perf here",
        );
        return;
    }
    // The summary names the function.
    let summary = run.stdout();
    assert!(summary.contains("sums / pgo: checksum -"), "{summary}");
    // Each counted run kept its callgrind file.
    for variant in ["baseline", "pgo"] {
        for round in ["r000", "r001"] {
            let dir = run_dir.join("profiles/sums").join(variant).join(round);
            assert!(
                std::fs::read_dir(&dir).unwrap().count() >= 1,
                "{} is empty",
                dir.display()
            );
        }
    }

    let explain = sandbox.afterburner(&["explain", "--top", "5"]);
    explain.assert_ok();
    let stdout = explain.stdout();
    // Every cost line was read: the functions add up to callgrind's totals.
    assert!(!stdout.contains("add up to"), "{stdout}");
    let row = first_function_row(&stdout);
    // function, object, baseline, pgo, change, of total, pieces
    assert_eq!(row[0], "checksum", "{stdout}");
    assert_eq!(row[1], "onehot", "{stdout}");
    assert!(
        row[4].starts_with('-'),
        "checksum should lose instructions:\n{stdout}"
    );
    // The clone gcc made of it is the same row, named among its pieces.
    assert!(row.iter().any(|c| c.starts_with("checksum.")), "{stdout}");
    // Summed per object, the program holds the gain and libc none of it.
    let object_line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("onehot "))
        .expect("a row for the program's own object");
    assert!(object_line.contains(" -"), "{stdout}");
    // Binary facts per variant: code size and functions, as built.
    let facts = stdout
        .split("binaries (as they are on disk now):")
        .nth(1)
        .unwrap_or_else(|| panic!("no binary facts:\n{stdout}"));
    for variant in ["baseline", "pgo"] {
        let line = facts
            .lines()
            .find(|l| l.split_whitespace().next() == Some(variant))
            .unwrap_or_else(|| panic!("no {variant} row:\n{facts}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        let (bytes, text): (u64, u64) = (cells[2].parse().unwrap(), cells[3].parse().unwrap());
        assert!(text > 0 && text < bytes, "{line}");
        assert!(cells[4].parse::<u64>().unwrap() > 0, "{line}");
    }

    report_has_the_section(&run_dir);
    simulates(&sandbox, &run_dir);
    // Only what was asked for, and a name that is not there is refused.
    sandbox
        .afterburner(&["explain", "--variant", "baseline"])
        .assert_fails_with("--variant takes one of: pgo");
    sandbox
        .afterburner(&["explain", "--workload", "nope"])
        .assert_fails_with("--workload takes one of: sums");

    missing_or_broken_files(&sandbox, &run_dir);
}

/// report.md and report.html say where the instructions went, the page
/// with a differential flame graph drawn without script.
fn report_has_the_section(run_dir: &std::path::Path) {
    // The report has the section too.
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Where the instructions went"),
        "{report}"
    );
    assert!(report.contains("| checksum | onehot |"), "{report}");
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Where the instructions went</h2>"));
    // With a differential flame graph of the call graph, drawn without script.
    let flame = &html[html
        .find("<div class=\"flame\" style=\"overflow-x:auto\"><svg")
        .expect("a flame graph")..];
    assert!(flame.contains("checksum"), "{flame}");
    assert!(!html.contains("<script"));
}

/// `explain --simulate`: a model, labelled so; PGO's unrolled loop runs
/// far fewer branches.
fn simulates(sandbox: &Sandbox, run_dir: &std::path::Path) {
    // The simulation: a model, labelled so; PGO's unrolled loop runs far
    // fewer branches, and the most mispredicted function is named.
    let simulated = sandbox.afterburner(&["explain", "--simulate"]);
    simulated.assert_ok();
    let out = simulated.stdout();
    assert!(out.contains("A model, not this CPU"), "{out}");
    let branches = |variant: &str| -> u64 {
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{variant} ")))
            .unwrap_or_else(|| panic!("no row for {variant}:\n{out}"));
        row.split_whitespace()
            .nth(2)
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    assert!(branches("pgo") < branches("baseline"), "{out}");
    assert!(run_dir.join("simulated/sums/pgo").is_dir());
    // The report, redrawn, shows it too.
    sandbox.afterburner(&["report"]).assert_ok();
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Simulated caches and branches"),
        "{report}"
    );
}

/// A kept file cut short, then no kept files at all (a run recorded
/// before they were kept).
fn missing_or_broken_files(sandbox: &Sandbox, run_dir: &std::path::Path) {
    // A kept file cut short costs the report its section, not the report;
    // explain names the file.
    let dir = run_dir.join("profiles/sums/pgo/r001");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.find("totals:").unwrap()]).unwrap();
    sandbox
        .afterburner(&["explain"])
        .assert_fails_with("profiles/sums/pgo/r001/counter.")
        .assert_fails_with("no totals line");
    let report = sandbox.afterburner(&["report"]);
    report.assert_ok();
    assert!(
        report
            .stdout()
            .contains("no section \"Where the instructions went\""),
        "{}",
        report.stdout()
    );

    // A run whose files are gone (recorded before they were kept) is
    // explained as such, with what to do.
    std::fs::remove_dir_all(run_dir.join("profiles")).unwrap();
    sandbox
        .afterburner(&["explain"])
        .assert_fails_with("kept no callgrind files")
        .assert_fails_with("hint: run `afterburner bench` again");
    sandbox.afterburner(&["report"]).assert_ok();
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(!report.contains("Where the instructions went"), "{report}");
}
