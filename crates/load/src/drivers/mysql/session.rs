//! One client session in MySQL's client/server protocol, blocking: the
//! handshake (protocol 10, `mysql_native_password` or the fast path of
//! `caching_sha2_password`, the server's auth-switch requests), then
//! `COM_STMT_PREPARE` once and `COM_STMT_EXECUTE` per request, each
//! binary result set read to its end.
//!
//! What the client asks of the server (its capabilities) is what a load
//! needs and no more: no TLS, no compression, no connection attributes.
//! Where the server offers them it takes `CLIENT_DEPRECATE_EOF` (an OK
//! packet ends a result set, not an EOF packet) and MariaDB's
//! `MARIADB_CLIENT_CACHE_METADATA` (an execution's result set comes
//! without its column definitions once the client has them, as
//! libmariadb asks too); both forms are read.

use std::time::Duration;

use super::auth::{self, Plugin};
use super::url::Target;
use super::wire::{put_lenenc_bytes, Fields, Packets, WireError};
use crate::drivers::socket::{SessionError, Socket, Stream};

// Capability flags (MySQL's `CLIENT_*`).
/// MySQL's `CLIENT_LONG_PASSWORD`; a MariaDB server leaves it unset, and
/// then keeps extended capabilities in its greeting (`CLIENT_MYSQL`).
const CLIENT_MYSQL: u32 = 1;
const CLIENT_LONG_FLAG: u32 = 1 << 2;
const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
const CLIENT_PROTOCOL_41: u32 = 1 << 9;
const CLIENT_TRANSACTIONS: u32 = 1 << 13;
const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
const CLIENT_PLUGIN_AUTH_LENENC_DATA: u32 = 1 << 21;
const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;
/// MariaDB's `MARIADB_CLIENT_CACHE_METADATA` (bit 36, the 5th of the
/// extended capabilities).
const MARIADB_CACHE_METADATA: u32 = 1 << 4;

/// `SERVER_MORE_RESULTS_EXISTS`: another result set follows this one.
const MORE_RESULTS: u16 = 0x0008;

/// `utf8mb4_general_ci`.
const CHARSET: u8 = 45;
const MAX_PACKET: u32 = 1 << 24;

const COM_QUIT: u8 = 0x01;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

/// Parameter types: `MYSQL_TYPE_LONGLONG`, `MYSQL_TYPE_VAR_STRING`.
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xFD;

/// Why a step failed.
pub type Error = SessionError<ServerError>;

/// An ERR packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub code: u16,
    /// The SQLSTATE, where the packet has one (an error before the
    /// handshake has none).
    pub state: Option<String>,
    pub message: String,
}

impl std::fmt::Display for ServerError {
    /// The server's own words, with its code and SQLSTATE.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.state {
            Some(state) => write!(
                f,
                "{} (error {}, SQLSTATE {state})",
                self.message, self.code
            ),
            None => write!(f, "{} (error {})", self.message, self.code),
        }
    }
}

/// Parse an ERR packet (its 0xFF included).
fn server_error(payload: &[u8]) -> Result<ServerError, WireError> {
    let mut f = Fields::new(payload);
    f.u8("ERR header")?;
    let code = f.u16("error code")?;
    let mut state = None;
    if payload.get(3) == Some(&b'#') {
        f.u8("SQLSTATE marker")?;
        state = Some(String::from_utf8_lossy(f.bytes(5, "SQLSTATE")?).into_owned());
    }
    Ok(ServerError {
        code,
        state,
        message: String::from_utf8_lossy(f.rest()).into_owned(),
    })
}

/// The server's greeting (`Protocol::HandshakeV10`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    pub version: String,
    pub caps: u32,
    /// MariaDB's extended capabilities (0 from MySQL).
    pub ext_caps: u32,
    pub nonce: Vec<u8>,
    pub plugin: Vec<u8>,
}

impl Greeting {
    fn parse(payload: &[u8]) -> Result<Self, Error> {
        if payload.first() == Some(&0xFF) {
            // Refused before the handshake (too many connections, a
            // blocked host).
            return Err(Error::Server(server_error(payload)?));
        }
        let mut f = Fields::new(payload);
        let protocol = f.u8("protocol version")?;
        if protocol != 10 {
            return Err(Error::Protocol(format!(
                "the server speaks protocol version {protocol}, not 10"
            )));
        }
        let version = String::from_utf8_lossy(f.nul_terminated()).into_owned();
        f.u32("connection id")?;
        let mut nonce = f.bytes(8, "nonce")?.to_vec();
        f.u8("filler")?;
        let mut caps = u32::from(f.u16("capabilities")?);
        let (mut ext_caps, mut plugin) = (0, Vec::new());
        if !f.is_empty() {
            f.u8("character set")?;
            f.u16("status")?;
            caps |= u32::from(f.u16("capabilities")?) << 16;
            let data_len = usize::from(f.u8("nonce length")?);
            f.bytes(6, "filler")?;
            let ext = f.u32("extended capabilities")?;
            if caps & CLIENT_MYSQL == 0 {
                ext_caps = ext;
            }
            if caps & CLIENT_SECURE_CONNECTION != 0 {
                let n = data_len.saturating_sub(8).max(13);
                nonce.extend_from_slice(f.bytes(n, "nonce")?);
            }
            if caps & CLIENT_PLUGIN_AUTH != 0 {
                plugin = f.nul_terminated().to_vec();
            }
        }
        if caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(Error::Unsupported(format!(
                "the server ({version}) does not speak the 4.1 protocol"
            )));
        }
        Ok(Self {
            version,
            caps,
            ext_caps,
            nonce: auth::nonce(&nonce).to_vec(),
            plugin,
        })
    }
}

/// A prepared statement.
#[derive(Debug)]
pub struct Statement {
    id: u32,
    params: usize,
    /// The parameter types the server last got (sent again only when
    /// they change).
    sent_types: Option<Vec<u8>>,
}

impl Statement {
    pub fn params(&self) -> usize {
        self.params
    }
}

/// One connection, logged in.
pub struct Session<S = Stream> {
    packets: Packets<S>,
    /// The capabilities both sides have.
    caps: u32,
    ext_caps: u32,
    timeout: Duration,
    /// Types of the parameters being sent (reused).
    types: Vec<u8>,
}

/// Connect to `target` within `timeout`.
fn connect(target: &Target, timeout: Duration) -> Result<Stream, Error> {
    match &target.socket {
        Some(path) => Stream::unix(path, timeout),
        None => Stream::tcp(&target.host, target.port, timeout),
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
        let unix = matches!(stream, Stream::Unix(_));
        let mut session = Session::new(stream, timeout);
        session.login(target, unix)?;
        Ok(session)
    }

    /// The timeout of every later step (set on the socket only when it
    /// changes).
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), Error> {
        if timeout != self.timeout {
            self.packets
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
            packets: Packets::new(stream),
            caps: 0,
            ext_caps: 0,
            timeout,
            types: Vec::new(),
        }
    }

    /// Read the greeting, answer it, and follow the server's requests
    /// until it accepts or refuses. `secure`: the channel is one the
    /// server may get the password in clear over (a unix socket).
    fn login(&mut self, target: &Target, secure: bool) -> Result<(), Error> {
        self.packets.command(self.timeout);
        let greeting = Greeting::parse(self.packets.read()?)?;
        let mut wanted = CLIENT_LONG_FLAG
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC_DATA
            | CLIENT_DEPRECATE_EOF
            | (greeting.caps & CLIENT_MYSQL);
        if target.database.is_some() {
            wanted |= CLIENT_CONNECT_WITH_DB;
        }
        self.caps = wanted & greeting.caps;
        self.ext_caps = greeting.ext_caps & MARIADB_CACHE_METADATA;
        // Answer with the server's plugin where the driver speaks it, else
        // with native (the server then asks for the user's own).
        let mut plugin = Plugin::named(&greeting.plugin).unwrap_or(Plugin::Native);
        let password = target.password.as_bytes();
        let proof = plugin.proof(password, &greeting.nonce);
        let (caps, ext_caps) = (self.caps, self.ext_caps);
        let out = self.packets.packet();
        out.extend_from_slice(&caps.to_le_bytes());
        out.extend_from_slice(&MAX_PACKET.to_le_bytes());
        out.push(CHARSET);
        out.extend_from_slice(&[0; 19]);
        out.extend_from_slice(&ext_caps.to_le_bytes());
        out.extend_from_slice(target.user.as_bytes());
        out.push(0);
        if caps & CLIENT_PLUGIN_AUTH_LENENC_DATA != 0 {
            put_lenenc_bytes(out, &proof);
        } else {
            out.push(u8::try_from(proof.len()).expect("a proof is 20 or 32 bytes"));
            out.extend_from_slice(&proof);
        }
        if let Some(db) = target
            .database
            .as_ref()
            .filter(|_| caps & CLIENT_CONNECT_WITH_DB != 0)
        {
            out.extend_from_slice(db.as_bytes());
            out.push(0);
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            out.extend_from_slice(plugin.name().as_bytes());
            out.push(0);
        }
        self.packets.send()?;
        loop {
            let reply = self.packets.read()?;
            let (head, verdict) = (reply.first().copied(), reply.get(1).copied());
            match head {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(Error::Server(server_error(reply)?)),
                // Auth switch: another plugin, a fresh nonce.
                Some(0xFE) => {
                    let mut f = Fields::new(&reply[1..]);
                    let name = f.nul_terminated();
                    plugin = Plugin::named(name).ok_or_else(|| unsupported_plugin(name))?;
                    let proof = plugin.proof(password, auth::nonce(f.rest()));
                    self.packets.packet().extend_from_slice(&proof);
                    self.packets.send()?;
                }
                // More data from the plugin: caching_sha2's verdict.
                Some(0x01) if plugin == Plugin::CachingSha2 => match verdict {
                    // Fast authentication succeeded: an OK follows.
                    Some(0x03) => {}
                    // Full authentication: the password itself.
                    Some(0x04) if secure => {
                        let out = self.packets.packet();
                        out.extend_from_slice(password);
                        out.push(0);
                        self.packets.send()?;
                    }
                    Some(0x04) => return Err(Error::Unsupported(FULL_AUTH.to_owned())),
                    other => {
                        return Err(Error::Protocol(format!(
                            "caching_sha2_password sent 0x{:02X}, neither 3 (fast \
                             authentication succeeded) nor 4 (full authentication)",
                            other.unwrap_or_default()
                        )))
                    }
                },
                other => {
                    return Err(Error::Protocol(format!(
                        "the answer to the login begins with 0x{:02X}, not OK, ERR or an \
                         auth-switch request",
                        other.unwrap_or_default()
                    )))
                }
            }
        }
    }

    /// `COM_STMT_PREPARE` `sql`.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        let out = self.packets.command(self.timeout);
        out.push(COM_STMT_PREPARE);
        out.extend_from_slice(sql.as_bytes());
        self.packets.send()?;
        let reply = self.packets.read()?;
        if reply.first() == Some(&0xFF) {
            return Err(Error::Server(server_error(reply)?));
        }
        let mut f = Fields::new(reply);
        if f.u8("prepare OK")? != 0x00 {
            return Err(Error::Protocol(format!(
                "the answer to a prepare begins with 0x{:02X}, not OK or ERR",
                reply[0]
            )));
        }
        let id = f.u32("statement id")?;
        let columns = f.u16("column count")?;
        let params = f.u16("parameter count")?;
        // The parameters' definitions, then the columns', each list ended
        // by an EOF packet unless CLIENT_DEPRECATE_EOF.
        for n in [params, columns] {
            self.skip_definitions(u64::from(n))?;
        }
        Ok(Statement {
            id,
            params: usize::from(params),
            sent_types: None,
        })
    }

    /// Skip `n` column (or parameter) definitions and the EOF packet after
    /// them, if any.
    fn skip_definitions(&mut self, n: u64) -> Result<(), Error> {
        if n == 0 {
            return Ok(());
        }
        for _ in 0..n {
            let def = self.packets.read()?;
            if def.first() == Some(&0xFF) {
                return Err(Error::Server(server_error(def)?));
            }
        }
        if self.caps & CLIENT_DEPRECATE_EOF == 0 {
            self.end_of_definitions()?;
        }
        Ok(())
    }

    /// The EOF packet after column definitions (or where they were left
    /// out, without `CLIENT_DEPRECATE_EOF`).
    fn end_of_definitions(&mut self) -> Result<(), Error> {
        let eof = self.packets.read()?;
        match eof.first() {
            Some(0xFE) if eof.len() < 9 => Ok(()),
            Some(0xFF) => Err(Error::Server(server_error(eof)?)),
            _ => Err(Error::Protocol(format!(
                "{} bytes where the EOF after column definitions belongs",
                eof.len()
            ))),
        }
    }

    /// `COM_STMT_EXECUTE` `statement` with its `params` (the value of
    /// each, in order) and read its result sets to the end: the rows
    /// they held.
    pub fn execute<'p>(
        &mut self,
        statement: &mut Statement,
        params: impl Fn(usize) -> &'p [u8],
    ) -> Result<u64, Error> {
        let n = statement.params;
        self.types.clear();
        for i in 0..n {
            self.types.push(match integer(params(i)) {
                Some(_) => TYPE_LONGLONG,
                None => TYPE_VAR_STRING,
            });
        }
        let send_types = statement.sent_types.as_deref() != Some(self.types.as_slice());
        let out = self.packets.command(self.timeout);
        out.push(COM_STMT_EXECUTE);
        out.extend_from_slice(&statement.id.to_le_bytes());
        // No cursor; one iteration.
        out.push(0);
        out.extend_from_slice(&1u32.to_le_bytes());
        if n > 0 {
            // No NULLs.
            out.resize(out.len() + n.div_ceil(8), 0);
            out.push(u8::from(send_types));
            if send_types {
                for &t in &self.types {
                    out.extend_from_slice(&[t, 0]);
                }
            }
            for i in 0..n {
                let value = params(i);
                match integer(value) {
                    Some(v) => out.extend_from_slice(&v.to_le_bytes()),
                    None => put_lenenc_bytes(out, value),
                }
            }
        }
        self.packets.send()?;
        if send_types {
            statement.sent_types = Some(self.types.clone());
        }
        let read = self.read_results();
        if matches!(read, Err(Error::Server(_))) {
            // Whether the server kept the types is unknown: send them again.
            statement.sent_types = None;
        }
        read
    }

    /// Read result sets (or OK/ERR) until the last: the rows they held.
    fn read_results(&mut self) -> Result<u64, Error> {
        let deprecate_eof = self.caps & CLIENT_DEPRECATE_EOF != 0;
        let cache_metadata = self.ext_caps & MARIADB_CACHE_METADATA != 0;
        let mut rows = 0;
        loop {
            let first = self.packets.read()?;
            let status = match first.first().copied() {
                Some(0x00) => ok_status(first)?,
                Some(0xFF) => return Err(Error::Server(server_error(first)?)),
                _ => {
                    let mut f = Fields::new(first);
                    let columns = f.lenenc("column count")?;
                    let metadata = !cache_metadata || f.u8("metadata follows")? != 0;
                    if metadata {
                        self.skip_definitions(columns)?;
                    } else if !deprecate_eof {
                        self.end_of_definitions()?;
                    }
                    loop {
                        let row = self.packets.read()?;
                        match row.first().copied() {
                            // A binary row begins with 0x00; 0xFE ends the
                            // rows (an EOF packet, or an OK packet with
                            // CLIENT_DEPRECATE_EOF).
                            Some(0xFE) if deprecate_eof => break ok_status(row)?,
                            Some(0xFE) if row.len() < 9 => break eof_status(row)?,
                            Some(0xFF) => return Err(Error::Server(server_error(row)?)),
                            Some(_) => rows += 1,
                            None => {
                                return Err(Error::Protocol(
                                    "an empty packet among the rows".to_owned(),
                                ))
                            }
                        }
                    }
                }
            };
            if status & MORE_RESULTS == 0 {
                return Ok(rows);
            }
        }
    }

    /// Say goodbye (`COM_QUIT`); the server closes without an answer.
    pub fn quit(&mut self) -> Result<(), Error> {
        self.packets.command(self.timeout).push(COM_QUIT);
        Ok(self.packets.send()?)
    }
}

/// Where a server answered with an auth plugin the driver does not speak.
fn unsupported_plugin(name: &[u8]) -> Error {
    Error::Unsupported(format!(
        "the server asks for the authentication plugin `{}`, which this driver does not \
         speak (it speaks mysql_native_password and caching_sha2_password)\nhint: give the \
         load's user one of those, e.g. ALTER USER … IDENTIFIED WITH mysql_native_password BY \
         '…' (MariaDB: IDENTIFIED VIA mysql_native_password USING PASSWORD('…'))",
        String::from_utf8_lossy(name)
    ))
}

/// `caching_sha2_password`'s full authentication over TCP.
const FULL_AUTH: &str = "the server wants the whole password (caching_sha2_password's full \
     authentication: its cache does not hold this user yet), which goes only over TLS or a \
     unix socket, and this driver speaks no TLS\nhint: connect over the server's socket \
     (append ?socket=/path/to/mysqld.sock), or log in once with the mysql client so the \
     server caches the password (the fast path then works over TCP), or give the user \
     mysql_native_password";

/// A value that reads as a (signed 64-bit) integer.
pub fn integer(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// The status flags of an OK packet (header 0x00, or 0xFE where it ends
/// rows with `CLIENT_DEPRECATE_EOF`).
fn ok_status(payload: &[u8]) -> Result<u16, WireError> {
    let mut f = Fields::new(payload);
    f.u8("OK header")?;
    f.lenenc("affected rows")?;
    f.lenenc("last insert id")?;
    f.u16("status flags")
}

/// The status flags of an EOF packet.
fn eof_status(payload: &[u8]) -> Result<u16, WireError> {
    let mut f = Fields::new(payload);
    f.u8("EOF header")?;
    f.u16("warnings")?;
    f.u16("status flags")
}

#[cfg(test)]
mod tests {
    use super::super::wire::tests::{packet, Replay};
    use super::*;

    /// MariaDB 10.11.19's greeting, as sysbench got it (strace).
    const GREETING: &[u8] = b"\x64\x00\x00\x00\x0a5.5.5-10.11.19-MariaDB-0+deb12u1\x00\
        \x06\x00\x00\x008tbm}MId\x00\xfe\xf7\x08\x02\x00\xff\x81\x15\x00\x00\x00\x00\x00\x00\
        \x1d\x00\x00\x00?J6pT18cjkZ_\x00mysql_native_password\x00";

    /// That server's answers to sysbench's execution of
    /// `SELECT c FROM sbtest1 WHERE id=?` (libmariadb asks for cached
    /// metadata and not for `CLIENT_DEPRECATE_EOF`): the column count, "no
    /// metadata follows", an EOF, one row of 119 characters, an EOF.
    fn sysbench_reply() -> Vec<u8> {
        let mut r = b"\x02\x00\x00\x01\x01\x00\x05\x00\x00\x02\xfe\x00\x00\x02\x00\
            \x7a\x00\x00\x03\x00\x00\x77"
            .to_vec();
        r.extend_from_slice(&[b'7'; 119]);
        r.extend_from_slice(b"\x05\x00\x00\x04\xfe\x00\x00\x02\x00");
        r
    }

    fn session(input: &[u8], chunk: usize, caps: u32, ext_caps: u32) -> Session<Replay> {
        let mut s = Session::new(Replay::new(input, chunk), Duration::from_secs(1));
        s.caps = caps;
        s.ext_caps = ext_caps;
        s
    }

    #[test]
    fn mariadbs_greeting_gives_its_nonce_plugin_and_extended_capabilities() {
        let g = Greeting::parse(&GREETING[4..]).unwrap();
        assert_eq!(g.version, "5.5.5-10.11.19-MariaDB-0+deb12u1");
        assert_eq!(g.nonce, b"8tbm}MId?J6pT18cjkZ_");
        assert_eq!(g.plugin, b"mysql_native_password");
        assert_eq!(g.caps & CLIENT_MYSQL, 0);
        assert_ne!(g.caps & CLIENT_DEPRECATE_EOF, 0);
        assert_eq!(g.ext_caps & MARIADB_CACHE_METADATA, MARIADB_CACHE_METADATA);
        // "Too many connections" comes before any greeting.
        let e = Greeting::parse(b"\xff\x10\x04Too many connections").unwrap_err();
        let Error::Server(e) = e else { panic!("{e:?}") };
        assert_eq!(e.to_string(), "Too many connections (error 1040)");
    }

    /// The login the driver sends MariaDB: its capabilities, the native
    /// proof of `pw`, the database and the plugin; then the server's OK.
    #[test]
    fn the_login_answers_the_greeting_with_user_proof_database_and_plugin() {
        let mut input = GREETING.to_vec();
        input.extend_from_slice(b"\x07\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00");
        let mut s = session(&input, 7, 0, 0);
        let target = super::super::url::Target::parse("mysql://sb:pw@h/sbtest").unwrap();
        s.login(&target, false).unwrap();
        assert_ne!(s.caps & CLIENT_DEPRECATE_EOF, 0);
        assert_eq!(s.ext_caps, MARIADB_CACHE_METADATA);
        let sent = &s.packets.stream().written;
        assert_eq!(sent[3], 1, "the second packet of the exchange");
        let mut f = Fields::new(&sent[4..]);
        let caps = f.u32("caps").unwrap();
        assert_eq!(
            caps & CLIENT_MYSQL,
            0,
            "MariaDB's extended capabilities are used"
        );
        f.bytes(4 + 1 + 19, "filler").unwrap();
        assert_eq!(f.u32("ext").unwrap(), MARIADB_CACHE_METADATA);
        assert_eq!(f.nul_terminated(), b"sb");
        let proof_len = f.lenenc("proof").unwrap();
        let proof = f
            .bytes(usize::try_from(proof_len).unwrap(), "proof")
            .unwrap();
        assert_eq!(proof, Plugin::Native.proof(b"pw", b"8tbm}MId?J6pT18cjkZ_"));
        assert_eq!(f.nul_terminated(), b"sbtest");
        assert_eq!(f.nul_terminated(), b"mysql_native_password");
        assert!(f.is_empty());
    }

    /// A greeting offering `caching_sha2_password` whose server wants full
    /// authentication: refused over TCP with the hint, the password in
    /// clear over a unix socket.
    #[test]
    fn caching_sha2_full_authentication_needs_a_socket() {
        let native = b"mysql_native_password\x00".len();
        let mut greeting = GREETING[4..GREETING.len() - native].to_vec();
        greeting.extend_from_slice(b"caching_sha2_password\x00");
        // "perform full authentication", then (on the socket) OK.
        let mut input = packet(0, &greeting);
        input.extend_from_slice(b"\x02\x00\x00\x02\x01\x04");
        let target = super::super::url::Target::parse("mysql://u:secret@h/d").unwrap();
        let err = session(&input, 64, 0, 0).login(&target, false).unwrap_err();
        let Error::Unsupported(why) = err else {
            panic!("{err:?}")
        };
        assert!(
            why.contains("caching_sha2_password") && why.contains("hint:"),
            "{why}"
        );
        input.extend_from_slice(b"\x07\x00\x00\x04\x00\x00\x00\x02\x00\x00\x00");
        let mut s = session(&input, 64, 0, 0);
        s.login(&target, true).unwrap();
        let sent = &s.packets.stream().written;
        assert!(sent.ends_with(b"\x07\x00\x00\x03secret\x00"), "{sent:?}");
    }

    #[test]
    fn an_auth_switch_is_answered_with_the_new_plugin_and_nonce() {
        let mut input = GREETING.to_vec();
        let mut switch = b"\xfemysql_native_password\x00".to_vec();
        let nonce: Vec<u8> = (1..=20).collect();
        switch.extend_from_slice(&nonce);
        switch.push(0);
        input.extend_from_slice(&packet(2, &switch));
        input.extend_from_slice(b"\x07\x00\x00\x04\x00\x00\x00\x02\x00\x00\x00");
        let target = super::super::url::Target::parse("mysql://u:secret@h/d").unwrap();
        let mut s = session(&input, 64, 0, 0);
        s.login(&target, false).unwrap();
        let mut expected = vec![20, 0, 0, 3];
        expected.extend_from_slice(&Plugin::Native.proof(b"secret", &nonce));
        assert!(s.packets.stream().written.ends_with(&expected));
        // A plugin the driver does not speak is named, with a hint.
        let mut input = GREETING.to_vec();
        input.extend_from_slice(b"\x10\x00\x00\x02\xfeclient_ed25519\x00");
        let err = session(&input, 64, 0, 0).login(&target, false).unwrap_err();
        assert!(
            matches!(&err, Error::Unsupported(w) if w.contains("`client_ed25519`")),
            "{err:?}"
        );
    }

    #[test]
    fn a_result_set_without_metadata_and_with_eof_packets_is_one_row() {
        let reply = sysbench_reply();
        for chunk in [1, 10, 4096] {
            let mut s = session(&reply, chunk, CLIENT_PROTOCOL_41, MARIADB_CACHE_METADATA);
            let mut st = Statement {
                id: 1,
                params: 1,
                sent_types: None,
            };
            assert_eq!(s.execute(&mut st, |_| b"5003").unwrap(), 1, "{chunk}");
            // The execute sysbench sent, but for the parameter's value:
            // statement 1, no cursor, 1 iteration, no NULLs, types bound,
            // a LONGLONG.
            assert_eq!(
                s.packets.stream().written,
                b"\x16\x00\x00\x00\x17\x01\x00\x00\x00\x00\x01\x00\x00\x00\x00\x01\x08\x00\
                  \x8b\x13\x00\x00\x00\x00\x00\x00"
            );
            assert_eq!(st.sent_types.as_deref(), Some(&[TYPE_LONGLONG][..]));
        }
    }

    #[test]
    fn types_are_sent_again_only_when_they_change() {
        let reply = sysbench_reply().repeat(3);
        let mut s = session(&reply, 4096, CLIENT_PROTOCOL_41, MARIADB_CACHE_METADATA);
        let mut st = Statement {
            id: 1,
            params: 1,
            sent_types: Some(vec![TYPE_LONGLONG]),
        };
        s.execute(&mut st, |_| b"7").unwrap();
        // 0 = no new types, then the value.
        assert!(s
            .packets
            .stream()
            .written
            .ends_with(b"\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00"));
        s.execute(&mut st, |_| b"key:1").unwrap();
        assert!(s
            .packets
            .stream()
            .written
            .ends_with(b"\x00\x01\xfd\x00\x05key:1"));
        assert_eq!(st.sent_types.as_deref(), Some(&[TYPE_VAR_STRING][..]));
    }

    /// With `CLIENT_DEPRECATE_EOF` and metadata: the column count, its
    /// definitions (no EOF), rows, and an OK packet headed 0xFE that says
    /// another result set follows; the second one is empty.
    #[test]
    fn rows_end_at_an_ok_packet_and_more_results_are_read_too() {
        let r = [
            packet(1, b"\x02\x01"),
            packet(2, b"\x03def column one"),
            packet(3, b"\x03def column two"),
            packet(4, b"\x00\x00\x01a\x01b"),
            packet(5, b"\x00\x00\x01c\x01d"),
            // MORE_RESULTS | AUTOCOMMIT
            packet(6, b"\xfe\x00\x00\x0a\x00\x00\x00"),
            packet(7, b"\x00\x00\x00\x02\x00\x00\x00"),
        ]
        .concat();
        let deprecate = CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF;
        let mut s = session(&r, 3, deprecate, MARIADB_CACHE_METADATA);
        let mut st = Statement {
            id: 9,
            params: 0,
            sent_types: None,
        };
        assert_eq!(s.execute(&mut st, |_| b"").unwrap(), 2);
    }

    #[test]
    fn an_err_packet_is_the_servers_words_and_a_cut_reply_times_out() {
        let r = packet(
            1,
            b"\xff\x26\x04#23000Duplicate entry '1' for key 'PRIMARY'",
        );
        let mut s = session(&r, 64, CLIENT_PROTOCOL_41, 0);
        let mut st = Statement {
            id: 1,
            params: 1,
            sent_types: Some(vec![TYPE_LONGLONG]),
        };
        let Err(Error::Server(e)) = s.execute(&mut st, |_| b"1") else {
            panic!("an ERR packet is a server error")
        };
        assert_eq!(
            e.to_string(),
            "Duplicate entry '1' for key 'PRIMARY' (error 1062, SQLSTATE 23000)"
        );
        assert_eq!(st.sent_types, None, "types go again after an error");
        let cut = &sysbench_reply()[..30];
        let mut s = session(cut, 64, CLIENT_PROTOCOL_41, MARIADB_CACHE_METADATA);
        assert!(matches!(s.execute(&mut st, |_| b"1"), Err(Error::TimedOut)));
    }
}
