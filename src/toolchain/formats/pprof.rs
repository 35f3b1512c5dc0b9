//! Writing pprof's `profile.proto` (gzip-compressed protobuf), the format
//! `go build -pgo=FILE` and `go tool pprof` read. The schema is
//! google/pprof's `proto/profile.proto`; only what a CPU profile needs is
//! written: sample types, samples, mappings, locations with their (inlined)
//! lines, functions with their start lines, the string table, the period
//! and comments. Protobuf's wire format is small enough to write by hand
//! (varints and length-delimited fields), so no protobuf crate is needed.

use std::collections::HashMap;
use std::io::Write as _;

/// One executable mapping: where a binary's code lies.
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    /// The address its code starts at, as the binary links it.
    pub start: u64,
    /// The first address past its code.
    pub limit: u64,
    /// The file offset `start` is read from.
    pub file_offset: u64,
    /// The binary's path.
    pub file: String,
}

/// One frame of a location: a function and a line in it. A location's
/// lines are innermost first; the last is the function the others were
/// inlined into (profile.proto's order).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Line {
    pub function: FunctionId,
    pub line: i64,
}

/// A function of the profile (an index into its function table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FunctionId(u64);

/// A location of the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocationId(u64);

/// A mapping of the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MappingId(u64);

struct Function {
    name: i64,
    file: i64,
    start_line: i64,
}

struct Location {
    mapping: MappingId,
    address: u64,
    lines: Vec<Line>,
}

/// A profile being built: strings, functions and identical stacks are
/// shared; [`Profile::encode`] writes it.
pub struct Profile {
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    sample_types: Vec<(i64, i64)>,
    period_type: (i64, i64),
    period: i64,
    comments: Vec<i64>,
    /// Each mapping, with its file name's string.
    mappings: Vec<(Mapping, i64)>,
    functions: Vec<Function>,
    function_ids: HashMap<(i64, i64, i64), FunctionId>,
    locations: Vec<Location>,
    samples: Vec<(Vec<LocationId>, Vec<i64>)>,
    sample_ids: HashMap<Vec<LocationId>, usize>,
}

impl Profile {
    /// An empty profile whose samples carry one value per `sample_types`
    /// entry (`(type, unit)`, e.g. `("samples", "count")`), taken every
    /// `period` of `period_type`.
    pub fn new(sample_types: &[(&str, &str)], period_type: (&str, &str), period: i64) -> Self {
        let mut profile = Profile {
            strings: Vec::new(),
            string_ids: HashMap::new(),
            sample_types: Vec::new(),
            period_type: (0, 0),
            period,
            comments: Vec::new(),
            mappings: Vec::new(),
            functions: Vec::new(),
            function_ids: HashMap::new(),
            locations: Vec::new(),
            samples: Vec::new(),
            sample_ids: HashMap::new(),
        };
        // profile.proto: "string_table[0] must always be """.
        profile.string("");
        profile.sample_types = sample_types
            .iter()
            .map(|(t, u)| (profile.string(t), profile.string(u)))
            .collect();
        profile.period_type = (profile.string(period_type.0), profile.string(period_type.1));
        profile
    }

    fn string(&mut self, text: &str) -> i64 {
        if let Some(id) = self.string_ids.get(text) {
            return *id;
        }
        let id = i64::try_from(self.strings.len()).unwrap_or(i64::MAX);
        self.strings.push(text.to_owned());
        self.string_ids.insert(text.to_owned(), id);
        id
    }

    /// A free-text comment (`go tool pprof -comments` shows it).
    pub fn comment(&mut self, text: &str) {
        let id = self.string(text);
        self.comments.push(id);
    }

    pub fn add_mapping(&mut self, mapping: Mapping) -> MappingId {
        let file = self.string(&mapping.file);
        self.mappings.push((mapping, file));
        MappingId(self.mappings.len() as u64)
    }

    /// The function named `name` defined in `file` from `start_line` on
    /// (one entry per distinct triple).
    pub fn function(&mut self, name: &str, file: &str, start_line: i64) -> FunctionId {
        let key = (self.string(name), self.string(file), start_line);
        if let Some(id) = self.function_ids.get(&key) {
            return *id;
        }
        self.functions.push(Function {
            name: key.0,
            file: key.1,
            start_line,
        });
        let id = FunctionId(self.functions.len() as u64);
        self.function_ids.insert(key, id);
        id
    }

    /// A location: an address of `mapping` and its frames, innermost first.
    pub fn add_location(
        &mut self,
        mapping: MappingId,
        address: u64,
        lines: Vec<Line>,
    ) -> LocationId {
        self.locations.push(Location {
            mapping,
            address,
            lines,
        });
        LocationId(self.locations.len() as u64)
    }

    /// Add `values` to the sample of this stack (leaf first); a stack seen
    /// before adds up.
    pub fn add_sample(&mut self, stack: Vec<LocationId>, values: &[i64]) {
        if let Some(&at) = self.sample_ids.get(&stack) {
            for (sum, v) in self.samples[at].1.iter_mut().zip(values) {
                *sum += v;
            }
            return;
        }
        self.sample_ids.insert(stack.clone(), self.samples.len());
        self.samples.push((stack, values.to_vec()));
    }

    /// How many distinct stacks it holds.
    pub fn stacks(&self) -> usize {
        self.samples.len()
    }

    /// The profile in protobuf's wire format (uncompressed).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for &(t, u) in &self.sample_types {
            message(&mut out, 1, &value_type(t, u));
        }
        for (stack, values) in &self.samples {
            let mut s = Vec::new();
            packed(&mut s, 1, stack.iter().map(|l| l.0));
            // int64 values: two's complement varints (profile.proto has no
            // zigzag here).
            packed(&mut s, 2, values.iter().map(|v| v.cast_unsigned()));
            message(&mut out, 2, &s);
        }
        for (i, (m, file)) in self.mappings.iter().enumerate() {
            message(&mut out, 3, &encode_mapping(i as u64 + 1, m, *file));
        }
        for (i, l) in self.locations.iter().enumerate() {
            let mut m = Vec::new();
            uint(&mut m, 1, i as u64 + 1);
            uint(&mut m, 2, l.mapping.0);
            uint(&mut m, 3, l.address);
            for line in &l.lines {
                let mut e = Vec::new();
                uint(&mut e, 1, line.function.0);
                int(&mut e, 2, line.line);
                message(&mut m, 4, &e);
            }
            message(&mut out, 4, &m);
        }
        for (i, f) in self.functions.iter().enumerate() {
            let mut m = Vec::new();
            uint(&mut m, 1, i as u64 + 1);
            int(&mut m, 2, f.name);
            int(&mut m, 3, f.name);
            int(&mut m, 4, f.file);
            int(&mut m, 5, f.start_line);
            message(&mut out, 5, &m);
        }
        for s in &self.strings {
            bytes(&mut out, 6, s.as_bytes());
        }
        message(
            &mut out,
            11,
            &value_type(self.period_type.0, self.period_type.1),
        );
        int(&mut out, 12, self.period);
        for c in &self.comments {
            int(&mut out, 13, *c);
        }
        out
    }

    /// The profile gzip-compressed, as pprof writes it.
    pub fn to_gzip(&self) -> std::io::Result<Vec<u8>> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&self.encode())?;
        encoder.finish()
    }
}

fn encode_mapping(id: u64, m: &Mapping, file: i64) -> Vec<u8> {
    let mut out = Vec::new();
    uint(&mut out, 1, id);
    uint(&mut out, 2, m.start);
    uint(&mut out, 3, m.limit);
    uint(&mut out, 4, m.file_offset);
    int(&mut out, 5, file);
    // has_functions, has_filenames, has_line_numbers, has_inline_frames:
    // symbolized here, so pprof does not try again.
    for field in 7..=10 {
        uint(&mut out, field, 1);
    }
    out
}

fn value_type(t: i64, u: i64) -> Vec<u8> {
    let mut out = Vec::new();
    int(&mut out, 1, t);
    int(&mut out, 2, u);
    out
}

/// A base-128 varint, low groups first.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    // Each byte keeps the low 7 bits: the truncating casts are the point.
    #[allow(clippy::cast_possible_truncation)]
    {
        while v >= 0x80 {
            out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
}

/// A field's key: its number and wire type (0 varint, 2 length-delimited).
fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

/// An int64 field: two's complement in a varint (profile.proto uses no
/// zigzag `sint64`).
fn int(out: &mut Vec<u8>, field: u32, v: i64) {
    uint(out, field, v.cast_unsigned());
}

/// A varint field; zero is protobuf's default and is left out.
fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        key(out, field, 0);
        varint(out, v);
    }
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    key(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn message(out: &mut Vec<u8>, field: u32, body: &[u8]) {
    bytes(out, field, body);
}

/// A repeated varint field, packed (one length-delimited run).
fn packed(out: &mut Vec<u8>, field: u32, values: impl Iterator<Item = u64>) {
    let mut body = Vec::new();
    for v in values {
        varint(&mut body, v);
    }
    if !body.is_empty() {
        bytes(out, field, &body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of protobuf's encoding guide
    /// (protobuf.dev/programming-guides/encoding): 150 in field 1 is
    /// `08 96 01`; the string "testing" in field 2 is `12 07 74 65 73 74 69
    /// 6e 67`; packed [3, 270, 86942] in field 4 is `22 06 03 8E 02 9E A7 05`.
    #[test]
    fn writes_protobufs_encoding_guide_examples() {
        let mut out = Vec::new();
        uint(&mut out, 1, 150);
        assert_eq!(out, [0x08, 0x96, 0x01]);
        let mut out = Vec::new();
        bytes(&mut out, 2, b"testing");
        assert_eq!(out, [0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67]);
        let mut out = Vec::new();
        packed(&mut out, 4, [3, 270, 86942].into_iter());
        assert_eq!(out, [0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05]);
        // A negative int64 is ten bytes of two's complement.
        let mut out = Vec::new();
        varint(&mut out, (-1i64).cast_unsigned());
        assert_eq!(out.len(), 10);
    }

    #[test]
    fn identical_stacks_add_up_and_strings_are_shared() {
        let mut p = Profile::new(&[("samples", "count")], ("cpu", "nanoseconds"), 10);
        let m = p.add_mapping(Mapping {
            file: "/bin/x".into(),
            ..Mapping::default()
        });
        let f = p.function("main.f", "/src/x.go", 3);
        assert_eq!(p.function("main.f", "/src/x.go", 3), f);
        let l = p.add_location(
            m,
            0x40,
            vec![Line {
                function: f,
                line: 5,
            }],
        );
        p.add_sample(vec![l], &[1]);
        p.add_sample(vec![l], &[2]);
        assert_eq!(p.stacks(), 1);
        assert_eq!(p.samples[0].1, [3]);
        assert_eq!(p.strings[0], "");
        let encoded = p.encode();
        // The string table holds each name once.
        let text = String::from_utf8_lossy(&encoded);
        assert_eq!(text.matches("main.f").count(), 1);
    }
}
