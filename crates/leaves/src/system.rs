//! System settings a variant runs under (seed 002 compares transparent
//! huge pages `always` against `never`): `thp`, `thp.defrag` and any
//! sysctl (`vm.swappiness`), written before each of the variant's runs and
//! put back after it — on every way out of the run, Ctrl-C included, since
//! the guard restores them when it is dropped. Root only.

use std::path::PathBuf;

/// One setting: where it lives and the value the variant wants.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Setting {
    /// As the experiment names it: `thp`, `vm.swappiness`.
    pub key: String,
    /// The file that holds it.
    pub path: PathBuf,
    pub value: String,
}

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const THP_DEFRAG: &str = "/sys/kernel/mm/transparent_hugepage/defrag";

/// Resolve `key = value`; the error says why not, as a hint would.
pub fn resolve(key: &str, value: &str) -> Result<Setting, String> {
    let (path, allowed): (PathBuf, &[&str]) = match key {
        "thp" => (THP.into(), &["always", "madvise", "never"]),
        "thp.defrag" => (
            THP_DEFRAG.into(),
            &["always", "defer", "defer+madvise", "madvise", "never"],
        ),
        _ if key.contains('.') && key.split('.').all(|p| {
            !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }) =>
        {
            (PathBuf::from("/proc/sys").join(key.replace('.', "/")), &[])
        }
        _ => {
            return Err(format!(
                "`{key}` is not a setting afterburner knows: use thp, thp.defrag or a sysctl such as vm.swappiness"
            ))
        }
    };
    if !allowed.is_empty() && !allowed.contains(&value) {
        return Err(format!("{key} takes one of {}", allowed.join(", ")));
    }
    if value.is_empty() || value.contains('\n') {
        return Err(format!("{key} needs a value on one line"));
    }
    if !path.is_file() {
        return Err(format!(
            "this machine has no {} (`{key}`): the kernel does not offer it here",
            path.display()
        ));
    }
    Ok(Setting {
        key: key.to_owned(),
        path,
        value: value.to_owned(),
    })
}

/// The value a settings file holds now: the bracketed choice of a
/// `always [madvise] never` file, else its trimmed text.
fn current(text: &str) -> String {
    match (text.find('['), text.find(']')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].to_owned(),
        _ => text.trim().to_owned(),
    }
}

/// Settings in force; dropping it writes back what was there before.
#[derive(Debug, Default)]
pub struct Applied {
    previous: Vec<(PathBuf, String)>,
}

/// Write every setting, keeping what each file held; on an error those
/// already written are put back.
pub fn apply(settings: &[Setting]) -> std::io::Result<Applied> {
    let mut applied = Applied::default();
    for s in settings {
        let before = current(&std::fs::read_to_string(&s.path)?);
        std::fs::write(&s.path, &s.value).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "writing {} to {} (`{}`): {e}",
                    s.value,
                    s.path.display(),
                    s.key
                ),
            )
        })?;
        applied.previous.push((s.path.clone(), before));
    }
    Ok(applied)
}

impl Drop for Applied {
    fn drop(&mut self) {
        for (path, value) in self.previous.drain(..).rev() {
            if let Err(e) = std::fs::write(&path, &value) {
                eprintln!(
                    "warning: could not put {} back to `{value}`: {e}\nhint: write it by hand: echo {value} > {}",
                    path.display(),
                    path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_their_files_and_values_are_checked() {
        let thp = resolve("thp", "never");
        if std::path::Path::new(THP).is_file() {
            assert_eq!(thp.unwrap().path, PathBuf::from(THP));
        } else {
            assert!(thp.unwrap_err().contains("no /sys"));
        }
        assert!(resolve("thp", "sometimes")
            .unwrap_err()
            .contains("always, madvise, never"));
        let swappiness = resolve("vm.swappiness", "10");
        if std::path::Path::new("/proc/sys/vm/swappiness").is_file() {
            assert_eq!(
                swappiness.unwrap().path,
                PathBuf::from("/proc/sys/vm/swappiness")
            );
        }
        assert!(resolve("vm.no_such_knob", "1")
            .unwrap_err()
            .contains("has no /proc/sys/vm/no_such_knob"));
        assert!(resolve("../etc/passwd", "x")
            .unwrap_err()
            .contains("not a setting"));
        assert!(resolve("vm..x", "1").is_err());
    }

    #[test]
    fn the_current_choice_is_the_bracketed_one() {
        assert_eq!(current("always [madvise] never\n"), "madvise");
        assert_eq!(current("60\n"), "60");
    }
}
