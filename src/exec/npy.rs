//! numpy's `.npy` format (versions 1-3), read and written by hand: the header is a small
//! Python dict literal, the body the elements in C order. Bodies stream through a fixed-size
//! buffer, so reading or writing a tensor costs its own size and no second copy.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use half::{bf16, f16};

use super::tensor::{numel, Data, HostTensor, STRING_HEADER};
use crate::diag::Error;
use crate::dtype::DType;

const MAGIC: &[u8] = b"\x93NUMPY";
const CHUNK: usize = 1 << 16;

/// The element layout a `descr` names.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Descr {
    /// A fixed-size type; `big` for big-endian data.
    Num { dtype: DType, big: bool },
    /// `|S<n>`: byte strings of `n` bytes, NUL-padded.
    Bytes(usize),
    /// `<U<n>`: UTF-32 strings of `n` code points, NUL-padded.
    Unicode { chars: usize, big: bool },
}

fn parse_descr(d: &str) -> Option<Descr> {
    let (order, rest) = d.split_at(1.min(d.len()));
    let big = match order {
        "<" | "|" | "=" => false,
        ">" => true,
        _ => return None,
    };
    if let Some(n) = rest.strip_prefix('S') {
        return n.parse().ok().map(Descr::Bytes);
    }
    if let Some(n) = rest.strip_prefix('U') {
        return n.parse().ok().map(|chars| Descr::Unicode { chars, big });
    }
    let dtype = match rest {
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        "i1" => DType::I8,
        "i2" => DType::I16,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u1" => DType::U8,
        "u2" => DType::U16,
        "u4" => DType::U32,
        "u8" => DType::U64,
        "b1" => DType::Bool,
        _ => return None,
    };
    Some(Descr::Num { dtype, big })
}

/// The value of `'key':` in a header dict, up to the next top-level comma or brace.
fn header_field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'")).or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = header[at + key.len() + 2..].trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                if depth == 0 {
                    return Some(rest[..i].trim());
                }
                depth -= 1;
                if depth == 0 {
                    return Some(rest[..=i].trim());
                }
            }
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

/// Reads a `.npy` file; the element count is checked against `budget` bytes before the body is
/// allocated.
pub fn read(path: &Path, budget: u64) -> Result<HostTensor, Error> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let bad = |reason: String| Error::Tensor { tensor: path.display().to_string(), reason };
    let file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(|_| bad("not a .npy file (too short)".into()))?;
    if &magic[..6] != MAGIC {
        return Err(bad("not a .npy file (no \\x93NUMPY magic)".into()));
    }
    // The header length: a little-endian u16 in version 1, u32 from version 2.
    let width = match magic[6] {
        1 => 2,
        2 | 3 => 4,
        v => return Err(bad(format!(".npy version {v} is not supported"))),
    };
    let mut b = [0u8; 4];
    r.read_exact(&mut b[..width]).map_err(io)?;
    let header_len = u32::from_le_bytes(b) as usize;
    if header_len as u64 > file_len {
        return Err(bad(format!("header length {header_len} is past the end of the file")));
    }
    let mut header = vec![0u8; header_len];
    r.read_exact(&mut header).map_err(io)?;
    let header = String::from_utf8_lossy(&header).into_owned();
    let descr = header_field(&header, "descr").ok_or_else(|| bad(format!("no 'descr' in header {header}")))?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let layout = parse_descr(descr).ok_or_else(|| bad(format!("element type '{descr}' is not supported")))?;
    if header_field(&header, "fortran_order").is_some_and(|v| v == "True") {
        return Err(bad("Fortran-order arrays are not supported; save with np.ascontiguousarray".into()));
    }
    let shape_text = header_field(&header, "shape").ok_or_else(|| bad(format!("no 'shape' in header {header}")))?;
    let shape: Vec<usize> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad(format!("shape {shape_text} is not a tuple of sizes")))?;
    let n = numel(&shape).ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
    let item = match layout {
        Descr::Num { dtype, .. } => dtype.size().unwrap_or(1),
        Descr::Bytes(w) => w,
        Descr::Unicode { chars, .. } => chars.saturating_mul(4),
    };
    let body = n as u128 * item as u128;
    // What the elements hold in memory: each string is a vector besides its bytes (as
    // `HostTensor::bytes` counts them). Counted by the file's width alone, 2^63 strings of
    // width 0 passed the budget and overflowed a vector's capacity.
    let held = match layout {
        Descr::Num { .. } => body,
        Descr::Bytes(_) | Descr::Unicode { .. } => n as u128 * (item as u128 + STRING_HEADER),
    };
    if held > budget as u128 || held > isize::MAX as u128 {
        return Err(Error::Budget { what: format!("input {}", path.display()), bytes: held, budget });
    }
    if body > file_len as u128 {
        return Err(bad(format!("shape {shape:?} needs {body} bytes, the file has {file_len}")));
    }
    let data = read_body(&mut r, layout, n, item).map_err(|e| bad(format!("truncated body: {e}")))?;
    HostTensor::new(shape, data).map_err(|e| bad(e.to_string()))
}

/// Reads `n` elements through a fixed buffer, converting each chunk.
fn read_body(r: &mut impl Read, layout: Descr, n: usize, item: usize) -> std::io::Result<Data> {
    fn stream<T>(r: &mut impl Read, n: usize, w: usize, f: impl Fn(&[u8]) -> T) -> std::io::Result<Vec<T>> {
        let mut out = Vec::with_capacity(n);
        let mut buf = vec![0u8; CHUNK * w.max(1)];
        let mut left = n;
        while left > 0 {
            let k = left.min(CHUNK);
            let b = &mut buf[..k * w];
            r.read_exact(b)?;
            out.extend(b.chunks_exact(w.max(1)).map(&f));
            left -= k;
        }
        Ok(out)
    }
    macro_rules! num {
        ($t:ty, $variant:ident, $big:expr) => {{
            const W: usize = std::mem::size_of::<$t>();
            let big = $big;
            Data::$variant(stream(r, n, W, |c| {
                let a: [u8; W] = c.try_into().unwrap_or([0; W]);
                if big {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            })?)
        }};
    }
    Ok(match layout {
        Descr::Num { dtype, big } => match dtype {
            DType::F16 => num!(f16, F16, big),
            DType::F32 => num!(f32, F32, big),
            DType::F64 => num!(f64, F64, big),
            DType::I8 => num!(i8, I8, big),
            DType::I16 => num!(i16, I16, big),
            DType::I32 => num!(i32, I32, big),
            DType::I64 => num!(i64, I64, big),
            DType::U8 => num!(u8, U8, big),
            DType::U16 => num!(u16, U16, big),
            DType::U32 => num!(u32, U32, big),
            DType::U64 => num!(u64, U64, big),
            _ => Data::Bool(stream(r, n, 1, |c| c[0] != 0)?),
        },
        Descr::Bytes(w) => {
            if w == 0 {
                Data::Str(vec![Vec::new(); n])
            } else {
                Data::Str(stream(r, n, w, |c| {
                    let end = c.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
                    c[..end].to_vec()
                })?)
            }
        }
        Descr::Unicode { big, .. } => {
            if item == 0 {
                Data::Str(vec![Vec::new(); n])
            } else {
                Data::Str(stream(r, n, item, |c| {
                    let s: String = c
                        .chunks_exact(4)
                        .map(|u| {
                            let a = [u[0], u[1], u[2], u[3]];
                            if big {
                                u32::from_be_bytes(a)
                            } else {
                                u32::from_le_bytes(a)
                            }
                        })
                        .take_while(|u| *u != 0)
                        .map(|u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
                        .collect();
                    s.into_bytes()
                })?)
            }
        }
    })
}

/// The `descr` written for a tensor. bfloat16 has no numpy type and is written as float32
/// (a lossless widening).
fn descr_of(data: &Data) -> String {
    match data {
        Data::F16(_) => "<f2".into(),
        Data::BF16(_) | Data::F32(_) => "<f4".into(),
        Data::F64(_) => "<f8".into(),
        Data::I8(_) => "|i1".into(),
        Data::I16(_) => "<i2".into(),
        Data::I32(_) => "<i4".into(),
        Data::I64(_) => "<i8".into(),
        Data::U8(_) => "|u1".into(),
        Data::U16(_) => "<u2".into(),
        Data::U32(_) => "<u4".into(),
        Data::U64(_) => "<u8".into(),
        Data::Bool(_) => "|b1".into(),
        Data::Str(v) => {
            let chars = v.iter().map(|s| String::from_utf8_lossy(s).chars().count()).max().unwrap_or(0);
            format!("<U{}", chars.max(1))
        }
    }
}

/// Writes `t` as a version 1 `.npy` file through a temporary file and a rename.
pub fn write(path: &Path, t: &HostTensor) -> Result<(), Error> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let shape = match t.shape.as_slice() {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        many => format!("({})", many.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", descr_of(&t.data));
    // The magic, version and length take 10 bytes; the header ends in '\n' at a multiple of 64.
    let total = (10 + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(total - 10 - header.len() - 1));
    header.push('\n');
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        w.write_all(MAGIC)?;
        w.write_all(&[1, 0])?;
        w.write_all(&(header.len() as u16).to_le_bytes())?;
        w.write_all(header.as_bytes())?;
        write_body(&mut w, &t.data)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

fn write_body(w: &mut impl Write, data: &Data) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK * 8);
    macro_rules! enc {
        ($v:expr, $f:expr) => {{
            for chunk in $v.chunks(CHUNK) {
                buf.clear();
                for x in chunk {
                    buf.extend_from_slice(&$f(x));
                }
                w.write_all(&buf)?;
            }
        }};
    }
    match data {
        Data::F16(v) => enc!(v, |x: &f16| x.to_le_bytes()),
        Data::BF16(v) => enc!(v, |x: &bf16| x.to_f32().to_le_bytes()),
        Data::F32(v) => enc!(v, |x: &f32| x.to_le_bytes()),
        Data::F64(v) => enc!(v, |x: &f64| x.to_le_bytes()),
        Data::I8(v) => enc!(v, |x: &i8| x.to_le_bytes()),
        Data::I16(v) => enc!(v, |x: &i16| x.to_le_bytes()),
        Data::I32(v) => enc!(v, |x: &i32| x.to_le_bytes()),
        Data::I64(v) => enc!(v, |x: &i64| x.to_le_bytes()),
        Data::U8(v) => w.write_all(v)?,
        Data::U16(v) => enc!(v, |x: &u16| x.to_le_bytes()),
        Data::U32(v) => enc!(v, |x: &u32| x.to_le_bytes()),
        Data::U64(v) => enc!(v, |x: &u64| x.to_le_bytes()),
        Data::Bool(v) => enc!(v, |x: &bool| [*x as u8]),
        Data::Str(v) => {
            let chars = v.iter().map(|s| String::from_utf8_lossy(s).chars().count()).max().unwrap_or(0).max(1);
            for s in v {
                let text = String::from_utf8_lossy(s);
                let mut n = 0;
                for c in text.chars() {
                    w.write_all(&(c as u32).to_le_bytes())?;
                    n += 1;
                }
                for _ in n..chars {
                    w.write_all(&[0; 4])?;
                }
            }
        }
    }
    Ok(())
}

/// Reads an input file: `.npy`, or anything else as a serialized ONNX `TensorProto` (`.pb`).
pub fn read_input(path: &Path, budget: u64) -> Result<HostTensor, Error> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")) {
        return read(path, budget);
    }
    let t = crate::io::read_tensor(path)?;
    super::tensor::from_ir(&t, None, budget).map_err(|f| f.into_error(&path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields() {
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        assert_eq!(header_field(h, "descr"), Some("'<f4'"));
        assert_eq!(header_field(h, "fortran_order"), Some("False"));
        assert_eq!(header_field(h, "shape"), Some("(2, 3)"));
        let h = "{'descr': '|b1', 'shape': (), 'fortran_order': False}";
        assert_eq!(header_field(h, "shape"), Some("()"));
        assert_eq!(header_field(h, "fortran_order"), Some("False"));
    }

    #[test]
    fn round_trip_every_type() {
        let dir = std::env::temp_dir().join(format!("onnx-bcast-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            HostTensor::from_vec(vec![2, 2], vec![1.5f32, -2.0, f32::NAN, 0.0]).unwrap(),
            HostTensor::from_vec(vec![3], vec![f16::from_f32(0.5), f16::ONE, f16::NEG_INFINITY]).unwrap(),
            HostTensor::from_vec(vec![], vec![-7i64]).unwrap(),
            HostTensor::from_vec(vec![2], vec![u64::MAX, 3]).unwrap(),
            HostTensor::from_vec(vec![1, 3], vec![true, false, true]).unwrap(),
            HostTensor::from_vec(vec![2], vec![b"ab".to_vec(), "\u{e9}".as_bytes().to_vec()]).unwrap(),
            HostTensor::from_vec(vec![0, 4], Vec::<i8>::new()).unwrap(),
        ];
        for (i, t) in cases.iter().enumerate() {
            let p = dir.join(format!("t{i}.npy"));
            write(&p, t).unwrap();
            let back = read(&p, u64::MAX).unwrap();
            assert_eq!(back.shape, t.shape, "case {i}");
            match (&*back.data, &*t.data) {
                (Data::F32(a), Data::F32(b)) => {
                    assert!(a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()))
                }
                (a, b) => assert_eq!(a, b, "case {i}"),
            }
        }
        let p = dir.join("t0.npy");
        assert!(matches!(read(&p, 4), Err(Error::Budget { .. })));
        // Strings of width 0 take no bytes in the file but a vector each in memory: 2^62 of
        // them overflowed a vector's capacity (a panic), 2^20 are 24 MiB.
        for (descr, n, budget, fits) in [
            ("|S0", 1u64 << 62, 4u64 << 30, false),
            ("<U0", 1 << 62, u64::MAX, false),
            ("|S0", 1 << 59, u64::MAX, false),
            ("|S0", 1 << 20, 16 << 20, false),
            ("<U0", 1 << 20, 32 << 20, true),
        ] {
            let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}\n");
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend((header.len() as u16).to_le_bytes());
            bytes.extend(header.as_bytes());
            let p = dir.join("empty_strings.npy");
            std::fs::write(&p, bytes).unwrap();
            match read(&p, budget) {
                Ok(t) => assert!(fits && t.shape == [n as usize], "{descr} x {n}: {:?}", t.shape),
                Err(Error::Budget { bytes, .. }) => assert!(!fits && bytes == u128::from(n) * 24, "{descr} x {n}"),
                Err(e) => panic!("{descr} x {n}: {e}"),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
