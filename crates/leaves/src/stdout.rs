//! What a command prints as its data, on standard output. A reader that
//! hangs up early (`afterburner … | head -1`) is not a failure: the write
//! gives [`Closed`], which `main` ends on quietly with status 0. `println!`
//! would panic there instead ("failed printing to stdout: Broken pipe"):
//! Rust ignores SIGPIPE, and setting it back to its default would kill the
//! load engine on a socket a server closed.

use std::fmt;
use std::io;

use anyhow::{Context as _, Result};

/// Standard output was closed by its reader: the command stops, and
/// `main` exits with status 0 and no message.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed by its reader")]
pub struct Closed;

/// Write `args` to standard output and flush it (so that a closed pipe is
/// noticed here, not lost when the process exits).
pub fn print(args: fmt::Arguments<'_>) -> Result<()> {
    write_to(&mut io::stdout().lock(), args)
}

/// `args` and a newline.
pub fn line(args: fmt::Arguments<'_>) -> Result<()> {
    print(format_args!("{args}\n"))
}

fn write_to(out: &mut impl io::Write, args: fmt::Arguments<'_>) -> Result<()> {
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(Closed.into()),
        result => result.context("writing to standard output"),
    }
}

/// `result`, with a closed standard output taken as done: for output that
/// is not all a command says (`check`'s exit status is its verdict).
pub fn unless_closed(result: Result<()>) -> Result<()> {
    match result {
        Err(e) if closed(&e) => Ok(()),
        other => other,
    }
}

/// Whether `error` is (or was caused by) standard output closed by its reader.
pub fn closed(error: &anyhow::Error) -> bool {
    error.chain().any(<dyn std::error::Error>::is::<Closed>)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone.
    struct HungUp;

    impl io::Write for HungUp {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_told_apart_from_other_write_errors() {
        let err = write_to(&mut HungUp, format_args!("x")).unwrap_err();
        assert!(closed(&err), "{err:#}");
        let err = err.context("printing the report");
        assert!(closed(&err));
        let full = write_to(&mut [0u8; 0].as_mut_slice(), format_args!("x")).unwrap_err();
        assert!(!closed(&full), "{full:#}");
        assert!(unless_closed(Err(err)).is_ok());
        assert!(unless_closed(Err(full)).is_err());
        let mut fine = Vec::new();
        write_to(&mut fine, format_args!("a {}", 1)).unwrap();
        assert_eq!(fine, b"a 1");
    }
}
