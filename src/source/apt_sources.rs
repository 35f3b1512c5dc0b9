//! apt's sources read as text: whether a deb-src entry is there, and the
//! deb-src entry to add beside the system's own `deb` entries, on every
//! layout a Debian or Ubuntu machine may have — one-line
//! `/etc/apt/sources.list` (Ubuntu 22.04 and Debian upgraded from 11, with
//! `[signed-by=…]` options or Ubuntu's commented `# deb-src` lines), deb822
//! `.sources` files (Debian 12's `debian.sources`, Ubuntu 24.04's
//! `ubuntu.sources`, `Signed-By:` a path or an inline key), or both.
//!
//! Pure: it takes the files' texts and returns the text to write, so each
//! layout is tested from fixture files (`tests/fixtures/apt/`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where afterburner writes the deb-src entry it adds.
pub const DEB_SRC_FILE: &str = "/etc/apt/sources.list.d/afterburner-deb-src.sources";

/// One apt source file as read: its path and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// The machine's apt sources and what it says it is.
#[derive(Debug, Clone, Default)]
pub struct AptSources {
    /// `sources.list`, then `sources.list.d/*.list` and `*.sources` in name order.
    pub files: Vec<SourceFile>,
    /// `/etc/os-release`, for the entry to suggest when none is usable.
    pub os_release: String,
}

/// What adding a deb-src entry takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebSrc {
    /// An enabled deb-src entry exists already.
    Present,
    /// Write this deb822 text to [`DEB_SRC_FILE`], then `apt-get update`.
    Add(String),
    /// No `deb` entry to copy (none, or only cdrom: and file: ones): the
    /// user adds these lines, a deb822 entry for their distribution.
    NoUsableEntry(String),
}

/// One `deb` or `deb-src` entry, from either format.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    types: Vec<String>,
    uris: Vec<String>,
    suites: Vec<String>,
    components: Vec<String>,
    /// The deb822 text of every field but `Types` (and `Enabled`), in the
    /// entry's order, so keyrings and options are kept as written.
    fields: Vec<String>,
}

impl AptSources {
    /// Read apt's sources under `root` (`/` for this machine; a fixture
    /// directory in tests). Unreadable or missing files count as empty.
    pub fn read(root: &Path) -> Self {
        let apt = root.join("etc/apt");
        let mut files = Vec::new();
        let list = apt.join("sources.list");
        if let Ok(text) = fs_err::read_to_string(&list) {
            files.push(SourceFile { path: list, text });
        }
        let mut parts: Vec<PathBuf> = fs_err::read_dir(apt.join("sources.list.d"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        parts.sort();
        for path in parts {
            let kept = path
                .extension()
                .is_some_and(|e| e == "list" || e == "sources");
            if kept {
                if let Ok(text) = fs_err::read_to_string(&path) {
                    files.push(SourceFile { path, text });
                }
            }
        }
        let os_release = fs_err::read_to_string(root.join("etc/os-release")).unwrap_or_default();
        AptSources { files, os_release }
    }

    /// Every enabled entry: those of the deb822 files first (the
    /// current layout, whose entry wins where both list an archive), then
    /// the one-line ones, each in file order.
    fn entries(&self) -> Vec<Entry> {
        let (deb822, one_line): (Vec<&SourceFile>, Vec<&SourceFile>) = self
            .files
            .iter()
            .partition(|f| f.path.extension().is_some_and(|e| e == "sources"));
        deb822
            .iter()
            .flat_map(|f| deb822_entries(&f.text))
            .chain(one_line.iter().flat_map(|f| one_line_entries(&f.text)))
            .collect()
    }

    /// Whether an enabled deb-src entry exists (a commented `# deb-src`
    /// line does not count).
    pub fn has_deb_src(&self) -> bool {
        self.entries()
            .iter()
            .any(|e| e.types.iter().any(|t| t == "deb-src"))
    }

    /// The deb-src entry to add: one deb822 paragraph per usable `deb`
    /// entry, with its URIs, suites, components and options (`Signed-By`
    /// above all) as the entry has them.
    pub fn deb_src(&self) -> DebSrc {
        let entries = self.entries();
        if entries
            .iter()
            .any(|e| e.types.iter().any(|t| t == "deb-src"))
        {
            return DebSrc::Present;
        }
        // (URI, suite, component) already given a deb-src entry: the
        // same archive listed in sources.list and a .sources file gets one.
        let mut seen: Vec<(String, String, String)> = Vec::new();
        let mut out = String::new();
        for entry in entries {
            if !entry.types.iter().any(|t| t == "deb") || !entry.uris.iter().all(|u| usable(u)) {
                continue;
            }
            let mut pairs: Vec<(String, String, String)> = Vec::new();
            // A flat repository (`deb URI ./`) has no components.
            let components = if entry.components.is_empty() {
                vec![String::new()]
            } else {
                entry.components.clone()
            };
            for uri in &entry.uris {
                for suite in &entry.suites {
                    for component in &components {
                        let uri = uri.trim_end_matches('/').to_owned();
                        pairs.push((uri, suite.clone(), component.clone()));
                    }
                }
            }
            if pairs.iter().all(|p| seen.contains(p)) {
                continue;
            }
            seen.extend(pairs);
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str("Types: deb-src\n");
            for field in &entry.fields {
                out.push_str(field);
                out.push('\n');
            }
        }
        if out.is_empty() {
            DebSrc::NoUsableEntry(suggested_entry(&self.os_release))
        } else {
            DebSrc::Add(out)
        }
    }
}

/// Whether apt can fetch source packages from this URI: not a CD, not a
/// local directory.
fn usable(uri: &str) -> bool {
    !(uri.starts_with("cdrom:") || uri.starts_with("file:") || uri.starts_with("copy:"))
}

/// The entries of a one-line file: `deb [options] URI SUITE [COMPONENT…]`.
fn one_line_entries(text: &str) -> Vec<Entry> {
    text.lines().filter_map(one_line_entry).collect()
}

fn one_line_entry(line: &str) -> Option<Entry> {
    let line = line.split('#').next().unwrap_or_default().trim();
    let (kind, rest) = line.split_once(char::is_whitespace)?;
    if kind != "deb" && kind != "deb-src" {
        return None;
    }
    let mut rest = rest.trim_start();
    let mut options = Vec::new();
    if let Some(inner) = rest.strip_prefix('[') {
        let (inside, after) = inner.split_once(']')?;
        options = inside.split_whitespace().filter_map(option_field).collect();
        rest = after;
    }
    let mut words = rest.split_whitespace();
    let uri = words.next()?.to_owned();
    let suite = words.next()?.to_owned();
    let components: Vec<&str> = words.collect();
    let mut fields = vec![format!("URIs: {uri}"), format!("Suites: {suite}")];
    if !components.is_empty() {
        fields.push(format!("Components: {}", components.join(" ")));
    }
    fields.extend(options);
    Some(Entry {
        types: vec![kind.to_owned()],
        uris: vec![uri],
        suites: vec![suite],
        components: components.iter().map(|c| (*c).to_owned()).collect(),
        fields,
    })
}

/// A one-line option (`signed-by=/usr/share/keyrings/x.gpg`, `arch=amd64`,
/// `arch+=i386`) as its deb822 field (sources.list(5) lists both names).
fn option_field(option: &str) -> Option<String> {
    let (key, value) = option.split_once('=')?;
    let (key, suffix) = if let Some(k) = key.strip_suffix('+') {
        (k, "-Add")
    } else if let Some(k) = key.strip_suffix('-') {
        (k, "-Remove")
    } else {
        (key, "")
    };
    let name = match key {
        "arch" => "Architectures".to_owned(),
        "lang" => "Languages".to_owned(),
        "target" => "Targets".to_owned(),
        other => other
            .split('-')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("-"),
    };
    Some(format!("{name}{suffix}: {}", value.replace(',', " ")))
}

/// The entries of a deb822 file: paragraphs of `Field: value`, a value
/// continued on lines that start with a space (an inline `Signed-By` key).
fn deb822_entries(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.starts_with('#') {
            continue;
        }
        if line.trim().is_empty() {
            if let Some(entry) = deb822_entry(&fields) {
                entries.push(entry);
            }
            fields.clear();
        } else if line.starts_with([' ', '\t']) {
            if let Some(last) = fields.last_mut() {
                last.push('\n');
                last.push_str(line);
            }
        } else {
            fields.push(line.to_owned());
        }
    }
    entries
}

fn deb822_entry(fields: &[String]) -> Option<Entry> {
    let value = |name: &str| {
        fields.iter().find_map(|f| {
            let (key, value) = f.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.split_whitespace().map(str::to_owned).collect())
        })
    };
    let types: Vec<String> = value("Types")?;
    let enabled: Vec<String> = value("Enabled").unwrap_or_default();
    if enabled
        .first()
        .is_some_and(|e| e.eq_ignore_ascii_case("no"))
    {
        return None;
    }
    let named = |f: &String, name: &str| {
        f.split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(name))
    };
    Some(Entry {
        types,
        uris: value("URIs").unwrap_or_default(),
        suites: value("Suites").unwrap_or_default(),
        components: value("Components").unwrap_or_default(),
        fields: fields
            .iter()
            .filter(|f| !named(f, "Types") && !named(f, "Enabled"))
            .cloned()
            .collect(),
    })
}

/// A deb-src entry for the distribution `/etc/os-release` names, for the
/// user to add where no `deb` entry can be copied.
fn suggested_entry(os_release: &str) -> String {
    let field = |name: &str| {
        os_release.lines().find_map(|l| {
            l.strip_prefix(name)?
                .strip_prefix('=')
                .map(|v| v.trim_matches('"').to_owned())
        })
    };
    let codename = field("VERSION_CODENAME").filter(|c| !c.is_empty());
    let (uri, codename, components, keyring) = match field("ID").as_deref() {
        Some("ubuntu") => (
            "http://archive.ubuntu.com/ubuntu",
            codename.unwrap_or_else(|| "noble".to_owned()),
            "main universe",
            "/usr/share/keyrings/ubuntu-archive-keyring.gpg",
        ),
        _ => (
            "http://deb.debian.org/debian",
            codename.unwrap_or_else(|| "bookworm".to_owned()),
            "main",
            "/usr/share/keyrings/debian-archive-keyring.gpg",
        ),
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "Types: deb-src\nURIs: {uri}\nSuites: {codename} {codename}-updates\nComponents: {components}\nSigned-By: {keyring}\n"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sources of one layout, from `tests/fixtures/apt/<name>/`.
    fn layout(name: &str) -> AptSources {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/apt")
            .join(name);
        assert!(root.is_dir(), "no fixture {}", root.display());
        AptSources::read(&root)
    }

    fn added(name: &str) -> String {
        let sources = layout(name);
        assert!(!sources.has_deb_src(), "{name} has deb-src already");
        match sources.deb_src() {
            DebSrc::Add(text) => text,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn debian_one_line_sources_list() {
        assert_eq!(
            added("debian-one-line"),
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n\n\
             Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\n\n\
             Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm-updates\nComponents: main\n"
        );
    }

    #[test]
    fn debian_deb822_sources_keep_their_signed_by() {
        assert_eq!(
            added("debian-deb822"),
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n\
             Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        );
    }

    #[test]
    fn both_layouts_give_each_archive_once() {
        let text = added("debian-both");
        assert_eq!(
            text.matches("Types: deb-src").count(),
            3,
            "sources.list's duplicate of debian.sources is dropped:\n{text}"
        );
        assert!(
            text.starts_with("Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"),
            "{text}"
        );
        // Only in sources.list: a third-party archive with its own keyring.
        assert!(
            text.contains("URIs: https://apt.example.org/debian\nSuites: bookworm\nComponents: stable\nSigned-By: /etc/apt/keyrings/example.gpg\n"),
            "{text}"
        );
    }

    #[test]
    fn a_deb822_entry_with_deb_and_deb_src_counts_as_present() {
        let sources = layout("debian-deb822-with-src");
        assert!(sources.has_deb_src());
        assert_eq!(sources.deb_src(), DebSrc::Present);
    }

    #[test]
    fn ubuntu_2204_commented_deb_src_lines_are_not_entries() {
        let text = added("ubuntu-2204");
        assert!(
            text.starts_with("Types: deb-src\nURIs: http://archive.ubuntu.com/ubuntu/\nSuites: jammy\nComponents: main restricted\n\n"),
            "{text}"
        );
        assert!(
            text.contains("URIs: http://security.ubuntu.com/ubuntu\nSuites: jammy-security\nComponents: main restricted universe multiverse\n"),
            "{text}"
        );
        assert_eq!(text.matches("Types: deb-src").count(), 4, "{text}");
    }

    #[test]
    fn ubuntu_2404_ubuntu_sources() {
        assert_eq!(
            added("ubuntu-2404"),
            "Types: deb-src\nURIs: http://archive.ubuntu.com/ubuntu/\nSuites: noble noble-updates noble-backports\nComponents: main restricted universe multiverse\nSigned-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n\n\
             Types: deb-src\nURIs: http://security.ubuntu.com/ubuntu/\nSuites: noble-security\nComponents: main restricted universe multiverse\nSigned-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n"
        );
    }

    #[test]
    fn one_line_options_become_deb822_fields() {
        assert_eq!(
            added("signed-by-options"),
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\nArchitectures: amd64 arm64\n"
        );
    }

    #[test]
    fn an_inline_signed_by_key_is_copied_whole() {
        let text = added("inline-key");
        assert!(
            text.contains("Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n mDMEZ"),
            "{text}"
        );
        assert!(
            text.ends_with(" -----END PGP PUBLIC KEY BLOCK-----\n"),
            "{text}"
        );
        assert!(!text.contains("Enabled"), "{text}");
        assert!(
            !text.contains("disabled.example"),
            "Enabled: no is skipped:\n{text}"
        );
    }

    #[test]
    fn cdrom_and_file_entries_are_skipped() {
        let text = added("cdrom-and-file");
        assert!(
            !text.contains("cdrom:") && !text.contains("file:"),
            "{text}"
        );
        assert_eq!(
            text,
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n"
        );
    }

    #[test]
    fn no_usable_entry_gives_the_exact_lines_to_add() {
        let sources = layout("no-usable-entry");
        assert_eq!(
            sources.deb_src(),
            DebSrc::NoUsableEntry(
                "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
                    .to_owned()
            )
        );
        let ubuntu = AptSources {
            files: Vec::new(),
            os_release: "NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_CODENAME=jammy\n".to_owned(),
        };
        let DebSrc::NoUsableEntry(lines) = ubuntu.deb_src() else {
            panic!("no files, no entry")
        };
        assert!(
            lines.contains("URIs: http://archive.ubuntu.com/ubuntu\nSuites: jammy jammy-updates\n"),
            "{lines}"
        );
    }
}
