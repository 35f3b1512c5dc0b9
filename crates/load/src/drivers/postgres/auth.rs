//! PostgreSQL's password proofs: `md5` (`md5` and the hex of
//! MD5(hex(MD5(password ‖ user)) ‖ salt)) and SCRAM-SHA-256 (RFC 5802 and
//! 7677, PostgreSQL's default since 14) without channel binding, as
//! libpq does over a connection without TLS. The password goes through
//! `SASLprep` first, and is used as it is where `SASLprep` refuses it, as
//! libpq does; the user name in the SCRAM messages is empty (the server
//! takes the start-up message's).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use md5::{Digest as _, Md5};
use sha2::Sha256;

/// The answer to `AuthenticationMD5Password`, its NUL not included.
pub fn md5(user: &[u8], password: &[u8], salt: [u8; 4]) -> Vec<u8> {
    let inner = hex(&Md5::new()
        .chain_update(password)
        .chain_update(user)
        .finalize());
    let outer = Md5::new()
        .chain_update(inner.as_bytes())
        .chain_update(salt)
        .finalize();
    format!("md5{}", hex(&outer)).into_bytes()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The mechanism this driver speaks.
pub const SCRAM: &str = "SCRAM-SHA-256";

/// A SCRAM-SHA-256 exchange, from the client's first message to its check
/// of the server's signature.
#[derive(Debug)]
pub struct Scram {
    password: Vec<u8>,
    nonce: String,
    /// `n=USER,r=NONCE`.
    first_bare: String,
    /// The server's signature the exchange must end with, once the
    /// client's proof is made.
    server_signature: Option<[u8; 32]>,
    /// Whether the server's signature was checked.
    verified: bool,
}

/// A channel without binding: the GS2 header `n,,`, and its base64 in the
/// final message.
const GS2: &str = "n,,";
const GS2_BASE64: &str = "biws";

impl Scram {
    /// Begin as `user` (empty for PostgreSQL) with `password` and a nonce
    /// of the client's (printable ASCII without `,`).
    pub fn new(user: &str, password: &str, nonce: &str) -> Self {
        let password = match stringprep::saslprep(password) {
            Ok(prepared) => prepared.into_owned().into_bytes(),
            Err(_) => password.as_bytes().to_vec(),
        };
        let user = user.replace('=', "=3D").replace(',', "=2C");
        Self {
            password,
            nonce: nonce.to_owned(),
            first_bare: format!("n={user},r={nonce}"),
            server_signature: None,
            verified: false,
        }
    }

    /// A fresh random nonce: 18 bytes from the kernel, in base64.
    pub fn random_nonce() -> Result<String, String> {
        let mut bytes = [0u8; 18];
        let mut filled = 0;
        while filled < bytes.len() {
            // SAFETY: the pointer and length are those of `bytes`' unfilled tail.
            let n = unsafe {
                libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
            };
            match usize::try_from(n) {
                Ok(n) => filled += n,
                Err(_)
                    if std::io::Error::last_os_error().kind()
                        == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(format!("getrandom: {}", std::io::Error::last_os_error())),
            }
        }
        Ok(STANDARD.encode(bytes))
    }

    /// Whether the server's final message carried its right signature.
    pub fn verified(&self) -> bool {
        self.verified
    }

    /// The client's first message.
    pub fn client_first(&self) -> String {
        format!("{GS2}{}", self.first_bare)
    }

    /// The client's final message, with its proof, for the server's first
    /// message (`r=NONCE,s=SALT,i=ITERATIONS`).
    pub fn client_final(&mut self, server_first: &[u8]) -> Result<String, String> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| "the server's first SCRAM message is not UTF-8".to_owned())?;
        let (mut nonce, mut salt, mut iterations) = (None, None, None);
        for attr in server_first.split(',') {
            match attr.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = Some(v),
                Some(("i", v)) => iterations = Some(v),
                _ => {}
            }
        }
        let nonce = nonce.ok_or("the server's first SCRAM message has no nonce (r=)")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("the server's SCRAM nonce does not extend the client's".to_owned());
        }
        let salt = salt
            .and_then(|s| STANDARD.decode(s).ok())
            .ok_or("the server's first SCRAM message has no salt (s=) in base64")?;
        let iterations: u32 = iterations
            .and_then(|i| i.parse().ok())
            .filter(|&i| i > 0)
            .ok_or("the server's first SCRAM message has no iteration count (i=)")?;
        let salted = hi(&self.password, &salt, iterations);
        let client_key = hmac(&salted, b"Client Key");
        let stored_key: [u8; 32] = sha2::Sha256::digest(client_key).into();
        let without_proof = format!("c={GS2_BASE64},r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.first_bare);
        let signature = hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac(&salted, b"Server Key");
        self.server_signature = Some(hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", STANDARD.encode(proof)))
    }

    /// Check the server's final message (`v=SIGNATURE`): a server that
    /// does not know the password cannot sign.
    pub fn verify(&mut self, server_final: &[u8]) -> Result<(), String> {
        let text = String::from_utf8_lossy(server_final);
        if let Some(error) = text.strip_prefix("e=") {
            return Err(format!("the server ended SCRAM with the error `{error}`"));
        }
        let signature = text
            .strip_prefix("v=")
            .and_then(|v| STANDARD.decode(v.trim_end()).ok())
            .ok_or("the server's final SCRAM message has no signature (v=)")?;
        match self.server_signature {
            Some(expected) if signature == expected => {
                self.verified = true;
                Ok(())
            }
            Some(_) => Err(
                "the server's SCRAM signature is wrong: it does not know the password".to_owned(),
            ),
            None => Err("the server's final SCRAM message came before its first".to_owned()),
        }
    }
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// RFC 5802's Hi: PBKDF2 with HMAC-SHA-256, one block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut first = salt.to_vec();
    first.extend_from_slice(&1u32.to_be_bytes());
    let mut u = hmac(password, &first);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password, &u);
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's example exchange (section 3): user `user`, password
    /// `pencil`, 4096 iterations.
    #[test]
    fn scram_sha_256_gives_rfc_7677s_proof_and_checks_its_server_signature() {
        let mut scram = Scram::new("user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(scram.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first =
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        assert_eq!(
            scram.client_final(server_first).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert!(!scram.verified());
        scram
            .verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(scram.verified());
        let why = scram
            .verify(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(why.contains("does not know the password"), "{why}");
    }

    #[test]
    fn a_server_nonce_that_does_not_extend_the_clients_is_refused() {
        let mut scram = Scram::new("", "pw", "abc");
        for (first, says) in [
            (&b"r=xyz,s=AAAA,i=1"[..], "does not extend"),
            (b"r=abc,s=AAAA,i=1", "does not extend"),
            (b"r=abcd,s=%%,i=1", "no salt"),
            (b"r=abcd,s=AAAA,i=0", "no iteration count"),
            (b"s=AAAA,i=1", "no nonce"),
        ] {
            let why = scram.client_final(first).unwrap_err();
            assert!(why.contains(says), "{first:?}: {why}");
        }
        let why = Scram::new("", "pw", "abc")
            .verify(b"e=invalid-proof")
            .unwrap_err();
        assert!(why.contains("invalid-proof"), "{why}");
    }

    /// Hi against Python's
    /// `hashlib.pbkdf2_hmac('sha256', b'password', b'salt', 4096)`.
    #[test]
    fn hi_is_pbkdf2_hmac_sha256() {
        assert_eq!(
            hex(&hi(b"password", b"salt", 4096)),
            "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"
        );
    }

    /// Checked against Python: `'md5' + md5(md5(b'pw' + b'ab').hexdigest().encode() + b'\x01\x02\x03\x04').hexdigest()`.
    #[test]
    fn md5_hashes_the_password_with_the_user_then_the_salt() {
        assert_eq!(
            String::from_utf8(md5(b"ab", b"pw", [1, 2, 3, 4])).unwrap(),
            "md5179c44068d4d2120470783e8bd96c2d7"
        );
    }

    #[test]
    fn nonces_are_fresh_and_printable() {
        let a = Scram::random_nonce().unwrap();
        let b = Scram::random_nonce().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 24);
        assert!(a.bytes().all(|c| c.is_ascii_graphic() && c != b','), "{a}");
    }
}
