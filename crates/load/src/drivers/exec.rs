//! `exec`: a command per request, run without a shell; exit 0 is success.
//! Each client is a thread running one command at a time ([`Exec`]).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::kind::{Client, ClientSpec, DriverKind};
use crate::engine::blocking::Call;
use crate::engine::failure::Failure;
use crate::request::Words;
use afterburner_leaves::process::{capture_command, describe_status, ProcessError};

/// The `exec` driver.
pub struct ExecDriver;

impl DriverKind for ExecDriver {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn url_form(&self) -> &'static str {
        "exec"
    }

    fn default_port(&self) -> u16 {
        0
    }

    fn default_request(&self, _path: &str) -> Option<String> {
        None
    }

    fn syntax(&self) -> &'static str {
        "a command run per request (no shell); exit 0 is success:\n  exec -r \"redis-cli -p 6379 GET key:{k}\""
    }

    fn blocking(&self) -> bool {
        true
    }

    fn client<'a>(&self, spec: &ClientSpec<'a>) -> anyhow::Result<Client<'a>> {
        let cwd = spec.cwd.map(PathBuf::from);
        Ok(Client::Blocking(Box::new(move || {
            Ok(Box::new(Exec { cwd: cwd.clone() }) as Box<dyn Call>)
        })))
    }

    fn over_network(&self) -> bool {
        false
    }
}

/// `exec`: run the request's words as a command (no shell); exit 0 is success.
#[derive(Debug, Default)]
pub struct Exec {
    pub cwd: Option<PathBuf>,
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
