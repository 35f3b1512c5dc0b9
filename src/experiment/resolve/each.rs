//! `each`: a query set. One `[[workload]]` with `each = "queries/*.sql"`
//! (or a list of files) becomes one workload per file, named
//! `NAME-STEM`, with `{each}` (the file's stem), `{each.path}` (its
//! absolute path) and `{each.text}` (its content, trimmed) written into
//! its commands and its load's request and variables.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::super::raw::{RawEach, RawWorkload};
use super::Cx;
use crate::experiment::ExperimentError;

/// Query sets: the set's name → its workloads, in file order.
type Sets = BTreeMap<String, Vec<String>>;

/// The most files one `each` may expand to.
const MAX_FILES: usize = 10_000;

impl Cx<'_> {
    /// The workloads with every query set expanded, and each set's members
    /// (set name → workload names, in file order).
    pub(super) fn expand_each(
        &self,
        raw: Vec<RawWorkload>,
        dir: &Path,
    ) -> Result<(Vec<RawWorkload>, Sets), ExperimentError> {
        let mut out = Vec::new();
        let mut sets = BTreeMap::new();
        for w in raw {
            let Some(each) = w.each.clone() else {
                out.push(w);
                continue;
            };
            let files = self.each_files(&each, dir)?;
            let mut members = Vec::new();
            for file in files {
                let member = self.each_member(&w, &file, each.span())?;
                members.push(member.name.get_ref().clone());
                out.push(member);
            }
            sets.insert(w.name.get_ref().clone(), members);
        }
        Ok((out, sets))
    }

    /// The files of one `each`, sorted when a pattern found them.
    fn each_files(
        &self,
        each: &Spanned<RawEach>,
        dir: &Path,
    ) -> Result<Vec<PathBuf>, ExperimentError> {
        let span = each.span();
        let files = match each.get_ref() {
            RawEach::Files(list) => list.iter().map(|f| dir.join(f)).collect(),
            RawEach::Pattern(pattern) => self.matching(pattern, dir, span.clone())?,
        };
        if files.is_empty() {
            return Err(self.invalid(
                span,
                "each names no file",
                "give a pattern that matches files, e.g. each = \"queries/*.sql\" (relative to the experiment file), or a list",
            ));
        }
        if files.len() > MAX_FILES {
            return Err(self.invalid(
                span,
                format!("each names {} files, more than {MAX_FILES}", files.len()),
                "split the set, or narrow the pattern",
            ));
        }
        if let Some(missing) = files.iter().find(|f| !f.is_file()) {
            return Err(self.invalid(
                span,
                format!("each names {}, which is not a file", missing.display()),
                "give paths relative to the experiment file",
            ));
        }
        Ok(files)
    }

    /// The files in the pattern's directory whose names match its last
    /// part (`*` any run of characters, `?` one).
    fn matching(
        &self,
        pattern: &str,
        dir: &Path,
        span: Range<usize>,
    ) -> Result<Vec<PathBuf>, ExperimentError> {
        let full = dir.join(pattern);
        let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
            return Err(self.invalid(
                span,
                "each has no file name",
                "e.g. each = \"queries/*.sql\"",
            ));
        };
        let name = name.to_string_lossy();
        if parent.to_string_lossy().contains(['*', '?']) {
            return Err(self.invalid(
                span,
                "each may have wildcards in the file name only",
                "put the files in one directory: each = \"queries/*.sql\"",
            ));
        }
        let entries = fs_err::read_dir(parent).map_err(|e| {
            self.invalid(
                span.clone(),
                format!("{e}"),
                "create the directory, or fix the path (relative to the experiment file)",
            )
        })?;
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.file_name()
                        .is_some_and(|n| wildcard(name.as_bytes(), n.to_string_lossy().as_bytes()))
            })
            .collect();
        found.sort();
        Ok(found)
    }

    /// One member of a set: the workload with the file written in.
    fn each_member(
        &self,
        w: &RawWorkload,
        file: &Path,
        span: Range<usize>,
    ) -> Result<RawWorkload, ExperimentError> {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = fs_err::read_to_string(file).map_err(|e| {
            self.invalid(
                span.clone(),
                format!("{e}"),
                "each file must be readable text",
            )
        })?;
        let substitute = |s: &str| {
            s.replace("{each.path}", &file.to_string_lossy())
                .replace("{each.text}", text.trim())
                .replace("{each}", &stem)
        };
        let fill_spanned = |s: &Spanned<String>| Spanned::new(s.span(), substitute(s.get_ref()));
        let mut member = w.clone();
        member.each = None;
        member.name = Spanned::new(w.name.span(), format!("{}-{stem}", w.name.get_ref()));
        member.run = w.run.as_ref().map(fill_spanned);
        member.train_run = w.train_run.as_ref().map(fill_spanned);
        if let Some(load) = &w.load {
            let mut l = load.get_ref().clone();
            l.request = l
                .request
                .as_ref()
                .map(|r| Spanned::new(r.span(), r.get_ref().map(substitute)));
            for value in l.vars.values_mut() {
                *value = fill_spanned(value);
            }
            member.load = Some(Spanned::new(load.span(), l));
        }
        Ok(member)
    }
}

/// Whether `name` matches `pattern` (`*` any run, `?` one byte).
///
/// One pass with a single backtrack point (the last `*`), so a pattern of
/// many stars costs O(pattern × name), not a recursion that doubles per
/// star.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // After the last `*` seen: where the pattern resumes, and the name
    // position that star has swallowed up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((resume, swallowed)) => {
                    p = resume;
                    n = swallowed + 1;
                    star = Some((resume, swallowed + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::wildcard;

    #[test]
    fn wildcards_match_runs_and_single_characters() {
        assert!(wildcard(b"*.sql", b"q1.sql"));
        assert!(wildcard(b"q?.sql", b"q1.sql"));
        assert!(!wildcard(b"q?.sql", b"q10.sql"));
        assert!(wildcard(b"*", b""));
        assert!(!wildcard(b"*.sql", b"q1.sql.bak"));
        assert!(wildcard(b"a*b*c", b"aXXbYc"));
        assert!(!wildcard(b"a*b*c", b"aXXbYcd"));
        assert!(wildcard(b"**q*", b"xq"));
        assert!(!wildcard(b"", b"x"));
        // Many stars against a long name that fails at its end: immediate.
        let name = [b'a'; 255];
        assert!(!wildcard(
            b"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
            &name
        ));
    }
}
