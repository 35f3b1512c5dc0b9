//! `afterburner export`: ship a variant's final build as one archive,
//! `<target>-<variant>/{bin/,debug/,profile/<round>/,manifest.json}`, and
//! `export --verify`, which unpacks one and checks every checksum.

mod archive;
pub mod manifest;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use crate::analysis::Results;
use crate::build::{self, BuildRecord};
use crate::context::Context;
use crate::digest::sha256_file;
use crate::experiment::Variant;
use crate::toolchain::Stage;
use crate::workdir::RESULTS_FILE;
use manifest::{BenchSummary, CompilerInfo, Machine, ShippedFile, VerdictEntry};
pub use manifest::{Manifest, MANIFEST_FILE, MANIFEST_VERSION};

/// Export `variant`'s final build to the archive `out`; returns its manifest.
pub fn export(cx: &Context, variant: &str, out: &Path) -> Result<Manifest> {
    archive::compression(out)?;
    let variant = exportable(cx, variant)?;
    let record = build::current(&cx.workdir, &variant.name, Stage::Final).with_context(|| {
        format!(
            "variant `{}` has no finished build in {}\nhint: run `afterburner {}` first (or `afterburner run`)",
            variant.name,
            cx.workdir.root.display(),
            if variant.needs_profile() { "train" } else { "build" }
        )
    })?;
    let source_dir = ensure_current(cx, variant, &record)?;
    let top_name = format!("{}-{}", cx.experiment.target.name, variant.name);
    // Assembled outside the work directory: export only reads there, so it
    // needs no lock and runs beside a bench.
    let staging = scratch_dir("export")?;
    let revision = crate::source::revision(&cx.experiment.target.source, &source_dir);
    let built = Built {
        variant,
        record: &record,
        revision,
    };
    let packed = stage_and_pack(cx, &built, &staging.join(&top_name), out);
    let _ = fs_err::remove_dir_all(&staging);
    packed
}

/// The build being exported.
struct Built<'a> {
    variant: &'a Variant,
    record: &'a BuildRecord,
    /// The source's revision, which the build is current with.
    revision: Option<String>,
}

/// The source directory, if the variant's final build is current with it
/// and with the experiment: the revision the manifest names must be the
/// one the binaries were built from.
fn ensure_current(cx: &Context, variant: &Variant, record: &BuildRecord) -> Result<PathBuf> {
    let source_dir = crate::source::fetch(&cx.experiment.target.source, &cx.workdir.root)?;
    let key = build::stage_key(
        &cx.experiment,
        variant,
        Stage::Final,
        &source_dir,
        &cx.workdir,
    )?;
    if key != record.key {
        bail!(
            "variant `{}`'s final build is out of date: its source, build command, flags, compiler or profile changed since it was built\nhint: run `afterburner {}` to rebuild it (and `afterburner bench` for verdicts on it), then export",
            variant.name,
            if variant.needs_profile() { "build` and `afterburner train" } else { "build" }
        );
    }
    Ok(source_dir)
}

/// Fill `top` and pack it into `out`.
fn stage_and_pack(cx: &Context, built: &Built, top: &Path, out: &Path) -> Result<Manifest> {
    fs_err::create_dir_all(top)?;
    let manifest = assemble(cx, built, top)?;
    let json = serde_json::to_string_pretty(&manifest)?;
    fs_err::write(top.join(MANIFEST_FILE), format!("{json}\n"))?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs_err::create_dir_all(parent)?;
    }
    let (Some(parent), Some(name)) = (top.parent(), top.file_name()) else {
        bail!("{} has no parent folder", top.display());
    };
    archive::pack(parent, &name.to_string_lossy(), out)?;
    Ok(manifest)
}

/// A fresh folder of this process under the system's temporary directory.
fn scratch_dir(purpose: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("afterburner-{purpose}-{}", std::process::id()));
    if dir.exists() {
        fs_err::remove_dir_all(&dir)?;
    }
    fs_err::create_dir_all(&dir)?;
    Ok(dir)
}

/// The variant named `name`, if it has a build to export.
fn exportable<'a>(cx: &'a Context, name: &str) -> Result<&'a Variant> {
    let names: Vec<&str> = cx
        .experiment
        .variants
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    let Some(variant) = cx.experiment.variant(name) else {
        bail!(
            "no variant `{name}` in {}\nhint: the variants are: {}",
            cx.experiment.file.display(),
            names.join(", ")
        );
    };
    if variant.prebuilt.is_some() {
        bail!(
            "variant `{name}` is prebuilt: afterburner did not build it, so it has nothing to export\nhint: ship its binaries as they are, or export one of: {}",
            names
                .iter()
                .filter(|n| cx.experiment.variant(n).is_some_and(|v| v.prebuilt.is_none()))
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(variant)
}

/// Fill `top` with the binaries and profiles; the manifest that describes them.
fn assemble(cx: &Context, built: &Built, top: &Path) -> Result<Manifest> {
    let (variant, record) = (built.variant, built.record);
    let mut binaries = Vec::new();
    for (name, built) in &record.binaries {
        binaries.push(
            archive::ship_binary(name, built, top)
                .with_context(|| format!("shipping binary `{name}` ({})", built.display()))?,
        );
    }
    let profiles = copy_profiles(cx, variant, top)?;
    let results = latest_results(cx)?;
    let machine = results.as_ref().map_or_else(
        || Machine::from(&crate::env::capture()),
        |r| Machine::from(&r.environment),
    );
    Ok(Manifest {
        schema_version: MANIFEST_VERSION,
        target: cx.experiment.target.name.clone(),
        variant: variant.name.clone(),
        optimize: variant.optimize.clone(),
        env: variant.env.clone(),
        compiler: CompilerInfo {
            name: variant.compiler.name().to_owned(),
            cc: record.cc.clone(),
            version: record.compiler_version.clone(),
        },
        cflags: record.cflags.clone(),
        ldflags: record.ldflags.clone(),
        goflags: record.goflags.clone(),
        rustflags: record.rustflags.clone(),
        cargo: record.cargo.clone(),
        revision: built.revision.clone(),
        binaries,
        profiles,
        bench: results.as_ref().map(|r| bench_summary(r, record)),
        machine,
        afterburner_version: env!("CARGO_PKG_VERSION").to_owned(),
    })
}

/// Copy the merged profile of each training round to `top/profile/<round>/`.
fn copy_profiles(cx: &Context, variant: &Variant, top: &Path) -> Result<Vec<ShippedFile>> {
    let dirs = cx.workdir.variant_dirs(&variant.name);
    let mut shipped = Vec::new();
    for round in variant.rounds() {
        let dir = dirs.round(round).profile;
        for file in round.profile_files(&dir)? {
            // Profiles lie under their round's folder; a file elsewhere
            // keeps only its name (joining an absolute path would replace
            // the whole target path).
            let inside = file
                .strip_prefix(&dir)
                .map(Path::to_path_buf)
                .or_else(|_| {
                    file.file_name()
                        .map(PathBuf::from)
                        .context("a profile without a file name")
                })
                .with_context(|| format!("packing profile {}", file.display()))?;
            let relative = Path::new("profile").join(round.name()).join(inside);
            let target = top.join(&relative);
            if let Some(parent) = target.parent() {
                fs_err::create_dir_all(parent)?;
            }
            fs_err::copy(&file, &target)?;
            shipped.push(ShippedFile {
                sha256: sha256_file(&target)?,
                path: relative,
            });
        }
    }
    Ok(shipped)
}

/// The latest bench run's results: its `results.json`, or redrawn from its
/// raw records when the report was not written; `None` without a run.
fn latest_results(cx: &Context) -> Result<Option<Results>> {
    let Some(run_dir) = cx.workdir.latest_run() else {
        return Ok(None);
    };
    let file = run_dir.join(RESULTS_FILE);
    let results = if file.is_file() {
        crate::analysis::read::read_run(&file)?
    } else {
        crate::analysis::read::load_results(&run_dir)?
    };
    Ok(Some(results))
}

/// The run's verdicts on the record's variant.
fn bench_summary(results: &Results, record: &BuildRecord) -> BenchSummary {
    let same_build = results.variants.iter().any(|v| {
        v.name == record.variant
            && v.compiler_version == record.compiler_version
            && v.cflags == record.cflags
            && v.ldflags == record.ldflags
            && v.goflags == record.goflags
            && v.rustflags == record.rustflags
            && v.cargo == record.cargo
    });
    let verdicts = results
        .comparisons
        .iter()
        .filter(|c| c.variant == record.variant)
        .map(|c| VerdictEntry {
            workload: c.workload.clone(),
            metric: c.metric.clone(),
            ratio: c.outcome.ratio,
            ci_low: c.outcome.ci_low,
            ci_high: c.outcome.ci_high,
            verdict: c.outcome.verdict,
        })
        .collect();
    BenchSummary {
        run_id: results.run_id.clone(),
        baseline: results.baseline.clone(),
        confidence: results.confidence,
        same_build,
        verdicts,
    }
}

/// Unpack `archive` into a temporary folder and check every file the
/// manifest names against its SHA-256; returns the manifest and the
/// number of files checked.
pub fn verify(archive: &Path) -> Result<(Manifest, usize)> {
    let scratch = scratch_dir("verify")?;
    let checked = archive::unpack(archive, &scratch).and_then(|()| check_unpacked(&scratch));
    let _ = fs_err::remove_dir_all(&scratch);
    checked.with_context(|| format!("verifying {}", archive.display()))
}

/// Check the package unpacked in `dir` (one top folder holding a manifest).
fn check_unpacked(dir: &Path) -> Result<(Manifest, usize)> {
    let top: Vec<PathBuf> = fs_err::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST_FILE).is_file())
        .collect();
    let [top] = top.as_slice() else {
        bail!("the archive holds no single folder with a {MANIFEST_FILE}\nhint: is it a package that `afterburner export` wrote?");
    };
    let path = top.join(MANIFEST_FILE);
    let manifest: Manifest = serde_json::from_slice(&fs_err::read(&path)?)
        .with_context(|| format!("{} is not an afterburner manifest", path.display()))?;
    let mut files: Vec<(&Path, &str)> = Vec::new();
    for binary in &manifest.binaries {
        files.push((&binary.path, &binary.sha256));
        files.extend(
            binary
                .debug
                .iter()
                .map(|d| (d.path.as_path(), d.sha256.as_str())),
        );
    }
    files.extend(
        manifest
            .profiles
            .iter()
            .map(|p| (p.path.as_path(), p.sha256.as_str())),
    );
    for (relative, expected) in &files {
        if !relative
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            bail!(
                "the manifest names {}, a path outside the package\nhint: only trust packages that `afterburner export` wrote",
                relative.display()
            );
        }
        let actual = sha256_file(&top.join(relative))?;
        if actual != *expected {
            bail!(
                "{} has SHA-256 {actual}, the manifest says {expected}\nhint: the package was changed or damaged after export; export it again",
                relative.display()
            );
        }
    }
    let count = files.len();
    Ok((manifest, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_format_follows_the_extension() {
        let flag = |name: &str| archive::compression(Path::new(name)).map_err(|e| e.to_string());
        assert_eq!(flag("out/pgo.tar.zst"), Ok(Some("--zstd")));
        assert_eq!(flag("pgo.tzst"), Ok(Some("--zstd")));
        assert_eq!(flag("pgo.tar.gz"), Ok(Some("--gzip")));
        assert_eq!(flag("pgo.tgz"), Ok(Some("--gzip")));
        assert_eq!(flag("pgo.tar"), Ok(None));
        let zip = flag("pgo.zip").unwrap_err();
        assert!(zip.contains("hint: name it NAME.tar.zst"), "{zip}");
    }

    fn file(path: &str, text: &str, top: &Path) -> ShippedFile {
        let full = top.join(path);
        fs_err::create_dir_all(full.parent().unwrap()).unwrap();
        fs_err::write(&full, text).unwrap();
        ShippedFile {
            path: PathBuf::from(path),
            sha256: sha256_file(&full).unwrap(),
        }
    }

    fn manifest_with(profiles: Vec<ShippedFile>) -> Manifest {
        Manifest {
            schema_version: MANIFEST_VERSION,
            target: "t".to_owned(),
            variant: "pgo".to_owned(),
            optimize: Vec::new(),
            env: std::collections::BTreeMap::new(),
            compiler: CompilerInfo {
                name: "gcc".to_owned(),
                cc: "gcc".to_owned(),
                version: "gcc 12".to_owned(),
            },
            cflags: String::new(),
            ldflags: String::new(),
            goflags: String::new(),
            rustflags: String::new(),
            cargo: String::new(),
            revision: None,
            binaries: Vec::new(),
            profiles,
            bench: None,
            machine: Machine::from(&crate::env::capture()),
            afterburner_version: "0".to_owned(),
        }
    }

    #[test]
    fn a_changed_file_fails_the_check_and_is_named() {
        let dir = scratch_dir("unit-check").unwrap();
        let top = dir.join("t-pgo");
        let profile = file("profile/gcc-pgo/a.gcda", "counts", &top);
        let manifest = manifest_with(vec![profile]);
        fs_err::write(
            top.join(MANIFEST_FILE),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
        let (read, count) = check_unpacked(&dir).unwrap();
        assert_eq!((read, count), (manifest, 1));
        fs_err::write(top.join("profile/gcc-pgo/a.gcda"), "other counts").unwrap();
        let error = format!("{:#}", check_unpacked(&dir).unwrap_err());
        fs_err::remove_dir_all(&dir).unwrap();
        assert!(
            error.contains("profile/gcc-pgo/a.gcda has SHA-256"),
            "{error}"
        );
        assert!(error.contains("hint:"), "{error}");
    }
}
