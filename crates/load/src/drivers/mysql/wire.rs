//! MySQL's packets on a blocking socket: each payload behind a 4-byte
//! header (3 bytes of length, little-endian, and a sequence number that
//! counts the packets of one exchange from 0), a payload of 16 MiB − 1 or
//! more split over several packets; and the length-encoded integers and
//! strings payloads are made of. Reads go through the socket's one
//! buffer ([`Inbox`]), every exchange within its deadline.

use std::time::Duration;

pub use crate::drivers::socket::WireError;
use crate::drivers::socket::{Inbox, Socket};

/// The largest payload one packet carries; a payload this long continues
/// in the next packet.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// Packets over a stream: one exchange at a time.
pub struct Packets<S> {
    inbox: Inbox<S>,
    /// A payload that spans several packets, joined.
    joined: Vec<u8>,
    /// The packet being written, its header first.
    out: Vec<u8>,
    /// The sequence number the next packet (either way) carries.
    seq: u8,
}

impl<S: Socket> Packets<S> {
    pub fn new(stream: S) -> Self {
        Self {
            inbox: Inbox::new(stream),
            joined: Vec::new(),
            out: Vec::with_capacity(256),
            seq: 0,
        }
    }

    pub fn stream(&self) -> &S {
        self.inbox.stream()
    }

    /// Start a new exchange (a command): sequence numbers from 0, the
    /// whole exchange within `timeout`. The payload to fill in.
    pub fn command(&mut self, timeout: Duration) -> &mut Vec<u8> {
        self.seq = 0;
        self.inbox.begin(timeout);
        self.packet()
    }

    /// Start the next packet of this exchange (an answer to the server's
    /// last packet). The payload to fill in.
    pub fn packet(&mut self) -> &mut Vec<u8> {
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
        &mut self.out
    }

    /// Send the packet built since [`Packets::command`] or
    /// [`Packets::packet`] (as several where it is 16 MiB or more).
    pub fn send(&mut self) -> Result<(), WireError> {
        let len = self.out.len() - 4;
        if len < MAX_PAYLOAD {
            self.out[..4].copy_from_slice(&header(len, self.seq));
            self.seq = self.seq.wrapping_add(1);
            return self.inbox.send(&self.out);
        }
        let framed = frame(&self.out[4..], &mut self.seq);
        self.inbox.send(&framed)
    }

    /// The next payload of this exchange (joined where it spans packets).
    pub fn read(&mut self) -> Result<&[u8], WireError> {
        let (len, seq) = self.header()?;
        self.expect_seq(seq)?;
        if len < MAX_PAYLOAD {
            self.inbox.fill(4 + len)?;
            return Ok(&self.inbox.take(4 + len)[4..]);
        }
        self.joined.clear();
        let mut len = len;
        loop {
            self.inbox.fill(4 + len)?;
            self.joined
                .extend_from_slice(&self.inbox.take(4 + len)[4..]);
            if len < MAX_PAYLOAD {
                return Ok(&self.joined);
            }
            let (next, seq) = self.header()?;
            self.expect_seq(seq)?;
            len = next;
        }
    }

    /// The next packet's length and sequence number, read but not taken.
    fn header(&mut self) -> Result<(usize, u8), WireError> {
        self.inbox.fill(4)?;
        let h = self.inbox.peek(4);
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        Ok((len, h[3]))
    }

    fn expect_seq(&mut self, seq: u8) -> Result<(), WireError> {
        if seq != self.seq {
            return Err(WireError::Malformed(format!(
                "packets out of order: expected number {}, got {seq}",
                self.seq
            )));
        }
        self.seq = self.seq.wrapping_add(1);
        Ok(())
    }
}

/// A packet header: the payload's length and the sequence number.
fn header(len: usize, seq: u8) -> [u8; 4] {
    debug_assert!(len <= MAX_PAYLOAD);
    let [a, b, c, ..] = len.to_le_bytes();
    [a, b, c, seq]
}

/// `payload` as packets numbered from `seq` on: full packets of
/// [`MAX_PAYLOAD`] bytes, then one shorter (empty where the payload is a
/// multiple of it), so the reader knows where it ends.
fn frame(payload: &[u8], seq: &mut u8) -> Vec<u8> {
    let mut framed = Vec::with_capacity(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 1));
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_PAYLOAD);
        framed.extend_from_slice(&header(n, *seq));
        framed.extend_from_slice(&rest[..n]);
        *seq = seq.wrapping_add(1);
        rest = &rest[n..];
        if n < MAX_PAYLOAD {
            return framed;
        }
    }
}

/// Append `n` as a length-encoded integer.
pub fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    let bytes = n.to_le_bytes();
    match n {
        0..=250 => out.push(bytes[0]),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&bytes[..2]);
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&bytes[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&bytes);
        }
    }
}

/// Append `bytes` as a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Reads the fields of one payload in order.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }

    fn short(&self, what: &str) -> WireError {
        WireError::Malformed(format!(
            "a packet of {} bytes ended before its {what}",
            self.data.len()
        ))
    }

    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], WireError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| self.short(what))?;
        let taken = &self.data[self.at..end];
        self.at = end;
        Ok(taken)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, WireError> {
        Ok(self.bytes(1, what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16, WireError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, WireError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length-encoded integer (0xFB, SQL NULL, and 0xFF are not one).
    pub fn lenenc(&mut self, what: &str) -> Result<u64, WireError> {
        let first = self.u8(what)?;
        let wide = |b: &[u8]| b.iter().rev().fold(0u64, |n, &x| n << 8 | u64::from(x));
        match first {
            0..=250 => Ok(u64::from(first)),
            0xFC => Ok(wide(self.bytes(2, what)?)),
            0xFD => Ok(wide(self.bytes(3, what)?)),
            0xFE => Ok(wide(self.bytes(8, what)?)),
            _ => Err(WireError::Malformed(format!(
                "{what}: 0x{first:02X} begins no length-encoded integer"
            ))),
        }
    }

    /// Bytes up to a NUL (taken, not returned), or to the end where there
    /// is none.
    pub fn nul_terminated(&mut self) -> &'a [u8] {
        let rest = &self.data[self.at..];
        if let Some(i) = memchr::memchr(0, rest) {
            self.at += i + 1;
            &rest[..i]
        } else {
            self.at = self.data.len();
            rest
        }
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.data[self.at..];
        self.at = self.data.len();
        rest
    }

    pub fn is_empty(&self) -> bool {
        self.at >= self.data.len()
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub use crate::drivers::socket::tests::Replay;

    /// `payload` as one packet numbered `seq`.
    pub fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = header(payload.len(), seq).to_vec();
        p.extend_from_slice(payload);
        p
    }

    fn lenenc(n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_lenenc(&mut out, n);
        out
    }

    /// The encodings of MySQL's `Protocol::LengthEncodedInteger`: below
    /// 251 one byte, then 0xFC + 2, 0xFD + 3, 0xFE + 8 bytes, little-endian.
    #[test]
    fn length_encoded_integers_take_the_documented_forms_and_read_back() {
        assert_eq!(lenenc(0), [0x00]);
        assert_eq!(lenenc(250), [0xFA]);
        assert_eq!(lenenc(251), [0xFC, 0xFB, 0x00]);
        assert_eq!(lenenc(0xFFFF), [0xFC, 0xFF, 0xFF]);
        assert_eq!(lenenc(0x1_0000), [0xFD, 0x00, 0x00, 0x01]);
        assert_eq!(lenenc(0xFF_FFFF), [0xFD, 0xFF, 0xFF, 0xFF]);
        assert_eq!(
            lenenc(0x100_0000),
            [0xFE, 0x00, 0x00, 0x00, 0x01, 0, 0, 0, 0]
        );
        for n in [
            0,
            1,
            250,
            251,
            252,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            1 << 24,
            u64::MAX,
        ] {
            let bytes = lenenc(n);
            let mut f = Fields::new(&bytes);
            assert_eq!(f.lenenc("n").unwrap(), n);
            assert!(f.is_empty(), "{n}");
        }
        // NULL and an ERR header are not integers; a cut one is short.
        assert!(matches!(
            Fields::new(&[0xFB]).lenenc("n"),
            Err(WireError::Malformed(_))
        ));
        assert!(matches!(
            Fields::new(&[0xFF]).lenenc("n"),
            Err(WireError::Malformed(_))
        ));
        let cut = Fields::new(&[0xFD, 1, 2]).lenenc("the count").unwrap_err();
        assert!(
            matches!(&cut, WireError::Malformed(m) if m.contains("the count")),
            "{cut:?}"
        );
    }

    #[test]
    fn fields_read_in_order_and_stop_at_the_end() {
        let mut f = Fields::new(b"\x0a5.5\x00\x01\x02\x03\x04\xAB\xCDtail");
        assert_eq!(f.u8("v").unwrap(), 10);
        assert_eq!(f.nul_terminated(), b"5.5");
        assert_eq!(f.u32("id").unwrap(), 0x0403_0201);
        assert_eq!(f.u16("caps").unwrap(), 0xCDAB);
        assert_eq!(f.clone().nul_terminated(), b"tail");
        assert_eq!(f.rest(), b"tail");
        assert!(f.u8("more").is_err());
        let mut lenenc_string = Vec::new();
        put_lenenc_bytes(&mut lenenc_string, b"abc");
        assert_eq!(lenenc_string, b"\x03abc");
    }

    #[test]
    fn a_packet_is_a_three_byte_length_and_a_sequence_number() {
        let mut p = Packets::new(Replay::new(b"", 1));
        p.command(Duration::from_secs(1))
            .extend_from_slice(b"\x0eping");
        p.send().unwrap();
        p.packet().push(0x01);
        p.send().unwrap();
        assert_eq!(
            p.stream().written,
            b"\x05\x00\x00\x00\x0eping\x01\x00\x00\x01\x01"
        );
    }

    /// A payload of 16 MiB − 1 bytes fills one packet and needs an empty
    /// one after it; one byte more spills one byte into a second.
    #[test]
    fn long_payloads_are_split_at_16_mib_and_joined_again() {
        for len in [
            MAX_PAYLOAD - 1,
            MAX_PAYLOAD,
            MAX_PAYLOAD + 1,
            2 * MAX_PAYLOAD,
        ] {
            let payload: Vec<u8> = (0..=250u8).cycle().take(len).collect();
            let mut p = Packets::new(Replay::new(b"", 1));
            p.command(Duration::from_secs(1))
                .extend_from_slice(&payload);
            p.send().unwrap();
            let wire = p.stream().written.clone();
            let packets = len / MAX_PAYLOAD + 1;
            assert_eq!(wire.len(), len + 4 * packets, "{len}");
            let last = &wire[(packets - 1) * (MAX_PAYLOAD + 4)..];
            assert_eq!(
                last[..4],
                header(len % MAX_PAYLOAD, u8::try_from(packets - 1).unwrap()),
                "{len}"
            );
            // Read back, in reads of 64 KiB.
            let mut back = Packets::new(Replay::new(&wire, 1 << 16));
            back.command(Duration::from_secs(1));
            assert!(back.read().unwrap() == payload.as_slice(), "{len}");
        }
    }

    #[test]
    fn packets_that_straddle_reads_come_out_whole_and_in_order() {
        let wire = b"\x03\x00\x00\x01abc\x00\x00\x00\x02\x02\x00\x00\x03de";
        for chunk in [1, 3, 5, 64] {
            let mut p = Packets::new(Replay::new(wire, chunk));
            p.command(Duration::from_secs(1));
            p.seq = 1;
            assert_eq!(p.read().unwrap(), b"abc");
            assert_eq!(p.read().unwrap(), b"");
            assert_eq!(p.read().unwrap(), b"de");
            // Nothing more comes: the socket's timeout.
            assert!(matches!(p.read(), Err(WireError::TimedOut)));
        }
        let mut p = Packets::new(Replay::new(b"\x01\x00\x00\x05x", 64));
        p.command(Duration::from_secs(1));
        let Err(WireError::Malformed(why)) = p.read() else {
            panic!("a packet out of order must be refused");
        };
        assert!(why.contains("expected number 0, got 5"), "{why}");
    }
}
