//! A setting refused: which one, what is wrong with it, what to write
//! instead. The load's models and its limits refuse with it; the
//! experiment file points it at the key, `afterburner load` at the flag.

/// A value out of its range: which setting, what is wrong, what to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The setting's name as the experiment file has it (`interval`,
    /// `clients`, …); the CLI's flag is `--` and the same name.
    pub setting: &'static str,
    pub message: String,
    pub hint: String,
}

/// Choices for a hint, quoted and joined: `"a", "b" or "c"`.
pub(crate) fn quoted_choices<'a>(choices: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = choices.into_iter().map(|c| format!("\"{c}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\nhint: {}", self.message, self.hint)
    }
}
