//! Whether every node can see the work directory: the jobs read the
//! experiment and builds from it and write their blocks into it. A cluster
//! of one node sees its own disks; on more, a local file system (ext4,
//! xfs, tmpfs, an overlay) is refused before anything is submitted. Each
//! job also checks on its node that the run's `cluster.json` is there, and
//! exits with [`NOT_SHARED_EXIT`] saying so when it is not.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use anyhow::{bail, Result};

/// The exit status of a job that could not see the work directory.
pub const NOT_SHARED_EXIT: i32 = 97;

/// Network and cluster file systems, by `statfs(2)` magic.
const SHARED: &[(i64, &str)] = &[
    (0x6969, "nfs"),
    (0x0BD0_0BD0, "lustre"),
    (0x4750_4653, "gpfs"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb2"),
    (0x1983_0326, "beegfs"),
    (0x00C3_6400, "ceph"),
    (0x6573_5546, "fuse"),
    (0x0102_1997, "9p"),
    (0x5346_414F, "afs"),
    (0x6B41_4653, "afs"),
    (0x0BAD_1DEA, "wekafs"),
];

/// The file system type of `path`: its name when it is shared, else
/// `None` with the magic number.
fn kind(path: &Path) -> Result<Result<&'static str, i64>> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: statfs fills the zeroed struct it is given; `c` outlives the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(c.as_ptr(), &raw mut st) } != 0 {
        bail!(
            "cannot read the file system of {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
    }
    #[allow(clippy::unnecessary_cast, clippy::cast_lossless)] // the field's type varies by target
    let magic = st.f_type as i64;
    Ok(SHARED
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
        .ok_or(magic))
}

/// Refuse a work directory that the nodes of a cluster of `nodes` cannot
/// all see; `trusted` (`[cluster] shared = true`) skips the check.
pub fn check(workdir: &Path, nodes: u32, trusted: bool) -> Result<()> {
    if trusted || nodes <= 1 {
        return Ok(());
    }
    match kind(workdir)? {
        Ok(_) => Ok(()),
        Err(magic) => bail!(
            "the work directory {} is on a local file system (statfs type {magic:#x}), which the other {} nodes of the partition cannot see: every job reads the builds from it and writes its block into it\nhint: put the work directory on shared storage (NFS, Lustre, GPFS, BeeGFS, CephFS) with --workdir, or set shared = true in [cluster] if it is shared in a way afterburner does not recognise",
            workdir.display(),
            nodes - 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_node_needs_no_shared_storage_and_a_local_disk_is_refused_on_more() {
        let dir = std::env::temp_dir();
        assert!(check(&dir, 1, false).is_ok());
        assert!(check(&dir, 4, true).is_ok());
        // The temporary directory of a test machine is a local disk or tmpfs.
        if let Ok(name) = kind(&dir).unwrap() {
            eprintln!(
                "skipped: {} is on {name}, a shared file system",
                dir.display()
            );
        } else {
            let error = check(&dir, 4, false).unwrap_err().to_string();
            assert!(error.contains("local file system"), "{error}");
            assert!(error.contains("other 3 nodes"), "{error}");
        }
    }
}
