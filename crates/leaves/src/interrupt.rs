//! Ctrl-C and SIGTERM: the first one asks afterburner to stop at the next
//! safe point (the run in progress is abandoned, its child processes and
//! services stopped, every finished run already on disk); a second one
//! exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Why a phase stopped early.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: the run in progress was abandoned and its services stopped; every finished run is in raw.jsonl\nhint: continue with `afterburner bench --resume`")]
pub struct Interrupted;

extern "C" fn on_signal(signal: libc::c_int) {
    if REQUESTED.swap(true, Ordering::SeqCst) {
        // The second signal: the default action, now.
        // SAFETY: signal and raise are async-signal-safe.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
}

/// Catch SIGINT and SIGTERM (without `SA_RESTART`, so a blocking wait
/// returns and notices).
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; the handler only touches an atomic
        // and async-signal-safe calls.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&raw mut action.sa_mask);
            libc::sigaction(signal, &raw const action, std::ptr::null_mut());
        }
    }
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// `Err(Interrupted)` once a stop was asked for.
pub fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}
