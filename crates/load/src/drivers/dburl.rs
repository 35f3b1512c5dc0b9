//! What the SQL drivers' URLs share (`SCHEME://USER:PASS@HOST:PORT/DB`):
//! the host and port apart, `%XX` escapes decoded, and the password kept
//! out of every message.

/// `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT` (the host may be empty),
/// the port `default` where none is given.
pub fn split_port(hostport: &str, default: u16) -> Result<(String, u16), String> {
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("`[{v6}` has no closing ]"))?;
        match after {
            "" => (host, None),
            _ => (
                host,
                Some(
                    after
                        .strip_prefix(':')
                        .ok_or_else(|| format!("`{after}` after the address"))?,
                ),
            ),
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    let port = match port {
        None => default,
        Some(p) => p
            .parse()
            .map_err(|_| format!("the port `{p}` is not a number from 0 to 65535"))?,
    };
    Ok((host.to_owned(), port))
}

/// `%XX` escapes decoded (two hex digits, not `%00`, as libpq has it);
/// the result must be UTF-8.
pub fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{what}: `%` is not followed by two hex digits"))?;
            if hex == 0 {
                // A NUL would end the string where the protocol puts it.
                return Err(format!("{what}: %00 is not allowed"));
            }
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{what} is not UTF-8 once decoded"))
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((auth, host)) = rest.rsplit_once('@') else {
        return url.to_owned();
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_come_apart_in_each_form() {
        assert_eq!(split_port("h", 5432), Ok(("h".to_owned(), 5432)));
        assert_eq!(split_port("h:1", 5432), Ok(("h".to_owned(), 1)));
        assert_eq!(split_port("[::1]:7", 5432), Ok(("::1".to_owned(), 7)));
        assert_eq!(split_port("[::1]", 9), Ok(("::1".to_owned(), 9)));
        assert_eq!(split_port("", 9), Ok((String::new(), 9)));
        assert!(split_port("h:x", 9)
            .unwrap_err()
            .contains("`x` is not a number"));
        assert_eq!(decode("a%2Fb%20c", "x"), Ok("a/b c".to_owned()));
        assert!(decode("%g0", "the user")
            .unwrap_err()
            .contains("the user: `%`"));
        assert!(decode("%+5", "x").unwrap_err().contains("two hex digits"));
        assert!(decode("a%00b", "x").unwrap_err().contains("%00"));
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(
            redact("mysql://root:secret@127.0.0.1:3306/db"),
            "mysql://root:***@127.0.0.1:3306/db"
        );
        assert_eq!(redact("mysql://root@h/db"), "mysql://root@h/db");
        assert_eq!(
            redact("postgres://u:pw@h/db?sslmode=disable"),
            "postgres://u:***@h/db?sslmode=disable"
        );
    }
}
