//! Drivers that block per request (`exec`: a command per request) run one
//! thread per client, on the same schedule as the event loop: closed, or
//! open-loop with latency measured from each request's intended start.

use std::process::Command;
use std::time::{Duration, Instant};

use super::failure::Failure;
use super::recorder::Recorder;
use super::request::{Generator, Words};
use super::{Pace, Share};
use crate::process::{capture_command, describe_status, ProcessError};

/// One blocking request: `Ok(true)` answered, `Ok(false)` an error answer,
/// `Err` why it failed.
pub trait Call: Send {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure>;
}

/// `exec`: run the request's words as a command (no shell); exit 0 is success.
#[derive(Debug, Default)]
pub struct Exec {
    pub cwd: Option<std::path::PathBuf>,
}

impl Call for Exec {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure> {
        let mut iter = words
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned());
        let program = iter
            .next()
            .ok_or_else(|| Failure::Fatal("empty command".to_owned()))?;
        let mut command = Command::new(&program);
        command.args(iter);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        let captured = match capture_command(&mut command, timeout) {
            Ok(captured) => captured,
            Err(ProcessError::Timeout { .. }) => {
                return Err(Failure::Timeout(format!("`{program}`")))
            }
            Err(e) => return Err(Failure::Fatal(e.to_string())),
        };
        if !captured.status.success() {
            return Err(Failure::Server(format!(
                "`{program}` exited with {}",
                describe_status(captured.status)
            )));
        }
        Ok(true)
    }
}

/// Run the share's one client until the share is done.
pub fn run_client(
    connect: &dyn Fn() -> Result<Box<dyn Call>, Failure>,
    mut generator: Generator,
    share: &Share,
    start: Instant,
    mut recorder: Recorder,
) -> Recorder {
    let mut due = start + share.offset(0);
    let mut remaining = share.requests;
    let mut client: Option<Box<dyn Call>> = None;
    std::thread::sleep(start.saturating_duration_since(Instant::now()));
    loop {
        let now = Instant::now();
        if share.end.is_some_and(|end| now >= end)
            || remaining == Some(0)
            || crate::interrupt::requested()
        {
            break;
        }
        let intended = match share.pace {
            Pace::Closed => now,
            Pace::Rate { per_conn } => {
                if share.end.is_some_and(|end| due >= end) {
                    break;
                }
                if due > now {
                    std::thread::sleep(due - now);
                }
                let intended = due;
                due += per_conn;
                intended
            }
        };
        if recorder.counts(intended) {
            if let Some(r) = remaining.as_mut() {
                *r -= 1;
            }
        }
        if client.is_none() {
            match connect() {
                Ok(c) => client = Some(c),
                Err(why) => {
                    recorder.error(intended, Instant::now(), &why);
                    if matches!(why, Failure::Fatal(_)) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            }
        }
        let words = generator.next_request();
        let Some(c) = client.as_mut() else { continue };
        let result = c.call(words, share.timeout);
        if result.as_ref().is_err_and(Failure::drops_connection) {
            client = None;
        }
        match result {
            Ok(ok) => recorder.reply(intended, Instant::now(), ok),
            Err(Failure::Timeout(_)) => recorder.timeout(intended, Instant::now()),
            Err(why) => {
                let fatal = matches!(why, Failure::Fatal(_));
                recorder.error(intended, Instant::now(), &why);
                if fatal {
                    break;
                }
            }
        }
    }
    recorder
}
