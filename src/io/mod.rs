//! `ModelProto` <-> IR, tensor files and external data. The only module besides `onnx.rs`
//! that names prost types.
//!
//! Loading keeps every field: what the IR interprets is copied out, and the rest of each
//! message stays encoded in the entity's `Opaque` carry (empty for a node that holds nothing
//! else). Saving decodes the carry and writes back only what the IR holds differently, so
//! `save(load(m))` decodes equal to `m`. For speed the graph is read field by field from the
//! wire and nodes and value infos are written straight to the output, in prost's field order:
//! the bytes are those prost would write (tests/it/wire.rs).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use prost::Message;

use crate::diag::{Error, Result};
use crate::dtype::DType;
use crate::ir::{
    AttrValue, Attribute, Def, Graph, GraphId, Model, Name, Node, NodeId, Opaque, Opset, Slots, Spellings, Tensor,
    TensorData, ValueId, ValueInfo,
};
use crate::onnx;

/// The ONNX protobuf messages (prost types of the vendored `onnx.proto`), for callers that
/// hold a `ModelProto` already or build one: [`encode`] and [`decode`] go between them and
/// the IR through bytes.
pub mod proto {
    pub use crate::onnx::*;
}
use crate::shape::{Dim, Term, Type};

/// Protobuf's hard limit on one message.
pub const MAX_MESSAGE: u64 = 2 * 1024 * 1024 * 1024 - 1;

/// How deep subgraphs may nest (onnxruntime's limit too).
pub const MAX_DEPTH: usize = 32;

/// Resource limits of loading. [`Limits::default`] holds the documented defaults;
/// [`Limits::from_env`] lets `ONNX_BCAST_MAX_BYTES` and `ONNX_BCAST_MAX_DEPTH` lower or raise
/// them (the file size never above protobuf's 2 GiB, [`MAX_MESSAGE`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest model file read, in bytes.
    pub max_bytes: u64,
    /// How deep subgraphs may nest below the main graph.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_bytes: MAX_MESSAGE, max_depth: MAX_DEPTH }
    }
}

impl Limits {
    /// The defaults, changed by `ONNX_BCAST_MAX_BYTES` and `ONNX_BCAST_MAX_DEPTH` when set.
    pub fn from_env() -> Result<Limits> {
        let get = |name: &str| -> Result<Option<u64>> {
            let Ok(v) = std::env::var(name) else { return Ok(None) };
            v.trim().parse().map(Some).map_err(|_| Error::Usage(format!("{name}='{v}' is not a non-negative integer")))
        };
        Ok(Limits {
            max_bytes: get("ONNX_BCAST_MAX_BYTES")?.map_or(MAX_MESSAGE, |b| b.min(MAX_MESSAGE)),
            max_depth: get("ONNX_BCAST_MAX_DEPTH")?.map_or(MAX_DEPTH, |d| usize::try_from(d).unwrap_or(usize::MAX)),
        })
    }
}

/// Reads and loads the model at `path`, within [`Limits::from_env`].
///
/// ```
/// let model = onnx_bcast::io::load("models/nary_sum.onnx".as_ref())?;
/// assert_eq!(model.graph(onnx_bcast::Model::MAIN).inputs.len(), 4);
/// // A missing file, or one that is not ONNX, is an error naming the file.
/// let e = onnx_bcast::io::load("models/none.onnx".as_ref()).unwrap_err();
/// assert!(e.to_string().starts_with("models/none.onnx: "));
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
pub fn load(path: &Path) -> Result<Model> {
    load_with(path, &Limits::from_env()?)
}

/// Reads and loads the model at `path` within `limits`.
pub fn load_with(path: &Path, limits: &Limits) -> Result<Model> {
    let bytes = read_limited(path, limits.max_bytes)?;
    let dir = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    decode_with(&bytes, path, dir, limits)
}

/// Loads a model from its encoded bytes; `path` names it in errors and `dir` is where its
/// external data lives.
pub fn decode(bytes: &[u8], path: &Path, dir: Option<&Path>) -> Result<Model> {
    decode_with(bytes, path, dir, &Limits::default())
}

/// [`decode`] within `limits`.
pub fn decode_with(bytes: &[u8], path: &Path, dir: Option<&Path>, limits: &Limits) -> Result<Model> {
    if bytes.len() as u64 > limits.max_bytes {
        return Err(Error::TooLarge { path: path.to_path_buf(), size: bytes.len() as u64, limit: limits.max_bytes });
    }
    // The unknown-field walk and the wire-level loader read the same bytes and nothing of
    // each other's, so a large model's walk runs on a second thread. The loader's result is
    // only used when the walk finds the nesting shallow enough for it; it starts before that is
    // known only when its own depth limit keeps its recursion as shallow.
    let (lossy, depth, fast) = if bytes.len() >= PARALLEL_WALK && limits.max_depth <= FAST_DEPTH {
        std::thread::scope(|s| {
            let walk = std::thread::Builder::new().spawn_scoped(s, || unknown_fields(bytes));
            let fast = from_wire(bytes, path, dir, limits);
            let (lossy, depth) = match walk {
                Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Err(_) => unknown_fields(bytes),
            };
            (lossy, depth, Some(fast))
        })
    } else {
        let (lossy, depth) = unknown_fields(bytes);
        (lossy, depth, None)
    };
    let fast =
        if depth <= FAST_DEPTH { Some(fast.unwrap_or_else(|| from_wire(bytes, path, dir, limits))) } else { None };
    let mut model = load_bytes(bytes, path, dir, limits, fast)?;
    model.lossy = lossy;
    Ok(model)
}

/// Models of at least this many bytes have their unknown-field walk run on a second thread
/// (about a millisecond per megabyte; a thread starts in tens of microseconds).
const PARALLEL_WALK: usize = 1 << 20;

/// prost's decode error, short: it names every enclosing message, which for a nesting bomb
/// is a hundred of them.
fn decode_reason(e: &prost::DecodeError) -> String {
    let text = e.to_string();
    if text.contains("recursion limit reached") {
        return "messages nest deeper than protobuf's recursion limit of 100 (a subgraph or type nesting bomb?)".into();
    }
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 300 {
        return text;
    }
    let head: String = chars[..120].iter().collect();
    let tail: String = chars[chars.len() - 120..].iter().collect();
    format!("{head} ... {tail}")
}

fn read_limited(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let meta = fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(Error::Decode { path: path.to_path_buf(), reason: "is a directory".into() });
    }
    if !meta.is_file() {
        // A pipe or device could block or never end.
        return Err(Error::Decode { path: path.to_path_buf(), reason: "not a regular file".into() });
    }
    if meta.len() > max_bytes {
        return Err(Error::TooLarge { path: path.to_path_buf(), size: meta.len(), limit: max_bytes });
    }
    // Read at most one byte past the limit, so a file that grows (or a device that reports no
    // size) cannot make us read without end.
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    let f = fs::File::open(path).map_err(io)?;
    f.take(max_bytes.saturating_add(1)).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > max_bytes {
        return Err(Error::TooLarge { path: path.to_path_buf(), size: buf.len() as u64, limit: max_bytes });
    }
    Ok(buf)
}

/// Encodes the model: the bytes prost would write for the `ModelProto` the IR stands for,
/// written directly (nodes and value infos without a carry never become prost messages).
pub fn encode(model: &Model) -> Vec<u8> {
    encode_parts(model).concat()
}

/// The encoded model in parts, to be written one after the other: the model's fields before
/// its graph with the graph's key and length, the graph in two parts (nodes to the first
/// value infos, then the other value infos and the rest: a large graph's two are encoded at
/// once on two threads), and the fields after it. A large graph is never moved to make room
/// for its length prefix.
fn encode_parts(model: &Model) -> [Vec<u8>; 4] {
    let mut p = model_head(model);
    // prost writes fields in tag order: those numbered below `graph` (7), the graph, then the
    // rest, which `p` keeps.
    let head = onnx::ModelProto {
        ir_version: p.ir_version.take(),
        producer_name: p.producer_name.take(),
        producer_version: p.producer_version.take(),
        domain: p.domain.take(),
        model_version: p.model_version.take(),
        doc_string: p.doc_string.take(),
        ..Default::default()
    };
    let g = model.graph(Model::MAIN);
    let infos = g.value_info.as_slice();
    let parallel = g.order.len().saturating_add(infos.len()) >= PARALLEL_ENCODE && infos.len() >= PARALLEL_ENCODE / 2;
    // Split so that both threads take about as long: a node encodes in about NODE_COST /
    // INFO_COST of the time of a value info with a shape.
    let split = if parallel {
        let work = infos.len().saturating_mul(INFO_COST).saturating_sub(g.order.len().saturating_mul(NODE_COST));
        (work / (2 * INFO_COST)).min(infos.len())
    } else {
        infos.len()
    };
    let front_hint = size_hint(model, Model::MAIN);
    let (front, rest) = graph_carry(model, Model::MAIN);
    // Both buffers are taken here, from this thread's heap (which the CLI has faulted in
    // ahead). Only hints: when a reservation fails the buffer grows as it is written.
    let mut a = Vec::new();
    let _ = a.try_reserve(front_hint.saturating_add(INFO_HINT.saturating_mul(split)));
    let mut b = Vec::new();
    let _ = b.try_reserve(INFO_HINT.saturating_mul(infos.len() - split));
    let encode_a = move |mut out: Vec<u8>| {
        graph_front(model, Model::MAIN, front, &mut out);
        value_infos(model, &infos[..split], &mut out);
        out
    };
    let encode_b = |mut out: Vec<u8>| {
        value_infos(model, &infos[split..], &mut out);
        rest.encode_raw(&mut out);
        out
    };
    let (a, b) = if parallel {
        std::thread::scope(|s| {
            let started = std::thread::Builder::new().spawn_scoped(s, move || encode_b(b));
            let a = encode_a(a);
            // The thread only fails to start when the system is out of threads: then this
            // one encodes the second part too.
            let b = match started {
                Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Err(_) => encode_b(Vec::new()),
            };
            (a, b)
        })
    } else {
        (encode_a(a), encode_b(b))
    };
    let mut first = Vec::new();
    head.encode_raw(&mut first);
    put_len_prefix(&mut first, crate::onnx::fields::number::model_proto::GRAPH, a.len() + b.len());
    let mut last = Vec::new();
    p.encode_raw(&mut last);
    [first, a, b, last]
}

/// Relative costs of encoding a node and a value info, from profiles of `annotate` on
/// generated chains of a million nodes (43 and 95 ms on one thread).
const NODE_COST: usize = 2;
const INFO_COST: usize = 5;

/// About how many bytes graph `id`'s [`graph_front`] encodes to, as a capacity: growing a
/// buffer of hundreds of megabytes copies it, while reserving more than is written costs
/// address space only. Every term is proportional to memory the model already holds.
fn size_hint(model: &Model, id: GraphId) -> usize {
    let g = model.graph(id);
    let data: usize = g
        .initializers
        .iter()
        .map(|t| match &t.data {
            TensorData::Raw(b) => b.len(),
            TensorData::Floats(v) => v.len() * 4,
            TensorData::Int32s(v) => v.len() * 5,
            TensorData::Int64s(v) => v.len() * 10,
            TensorData::Doubles(v) => v.len() * 8,
            TensorData::Uint64s(v) => v.len() * 10,
            TensorData::Strings(v) => v.iter().map(|s| s.len() + 2).sum(),
            TensorData::External { .. } | TensorData::Empty => 0,
        })
        .fold(0, usize::saturating_add);
    let entries = g.inputs.len() + g.outputs.len();
    g.order.len().saturating_mul(128).saturating_add(entries.saturating_mul(INFO_HINT)).saturating_add(data)
}

/// About how many bytes a value info encodes to, as a capacity (see [`size_hint`]).
const INFO_HINT: usize = 96;

/// Graphs with at least this many nodes and value infos together, and at least half this many
/// value infos, encode on two threads (each part then takes tens of milliseconds; a thread
/// starts in tens of microseconds).
const PARALLEL_ENCODE: usize = 50_000;

/// Writes the model to `path` atomically: a temporary file in the same folder, then a rename,
/// so a failed write leaves any old file intact. Use [`save_checked`] for models read from
/// files a user gave: it refuses to lose data or overwrite the input.
///
/// ```
/// let model = onnx_bcast::io::load("models/nary_sum.onnx".as_ref())?;
/// let dir = std::env::temp_dir().join(format!("onnx-bcast-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// onnx_bcast::io::save(&model, &dir.join("copy.onnx"))?;
/// // A model read and saved unchanged is the same bytes.
/// assert_eq!(std::fs::read(dir.join("copy.onnx")).unwrap(), std::fs::read("models/nary_sum.onnx").unwrap());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
pub fn save(model: &Model, path: &Path) -> Result<()> {
    let parts = encode_parts(model);
    write_atomic_with(path, |f| write_parts(f, &parts.each_ref().map(Vec::as_slice)))
}

/// The model files `paths` name: each file as given, and for each folder the `*.onnx` files
/// below it, sorted (links to folders are not followed). A folder without a model is an error.
pub fn model_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut stack = vec![path.clone()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
            for e in entries {
                let e = e.map_err(|source| Error::Io { path: dir.clone(), source })?;
                let p = e.path();
                // Symbolic links to folders are not followed: a link loop would never end.
                let is_link = e.file_type().map(|t| t.is_symlink()).unwrap_or(false);
                if p.is_dir() && !is_link {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "onnx") {
                    found.push(p);
                }
            }
        }
        // A directory that holds no model is a mistake (a wrong path), not a clean bill of health.
        if found.is_empty() {
            return Err(Error::NoModels { path: path.clone() });
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// [`encode`], but refusing (like [`save_checked`]) a model that would lose data unless
/// `allow_lossy`; `name` stands for the model in the error.
pub fn encode_checked(model: &Model, allow_lossy: bool, name: &Path) -> Result<Vec<u8>> {
    refuse_lossy(model, allow_lossy, name)?;
    Ok(encode(model))
}

/// The error for writing `model` to `path` when it holds data this build cannot write back,
/// unless `allow_lossy`.
fn refuse_lossy(model: &Model, allow_lossy: bool, path: &Path) -> Result<()> {
    match model.lossy.is_empty() || allow_lossy {
        true => Ok(()),
        false => Err(Error::Lossy { path: path.to_path_buf(), places: model.lossy.clone() }),
    }
}

/// What [`save_checked`] may do.
#[derive(Clone, Copy, Debug, Default)]
pub struct SaveOptions<'a> {
    /// Write even when the model holds data this build cannot write back ([`Model::lossy`];
    /// the CLI's `--allow-lossy`).
    pub allow_lossy: bool,
    /// Allow the output to be the input file (the CLI's `--in-place`).
    pub in_place: bool,
    /// The file the model was read from.
    pub input: Option<&'a Path>,
}

/// Saves a rewritten model like [`save`], but first refuses (an error, exit 2) to write a
/// model that would lose data (unknown protobuf fields) unless `allow_lossy`, and to replace
/// the input file (the same path, or another link to the same file) unless `in_place`.
pub fn save_checked(model: &Model, path: &Path, options: &SaveOptions) -> Result<()> {
    refuse_lossy(model, options.allow_lossy, path)?;
    if !options.in_place && options.input.is_some_and(|input| same_file(input, path)) {
        return Err(Error::WouldOverwrite { path: path.to_path_buf() });
    }
    copy_external_data(model, path)?;
    save(model, path)
}

/// Copies the files the model's external tensors live in next to `path` when it is written to
/// another folder, so the written model never points at data that is not beside it. Each file
/// is checked as reading it would be (inside the model's folder, no links) and written
/// through a temporary file and a rename, before the model itself.
fn copy_external_data(model: &Model, path: &Path) -> Result<()> {
    let from = model.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let to = folder(path);
    // The same folder first: two system calls, where finding the external tensors reads every
    // node (8 ms at a million).
    if matches!((fs::canonicalize(&from), fs::canonicalize(&to)), (Ok(a), Ok(b)) if a == b) {
        return Ok(());
    }
    let mut tensors: Vec<&crate::ir::Tensor> = model.graphs.iter().flat_map(|g| &g.initializers).collect();
    tensors.extend(model.nodes.node_weights().flat_map(|n| &n.attrs).flat_map(|a| a.tensors()));
    let mut external: Vec<(&str, &str)> = tensors
        .into_iter()
        .filter_map(|t| match &t.data {
            TensorData::External { location, .. } => Some((t.name.as_str(), location.as_str())),
            _ => None,
        })
        .collect();
    if external.is_empty() {
        return Ok(());
    }
    external.sort_by_key(|(_, location)| *location);
    external.dedup_by_key(|(_, location)| *location);
    for (tensor, location) in external {
        // The same checks as a read of the whole file (an empty read at offset 0).
        read_external(&from, tensor, location, 0, Some(0))?;
        let target = to.join(location);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_path_buf(), source })?;
        }
        let mut source =
            fs::File::open(from.join(location)).map_err(|source| Error::Io { path: from.join(location), source })?;
        write_atomic_with(&target, |f| std::io::copy(&mut source, f).map(|_| ()))?;
    }
    Ok(())
}

/// True when `a` and `b` name the same file: the same path after resolving links, or (on
/// Unix) the same device and inode.
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) else {
        // One of them does not exist (the output is usually new): only equal paths clash.
        return a == b;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if ma.dev() == mb.dev() && ma.ino() == mb.ino() {
            return true;
        }
    }
    let _ = (ma, mb);
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The folder `path` is in (`.` for a bare file name).
fn folder(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename. The temporary file is
/// created new (never through an existing file or link) next to `path`, and removed when
/// anything fails, so a failed write leaves any old file at `path` intact.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| write_parts(f, &[bytes]))
}

/// Writes `parts`, one after the other, to the new empty file `f`.
fn write_parts(f: &mut fs::File, parts: &[&[u8]]) -> std::io::Result<()> {
    parts.iter().try_for_each(|p| f.write_all(p))
}

/// [`write_atomic`] with the contents written by `fill`, given the open temporary file and its
/// path.
fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut fs::File) -> std::io::Result<()>) -> Result<()> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let dir = folder(path);
    let file_name =
        path.file_name().ok_or_else(|| io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path")))?;
    let mut created = None;
    for i in 0..100u32 {
        let tmp = dir.join(format!(".{}.tmp{}-{i}", file_name.to_string_lossy(), std::process::id()));
        match fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => {
                created = Some((tmp, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
        }
    }
    let (tmp, mut f) = created
        .ok_or_else(|| io(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free temporary file name")))?;
    let written = fill(&mut f).and_then(|()| f.sync_all());
    drop(f);
    let result = written.and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io)
}

mod external;
mod load;
mod save;
mod unknown;

pub use external::{encode_tensor, external_extent, read_external, read_tensor, unsafe_location};
pub(crate) use load::attr_type;
use load::*;
pub use save::declared_dims;
use save::*;
use unknown::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_written_as_prost_writes_them() {
        let edges = [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, u64::from(u32::MAX), i64::MAX as u64, -1i64 as u64, u64::MAX];
        for v in edges.into_iter().chain((0..64).map(|shift| 1u64 << shift)) {
            let (mut ours, mut prosts) = (Vec::new(), Vec::new());
            put_varint(v, &mut ours);
            prost::encoding::encode_varint(v, &mut prosts);
            assert_eq!(ours, prosts, "{v:#x}");
        }
    }

    #[test]
    fn varints_are_read_as_prost_reads_them() {
        // Every value's encoding, cut short, with a tenth byte past 64 bits, and overlong.
        let mut cases: Vec<Vec<u8>> = vec![vec![], vec![0x80], vec![0xff; 9], vec![0xff; 11], vec![0x80; 10]];
        for v in [0, 1, 0x7f, 0x80, 0x3fff, u64::from(u32::MAX), i64::MAX as u64, u64::MAX] {
            let mut bytes = Vec::new();
            prost::encoding::encode_varint(v, &mut bytes);
            cases.push(bytes.clone());
            cases.push(bytes[..bytes.len() - 1].to_vec());
            bytes.push(0x55);
            cases.push(bytes);
        }
        for tenth in [0x01, 0x02, 0x7f] {
            let mut bytes = vec![0xff; 9];
            bytes.push(tenth);
            cases.push(bytes);
        }
        for bytes in cases {
            let mut pos = 0;
            let ours = varint(&bytes, &mut pos).map(|v| (v, pos));
            let mut rest = &bytes[..];
            let prosts = prost::encoding::decode_varint(&mut rest).ok().map(|v| (v, bytes.len() - rest.len()));
            assert_eq!(ours, prosts, "{bytes:x?}");
        }
    }

    #[test]
    fn value_infos_keep_their_own_types_in_runs_and_alternations() {
        // Entries a rewrite adds (no carry), with types in runs, alternating and absent, as
        // graph inputs, outputs and value_info: each must be written with its own type.
        let mut model = decode(
            &onnx::ModelProto { ir_version: Some(8), graph: Some(Default::default()), ..Default::default() }
                .encode_to_vec(),
            Path::new("m.onnx"),
            None,
        )
        .unwrap();
        let float = |dims: &[Dim]| Some(Type::tensor(Some(DType::F32), Some(dims.to_vec())));
        let (a, b) = ([Dim::sym("n"), Dim::Known(2)], [Dim::Known(3)]);
        let types = [
            float(&a),
            float(&a),
            float(&b),
            float(&a),
            None,
            float(&a),
            Some(Type::tensor(Some(DType::I64), Some(a.to_vec()))),
            Some(Type::tensor(Some(DType::I64), Some(a.to_vec()))),
            Some(Type::tensor(Some(DType::I64), None)),
            float(&a),
        ];
        let infos: Vec<ValueInfo> = types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let v = model.add_value(Model::MAIN, &format!("v{i}"), Def::Undefined);
                ValueInfo::new(v, t.clone())
            })
            .collect();
        let g = model.graph_mut(Model::MAIN);
        (g.inputs, g.outputs, g.value_info) = (infos[..3].to_vec(), infos[3..5].to_vec(), infos.clone());
        let back = onnx::ModelProto::decode(encode(&model).as_slice()).unwrap().graph.unwrap();
        let read = |vis: &[onnx::ValueInfoProto]| -> Vec<Option<Type>> {
            vis.iter().map(|vi| vi.r#type.as_ref().map(type_from)).collect()
        };
        assert_eq!(read(&back.input), types[..3]);
        assert_eq!(read(&back.output), types[3..5]);
        assert_eq!(read(&back.value_info), types);
    }
}
