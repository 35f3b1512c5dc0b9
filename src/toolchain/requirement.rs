//! What an optimization, a compiler or a source needs on this machine, as
//! `doctor` lists it and a run installs it: a plain record, below the
//! optimizations and the tools' discovery that both fill it in.

use super::tools;

/// One requirement `doctor` checks, and whether this machine meets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// What is needed, e.g. "llvm-profdata".
    pub need: String,
    /// Whether this machine has it.
    pub present: bool,
    /// Debian packages that provide it, when apt can.
    pub packages: Vec<String>,
    /// What to do when apt cannot (or why it matters).
    pub note: Option<String>,
    /// Whether the optimization works without it (less well, or in one
    /// of its modes only): a missing optional requirement is said, not
    /// counted against readiness.
    pub optional: bool,
}

impl Requirement {
    /// A command, present when it is on the PATH.
    pub fn tool(command: &str, package: &str) -> Self {
        Requirement {
            need: command.to_owned(),
            present: tools::is_installed(command),
            packages: vec![package.to_owned()],
            note: None,
            optional: false,
        }
    }

    /// A fact about the machine that apt cannot change.
    pub fn fact(need: &str, present: bool, note: &str) -> Self {
        Requirement {
            need: need.to_owned(),
            present,
            packages: Vec::new(),
            note: Some(note.to_owned()),
            optional: false,
        }
    }

    /// The same, with `note` said when it is missing.
    #[must_use]
    pub fn note(mut self, note: &str) -> Self {
        self.note = Some(note.to_owned());
        self
    }

    /// The same, not required.
    #[must_use]
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
}
