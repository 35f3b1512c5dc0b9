//! The engine that sends a load's requests and times their answers: an
//! event loop for stream protocols ([`events`]), a thread per client for
//! drivers whose calls block ([`blocking`]), connections made and confirmed
//! before the clock ([`connect`]), the gate that starts the clock once every
//! thread is ready and tells the measured window's edges ([`gate`]), and
//! the recorder that keeps every latency ([`recorder`]). It talks to a
//! driver only through [`protocol::Protocol`] or [`blocking::Call`], and
//! knows none by name; a load model decides each thread's [`share::Share`].

pub mod blocking;
mod connect;
pub mod events;
pub mod failure;
pub mod gate;
pub mod protocol;
pub mod recorder;
pub mod share;
