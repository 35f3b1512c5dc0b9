//! Command templates: `{bin.NAME}`, `{params.KEY}`, `{profile}`, `{port}`,
//! `{port.SERVICE}`, `{host}`, `{state}` and `{state.SERVICE}` placeholders, checked
//! when the experiment loads and expanded per variant when a command runs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use regex::Regex;

/// A command line with placeholders, as written in the experiment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The text as written, placeholders included.
    pub text: String,
}

/// A placeholder that names nothing the experiment defines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown placeholder `{placeholder}`")]
pub struct UnknownPlaceholder {
    pub placeholder: String,
}

/// What placeholders expand to for one variant.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    /// `{bin.NAME}` → absolute path of that binary in the variant's build.
    pub binaries: BTreeMap<String, PathBuf>,
    /// `{params.KEY}` → value.
    pub params: BTreeMap<String, String>,
    /// `{profile}` → a fresh file for the run to write a profile to (Go's
    /// `-cpuprofile`); `None` outside training, where it expands to a scratch file.
    pub profile: Option<PathBuf>,
    /// `{port.NAME}` → the port of that service in this run.
    pub ports: BTreeMap<String, u16>,
    /// `{port}` → the service's own port (in a start command) or the first
    /// service's (elsewhere).
    pub port: Option<u16>,
    /// Where this variant's services keep their state in this bench
    /// (`runs/<id>/state/<variant>/`, in training `variants/<v>/state/`).
    pub state_root: Option<PathBuf>,
    /// `{state.NAME}` → that service's state directory (under `state_root`).
    pub states: BTreeMap<String, PathBuf>,
    /// `{state}` → the service's own (in its commands) or the first service's.
    pub state: Option<PathBuf>,
    /// `{host}` → the address the services bind and the load sends to:
    /// the service node's own on a cluster with a separate load, else
    /// `None`, which expands to 127.0.0.1.
    pub host: Option<String>,
    /// `{instance}` → which copy of the services and load this is, from 1
    /// (`instances = N`); 1 elsewhere.
    pub instance: Option<usize>,
}

/// What `{host}` is where nothing else is said: the loopback address.
pub const LOOPBACK: &str = "127.0.0.1";

fn placeholder_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Only `{word}` or `{word.word}`: shell braces such as `{a,b}` or awk's
    // `{ print $1 }` contain other characters and are left alone.
    RE.get_or_init(|| {
        Regex::new(r"\{([a-z_]+)(?:\.([A-Za-z0-9_-]+))?\}").expect("invariant: constant regex")
    })
}

impl Template {
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }

    /// Check every placeholder: `known(kind, name)` says whether the
    /// experiment defines it (`("bin", Some("app"))`, `("profile", None)`).
    pub fn check(
        &self,
        known: impl Fn(&str, Option<&str>) -> bool,
    ) -> Result<(), UnknownPlaceholder> {
        for caps in placeholder_regex().captures_iter(&self.text) {
            if !known(&caps[1], caps.get(2).map(|m| m.as_str())) {
                return Err(UnknownPlaceholder {
                    placeholder: caps[0].to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Expand placeholders; an unknown one is an error (checked at load, so
    /// this only fails if bindings and experiment disagree).
    pub fn expand(&self, bindings: &Bindings) -> Result<String, UnknownPlaceholder> {
        let mut out = String::with_capacity(self.text.len());
        let mut last = 0;
        for caps in placeholder_regex().captures_iter(&self.text) {
            let whole = caps.get(0).expect("invariant: group 0 always matches");
            let value = match (&caps[1], caps.get(2)) {
                ("bin", Some(name)) => bindings
                    .binaries
                    .get(name.as_str())
                    .map(|path| shell_quote(&path.to_string_lossy())),
                ("params", Some(key)) => bindings.params.get(key.as_str()).cloned(),
                ("port", None) => bindings.port.map(|p| p.to_string()),
                ("port", Some(name)) => bindings.ports.get(name.as_str()).map(u16::to_string),
                ("instance", None) => Some(bindings.instance.unwrap_or(1).to_string()),
                ("host", None) => {
                    Some(bindings.host.clone().unwrap_or_else(|| LOOPBACK.to_owned()))
                }
                ("state", None) => bindings
                    .state
                    .as_ref()
                    .map(|p| shell_quote(&p.to_string_lossy())),
                ("state", Some(name)) => bindings
                    .states
                    .get(name.as_str())
                    .map(|p| shell_quote(&p.to_string_lossy())),
                ("profile", None) => Some(bindings.profile.as_ref().map_or_else(
                    || "/dev/null".to_owned(),
                    |p| shell_quote(&p.to_string_lossy()),
                )),
                _ => None,
            };
            let value = value.ok_or_else(|| UnknownPlaceholder {
                placeholder: whole.as_str().to_owned(),
            })?;
            out.push_str(&self.text[last..whole.start()]);
            out.push_str(&value);
            last = whole.end();
        }
        out.push_str(&self.text[last..]);
        Ok(out)
    }
}

/// Quote a path for a POSIX shell only when it needs it.
fn shell_quote(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain && !text.is_empty() {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings() -> Bindings {
        let mut b = Bindings::default();
        b.binaries
            .insert("speedtest1".into(), PathBuf::from("/w/v/build/speedtest1"));
        b.binaries
            .insert("odd".into(), PathBuf::from("/w/my dir/x"));
        b.params.insert("size".into(), "5".into());
        b
    }

    #[test]
    fn expands_binaries_and_params() {
        let t = Template::new("{bin.speedtest1} --size {params.size} --memdb");
        assert_eq!(
            t.expand(&bindings()).unwrap(),
            "/w/v/build/speedtest1 --size 5 --memdb"
        );
    }

    #[test]
    fn expands_service_ports() {
        let mut b = bindings();
        b.ports.insert("db".into(), 5433);
        b.port = Some(6380);
        let t = Template::new("client -p {port} --db-port {port.db}");
        assert_eq!(t.expand(&b).unwrap(), "client -p 6380 --db-port 5433");
        assert!(Template::new("{port.cache}").expand(&b).is_err());
    }

    #[test]
    fn quotes_paths_with_spaces() {
        let t = Template::new("{bin.odd} x");
        assert_eq!(t.expand(&bindings()).unwrap(), "'/w/my dir/x' x");
    }

    #[test]
    fn leaves_shell_and_awk_braces_alone() {
        let t = Template::new("echo {a,b} | awk '{ print $1 }'");
        assert_eq!(t.expand(&bindings()).unwrap(), t.text);
        assert!(t.check(|_, _| false).is_ok());
    }

    #[test]
    fn check_names_the_unknown_placeholder() {
        let t = Template::new("{bin.nope} {params.size}");
        let err = t
            .check(|kind, name| {
                matches!(
                    (kind, name),
                    ("bin", Some("speedtest1")) | ("params", Some("size"))
                )
            })
            .unwrap_err();
        assert_eq!(err.placeholder, "{bin.nope}");
        let err = Template::new("{workdir}")
            .check(|kind, _| kind != "workdir")
            .unwrap_err();
        assert_eq!(err.placeholder, "{workdir}");
    }
}
