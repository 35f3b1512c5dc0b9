//! A crate from the crates.io registry: its version's line in the sparse
//! index, the `.crate` file checked against the checksum that line lists,
//! unpacked so the tree's root holds its Cargo.toml.
//!
//! The index format is the Cargo book's "Index format"
//! (<https://doc.rust-lang.org/cargo/reference/registry-index.html>).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

/// crates.io's sparse index (the `sparse+` protocol's base URL).
pub const INDEX: &str = "https://index.crates.io";
/// Where crates.io serves `.crate` files: `DOWNLOAD/NAME/NAME-VERSION.crate`.
pub const DOWNLOAD: &str = "https://static.crates.io/crates";
/// Overrides [`INDEX`]: a mirror, or a `file://` directory in a test.
pub const INDEX_VAR: &str = "AFTERBURNER_CRATES_INDEX";
/// Overrides [`DOWNLOAD`], laid out the same way.
pub const DOWNLOAD_VAR: &str = "AFTERBURNER_CRATES_DOWNLOAD";
/// Written into a fetched crate's tree: the SHA-256 the index listed and
/// the download matched, for [`revision`].
const CHECKSUM_FILE: &str = ".afterburner-crate-sha256";
/// How many of the newest versions an error about a missing one names.
const NEWEST_SHOWN: usize = 5;

/// Where the index and the `.crate` files are read from: crates.io, or
/// what [`INDEX_VAR`] and [`DOWNLOAD_VAR`] say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    /// Base URL of the sparse index, without a trailing `/`.
    pub index: String,
    /// Base URL of the downloads, without a trailing `/`.
    pub download: String,
}

impl Registry {
    /// crates.io, unless the environment names other places.
    pub fn from_env() -> Self {
        Self::with_overrides(
            std::env::var(INDEX_VAR).ok(),
            std::env::var(DOWNLOAD_VAR).ok(),
        )
    }

    /// crates.io's URLs, each replaced by its override where one is set
    /// and not empty.
    pub fn with_overrides(index: Option<String>, download: Option<String>) -> Self {
        let pick = |over: Option<String>, default: &str| {
            over.filter(|u| !u.trim().is_empty()).map_or_else(
                || default.to_owned(),
                |u| u.trim().trim_end_matches('/').to_owned(),
            )
        };
        Self {
            index: pick(index, INDEX),
            download: pick(download, DOWNLOAD),
        }
    }

    fn index_url(&self, name: &str) -> String {
        format!("{}/{}", self.index, index_path(name))
    }

    fn crate_url(&self, name: &str, version: &str) -> String {
        format!("{}/{name}/{name}-{version}.crate", self.download)
    }
}

/// A crate's file in the index, by the length of its lower-cased name:
/// `1/NAME`, `2/NAME`, `3/F/NAME` (F its first character), else
/// `AB/CD/NAME` (its first four characters in two folders).
pub fn index_path(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let first = |n: usize| lower.chars().take(n).collect::<String>();
    match lower.chars().count() {
        0..=2 => format!("{}/{lower}", lower.len()),
        3 => format!("3/{}/{lower}", first(1)),
        _ => format!(
            "{}/{}/{lower}",
            first(2),
            lower.chars().skip(2).take(2).collect::<String>()
        ),
    }
}

/// One line of an index file: one published version.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Entry {
    /// The version, as published.
    pub vers: String,
    /// SHA-256 (hex) of the `.crate` file.
    pub cksum: String,
    /// Whether its authors withdrew it.
    #[serde(default)]
    pub yanked: bool,
}

/// Fetch crate `name` at `version` from `registry` into `dest`: read its
/// index line, download the `.crate`, check it against the line's
/// checksum, and unpack it.
pub fn fetch(registry: &Registry, name: &str, version: &str, dest: &Path) -> Result<()> {
    let index_url = registry.index_url(name);
    let index_file = beside(dest, "index");
    if let Some(parent) = dest.parent() {
        fs_err::create_dir_all(parent)?;
    }
    super::download(&index_url, &index_file).map_err(|e| {
        anyhow::anyhow!(
            "could not read the entry of crate `{name}` in the crates.io index ({index_url}): {e:#}\nhint: check the name with `cargo search {name}` (a 404 means there is no such crate); {INDEX_VAR} names a mirror of the index"
        )
    })?;
    let text = fs_err::read_to_string(&index_file)?;
    fs_err::remove_file(&index_file)?;
    let entry = pick_version(&text, name, version, &index_url)?;
    if entry.yanked {
        crate::progress::warn(format_args!(
            "crate {name} {version} is yanked on crates.io (its authors withdrew it); building it anyway, as the experiment names it"
        ));
    }
    let url = registry.crate_url(name, version);
    let file = beside(dest, "crate");
    super::download(&url, &file)?;
    let cksum = &entry.cksum;
    super::check_sha256(&file, cksum, |actual| {
        format!("{url} has sha256 {actual}, but the crates.io index lists sha256 {cksum} for {name} {version}\nhint: the download is damaged or was altered on the way; run again, and if it persists check the mirror ({DOWNLOAD_VAR})")
    })?;
    super::unpack(&file, dest)?;
    fs_err::remove_file(&file)?;
    if !dest.join("Cargo.toml").is_file() {
        bail!("{url} unpacked without a Cargo.toml at the top of {name}-{version}/\nhint: check that {name} {version} is the crate you mean, on https://crates.io/crates/{name}");
    }
    fs_err::write(dest.join(CHECKSUM_FILE), format!("{cksum}\n"))?;
    Ok(())
}

/// A crate's revision: its version and the start of the checksum that its
/// download matched (the version alone before the tree records one).
pub fn revision(version: &str, dir: &Path) -> String {
    match fs_err::read_to_string(dir.join(CHECKSUM_FILE)) {
        Ok(sum) => format!(
            "{version} sha256:{}",
            sum.trim().get(..12).unwrap_or(sum.trim())
        ),
        Err(_) => version.to_owned(),
    }
}

/// A file beside the directory `dest`, named after it with `.suffix`.
fn beside(dest: &Path, suffix: &str) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{suffix}"));
    dest.with_file_name(name)
}

/// The line of `version` in an index file's `text` (one JSON object a
/// line); an error naming the newest versions that are not yanked when
/// there is none.
pub fn pick_version(text: &str, name: &str, version: &str, index_url: &str) -> Result<Entry> {
    let mut entries = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let entry: Entry = serde_json::from_str(line).with_context(|| {
            format!(
                "line {} of the crates.io index entry {index_url} is not a version's JSON object",
                i + 1
            )
        })?;
        if entry.vers == version {
            return Ok(entry);
        }
        entries.push(entry);
    }
    let mut live: Vec<&str> = entries
        .iter()
        .filter(|e| !e.yanked)
        .map(|e| e.vers.as_str())
        .collect();
    // Releases first, newest first; pre-releases after them.
    live.sort_by(|a, b| {
        let release = |v: &str| !v.split('+').next().unwrap_or(v).contains('-');
        release(b)
            .cmp(&release(a))
            .then_with(|| compare_versions(b, a))
    });
    if live.is_empty() {
        bail!("crates.io lists no version of crate `{name}` that is not yanked ({index_url})\nhint: choose another crate, or a source = {{ git = \"…\" }} of its repository");
    }
    live.truncate(NEWEST_SHOWN);
    bail!(
        "crates.io has no version {version} of crate `{name}`; its newest are {}\nhint: write one of them as version = \"{}\" (`cargo search {name}` shows the newest)",
        live.join(", "),
        live[0]
    )
}

/// Semver precedence (<https://semver.org/#spec-item-11>): the numbers,
/// then a pre-release below its release, its identifiers compared one by
/// one (numbers numerically and below words); build metadata is ignored.
fn compare_versions(a: &str, b: &str) -> Ordering {
    let split = |v: &str| {
        let v = v.split_once('+').map_or(v, |(v, _)| v);
        let (core, pre) = v.split_once('-').map_or((v, None), |(c, p)| (c, Some(p)));
        let numbers: Vec<u64> = core.split('.').map(|n| n.parse().unwrap_or(0)).collect();
        (numbers, pre.map(str::to_owned))
    };
    let ((na, pa), (nb, pb)) = (split(a), split(b));
    na.cmp(&nb).then_with(|| match (pa, pb) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(pa), Some(pb)) => compare_pre(&pa, &pb),
    })
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    let (mut ia, mut ib) = (a.split('.'), b.split('.'));
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of the Cargo book's "Index files" section
    /// (<https://doc.rust-lang.org/cargo/reference/registry-index.html#index-files>):
    /// `cargo` in `ca/rg/cargo`, `MyCrate` under `{lowerprefix}` `my/cr`.
    #[test]
    fn index_path_follows_the_cargo_books_rules() {
        assert_eq!(index_path("a"), "1/a");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!(index_path("Syn"), "3/s/syn");
        assert_eq!(index_path("cargo"), "ca/rg/cargo");
        assert_eq!(index_path("MyCrate"), "my/cr/mycrate");
        assert_eq!(index_path("ripgrep"), "ri/pg/ripgrep");
    }

    #[test]
    fn overrides_replace_crates_io_and_lose_their_trailing_slash() {
        let default = Registry::with_overrides(None, Some(String::new()));
        assert_eq!(default.index, INDEX);
        assert_eq!(default.download, DOWNLOAD);
        let local = Registry::with_overrides(
            Some("file:///tmp/index/".to_owned()),
            Some("http://127.0.0.1:8080/dl".to_owned()),
        );
        assert_eq!(
            local.index_url("ripgrep"),
            "file:///tmp/index/ri/pg/ripgrep"
        );
        assert_eq!(
            local.crate_url("ripgrep", "14.1.1"),
            "http://127.0.0.1:8080/dl/ripgrep/ripgrep-14.1.1.crate"
        );
    }

    const LINES: &str = r#"{"name":"tiny","vers":"1.0.0","deps":[],"cksum":"aa","features":{},"yanked":false}
{"name":"tiny","vers":"1.10.0","deps":[],"cksum":"bb","features":{},"yanked":false}
{"name":"tiny","vers":"1.2.0","deps":[],"cksum":"cc","features":{},"yanked":false,"v":2}
{"name":"tiny","vers":"2.0.0-rc.1","deps":[],"cksum":"dd","features":{},"yanked":false}
{"name":"tiny","vers":"2.0.0","deps":[],"cksum":"ee","features":{},"yanked":true}
"#;

    #[test]
    fn the_versions_line_is_picked_yanked_or_not() {
        let e = pick_version(LINES, "tiny", "1.2.0", "URL").unwrap();
        assert_eq!((e.cksum.as_str(), e.yanked), ("cc", false));
        let e = pick_version(LINES, "tiny", "2.0.0", "URL").unwrap();
        assert_eq!((e.cksum.as_str(), e.yanked), ("ee", true));
    }

    #[test]
    fn a_missing_version_names_the_newest_releases_first_and_no_yanked_one() {
        let err = pick_version(LINES, "tiny", "1.3.0", "URL")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "no version 1.3.0 of crate `tiny`; its newest are 1.10.0, 1.2.0, 1.0.0, 2.0.0-rc.1"
            ),
            "{err}"
        );
        assert!(
            err.contains("hint: write one of them as version = \"1.10.0\""),
            "{err}"
        );
        assert!(err.contains("cargo search tiny"), "{err}");
    }

    #[test]
    fn a_line_that_is_not_json_is_named() {
        let err = pick_version("{\"vers\":\"1.0.0\"}\n", "tiny", "1.0.0", "URL")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 1 of the crates.io index entry URL"),
            "{err}"
        );
    }

    /// semver.org's example of precedence (spec item 11):
    /// 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta < 1.0.0-beta <
    /// 1.0.0-beta.2 < 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0.
    #[test]
    fn versions_are_ordered_as_semver_orders_them() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1+build.5",
            "1.9.0",
            "1.10.0",
        ];
        for pair in order.windows(2) {
            assert_eq!(
                compare_versions(pair[0], pair[1]),
                Ordering::Less,
                "{pair:?}"
            );
            assert_eq!(
                compare_versions(pair[1], pair[0]),
                Ordering::Greater,
                "{pair:?}"
            );
        }
    }

    /// A registry in a temporary directory, served through file:// URLs:
    /// the index file of `tiny` with one line for 0.1.0 listing `cksum`,
    /// and `tiny-0.1.0.crate` (a gzip tar of `tiny-0.1.0/Cargo.toml`).
    /// Returns the registry and the `.crate`'s true checksum.
    fn local_registry(root: &Path, cksum: Option<&str>) -> (Registry, String) {
        let package = root.join("pkg/tiny-0.1.0");
        fs_err::create_dir_all(package.join("src")).unwrap();
        fs_err::write(
            package.join("Cargo.toml"),
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        fs_err::write(package.join("src/main.rs"), "fn main() {}\n").unwrap();
        let dl = root.join("dl/tiny");
        fs_err::create_dir_all(&dl).unwrap();
        let file = dl.join("tiny-0.1.0.crate");
        let status = std::process::Command::new("tar")
            .arg("czf")
            .arg(&file)
            .arg("-C")
            .arg(root.join("pkg"))
            .arg("tiny-0.1.0")
            .status()
            .unwrap();
        assert!(status.success());
        let good = crate::digest::sha256_file(&file).unwrap();
        let index = root.join("index/ti/ny");
        fs_err::create_dir_all(&index).unwrap();
        let listed = cksum.unwrap_or(&good);
        fs_err::write(
            index.join("tiny"),
            format!("{{\"name\":\"tiny\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{listed}\",\"features\":{{}},\"yanked\":false}}\n"),
        )
        .unwrap();
        let url = |dir: &str| Some(format!("file://{}", root.join(dir).display()));
        (Registry::with_overrides(url("index"), url("dl")), good)
    }

    #[test]
    fn a_crate_whose_checksum_matches_the_index_is_unpacked_with_its_cargo_toml_at_the_root() {
        let root = tempfile::tempdir().unwrap();
        let (registry, good) = local_registry(root.path(), None);
        let dest = root.path().join("src/crate-tiny-0.1.0");
        fetch(&registry, "tiny", "0.1.0", &dest).unwrap();
        assert!(dest.join("Cargo.toml").is_file());
        assert!(dest.join("src/main.rs").is_file());
        assert_eq!(
            revision("0.1.0", &dest),
            format!("0.1.0 sha256:{}", &good[..12])
        );
        // Nothing left beside the tree.
        let beside: Vec<_> = fs_err::read_dir(root.path().join("src")).unwrap().collect();
        assert_eq!(beside.len(), 1);
    }

    #[test]
    fn a_crate_whose_checksum_differs_from_the_index_is_refused_naming_both() {
        let root = tempfile::tempdir().unwrap();
        let listed = "ab".repeat(32);
        let (registry, good) = local_registry(root.path(), Some(&listed));
        let dest = root.path().join("src/crate-tiny-0.1.0");
        let err = fetch(&registry, "tiny", "0.1.0", &dest)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("has sha256 {good}")), "{err}");
        assert!(
            err.contains(&format!("index lists sha256 {listed} for tiny 0.1.0")),
            "{err}"
        );
        assert!(!dest.join("Cargo.toml").exists());
    }

    #[test]
    fn a_crate_missing_from_the_index_says_how_to_check_its_name() {
        let root = tempfile::tempdir().unwrap();
        let (registry, _) = local_registry(root.path(), None);
        let err = fetch(&registry, "tinny", "0.1.0", &root.path().join("out"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("entry of crate `tinny` in the crates.io index"),
            "{err}"
        );
        assert!(
            err.contains("hint: check the name with `cargo search tinny`"),
            "{err}"
        );
    }

    /// The measurement of issue 50's item 3, by hand (network), through
    /// the source layer's own `fetch` (slug, marker, revision):
    /// `cargo test --lib source::crates_io::tests::fetches_ripgrep -- --ignored --nocapture`.
    #[test]
    #[ignore = "network: fetches ripgrep 14.1.1 from crates.io"]
    fn fetches_ripgrep_from_crates_io() {
        let work = tempfile::tempdir().unwrap();
        let ripgrep = |version: &str| crate::experiment::Source::Crate {
            name: "ripgrep".to_owned(),
            version: version.to_owned(),
        };
        let source = ripgrep("14.1.1");
        let start = std::time::Instant::now();
        let tree = crate::source::fetch(&source, work.path()).unwrap();
        let took = start.elapsed();
        assert!(
            tree.ends_with("src/crate-ripgrep-14.1.1"),
            "{}",
            tree.display()
        );
        assert!(tree.join("Cargo.toml").is_file());
        assert_eq!(
            crate::source::fetched(&source, work.path()),
            Some(tree.clone())
        );
        let sum = fs_err::read_to_string(tree.join(CHECKSUM_FILE)).unwrap();
        let revision = crate::source::revision(&source, &tree);
        println!(
            "{}: fetched in {took:?}, sha256 {}",
            crate::source::describe(&source, revision.as_deref()),
            sum.trim()
        );
        let err = crate::source::fetch(&ripgrep("14.1.99"), work.path()).unwrap_err();
        assert!(err.to_string().contains("its newest are 1"), "{err}");
        println!("{err}");
    }
}
