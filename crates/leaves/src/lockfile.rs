//! An exclusive lock on a directory that one afterburner process writes:
//! `flock(2)` on a lock file that names the holder (pid, command line and
//! what it is doing), so a second process refuses with who holds it. The
//! kernel drops the lock when the holder dies, however it dies, so a lock
//! is never stale. Within one process the lock is re-entrant (`run` holds
//! it through build, train and bench).

use std::collections::BTreeMap;
use std::io::{Seek as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// A lock held by another process.
#[derive(Debug, thiserror::Error)]
#[error("{doing} by pid {pid} (`{command}`)\nhint: wait for it to finish, or stop it (`kill {pid}`); the lock ({path}) goes with its process")]
pub struct Busy {
    /// What the holder said it is doing, e.g. "run 20261124-… is being written".
    pub doing: String,
    pub pid: String,
    /// The holder's command line.
    pub command: String,
    pub path: PathBuf,
}

/// What could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(transparent)]
    Busy(#[from] Busy),
    #[error("cannot lock {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The open, locked file; the lock goes when the last [`Held`] drops.
#[derive(Debug)]
struct Locked {
    file: std::fs::File,
}

/// A held lock (a handle; clones within the process share one lock).
#[derive(Debug, Clone)]
pub struct Held {
    locked: Arc<Locked>,
}

/// Locks this process holds, by path, so a phase inside another (`run`
/// calling `bench`) shares its lock instead of refusing itself.
static HELD: Mutex<BTreeMap<PathBuf, Weak<Locked>>> = Mutex::new(BTreeMap::new());

/// How long a lock file that names this process may stay held after the
/// process let go of it (a forking child's moment).
const SELF_HELD_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Take the lock file at `path` (created if missing) for `doing`, or say
/// who holds it. Never waits for another process.
pub fn acquire(path: &Path, doing: &str) -> Result<Held, LockError> {
    let io = |source| LockError::Io {
        path: path.to_owned(),
        source,
    };
    let mut held = HELD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(locked) = held.get(path).and_then(Weak::upgrade) {
        let lock = Held { locked };
        lock.say(doing).map_err(io)?;
        return Ok(lock);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    // A lock this process let go of can still be held for a moment by a
    // child another thread is forking (it shares the open file until it
    // execs, when close-on-exec closes it): the holder that names this
    // process is waited for, briefly; any other is refused at once.
    let deadline = std::time::Instant::now() + SELF_HELD_WAIT;
    loop {
        // SAFETY: flock on an fd this function owns; no memory effects.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(io(error));
        }
        let busy = holder(path);
        if busy.pid != std::process::id().to_string() || std::time::Instant::now() >= deadline {
            return Err(LockError::Busy(busy));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let locked = Arc::new(Locked { file });
    held.insert(path.to_owned(), Arc::downgrade(&locked));
    let lock = Held { locked };
    lock.say(doing).map_err(io)?;
    Ok(lock)
}

impl Held {
    /// Say what the holder is doing now (shown to whoever is refused).
    pub fn say(&self, doing: &str) -> std::io::Result<()> {
        let command: Vec<String> = std::env::args().collect();
        let text = format!(
            "pid {}\ncommand {}\ndoing {doing}\n",
            std::process::id(),
            shell_words::join(command)
        );
        let mut file = &self.locked.file;
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(text.as_bytes())?;
        file.flush()
    }
}

/// Who holds the lock at `path`, from what it wrote there.
fn holder(path: &Path) -> Busy {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .map(str::to_owned)
    };
    Busy {
        doing: field("doing").unwrap_or_else(|| "the work directory is in use".to_owned()),
        pid: field("pid").unwrap_or_else(|| "?".to_owned()),
        command: field("command").unwrap_or_else(|| "afterburner".to_owned()),
        path: path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead as _;

    const CHILD_DIR: &str = "AFTERBURNER_TEST_LOCK_DIR";

    #[test]
    fn one_process_shares_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let a = acquire(&path, "building").unwrap();
        let b = acquire(&path, "run X is being written").unwrap();
        drop(a);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("doing run X is being written"), "{text}");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        drop(b);
        // Released: taken afresh.
        acquire(&path, "again").unwrap();
    }

    /// Another process holding the lock is named in the refusal; the lock
    /// goes when it dies.
    #[test]
    fn a_second_process_is_refused_with_the_holder() {
        if let Some(dir) = std::env::var_os(CHILD_DIR) {
            let _held = acquire(&Path::new(&dir).join("lock"), "run R is being written").unwrap();
            println!("held");
            std::thread::sleep(std::time::Duration::from_mins(1));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "lockfile::tests::a_second_process_is_refused_with_the_holder",
                "--nocapture",
            ])
            .env(CHILD_DIR, dir.path())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let held = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.trim() == "held");
        assert!(held, "the child never took the lock");
        let error = acquire(&dir.path().join("lock"), "bench").unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with(&format!("run R is being written by pid {} (`", child.id())),
            "{text}"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        acquire(&dir.path().join("lock"), "bench").unwrap();
    }
}
