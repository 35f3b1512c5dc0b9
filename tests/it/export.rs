//! `afterburner export`: the exported PGO build runs, its manifest matches
//! the build record, its binary is stripped with a debuglink, and
//! `--verify` catches a changed file.

use std::path::Path;
use std::process::Command;

use crate::support::{go_for_pgo_or_skip, only_run_dir, read_json, Sandbox};

/// The hotpath fixture with a PGO variant, small: 2 wall repetitions.
/// `-g` gives the binary debug information for export to split off.
const EXPERIMENT: &str = r#"
[target]
name = "hotpath"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]
cflags = "-g"

[[workload]]
name = "loop"
run = "{bin.hotpath} 300000"
train_run = "{bin.hotpath} 100000"

[bench]
repetitions = 2
warmup = 0
metrics = ["wall"]
seed = 7
"#;

fn output_of(binary: &Path, arg: &str) -> String {
    let out = Command::new(binary).arg(arg).output().unwrap();
    assert!(out.status.success(), "{} failed: {out:?}", binary.display());
    String::from_utf8(out.stdout).unwrap()
}

/// `readelf -S`'s section table of `binary`.
fn sections(binary: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-S")
        .arg(binary)
        .output()
        .unwrap();
    assert!(out.status.success(), "readelf failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The binary's `.gnu_debuglink` names `debug` and carries its CRC-32, as
/// gdb checks before it uses the file (the section: the file name, NUL,
/// padding to 4 bytes, the CRC little-endian; binutils' `bfd_create_gnu_debuglink_section`).
fn assert_debuglink_names(binary: &Path, debug: &Path) {
    let dumped = binary.with_extension("debuglink");
    let status = Command::new("objcopy")
        .arg(format!(
            "--dump-section=.gnu_debuglink={}",
            dumped.display()
        ))
        .arg(binary)
        .arg(binary.with_extension("scratch"))
        .status()
        .unwrap();
    assert!(status.success(), "objcopy --dump-section failed");
    let section = std::fs::read(&dumped).unwrap();
    let name = debug.file_name().unwrap().to_string_lossy();
    assert!(
        section.starts_with(format!("{name}\0").as_bytes()),
        "{section:?}"
    );
    let crc = u32::from_le_bytes(section[section.len() - 4..].try_into().unwrap());
    assert_eq!(crc, crc32(&std::fs::read(debug).unwrap()), "debuglink CRC");
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the checksum
/// `.gnu_debuglink` uses.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn unpack(archive: &Path, into: &Path) {
    std::fs::create_dir_all(into).unwrap();
    let status = Command::new("tar")
        .args(["--zstd", "-xf"])
        .arg(archive)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(status.success(), "tar --zstd -xf failed");
}

#[test]
fn export_round_trips_the_pgo_build() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    let revision = commit_source(&sandbox.path().join("src"));
    sandbox.afterburner(&["run"]).assert_ok();
    let export = sandbox.afterburner(&["export", "pgo", "--out", "ship/pgo.tar.zst"]);
    export.assert_ok();
    assert!(export.stdout().contains("exported"), "{}", export.stdout());

    let archive = sandbox.path().join("ship/pgo.tar.zst");
    let unpacked = sandbox.path().join("unpacked");
    unpack(&archive, &unpacked);
    let top = unpacked.join("hotpath-pgo");
    let record = read_json(&sandbox.path().join(".afterburner/variants/pgo/final.json"));
    let built = Path::new(record["binaries"]["hotpath"].as_str().unwrap());
    let shipped = top.join("bin/hotpath");

    // The exported binary runs and prints what the built one prints.
    assert_eq!(output_of(&shipped, "1000"), output_of(built, "1000"));

    // Stripped, smaller, with a link to its debug file, which keeps the DWARF.
    let built_len = std::fs::metadata(built).unwrap().len();
    let shipped_len = std::fs::metadata(&shipped).unwrap().len();
    assert!(shipped_len < built_len, "{shipped_len} !< {built_len}");
    let shipped_sections = sections(&shipped);
    assert!(
        shipped_sections.contains(".gnu_debuglink"),
        "{shipped_sections}"
    );
    assert!(
        !shipped_sections.contains(".debug_info"),
        "{shipped_sections}"
    );
    assert!(sections(&top.join("debug/hotpath.debug")).contains(".debug_info"));
    assert_debuglink_names(&shipped, &top.join("debug/hotpath.debug"));

    // The merged profile is in the package.
    assert!(top.join("profile/gcc-pgo/hotpath.gcda").is_file());

    let manifest = read_json(&top.join("manifest.json"));
    assert_manifest_matches(&manifest, &record, built, &shipped);
    assert_eq!(manifest["revision"], revision.as_str());
    let run_id = only_run_dir(&sandbox)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(manifest["bench"]["run_id"], run_id.as_str());
    assert_eq!(manifest["bench"]["same_build"], true);
    assert_eq!(manifest["bench"]["confidence"], 0.95);
    let verdict = &manifest["bench"]["verdicts"][0];
    assert_eq!(verdict["workload"], "loop");
    assert_eq!(verdict["metric"], "wall");
    assert!(verdict["ratio"].as_f64().unwrap() > 0.0);

    // --verify checks every file; a changed profile fails it.
    let verify = sandbox.afterburner(&["export", "--verify", "ship/pgo.tar.zst"]);
    verify.assert_ok();
    assert!(verify.stdout().starts_with("OK"), "{}", verify.stdout());
    std::fs::write(top.join("profile/gcc-pgo/hotpath.gcda"), b"changed").unwrap();
    let status = Command::new("tar")
        .args([
            "--zstd",
            "-cf",
            "tampered.tar.zst",
            "-C",
            "unpacked",
            "hotpath-pgo",
        ])
        .current_dir(sandbox.path())
        .status()
        .unwrap();
    assert!(status.success());
    sandbox
        .afterburner(&["export", "--verify", "tampered.tar.zst"])
        .assert_fails_with("profile/gcc-pgo/hotpath.gcda has SHA-256");

    // A source changed since the build: the revision would not be the
    // binary's, so export refuses until it is rebuilt.
    let source = sandbox.path().join("src/hotpath.c");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, format!("{text}\n/* changed */\n")).unwrap();
    sandbox
        .afterburner(&["export", "pgo", "--out", "again.tar.zst"])
        .assert_fails_with("final build is out of date")
        .assert_fails_with("hint: run `afterburner build` and `afterburner train`");
}

/// Make `dir` a git repository with one commit; its short revision.
fn commit_source(dir: &Path) -> String {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "fixture"]);
    git(&["rev-parse", "--short=12", "HEAD"])
}

/// The manifest says what the build record says, and its checksums are
/// those of the built and the shipped binary.
fn assert_manifest_matches(
    manifest: &serde_json::Value,
    record: &serde_json::Value,
    built: &Path,
    shipped: &Path,
) {
    assert_eq!(manifest["schema_version"], 1);
    assert_eq!(manifest["target"], "hotpath");
    assert_eq!(manifest["variant"], "pgo");
    assert_eq!(manifest["optimize"], serde_json::json!(["pgo"]));
    assert_eq!(manifest["env"], serde_json::json!({}));
    assert_eq!(manifest["compiler"]["name"], "gcc");
    assert_eq!(manifest["compiler"]["cc"], record["cc"]);
    assert_eq!(manifest["compiler"]["version"], record["compiler_version"]);
    for flags in ["cflags", "ldflags", "goflags"] {
        assert_eq!(manifest[flags], record[flags], "{flags}");
    }
    let binary = &manifest["binaries"][0];
    assert_eq!(binary["name"], "hotpath");
    assert_eq!(binary["path"], "bin/hotpath");
    assert_eq!(
        binary["built_sha256"],
        afterburner::digest::sha256_file(built).unwrap()
    );
    assert_eq!(
        binary["sha256"],
        afterburner::digest::sha256_file(shipped).unwrap()
    );
    assert_eq!(binary["debug"]["path"], "debug/hotpath.debug");
    assert_eq!(
        manifest["profiles"][0]["path"],
        "profile/gcc-pgo/hotpath.gcda"
    );
    assert!(manifest["machine"]["logical_cpus"].as_u64().unwrap() > 0);
    assert!(manifest["afterburner_version"].is_string());
}

#[test]
fn export_of_an_unknown_variant_names_the_variants() {
    let sandbox = Sandbox::with_fixture("hotpath");
    let distro = format!(
        "{EXPERIMENT}\n[[variant]]\nname = \"distro\"\nprebuilt = {{ hotpath = \"/bin/true\" }}\n"
    );
    sandbox.write("afterburner.toml", &distro);
    sandbox
        .afterburner(&["export", "lto", "--out", "x.tar.zst"])
        .assert_fails_with("no variant `lto`")
        .assert_fails_with("hint: the variants are: baseline, pgo, distro");
    // A prebuilt variant was not built here: nothing to export.
    sandbox
        .afterburner(&["export", "distro", "--out", "x.tar.zst"])
        .assert_fails_with("variant `distro` is prebuilt")
        .assert_fails_with("export one of: baseline, pgo");
}

#[test]
fn export_before_training_says_to_train() {
    let sandbox = Sandbox::with_fixture("hotpath");
    sandbox.write("afterburner.toml", EXPERIMENT);
    sandbox
        .afterburner(&["export", "pgo", "--out", "x.tar.zst"])
        .assert_fails_with("hint: run `afterburner train` first");
    sandbox
        .afterburner(&["export", "pgo", "--out", "x.zip"])
        .assert_fails_with("hint: name it NAME.tar.zst");
}

/// Go PGO on the gohot fixture, trained only (no bench): small inputs.
const GO: &str = r#"
[target]
name = "gohot"
source = { path = "src" }
build = "go build -o gohot ."
binaries = { gohot = "gohot" }
compiler = "go"

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[workload]]
name = "loop"
run = "{bin.gohot} -n 200000"
train_run = "{bin.gohot} -n 5000000 -cpuprofile {profile}"
"#;

/// A Go binary is split and stripped like a C one and still runs; its
/// merged pprof profile and goflags are in the package, and no bench run
/// means no verdicts.
#[test]
fn export_ships_a_go_pgo_build() {
    if !go_for_pgo_or_skip() {
        return;
    }
    let sandbox = Sandbox::with_fixture("gohot");
    sandbox.write("afterburner.toml", GO);
    sandbox.afterburner(&["build"]).assert_ok();
    sandbox.afterburner(&["train"]).assert_ok();
    sandbox
        .afterburner(&["export", "pgo", "--out", "gohot.tar.gz"])
        .assert_ok();
    let unpacked = sandbox.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(sandbox.path().join("gohot.tar.gz"))
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());
    let top = unpacked.join("gohot-pgo");
    let record = read_json(&sandbox.path().join(".afterburner/variants/pgo/final.json"));
    let built = Path::new(record["binaries"]["gohot"].as_str().unwrap());
    let shipped = top.join("bin/gohot");
    assert_eq!(output_of(&shipped, "-n=1000"), output_of(built, "-n=1000"));

    let manifest = read_json(&top.join("manifest.json"));
    assert_eq!(manifest["compiler"]["name"], "go");
    assert_eq!(manifest["goflags"], record["goflags"]);
    let binary = &manifest["binaries"][0];
    assert!(
        binary["bytes"].as_u64() < binary["built_bytes"].as_u64(),
        "{binary:#}"
    );
    assert_eq!(binary["debug"]["path"], "debug/gohot.debug");
    let profile = manifest["profiles"][0]["path"].as_str().unwrap();
    assert!(profile.starts_with("profile/go-pgo/merged-"), "{profile}");
    assert!(top.join(profile).is_file());
    assert!(manifest["bench"].is_null());
}
