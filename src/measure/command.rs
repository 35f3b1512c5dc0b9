//! Turn a command line into a process: exec it directly when it is a plain
//! word list (no shell start-up in the timing, like `hyperfine -N`), through
//! `sh -c` when it uses shell syntax.

use std::process::Command;

/// Characters that need a shell to mean what the user wrote (and `=` in
/// the first word: an assignment, `A=1 app`; in an argument, `--port=5`,
/// it is only a character).
const SHELL_SYNTAX: &[char] = &[
    '|', '&', ';', '<', '>', '(', ')', '$', '`', '*', '?', '[', '#', '~', '\n',
];

/// The words to exec, or `None` when the line needs a shell.
pub fn direct_words(line: &str) -> Option<Vec<String>> {
    if needs_shell(line) {
        return None;
    }
    let words = shell_words::split(line).ok()?;
    (!words.is_empty()).then_some(words)
}

/// Whether `line` uses shell syntax outside single quotes (inside double
/// quotes, `$`, `` ` `` and `\` still mean something to a shell).
fn needs_shell(line: &str) -> bool {
    let mut single = false;
    let mut double = false;
    // Still in the first word (the program, or an assignment before it).
    let mut first = true;
    let mut started = false;
    for c in line.chars() {
        if !single && !double && c.is_whitespace() {
            first &= !started;
            continue;
        }
        started = true;
        match c {
            '\'' if !double => single = !single,
            _ if single => {}
            '"' => double = !double,
            '$' | '`' | '\\' if double => return true,
            _ if double => {}
            '\\' => return true,
            '=' if first => return true,
            c if SHELL_SYNTAX.contains(&c) => return true,
            _ => {}
        }
    }
    false
}

/// A `Command` for `line`, direct when possible.
pub fn command_for(line: &str) -> Command {
    prefixed_command(&[], line)
}

/// A `Command` running `line` under `prefix` (e.g. valgrind's arguments).
pub fn prefixed_command(prefix: &[String], line: &str) -> Command {
    let words = direct_words(line)
        .unwrap_or_else(|| vec!["sh".to_owned(), "-c".to_owned(), line.to_owned()]);
    let mut all = prefix.iter().cloned().chain(words);
    let program = all.next().expect("invariant: at least one word");
    let mut command = Command::new(resolve(&program));
    command.args(all);
    command
}

/// The program's path, searched on `PATH` now rather than by every spawn:
/// a failed `execve` per `PATH` entry would otherwise be timed with the run.
fn resolve(program: &str) -> std::path::PathBuf {
    if program.contains('/') {
        return program.into();
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| program.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_run_directly() {
        assert_eq!(
            direct_words("/bin/app --size 5 'a b'"),
            Some(vec![
                "/bin/app".into(),
                "--size".into(),
                "5".into(),
                "a b".into()
            ])
        );
        // `=` in an argument is no assignment: the server is the process
        // afterburner signals and waits for, not a shell that dies first.
        assert_eq!(
            direct_words("  /usr/sbin/mariadbd --port=5 --datadir=/d"),
            Some(vec![
                "/usr/sbin/mariadbd".into(),
                "--port=5".into(),
                "--datadir=/d".into()
            ])
        );
    }

    #[test]
    fn shell_syntax_goes_through_sh() {
        for line in [
            "a | b",
            "a > out",
            "A=1 app",
            "  A=1 app --x=2",
            "app $HOME",
            "a && b",
            "echo \"$HOME\"",
            "a 'x' | b",
        ] {
            assert_eq!(direct_words(line), None, "{line}");
        }
        // Inside single quotes nothing is special: `sh -c '…'` runs
        // directly, so the service's own shell is the process we wait for.
        assert_eq!(
            direct_words("sh -c 'a | b; exec c $X'"),
            Some(vec!["sh".into(), "-c".into(), "a | b; exec c $X".into()])
        );
        assert_eq!(
            direct_words("grep \"a b\" f"),
            Some(vec!["grep".into(), "a b".into(), "f".into()])
        );
        let c = command_for("echo hi | cat");
        assert!(std::path::Path::new(c.get_program()).ends_with("sh"));
    }

    #[test]
    fn prefix_comes_first() {
        let c = prefixed_command(&["valgrind".into(), "-q".into()], "/bin/app 1");
        assert!(
            std::path::Path::new(c.get_program()).ends_with("valgrind")
                || c.get_program() == "valgrind"
        );
        let args: Vec<_> = c.get_args().collect();
        assert_eq!(args, ["-q", "/bin/app", "1"]);
    }
}
