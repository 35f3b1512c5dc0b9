//! `afterburner demo`: Lua's interpreter from Debian's source, built plain
//! and with PGO, LTO and both (and BOLT where it is installed), trained on
//! two scripts and measured on those and a third it never saw; then what
//! to try next.

use std::path::Path;

use anyhow::Result;

use super::{Context, Options};

/// The experiment the demo runs (`recipes/lua.toml`).
pub const RECIPE: &str = include_str!("../../recipes/lua.toml");

/// The Lua scripts its workloads run, written to `lua/` beside the file.
const SCRIPTS: [(&str, &str); 3] = [
    ("objects.lua", include_str!("../../recipes/lua/objects.lua")),
    ("strings.lua", include_str!("../../recipes/lua/strings.lua")),
    ("sort.lua", include_str!("../../recipes/lua/sort.lua")),
];

/// The variant the full demo adds where BOLT is installed.
const BOLT_VARIANT: &str =
    "\n[[variant]]\nname = \"pgo+lto+bolt\"\noptimize = [\"pgo\", \"lto\", \"bolt\"]\n";

/// The demo's experiment file: the recipe, with a BOLT variant when `bolt`.
pub fn experiment_text(bolt: bool) -> String {
    if !bolt {
        return RECIPE.to_owned();
    }
    // Beside the other variants, before the workloads.
    let at = RECIPE
        .find("\n# Commands run in this file's directory")
        .unwrap_or(RECIPE.len());
    format!("{}{BOLT_VARIANT}{}", &RECIPE[..at], &RECIPE[at..])
}

/// Write the demo's files into `dir` and run it.
pub fn demo(dir: &Path, quick: bool) -> Result<()> {
    let bolt = crate::toolchain::bolt::chosen().is_some();
    fs_err::create_dir_all(dir.join("lua"))?;
    let file = dir.join("afterburner.toml");
    write_if_changed(&file, &experiment_text(bolt))?;
    for (name, text) in SCRIPTS {
        write_if_changed(&dir.join("lua").join(name), text)?;
    }
    crate::progress::info(format_args!("demo experiment: {}", file.display()));
    if !quick && !bolt {
        crate::progress::info(format_args!(
            "BOLT is not installed, so the demo runs no BOLT variant ({})",
            crate::toolchain::bolt::install_hint()
        ));
    }
    let cx = Context::open(
        &file,
        &Options {
            quick,
            workdir: None,
            variant: None,
        },
    )?;
    super::run(&cx)?;
    print_next(&file, quick)
}

/// What to try after the demo: each a command that runs as printed, and
/// what it shows.
fn print_next(file: &Path, quick: bool) -> Result<()> {
    let file = file.display();
    let mut lines: Vec<(String, &str)> = Vec::new();
    if quick {
        lines.push((
            "afterburner demo".to_owned(),
            "the full demo: LTO, PGO+LTO (BOLT where installed), a script PGO never saw",
        ));
    }
    lines.push((
        format!("afterburner explain {file}"),
        "where the instructions went, function by function",
    ));
    lines.push((
        format!("afterburner race {file}"),
        "the fastest of the variants, the slow ones dropped early",
    ));
    lines.push((
        "README.md, \"Your own program\"".to_owned(),
        "an afterburner.toml beside your code, `afterburner plan` before a long run",
    ));
    let width = lines.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    crate::stdout::line(format_args!("\nnext:"))?;
    for (command, what) in lines {
        crate::stdout::line(format_args!("  {command:<width$}  # {what}"))?;
    }
    Ok(())
}

fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if fs_err::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs_err::write(path, text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo's file loads, with and without BOLT and `--quick`: quick
    /// runs the baseline and PGO on the two trained scripts; the full demo
    /// runs every variant on all three, `sort` never trained on.
    #[test]
    fn the_demo_file_loads_quick_and_full_with_and_without_bolt() {
        let path = Path::new("/demo/afterburner.toml");
        for bolt in [false, true] {
            let text = experiment_text(bolt);
            let quick = crate::experiment::load_str(path, &text, true).unwrap();
            let names = |v: &[crate::experiment::Variant]| {
                v.iter().map(|v| v.name.clone()).collect::<Vec<_>>()
            };
            assert_eq!(names(&quick.variants), ["baseline", "pgo"]);
            let workloads: Vec<_> = quick.workloads.iter().map(|w| w.name.as_str()).collect();
            assert_eq!(workloads, ["objects", "strings"]);
            let full = crate::experiment::load_str(path, &text, false).unwrap();
            let mut expected = vec!["baseline", "pgo", "lto", "pgo+lto"];
            if bolt {
                expected.push("pgo+lto+bolt");
            }
            assert_eq!(names(&full.variants), expected);
            let sort = full.workloads.iter().find(|w| w.name == "sort").unwrap();
            assert_eq!(sort.role, crate::experiment::Role::Bench);
        }
    }
}
