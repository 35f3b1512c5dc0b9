//! A `perf record` file (`perf.data`): what AutoFDO and sampled BOLT
//! convert.

use std::path::Path;

use super::BroughtFormat;

pub struct PerfData;

impl BroughtFormat for PerfData {
    fn name(&self) -> &'static str {
        "perf-data"
    }

    fn describe(&self) -> &'static str {
        "perf recording (perf.data)"
    }

    fn magic(&self, head: &[u8]) -> bool {
        head.starts_with(b"PERFILE2")
    }

    fn endings(&self) -> &'static [&'static str] {
        &[".perfdata", "perf.data"]
    }

    /// Its header: the magic, and the 104 bytes perf's header takes.
    fn readable(&self, path: &Path, size: u64) -> Result<(), String> {
        let mut head = [0_u8; 8];
        let read = fs_err::File::open(path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .map_err(|e| e.to_string())?;
        if !self.magic(&head[..read]) || size < 104 {
            return Err("not a perf.data file (no PERFILE2 header)".to_owned());
        }
        Ok(())
    }
}
