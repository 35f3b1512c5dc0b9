//! Unpacking a tar archive that came from elsewhere (a brought `.gcda`
//! tree), in Rust, so that nothing it says can reach outside its target:
//! only regular files and directories are written, under the target, with
//! fixed modes (no owners, no set-id bits); an entry whose name is
//! absolute or climbs out with `..`, a link of any kind, a device or a
//! FIFO refuses the whole archive, and so does more than
//! [`MAX_FILE_BYTES`] of content. Reads ustar and GNU
//! archives (long names), plain or gzip-compressed.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context as _, Result};

/// The most an archive may unpack to, and the largest brought file: 4 GiB.
pub const MAX_FILE_BYTES: u64 = 4 << 30;

const BLOCK: usize = 512;

/// Unpack `archive` into `into` (created); returns the files written.
pub fn unpack(archive: &Path, into: &Path) -> Result<Vec<PathBuf>> {
    let file = fs_err::File::open(archive)?;
    let mut head = [0_u8; 2];
    let gzip = fs_err::File::open(archive)?.read_exact(&mut head).is_ok() && head == [0x1f, 0x8b];
    let reader: Box<dyn Read> = if gzip {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    unpack_from(reader, into).map_err(|e| {
        anyhow::anyhow!(
            "cannot unpack the brought archive {}: {e:#}\nhint: a profile archive holds only .gcda files and directories, with relative names, e.g. `tar -C profile-dir -czf profile.tar.gz .`",
            archive.display()
        )
    })
}

/// Unpack a tar stream into `into`.
pub fn unpack_from(mut reader: impl Read, into: &Path) -> Result<Vec<PathBuf>> {
    fs_err::create_dir_all(into)?;
    let mut written = Vec::new();
    let mut total: u64 = 0;
    let mut long_name: Option<String> = None;
    let mut header = [0_u8; BLOCK];
    loop {
        if !read_block(&mut reader, &mut header)? {
            bail!("the archive ends without its end-of-archive blocks (truncated?)");
        }
        if header.iter().all(|b| *b == 0) {
            break;
        }
        check_sum(&header)?;
        let size = octal(&header[124..136]).context("an entry's size is not a number")?;
        total = total.saturating_add(size);
        if total > MAX_FILE_BYTES {
            bail!("the archive unpacks to more than {MAX_FILE_BYTES} bytes");
        }
        let name = long_name.take().unwrap_or_else(|| entry_name(&header));
        match header[156] {
            b'L' => {
                let bytes = read_content(&mut reader, size)?;
                let text = String::from_utf8_lossy(&bytes);
                long_name = Some(text.trim_end_matches('\0').to_owned());
            }
            b'0' | 0 | b'7' => {
                let target = inside(into, &name)?;
                let bytes = read_content(&mut reader, size)?;
                if let Some(parent) = target.parent() {
                    fs_err::create_dir_all(parent)?;
                }
                // A fresh file with the default mode: no owner or set-id
                // bit of the archive is restored.
                fs_err::write(&target, bytes)?;
                written.push(target);
            }
            b'5' => {
                // `./`, the archive's own top, is `into` itself.
                let dir = inside(into, &name).or_else(|e| {
                    if name.trim_start_matches("./").trim_matches('/').is_empty() {
                        Ok(into.to_path_buf())
                    } else {
                        Err(e)
                    }
                })?;
                fs_err::create_dir_all(dir)?;
            }
            // pax and GNU headers that carry only metadata.
            b'x' | b'g' => {
                read_content(&mut reader, size)?;
            }
            b'1' | b'2' => bail!("`{name}` is a link; a profile archive holds none"),
            other => bail!(
                "`{name}` is of type `{}` (a device, FIFO or other special file); a profile archive holds only files and directories",
                char::from(other)
            ),
        }
    }
    Ok(written)
}

/// Read one block; `false` at the end of the stream.
fn read_block(reader: &mut impl Read, block: &mut [u8; BLOCK]) -> Result<bool> {
    let mut filled = 0;
    while filled < BLOCK {
        let n = reader.read(&mut block[filled..])?;
        if n == 0 {
            if filled == 0 {
                return Ok(false);
            }
            bail!("the archive ends inside a block (truncated)");
        }
        filled += n;
    }
    Ok(true)
}

/// An entry's content, padded to whole blocks in the stream.
fn read_content(reader: &mut impl Read, size: u64) -> Result<Vec<u8>> {
    let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
    let mut bytes = Vec::new();
    reader.take(padded).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < padded {
        bail!("the archive ends inside an entry (truncated)");
    }
    bytes.truncate(usize::try_from(size).context("an entry too large for memory")?);
    Ok(bytes)
}

fn entry_name(header: &[u8; BLOCK]) -> String {
    let field = |b: &[u8]| {
        let end = b.iter().position(|c| *c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).into_owned()
    };
    let name = field(&header[0..100]);
    let prefix = if &header[257..262] == b"ustar" {
        field(&header[345..500])
    } else {
        String::new()
    };
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

/// A tar number: octal text, or GNU's base-256 for large values.
fn octal(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        return field[1..]
            .iter()
            .try_fold(0_u64, |n, b| n.checked_mul(256)?.checked_add(u64::from(*b)));
    }
    let text = String::from_utf8_lossy(field);
    let text = text.trim_matches(|c: char| c == '\0' || c == ' ');
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

/// The header's checksum, so a damaged archive is named, not half unpacked.
fn check_sum(header: &[u8; BLOCK]) -> Result<()> {
    let stored = octal(&header[148..156]).context("a header's checksum is not a number")?;
    let sum: u64 = header
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(*b)
            }
        })
        .sum();
    if sum != stored {
        bail!("a header's checksum does not match: the archive is damaged");
    }
    Ok(())
}

/// `into/name`, refused when `name` is absolute or climbs out of `into`.
fn inside(into: &Path, name: &str) -> Result<PathBuf> {
    let relative = Path::new(name);
    let mut out = into.to_path_buf();
    for part in relative.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                bail!("`{name}` points outside the archive's directory (absolute, or with `..`)")
            }
        }
    }
    if out == into {
        bail!("an entry has an empty name");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ustar header for `name` of `kind` with `content`.
    fn entry(name: &str, kind: u8, content: &[u8], link: &str) -> Vec<u8> {
        let mut h = [0_u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..108].copy_from_slice(b"0000644\0");
        h[124..136].copy_from_slice(format!("{:011o}\0", content.len()).as_bytes());
        h[156] = kind;
        h[157..157 + link.len()].copy_from_slice(link.as_bytes());
        h[257..263].copy_from_slice(b"ustar\0");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        let mut out = h.to_vec();
        out.extend(content);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        out
    }

    fn archive(entries: &[Vec<u8>]) -> Vec<u8> {
        let mut out: Vec<u8> = entries.concat();
        out.extend([0_u8; 2 * BLOCK]);
        out
    }

    #[test]
    fn files_and_directories_unpack_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let tar = archive(&[
            entry("d/", b'5', b"", ""),
            entry("d/a.gcda", b'0', b"adcg1234", ""),
        ]);
        let written = unpack_from(tar.as_slice(), tmp.path()).unwrap();
        assert_eq!(written, vec![tmp.path().join("d/a.gcda")]);
        assert_eq!(std::fs::read(&written[0]).unwrap(), b"adcg1234");
    }

    #[test]
    fn names_out_of_the_directory_and_links_are_refused() {
        for (bad, why) in [
            (entry("../x.gcda", b'0', b"x", ""), "outside"),
            (entry("/tmp/x.gcda", b'0', b"x", ""), "outside"),
            (entry("a/../../x", b'0', b"x", ""), "outside"),
            (entry("link", b'2', b"", "/etc/passwd"), "is a link"),
            (entry("hard", b'1', b"", "../../x"), "is a link"),
            (entry("dev", b'3', b"", ""), "special file"),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let into = tmp.path().join("into");
            let error = unpack_from(archive(&[bad]).as_slice(), &into).unwrap_err();
            assert!(format!("{error:#}").contains(why), "{error:#}");
            assert!(!tmp.path().join("x.gcda").exists());
            assert!(!tmp.path().join("x").exists());
        }
    }

    #[test]
    fn a_truncated_or_damaged_archive_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let whole = archive(&[entry("a.gcda", b'0', &[7; 700], "")]);
        let error = unpack_from(&whole[..BLOCK + 100], tmp.path()).unwrap_err();
        assert!(error.to_string().contains("truncated"), "{error}");
        let mut damaged = whole.clone();
        damaged[10] = b'z';
        let error = unpack_from(damaged.as_slice(), tmp.path()).unwrap_err();
        assert!(error.to_string().contains("checksum"), "{error}");
    }
}
