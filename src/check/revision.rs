//! The baseline revision of `check --rev REV`: the target's source at that
//! commit, exported beside the work directory's other sources, and the
//! experiment grown by one variant per variant built from it, so the two
//! builds run interleaved in the same rounds.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::experiment::{Experiment, ProfileFrom, Source};
use crate::process::{capture, capture_command, quote_output};

/// The name of variant `name` built from revision `short`.
pub fn variant_name(name: &str, short: &str) -> String {
    format!("{name}@{short}")
}

/// The target's source at `rev`, and the commit it names (12 hex digits
/// for a path source, `rev` as given for a git one). A `rev` that is a
/// directory is the baseline's source itself (another checkout, an
/// unpacked release), named by its last component.
pub fn source_at(target: &Source, rev: &str, workdir: &Path) -> Result<(Source, String)> {
    let dir = Path::new(rev);
    if dir.is_dir() {
        let dir = fs_err::canonicalize(dir)?;
        let name = dir
            .file_name()
            .map_or_else(|| "dir".to_owned(), |n| n.to_string_lossy().into_owned());
        return Ok((Source::Path(dir), name));
    }
    match target {
        Source::Path(dir) => path_at(dir, rev, workdir),
        Source::Git { url, .. } => Ok((
            Source::Git {
                url: url.clone(),
                rev: Some(rev.to_owned()),
            },
            rev.to_owned(),
        )),
        Source::Apt(_) | Source::Url { .. } | Source::Crate { .. } => bail!(
            "`check --rev` builds another revision of the target's source, and this target's source is {} (no revisions)\nhint: compare against a stored run with --against, or give the target a path or git source",
            crate::source::describe(target, None)
        ),
    }
}

const GIT_TIMEOUT: Duration = Duration::from_mins(5);

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut all = vec![
        "-C",
        dir.to_str().context("a source path that is not UTF-8")?,
    ];
    all.extend_from_slice(args);
    let out = capture("git", &all, GIT_TIMEOUT).context("running git")?;
    if !out.success() {
        bail!("git {}:\n{}", args.join(" "), quote_output(&out.stderr));
    }
    Ok(out.stdout.trim().to_owned())
}

/// A path source inside a git repository, at `rev`: the repository's tree
/// of that commit exported (`git archive`) once per commit, and the same
/// subdirectory of it.
fn path_at(dir: &Path, rev: &str, workdir: &Path) -> Result<(Source, String)> {
    let top = git(dir, &["rev-parse", "--show-toplevel"]).with_context(|| {
        format!(
            "`check --rev {rev}` builds that revision of the target's source, and {} is not in a git repository\nhint: compare against a stored run with --against instead",
            dir.display()
        )
    })?;
    let prefix = git(dir, &["rev-parse", "--show-prefix"])?;
    let commit = git(dir, &["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
        .with_context(|| {
            format!("no revision `{rev}` in {top}\nhint: name a commit, branch or tag of that repository (`git log --oneline`)")
        })?;
    let short: String = commit.chars().take(12).collect();
    let dest = workdir.join("src").join(format!("rev-{short}"));
    let done = dest.join(".afterburner-exported");
    if !done.exists() {
        if dest.exists() {
            fs_err::remove_dir_all(&dest)?;
        }
        fs_err::create_dir_all(&dest)?;
        let mut command = std::process::Command::new("sh");
        command.args([
            "-c",
            "git -C \"$1\" archive --format=tar \"$2\" | tar -x -C \"$3\"",
            "export",
            &top,
            &commit,
            &dest.to_string_lossy(),
        ]);
        let out = capture_command(&mut command, GIT_TIMEOUT).context("exporting the revision")?;
        if !out.success() {
            bail!(
                "could not export {commit} of {top} into {}:\n{}",
                dest.display(),
                quote_output(&out.stderr)
            );
        }
        fs_err::write(&done, format!("{commit}\n"))?;
    }
    Ok((Source::Path(dest.join(prefix)), short))
}

/// `experiment` with, after its own variants, each built from `source`
/// (named `NAME@short`); their names, in the order of the originals.
pub fn grow(experiment: &mut Experiment, source: &Source, short: &str) -> Vec<(String, String)> {
    let exclude = experiment.target.exclude.clone();
    let mut pairs = Vec::new();
    let mut added = Vec::new();
    // A prebuilt variant runs the same binaries at any revision.
    for v in experiment.variants.iter().filter(|v| !v.is_prebuilt()) {
        let mut before = v.clone();
        before.name = variant_name(&v.name, short);
        // Its donor is the donor's twin, built from the same revision.
        before.profile_donor = v.profile_donor.as_deref().map(|d| variant_name(d, short));
        before.source = Some(ProfileFrom {
            source: source.clone(),
            exclude: exclude.clone(),
        });
        pairs.push((v.name.clone(), before.name.clone()));
        added.push(before);
    }
    experiment.variants.extend(added);
    pairs
}

/// The rounds of `check --budget` from `repetitions`: its first look (at
/// least 3) and its last, ten times as many (20 to 50).
pub fn budget_rounds(repetitions: u32) -> (u32, u32) {
    let min = repetitions.max(3);
    (min, min.saturating_mul(10).clamp(20, 50).max(min))
}

/// `check --budget`: the bench's rounds as a sequential plan waiting for
/// the gate's `pairs`: from the experiment's repetitions (at least 3) to
/// ten times as many (20 to 50), for at most `budget`.
pub fn sequential(
    bench: &mut crate::experiment::Bench,
    budget: Duration,
    pairs: &[(String, String)],
    threshold_pct: Option<f64>,
) {
    let (min, max) = budget_rounds(
        bench
            .sequential
            .as_ref()
            .map_or(bench.repetitions, |s| s.min),
    );
    bench.repetitions = max;
    bench.sequential = Some(crate::experiment::Sequential {
        budget,
        min,
        max,
        gate: Some(crate::experiment::GateStop {
            pairs: pairs.to_vec(),
            threshold_pct,
        }),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_rev_refuses_a_crate_source_as_it_refuses_a_url() {
        let crate_source = Source::Crate {
            name: "ripgrep".to_owned(),
            version: "14.1.1".to_owned(),
        };
        let err = source_at(&crate_source, "no-such-rev", Path::new("/tmp"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("this target's source is crate ripgrep 14.1.1 (no revisions)"),
            "{err}"
        );
        assert!(
            err.contains("hint: compare against a stored run with --against"),
            "{err}"
        );
    }
}
