//! `exec`: a command per request, run without a shell; exit 0 is success.
//! Each client is a thread running one command at a time
//! ([`super::blocking::Exec`]).

use super::blocking::{Call, Exec};
use super::driver::{Client, DriverKind};
use super::LoadSpec;

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

    fn client<'a>(&self, spec: &'a LoadSpec) -> anyhow::Result<Client<'a>> {
        Ok(Client::Blocking(Box::new(move || {
            Ok(Box::new(Exec {
                cwd: spec.cwd.clone(),
            }) as Box<dyn Call>)
        })))
    }
}
