//! Unknown fields. prost drops fields its schema does not know, so a model that holds any
//! cannot be written back whole; the wire format is walked once at load to say where.

use super::load::{all_fields, fields};
use crate::onnx::fields::{field, Known, Msg};

/// How many places [`unknown_fields`] names before it only counts.
pub(super) const MAX_LOSSY: usize = 20;

/// Where `bytes` (an encoded `ModelProto`) holds fields the schema does not know, and how deep
/// its messages nest.
pub(super) fn unknown_fields(bytes: &[u8]) -> (Vec<String>, usize) {
    let mut w = Walk { out: Vec::new(), count: 0, deepest: 0, path: Vec::new() };
    w.walk(bytes, Msg::ModelProto, 0);
    if w.count > MAX_LOSSY {
        let more = w.count - MAX_LOSSY;
        w.out.push(format!("and {more} more"));
    }
    (w.out, w.deepest)
}

/// The varint at `pos`, moving `pos` past it; `None` where prost's reader fails too (the
/// buffer ends, or a tenth byte takes it past 64 bits). The loader's and the walk's one reader:
/// small enough to inline into their loops, where a call to prost's took 7% of a `check`.
#[inline(always)]
pub(super) fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if i == 9 && b > 1 {
            return None;
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Skips the rest of a group whose start key was just read, nested groups included, up to
/// and past its end key (counted, not recursed: nesting comes from the file).
pub(super) fn skip_group(buf: &[u8], pos: &mut usize) -> Option<()> {
    let mut open = 1usize;
    while open > 0 {
        match varint(buf, pos)? & 7 {
            0 => {
                varint(buf, pos)?;
            }
            1 => *pos = pos.checked_add(8).filter(|p| *p <= buf.len())?,
            2 => {
                let len = usize::try_from(varint(buf, pos)?).ok()?;
                *pos = pos.checked_add(len).filter(|p| *p <= buf.len())?;
            }
            3 => open += 1,
            4 => open -= 1,
            5 => *pos = pos.checked_add(4).filter(|p| *p <= buf.len())?,
            _ => return None,
        }
    }
    Some(())
}

/// How deep the unknown-field walk descends; deeper messages are noted as unchecked.
pub(super) const WALK_DEPTH: usize = 200;

/// True when the encoded `NodeProto` in `buf` holds only well-formed length-delimited scalar
/// fields the schema knows (inputs, outputs, name, op type, doc string, domain, overload): most
/// nodes, and nothing in them for the walk to note or descend into.
pub(super) fn plain_node(buf: &[u8]) -> bool {
    fields(buf).all(|f| {
        f.is_ok_and(|f| f.wire == 2 && matches!(field(Msg::NodeProto, u64::from(f.number)), Some(Known::Scalar)))
    })
}

/// The state of the unknown-field walk. The path to the current message is kept as a stack
/// of (field name, index) and rendered only when something is noted.
pub(super) struct Walk {
    out: Vec<String>,
    count: usize,
    deepest: usize,
    path: Vec<(&'static str, Option<usize>)>,
}

impl Walk {
    fn note(&mut self, what: std::fmt::Arguments) {
        self.count += 1;
        if self.out.len() < MAX_LOSSY {
            let mut text = String::from("model");
            for (name, index) in &self.path {
                text.push('.');
                text.push_str(name);
                if let Some(i) = index {
                    text.push_str(&format!("[{i}]"));
                }
            }
            self.out.push(format!("{text}: {what}"));
        }
    }

    fn walk(&mut self, buf: &[u8], msg: Msg, depth: usize) {
        self.deepest = self.deepest.max(depth);
        if depth > WALK_DEPTH {
            self.note(format_args!("nested too deep to check"));
            return;
        }
        // How many of each repeated message field came before, to name the index; a message
        // has few such fields.
        let mut seen: Vec<(u64, usize)> = Vec::new();
        for f in all_fields(buf) {
            let Ok(f) = f else {
                self.note(format_args!("malformed field"));
                return;
            };
            let number = u64::from(f.number);
            match field(msg, number) {
                None => self.note(format_args!("unknown field {number}")),
                Some(Known::Msg(name, sub, repeated)) if f.wire == 2 => {
                    let body = f.payload;
                    let index = repeated.then(|| match seen.iter_mut().find(|(n, _)| *n == number) {
                        Some((_, i)) => {
                            *i += 1;
                            *i
                        }
                        None => {
                            seen.push((number, 0));
                            0
                        }
                    });
                    if matches!(sub, Msg::NodeProto) && depth < WALK_DEPTH && plain_node(body) {
                        // Nothing inside to note or descend into: only how deep it lies.
                        self.deepest = self.deepest.max(depth + 1);
                        continue;
                    }
                    self.path.push((name, index));
                    self.walk(body, sub, depth + 1);
                    self.path.pop();
                }
                Some(_) => {}
            }
        }
    }
}
