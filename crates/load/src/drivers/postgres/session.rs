//! One client session in PostgreSQL's protocol 3.0, blocking: the
//! start-up and the password the server asks for (none, clear text, `md5`
//! or SCRAM-SHA-256), then a named statement parsed once (`Parse`,
//! `Describe`, `Sync`) and, per request, `Bind` with the values as text,
//! `Execute` and `Sync` in one `send`, read to `ReadyForQuery`. The
//! server types each parameter as the statement needs (as libpq's
//! `PQexecPrepared` with text values does), and the rows come back as
//! text, counted, not decoded.

use std::time::Duration;

use super::auth::{self, Scram};
use super::conninfo::{socket_in, Host, Target};
use super::message::{put, put_str, Fields, Messages, WireError};
use crate::drivers::socket::{SessionError, Socket, Stream};

/// Protocol 3.0.
const PROTOCOL: u32 = 3 << 16;

/// The statement's name on the server.
const STATEMENT: &[u8] = b"ab";

/// Why a step failed.
pub type Error = SessionError<ServerError>;

/// An `ErrorResponse`: its severity, SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub severity: String,
    pub code: String,
    pub message: String,
}

impl ServerError {
    fn parse(body: &[u8]) -> Result<Self, WireError> {
        let mut f = Fields::new(body);
        let mut e = ServerError {
            severity: String::new(),
            code: String::new(),
            message: String::new(),
        };
        loop {
            let kind = f.u8("error field")?;
            if kind == 0 {
                return Ok(e);
            }
            let value = String::from_utf8_lossy(f.str("error field")?).into_owned();
            match kind {
                // The severity not localized (`V`) where the server sends it.
                b'V' => e.severity = value,
                b'S' if e.severity.is_empty() => e.severity = value,
                b'C' => e.code = value,
                b'M' => e.message = value,
                _ => {}
            }
        }
    }

    /// An error at the start-up no retry mends: the password, the user's
    /// access (SQLSTATE class 28, and 42501 for a database the user may
    /// not connect to), the database (3D000), the start-up itself (08P01).
    pub fn is_final(&self) -> bool {
        self.code.starts_with("28") || matches!(self.code.as_str(), "3D000" | "42501" | "08P01")
    }

    /// An error another try may not meet: a cancel (57014), a lock not
    /// granted (55P03), a deadlock or serialization failure (class 40), the
    /// server short of resources (class 53) or shutting down (class 57).
    pub fn is_transient(&self) -> bool {
        ["40", "53", "57"]
            .iter()
            .any(|class| self.code.starts_with(class))
            || self.code == "55P03"
    }
}

impl std::fmt::Display for ServerError {
    /// The server's own words, with its SQLSTATE.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (SQLSTATE {})", self.message, self.code)
    }
}

/// One connection, logged in.
pub struct Session<S = Stream> {
    messages: Messages<S>,
    timeout: Duration,
    /// The prepared statement's parameter count, once prepared.
    params: Option<usize>,
}

/// Connect to `target` within `timeout`.
fn connect(target: &Target, timeout: Duration) -> Result<Stream, Error> {
    match &target.host {
        Host::Tcp(host) => Stream::tcp(host, target.port, timeout),
        Host::Socket(dir) => Stream::unix(&socket_in(dir, target.port), timeout),
    }
    .map_err(Error::Connection)
}

impl Session {
    /// Connect to `target` and log in, every step within `timeout`.
    pub fn open(target: &Target, timeout: Duration) -> Result<Self, Error> {
        let stream = connect(target, timeout)?;
        stream
            .set_timeout(timeout)
            .map_err(|e| Error::Connection(format!("socket timeouts: {e}")))?;
        let mut session = Session::new(stream, timeout);
        session.login(target)?;
        Ok(session)
    }

    /// The timeout of every later step (set on the socket only when it
    /// changes).
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), Error> {
        if timeout != self.timeout {
            self.messages
                .stream()
                .set_timeout(timeout)
                .map_err(|e| Error::Connection(format!("socket timeouts: {e}")))?;
            self.timeout = timeout;
        }
        Ok(())
    }
}

impl<S: Socket> Session<S> {
    fn new(stream: S, timeout: Duration) -> Self {
        Self {
            messages: Messages::new(stream),
            timeout,
            params: None,
        }
    }

    /// Send the start-up message, answer what the server asks for, and
    /// read to its first `ReadyForQuery`.
    fn login(&mut self, target: &Target) -> Result<(), Error> {
        let out = self.messages.begin(self.timeout);
        put(out, None, |o| {
            o.extend_from_slice(&PROTOCOL.to_be_bytes());
            let mut pair = |k: &str, v: &str| {
                put_str(o, k.as_bytes());
                put_str(o, v.as_bytes());
            };
            pair("user", &target.user);
            pair("database", &target.database);
            pair("client_encoding", "UTF8");
            if let Some(name) = &target.application_name {
                pair("application_name", name);
            }
            o.push(0);
        });
        self.messages.send()?;
        let mut scram: Option<Scram> = None;
        loop {
            let (tag, body) = self.messages.read()?;
            match tag {
                b'R' => {
                    let mut f = Fields::new(body);
                    let request = f.u32("authentication request")?;
                    let rest = f.rest().to_vec();
                    self.authenticate(target, request, &rest, &mut scram)?;
                }
                b'E' => return Err(Error::Server(ServerError::parse(body)?)),
                b'Z' => return Ok(()),
                // ParameterStatus, BackendKeyData, NoticeResponse,
                // NegotiateProtocolVersion: nothing the load needs.
                b'S' | b'K' | b'N' | b'v' => {}
                other => {
                    return Err(Error::Protocol(format!(
                        "a message of type `{}` during the start-up",
                        other.escape_ascii()
                    )))
                }
            }
        }
    }

    /// Answer one authentication request.
    fn authenticate(
        &mut self,
        target: &Target,
        request: u32,
        data: &[u8],
        scram: &mut Option<Scram>,
    ) -> Result<(), Error> {
        let password = || {
            target.password.as_deref().ok_or_else(|| {
                Error::Unsupported(
                    "the server asks for a password and the connection string has none\nhint: postgres://USER:PASSWORD@HOST:PORT/DB".to_owned(),
                )
            })
        };
        match request {
            // AuthenticationOk; after SASL, only once the server has
            // signed (a server that skips its signature may not know the
            // password).
            0 => match scram {
                Some(s) if !s.verified() => Err(Error::Protocol(
                    "the server accepted the login without its SCRAM signature".to_owned(),
                )),
                _ => Ok(()),
            },
            // Clear text.
            3 => {
                let password = password()?;
                self.password_message(password.as_bytes())
            }
            // MD5 with a 4-byte salt.
            5 => {
                let salt: [u8; 4] = data.get(..4).and_then(|s| s.try_into().ok()).ok_or_else(|| {
                    Error::Protocol("an MD5 request without its salt".to_owned())
                })?;
                let proof = auth::md5(target.user.as_bytes(), password()?.as_bytes(), salt);
                self.password_message(&proof)
            }
            // SASL: the mechanisms offered, each NUL-terminated.
            10 => {
                let offered: Vec<&[u8]> = data.split(|&b| b == 0).filter(|m| !m.is_empty()).collect();
                if !offered.contains(&auth::SCRAM.as_bytes()) {
                    let names: Vec<String> = offered.iter().map(|m| String::from_utf8_lossy(m).into_owned()).collect();
                    return Err(Error::Unsupported(format!(
                        "the server offers the SASL mechanisms {} and this driver speaks {} without TLS",
                        names.join(", "),
                        auth::SCRAM
                    )));
                }
                let nonce = Scram::random_nonce().map_err(Error::Connection)?;
                let s = Scram::new("", password()?, &nonce);
                let first = s.client_first();
                *scram = Some(s);
                let out = self.messages.out();
                put(out, Some(b'p'), |o| {
                    put_str(o, auth::SCRAM.as_bytes());
                    let len = i32::try_from(first.len()).unwrap_or(i32::MAX);
                    o.extend_from_slice(&len.to_be_bytes());
                    o.extend_from_slice(first.as_bytes());
                });
                Ok(self.messages.send()?)
            }
            // SASLContinue: the server's first message.
            11 => {
                let s = scram.as_mut().ok_or_else(|| Error::Protocol("SASLContinue before SASL".to_owned()))?;
                let last = s.client_final(data).map_err(Error::Protocol)?;
                put(self.messages.out(), Some(b'p'), |o| o.extend_from_slice(last.as_bytes()));
                Ok(self.messages.send()?)
            }
            // SASLFinal: the server's signature.
            12 => {
                let s = scram.as_mut().ok_or_else(|| Error::Protocol("SASLFinal before SASL".to_owned()))?;
                s.verify(data).map_err(Error::Protocol)
            }
            other => Err(Error::Unsupported(format!(
                "the server asks for authentication method {other} ({}), which this driver does not speak (it speaks trust, password, md5 and scram-sha-256)\nhint: give the load's user one of those in pg_hba.conf",
                match other {
                    2 => "Kerberos V5",
                    7 | 8 => "GSSAPI",
                    9 => "SSPI",
                    _ => "unknown",
                }
            ))),
        }
    }

    fn password_message(&mut self, proof: &[u8]) -> Result<(), Error> {
        put(self.messages.out(), Some(b'p'), |o| put_str(o, proof));
        Ok(self.messages.send()?)
    }

    /// Run `sql` as a simple query, its results read and dropped.
    pub fn simple(&mut self, sql: &str) -> Result<(), Error> {
        let out = self.messages.begin(self.timeout);
        put(out, Some(b'Q'), |o| put_str(o, sql.as_bytes()));
        self.messages.send()?;
        self.read_to_ready().map(|_| ())
    }

    /// Parse `sql` as the session's statement: how many parameters the
    /// server counts in it.
    pub fn prepare(&mut self, sql: &str) -> Result<usize, Error> {
        let out = self.messages.begin(self.timeout);
        put(out, Some(b'P'), |o| {
            put_str(o, STATEMENT);
            put_str(o, sql.as_bytes());
            // No parameter types: the server infers each.
            o.extend_from_slice(&0u16.to_be_bytes());
        });
        put(out, Some(b'D'), |o| {
            o.push(b'S');
            put_str(o, STATEMENT);
        });
        put(out, Some(b'S'), |_| {});
        self.messages.send()?;
        let mut params = None;
        let mut error = None;
        loop {
            let (tag, body) = read_after(&mut self.messages, &mut error)?;
            match tag {
                b't' => params = Some(usize::from(Fields::new(body).u16("parameter count")?)),
                b'E' => error = Some(ServerError::parse(body)?),
                b'Z' => break,
                // ParseComplete, RowDescription, NoData, notices.
                b'1' | b'T' | b'n' | b'N' | b'S' | b'A' => {}
                other => return Err(unexpected(other, "a prepare")),
            }
        }
        if let Some(e) = error {
            return Err(Error::Server(e));
        }
        let params = params.ok_or_else(|| {
            Error::Protocol("no ParameterDescription for the statement".to_owned())
        })?;
        self.params = Some(params);
        Ok(params)
    }

    /// Execute the statement with `params` (the value of each, as text)
    /// and read its result to the end: the rows it held.
    pub fn execute<'p>(&mut self, params: impl Fn(usize) -> &'p [u8]) -> Result<u64, Error> {
        let n = self
            .params
            .ok_or_else(|| Error::Protocol("execute before prepare".to_owned()))?;
        let out = self.messages.begin(self.timeout);
        put(out, Some(b'B'), |o| {
            // The unnamed portal, the statement, all values as text.
            put_str(o, b"");
            put_str(o, STATEMENT);
            o.extend_from_slice(&0u16.to_be_bytes());
            o.extend_from_slice(&u16::try_from(n).unwrap_or(u16::MAX).to_be_bytes());
            for i in 0..n {
                let value = params(i);
                let len = i32::try_from(value.len()).unwrap_or(i32::MAX);
                o.extend_from_slice(&len.to_be_bytes());
                o.extend_from_slice(value);
            }
            // Every column as text.
            o.extend_from_slice(&0u16.to_be_bytes());
        });
        put(out, Some(b'E'), |o| {
            put_str(o, b"");
            o.extend_from_slice(&0u32.to_be_bytes());
        });
        put(out, Some(b'S'), |_| {});
        self.messages.send()?;
        self.read_to_ready()
    }

    /// Read an exchange's answers up to `ReadyForQuery`: the rows they
    /// held, or the server's error.
    fn read_to_ready(&mut self) -> Result<u64, Error> {
        let mut rows = 0;
        let mut error = None;
        loop {
            let (tag, body) = read_after(&mut self.messages, &mut error)?;
            match tag {
                b'D' => rows += 1,
                b'E' => error = Some(ServerError::parse(body)?),
                b'Z' => break,
                // BindComplete, CommandComplete, EmptyQueryResponse,
                // PortalSuspended, RowDescription, NoData, notices,
                // parameter changes, notifications.
                b'2' | b'C' | b'I' | b's' | b'T' | b'n' | b'N' | b'S' | b'A' => {}
                other => return Err(unexpected(other, "a query")),
            }
        }
        match error {
            Some(e) => Err(Error::Server(e)),
            None => Ok(rows),
        }
    }

    /// Say goodbye (`Terminate`); the server closes without an answer.
    pub fn terminate(&mut self) -> Result<(), Error> {
        let out = self.messages.begin(self.timeout);
        put(out, Some(b'X'), |_| {});
        Ok(self.messages.send()?)
    }
}

/// The next message; where the server closes the connection after an
/// error (a FATAL one: an administrator's shutdown, an idle timeout), that
/// error, in its words.
fn read_after<'m, S: Socket>(
    messages: &'m mut Messages<S>,
    error: &mut Option<ServerError>,
) -> Result<(u8, &'m [u8]), Error> {
    match messages.read() {
        Ok(message) => Ok(message),
        Err(WireError::Closed) if error.is_some() => Err(Error::Connection(format!(
            "the server closed the connection: {}",
            error.take().map(|e| e.to_string()).unwrap_or_default()
        ))),
        Err(e) => Err(e.into()),
    }
}

fn unexpected(tag: u8, during: &str) -> Error {
    Error::Protocol(format!(
        "a message of type `{}` in the answer to {during}",
        tag.escape_ascii()
    ))
}

#[cfg(test)]
mod tests {
    use super::super::message::tests::{message, Replay};
    use super::*;

    fn target(password: Option<&str>) -> Target {
        Target {
            user: "ab".into(),
            password: password.map(str::to_owned),
            host: Host::Tcp("h".into()),
            port: 5432,
            database: "db".into(),
            application_name: None,
        }
    }

    fn session(input: &[u8], chunk: usize) -> Session<Replay> {
        Session::new(Replay::new(input, chunk), Duration::from_secs(1))
    }

    fn error(code: &str, text: &str) -> Vec<u8> {
        let mut body = b"SERROR\0VERROR\0".to_vec();
        body.extend(format!("C{code}\0M{text}\0").as_bytes());
        body.push(0);
        message(b'E', &body)
    }

    /// The messages a client wrote, as (type, body).
    fn written(bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut m = Messages::new(Replay::new(bytes, 1 << 16));
        m.begin(Duration::from_secs(1));
        std::iter::from_fn(|| m.read().ok().map(|(t, b)| (t, b.to_vec()))).collect()
    }

    #[test]
    fn the_start_up_names_user_and_database_and_md5_answers_with_the_salted_hash() {
        let mut input = message(b'R', b"\x00\x00\x00\x05\x01\x02\x03\x04");
        input.extend(message(b'R', b"\x00\x00\x00\x00"));
        input.extend(message(b'S', b"server_version\x0016.4\x00"));
        input.extend(message(b'K', b"\x00\x00\x00\x07\x00\x00\x00\x08"));
        input.extend(message(b'Z', b"I"));
        for chunk in [1, 5, 4096] {
            let mut s = session(&input, chunk);
            s.login(&target(Some("pw"))).unwrap();
            let out = &s.messages.stream().written;
            // The start-up: length, protocol 3.0, then its pairs.
            let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
            let startup = &out[4..len];
            assert_eq!(&startup[..4], b"\x00\x03\x00\x00");
            assert_eq!(
                &startup[4..],
                b"user\0ab\0database\0db\0client_encoding\0UTF8\0\0"
            );
            let mut proof = auth::md5(b"ab", b"pw", [1, 2, 3, 4]);
            proof.push(0);
            assert_eq!(written(&out[len..]), [(b'p', proof)]);
        }
    }

    #[test]
    fn a_password_refused_is_the_servers_words_and_final() {
        let mut input = message(b'R', b"\x00\x00\x00\x03");
        input.extend(error(
            "28P01",
            "password authentication failed for user \"ab\"",
        ));
        let mut s = session(&input, 64);
        let Err(Error::Server(e)) = s.login(&target(Some("nope"))) else {
            panic!("a refused password is the server's error");
        };
        assert!(e.is_final());
        assert_eq!(
            e.to_string(),
            "password authentication failed for user \"ab\" (SQLSTATE 28P01)"
        );
        // Asked for a password the string does not have: said, not sent.
        let mut s = session(&message(b'R', b"\x00\x00\x00\x03"), 64);
        let Err(Error::Unsupported(why)) = s.login(&target(None)) else {
            panic!("no password to send");
        };
        assert!(why.contains("has none"), "{why}");
        // Too many connections is worth another try.
        let e = ServerError::parse(&error("53300", "sorry, too many clients")[5..]).unwrap();
        assert!(!e.is_final());
        let code = |c: &str| ServerError {
            severity: "ERROR".into(),
            code: c.into(),
            message: String::new(),
        };
        assert!(code("42501").is_final() && code("3D000").is_final());
        for transient in ["57014", "55P03", "40P01", "40001", "53300", "57P03"] {
            assert!(code(transient).is_transient(), "{transient}");
        }
        for lasting in ["42P01", "42601", "22P02", "28P01"] {
            assert!(!code(lasting).is_transient(), "{lasting}");
        }
    }

    #[test]
    fn after_scram_the_login_is_accepted_only_once_the_server_has_signed() {
        let mut s = session(b"", 64);
        let mut scram = Some(Scram::new("", "pw", "abc"));
        let Err(Error::Protocol(why)) = s.authenticate(&target(Some("pw")), 0, &[], &mut scram)
        else {
            panic!("an unsigned SCRAM login must be refused");
        };
        assert!(why.contains("without its SCRAM signature"), "{why}");
        // Without SASL, AuthenticationOk is the login.
        assert!(s.authenticate(&target(None), 0, &[], &mut None).is_ok());
    }

    #[test]
    fn a_fatal_error_before_the_server_closes_is_told_in_its_words() {
        let mut input = message(b'1', b"");
        input.extend(message(b't', b"\x00\x00"));
        input.extend(message(b'n', b""));
        input.extend(message(b'Z', b"I"));
        input.extend(error(
            "57P01",
            "terminating connection due to administrator command",
        ));
        let mut s = Session::new(Replay::closing(&input, 64), Duration::from_secs(1));
        s.prepare("SELECT 1").unwrap();
        let Err(Error::Connection(why)) = s.execute(|_| b"") else {
            panic!("the server closed the connection");
        };
        assert!(
            why.contains("administrator command (SQLSTATE 57P01)"),
            "{why}"
        );
    }

    #[test]
    fn kerberos_and_sasl_without_scram_are_refused_with_a_hint() {
        let mut s = session(&message(b'R', b"\x00\x00\x00\x07"), 64);
        let Err(Error::Unsupported(why)) = s.login(&target(Some("pw"))) else {
            panic!("GSSAPI is not spoken");
        };
        assert!(
            why.contains("GSSAPI") && why.contains("pg_hba.conf"),
            "{why}"
        );
        let mut s = session(
            &message(b'R', b"\x00\x00\x00\x0aSCRAM-SHA-256-PLUS\0\0"),
            64,
        );
        let Err(Error::Unsupported(why)) = s.login(&target(Some("pw"))) else {
            panic!("only -PLUS is offered");
        };
        assert!(why.contains("SCRAM-SHA-256-PLUS"), "{why}");
    }

    #[test]
    fn a_prepare_counts_parameters_and_an_execute_binds_text_and_counts_rows() {
        let mut input = message(b'1', b"");
        input.extend(message(b't', b"\x00\x02\x00\x00\x00\x17\x00\x00\x00\x19"));
        input.extend(message(b'T', b"\x00\x01v\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x19\xff\xff\xff\xff\xff\xff\x00\x00"));
        input.extend(message(b'Z', b"I"));
        for row in [b"\x00\x01\x00\x00\x00\x01a", b"\x00\x01\x00\x00\x00\x01b"] {
            input.extend(message(b'2', b""));
            input.extend(message(b'D', row));
            input.extend(message(b'D', row));
            input.extend(message(b'C', b"SELECT 2\0"));
            input.extend(message(b'Z', b"I"));
        }
        let mut s = session(&input, 7);
        assert_eq!(
            s.prepare("SELECT v FROM t WHERE k = $1 AND j = $2")
                .unwrap(),
            2
        );
        let values: [&[u8]; 2] = [b"42", b"x y"];
        assert_eq!(s.execute(|i| values[i]).unwrap(), 2);
        let sent = written(&s.messages.stream().written);
        let tags: Vec<u8> = sent.iter().map(|(t, _)| *t).collect();
        assert_eq!(tags, b"PDSBES");
        assert_eq!(
            sent[3].1,
            b"\0ab\0\x00\x00\x00\x02\x00\x00\x00\x0242\x00\x00\x00\x03x y\x00\x00"
        );
        assert_eq!(s.execute(|i| values[i]).unwrap(), 2);
    }

    #[test]
    fn an_error_is_read_to_ready_so_the_next_query_starts_clean() {
        let mut input = message(b'1', b"");
        input.extend(message(b't', b"\x00\x00"));
        input.extend(message(b'n', b""));
        input.extend(message(b'Z', b"I"));
        input.extend(error(
            "23505",
            "duplicate key value violates unique constraint",
        ));
        input.extend(message(b'Z', b"I"));
        input.extend(message(b'2', b""));
        input.extend(message(b'C', b"INSERT 0 1\0"));
        input.extend(message(b'Z', b"I"));
        let mut s = session(&input, 64);
        assert_eq!(s.prepare("INSERT INTO t VALUES (1)").unwrap(), 0);
        let Err(Error::Server(e)) = s.execute(|_| b"") else {
            panic!("the server's error");
        };
        assert_eq!(e.code, "23505");
        assert_eq!(s.execute(|_| b"").unwrap(), 0);
        // A cut answer: the deadline, not a hang.
        assert!(matches!(s.execute(|_| b""), Err(Error::TimedOut)));
    }

    #[test]
    fn a_statement_the_server_refuses_is_its_error() {
        let mut input = error("42P01", "relation \"nope\" does not exist");
        input.extend(message(b'Z', b"I"));
        let mut s = session(&input, 64);
        let Err(Error::Server(e)) = s.prepare("SELECT * FROM nope") else {
            panic!("a refused statement");
        };
        assert_eq!(
            e.to_string(),
            "relation \"nope\" does not exist (SQLSTATE 42P01)"
        );
    }
}
