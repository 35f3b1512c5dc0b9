//! The external tools a package needs: objcopy splits and strips the
//! binaries, tar packs and unpacks.
//!
//! The archive is written by the system's GNU tar (`--zstd`, `-z`) rather
//! than the `tar` and `zstd` crates: the package is meant to be unpacked
//! with that same `tar` on the machine it ships to, the README's install
//! steps use it, and it costs no new dependency (Debian's `tar` and
//! `zstd` packages, which `.ci/run` installs).

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::manifest::{ShippedBinary, ShippedFile};
use crate::digest::sha256_file;
use crate::process::{capture, quote_output};

/// Long enough for objcopy on a large binary or tar on a large package.
const TOOL_TIMEOUT: Duration = Duration::from_mins(10);

/// tar's compression flag for the archive named `path`, by its extension.
pub fn compression(path: &Path) -> Result<Option<&'static str>> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if name.ends_with(".tar.zst") || name.ends_with(".tzst") {
        Ok(Some("--zstd"))
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Ok(Some("--gzip"))
    } else if name.ends_with(".tar") {
        Ok(None)
    } else {
        bail!(
            "cannot tell the archive format of {}\nhint: name it NAME.tar.zst (or .tar.gz, .tar)",
            path.display()
        )
    }
}

/// Run `program args…`; fail with its stderr when it fails.
fn run(program: &str, args: &[&str]) -> Result<()> {
    let out = capture(program, args, TOOL_TIMEOUT).with_context(|| {
        format!(
            "could not run `{program}`\nhint: install it (`apt-get install -y {}`)",
            package_of(program)
        )
    })?;
    if !out.success() {
        bail!(
            "`{program} {}` failed:\n{}",
            args.join(" "),
            quote_output(&out.stderr)
        );
    }
    Ok(())
}

/// The Debian package that has `program`.
fn package_of(program: &str) -> &'static str {
    match program {
        "tar" => "tar zstd",
        _ => "binutils",
    }
}

/// Pack `top` (a folder inside `parent`) into `out`.
pub fn pack(parent: &Path, top: &str, out: &Path) -> Result<()> {
    let out_text = out.to_string_lossy();
    let parent_text = parent.to_string_lossy();
    let mut args = vec!["--create", "--file", &out_text, "--directory", &parent_text];
    args.extend(compression(out)?);
    // Reproducible metadata: the files' owner is nobody in particular.
    args.extend([
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        "--sort=name",
        top,
    ]);
    let packed = run("tar", &args).with_context(|| format!("packing {}", out.display()));
    if packed.is_err() {
        // A half-written archive would pass for a package.
        let _ = fs_err::remove_file(out);
    }
    packed
}

/// Unpack `archive` into `into`.
pub fn unpack(archive: &Path, into: &Path) -> Result<()> {
    let archive_text = archive.to_string_lossy();
    let into_text = into.to_string_lossy();
    // A package may come from another machine: as root, tar would
    // restore the archive's owners and set-id bits; take neither.
    let mut args = vec![
        "--extract",
        "--no-same-owner",
        "--no-same-permissions",
        "--file",
        &archive_text,
        "--directory",
        &into_text,
    ];
    args.extend(compression(archive)?);
    run("tar", &args).with_context(|| format!("unpacking {}", archive.display()))
}

/// Copy the built binary `built` to `top/bin/NAME`, its debug information
/// split into `top/debug/NAME.debug` and linked by `.gnu_debuglink`; a
/// binary objcopy refuses (not ELF) is shipped as built, and says so.
pub fn ship_binary(name: &str, built: &Path, top: &Path) -> Result<ShippedBinary> {
    let relative = Path::new("bin").join(name);
    let shipped = top.join(&relative);
    let debug_relative = Path::new("debug").join(format!("{name}.debug"));
    let debug = top.join(&debug_relative);
    fs_err::create_dir_all(top.join("bin"))?;
    fs_err::create_dir_all(top.join("debug"))?;
    fs_err::copy(built, &shipped)?;
    let (debug, note) = match split_debug(&shipped, &debug) {
        Ok(()) => (
            Some(ShippedFile {
                sha256: sha256_file(&debug)?,
                path: debug_relative,
            }),
            None,
        ),
        Err(error) => {
            // Leave neither a half-written debug file nor a half-stripped binary.
            let _ = fs_err::remove_file(&debug);
            fs_err::copy(built, &shipped)?;
            (
                None,
                Some(format!("shipped as built, not stripped: {error:#}")),
            )
        }
    };
    Ok(ShippedBinary {
        name: name.to_owned(),
        built_sha256: sha256_file(built)?,
        sha256: sha256_file(&shipped)?,
        built_bytes: fs_err::metadata(built)?.len(),
        bytes: fs_err::metadata(&shipped)?.len(),
        path: relative,
        debug,
        note,
    })
}

/// Keep `binary`'s debug information (and symbols) in `debug`, then strip
/// `binary` and point its `.gnu_debuglink` at `debug`, as Debian's
/// `dh_strip` does: gdb and perf find the file by that link.
fn split_debug(binary: &Path, debug: &Path) -> Result<()> {
    let binary = binary.to_string_lossy();
    let debug_text = debug.to_string_lossy();
    run("objcopy", &["--only-keep-debug", &binary, &debug_text])?;
    let link = format!("--add-gnu-debuglink={debug_text}");
    run("objcopy", &["--strip-all", &link, &binary])
}
