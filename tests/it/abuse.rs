//! Servers that misbehave: one that accepts connections and never answers,
//! one that answers garbage. Every network driver's load ends within
//! duration + timeout + 2 s (plus start-up), exits non-zero and says that
//! no request succeeded, naming the cause.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::support::Sandbox;

/// A server on a free port that accepts every connection and then either
/// says nothing (holding the socket open) or answers each read with
/// garbage. Its thread lives as long as the test process.
fn misbehaving(garbage: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, garbage));
        }
    });
    port
}

fn serve(mut stream: TcpStream, garbage: bool) {
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(_) if garbage => {
                if stream
                    .write_all(b"\x00\xffNOT A PROTOCOL\r\n\x7f\x01garbage")
                    .is_err()
                {
                    return;
                }
            }
            // Silent: read and drop, never answer.
            Ok(_) => {}
        }
    }
}

/// (driver URL scheme, request) for every network driver.
const DRIVERS: [(&str, &str); 4] = [
    ("redis", "GET key"),
    ("memcached", "get key"),
    ("http", ""),
    ("postgres", "SELECT 1"),
];

fn url(scheme: &str, port: u16) -> String {
    match scheme {
        "postgres" => format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        "http" => format!("http://127.0.0.1:{port}/"),
        _ => format!("{scheme}://127.0.0.1:{port}"),
    }
}

#[test]
fn a_silent_or_garbage_server_ends_the_load_in_time_with_an_error() {
    let sandbox = Sandbox::with_fixture("hotpath");
    for garbage in [false, true] {
        let port = misbehaving(garbage);
        for (scheme, request) in DRIVERS {
            let url = url(scheme, port);
            let mut args = vec!["load", &url, "-c", "2", "-d", "2s", "--timeout", "1s"];
            if !request.is_empty() {
                args.extend(["-r", request]);
            }
            let started = Instant::now();
            let run = sandbox.afterburner(&args);
            let took = started.elapsed();
            let what = format!(
                "{scheme} against a {} server",
                if garbage { "garbage" } else { "silent" }
            );
            // duration 2 s + timeout 1 s + grace 2 s, and 3 s to start.
            assert!(took < Duration::from_secs(8), "{what}: took {took:?}");
            // No request succeeds, or (a client whose set-up is a
            // conversation: postgres' start-up) no client connects.
            run.assert_fails_with("error:");
            let err = run.stderr();
            let no_reply = err.contains("no successful requests")
                && (err.contains("first error") || err.contains("timeouts"));
            let no_client = err.contains("of 2 clients could connect before the load's timeout");
            assert!(no_reply || no_client, "{what}: {err}");
            eprintln!("{what}: ended in {took:.1?}");
        }
    }
}
