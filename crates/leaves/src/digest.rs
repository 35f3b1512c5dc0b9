//! SHA-256 digests in hex: of a file (a downloaded source, a profile) and
//! of bytes (build keys). A leaf: no crate imports.

use std::path::Path;

use anyhow::Result;
use sha2::{Digest, Sha256};

/// Hex SHA-256 of a file's content.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs_err::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

/// Bytes as lower-case hex, two digits each.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_a_file_as_sha256sum_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        fs_err::write(&path, "abc").unwrap();
        // sha256sum of "abc" (FIPS 180-2, appendix B.1).
        assert_eq!(
            sha256_file(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
