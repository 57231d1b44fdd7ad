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
        let mut limits = Limits::default();
        let get = |name: &str| -> Result<Option<u64>> {
            match std::env::var(name) {
                Ok(v) => v
                    .trim()
                    .parse::<u64>()
                    .map(Some)
                    .map_err(|_| Error::Usage(format!("{name}='{v}' is not a non-negative integer"))),
                Err(_) => Ok(None),
            }
        };
        if let Some(b) = get("ONNX_BCAST_MAX_BYTES")? {
            limits.max_bytes = b.min(MAX_MESSAGE);
        }
        if let Some(d) = get("ONNX_BCAST_MAX_DEPTH")? {
            limits.max_depth = usize::try_from(d).unwrap_or(usize::MAX);
        }
        Ok(limits)
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
    put_len_prefix(&mut first, 7, a.len() + b.len());
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
    for p in paths {
        collect_models(p, &mut files)?;
    }
    Ok(files)
}

/// Adds `path` (or the `*.onnx` files below it, sorted) to `out`.
fn collect_models(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !path.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut stack = vec![path.to_path_buf()];
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
        return Err(Error::NoModels { path: path.to_path_buf() });
    }
    found.sort();
    out.extend(found);
    Ok(())
}

/// [`encode`], but refusing (like [`save_checked`]) a model that would lose data unless
/// `allow_lossy`; `name` stands for the model in the error.
pub fn encode_checked(model: &Model, allow_lossy: bool, name: &Path) -> Result<Vec<u8>> {
    if !model.lossy.is_empty() && !allow_lossy {
        return Err(Error::Lossy { path: name.to_path_buf(), places: model.lossy.clone() });
    }
    Ok(encode(model))
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
    if !model.lossy.is_empty() && !options.allow_lossy {
        return Err(Error::Lossy { path: path.to_path_buf(), places: model.lossy.clone() });
    }
    if let Some(input) = options.input {
        if !options.in_place && same_file(input, path) {
            return Err(Error::WouldOverwrite { path: path.to_path_buf() });
        }
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
    let to = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
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
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
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

// ---------------------------------------------------------------------------------------------
// Loading.

struct Loader<'a> {
    path: &'a Path,
    max_depth: usize,
    model: Model,
}

/// Why the wire-level loader stopped: something it leaves to prost (malformed bytes, a
/// message repeated where prost would merge, groups), or a loading error proper.
enum Fail {
    Wire,
    Load(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Load(e)
    }
}

impl From<prost::DecodeError> for Fail {
    fn from(_: prost::DecodeError) -> Fail {
        Fail::Wire
    }
}

type Fast<T> = std::result::Result<T, Fail>;

/// The deepest message nesting the wire-level loader takes on; deeper models are decoded by
/// prost as a whole first, so that its recursion limit applies exactly as before.
const FAST_DEPTH: usize = 64;

/// Loads the model from its bytes: `fast`, the wire-level loader's result, when nesting allows
/// it, else (or when it met anything it leaves to prost) prost's decoder on the whole message
/// first. Both give the same model and the same errors.
fn load_bytes(
    bytes: &[u8],
    path: &Path,
    dir: Option<&Path>,
    limits: &Limits,
    fast: Option<Fast<Model>>,
) -> Result<Model> {
    let full = || {
        onnx::ModelProto::decode(bytes)
            .map_err(|e| Error::Decode { path: path.to_path_buf(), reason: decode_reason(&e) })
    };
    if let Some(fast) = fast {
        match fast {
            Ok(model) => return Ok(model),
            Err(Fail::Load(e)) => {
                // prost would have refused the file before loading started.
                full()?;
                return Err(e);
            }
            Err(Fail::Wire) => {}
        }
    }
    let proto = full()?;
    from_proto(proto, path, dir, limits).map_err(|f| match f {
        Fail::Load(e) => e,
        Fail::Wire => {
            Error::Decode { path: path.to_path_buf(), reason: "a message prost wrote does not re-read".into() }
        }
    })
}

/// One field of an encoded message: its number, wire type, the whole field (key included)
/// and, for length-delimited fields, the payload.
struct Field<'a> {
    number: u32,
    wire: u8,
    whole: &'a [u8],
    payload: &'a [u8],
}

/// The fields of an encoded message, strictly: malformed keys, lengths past the end, groups
/// and invalid wire types are [`Fail::Wire`], left to prost to report.
struct Fields<'a> {
    buf: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = Fast<Field<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() {
            return None;
        }
        Some(self.field())
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Fast<Field<'a>> {
        let all = self.buf;
        let mut rest = all;
        let key = prost::encoding::decode_varint(&mut rest)?;
        let number = u32::try_from(key >> 3).map_err(|_| Fail::Wire)?;
        let wire = (key & 7) as u8;
        if number == 0 || key > u64::from(u32::MAX) {
            return Err(Fail::Wire);
        }
        let payload = match wire {
            0 => {
                prost::encoding::decode_varint(&mut rest)?;
                &[][..]
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                rest = rest.get(n..).ok_or(Fail::Wire)?;
                &[][..]
            }
            2 => {
                let len = usize::try_from(prost::encoding::decode_varint(&mut rest)?).map_err(|_| Fail::Wire)?;
                let payload = rest.get(..len).ok_or(Fail::Wire)?;
                rest = &rest[len..];
                payload
            }
            _ => return Err(Fail::Wire),
        };
        let used = all.len() - rest.len();
        self.buf = rest;
        Ok(Field { number, wire, whole: &all[..used], payload })
    }
}

fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { buf }
}

/// The payload of a length-delimited field the loader reads itself.
fn delimited<'a>(f: &Field<'a>) -> Fast<&'a [u8]> {
    if f.wire == 2 {
        Ok(f.payload)
    } else {
        Err(Fail::Wire)
    }
}

fn text<'a>(f: &Field<'a>) -> Fast<&'a str> {
    let bytes = delimited(f)?;
    // Names are short and almost always ASCII, which a word-at-a-time check settles faster
    // than the general validation.
    if bytes.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).map_err(|_| Fail::Wire)
}

/// The wire-level loader: the model's own fields and functions through prost, the graph
/// read field by field.
fn from_wire(bytes: &[u8], path: &Path, dir: Option<&Path>, limits: &Limits) -> Fast<Model> {
    let mut graph = None;
    let mut rest = Vec::new();
    for f in fields(bytes) {
        let f = f?;
        if f.number == 7 {
            if graph.is_some() {
                // prost merges a repeated singular message; leave that to it.
                return Err(Fail::Wire);
            }
            graph = Some(delimited(&f)?);
        } else {
            rest.extend_from_slice(f.whole);
        }
    }
    let proto = onnx::ModelProto::decode(rest.as_slice())?;
    let graph = graph.ok_or_else(|| Error::NoGraph { path: path.to_path_buf() })?;
    load_graph(proto, graph, path, dir, limits)
}

fn from_proto(mut proto: onnx::ModelProto, path: &Path, dir: Option<&Path>, limits: &Limits) -> Fast<Model> {
    let graph = proto.graph.take().ok_or_else(|| Error::NoGraph { path: path.to_path_buf() })?;
    load_graph(proto, &graph.encode_to_vec(), path, dir, limits)
}

/// Loads the model whose own fields are `proto` (graph taken out) and whose main graph is
/// encoded in `graph`.
fn load_graph(proto: onnx::ModelProto, graph: &[u8], path: &Path, dir: Option<&Path>, limits: &Limits) -> Fast<Model> {
    let opsets = proto
        .opset_import
        .iter()
        .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
        .collect();
    let functions = proto.functions.clone();
    let model = Model {
        ir_version: proto.ir_version.unwrap_or(0),
        opsets,
        graphs: Vec::new(),
        values: Vec::new(),
        nodes: Default::default(),
        dir: dir.map(Path::to_path_buf),
        functions: Vec::new(),
        spellings: Spellings::default(),
        proto: Opaque(proto.encode_to_vec()),
        lossy: Vec::new(),
    };
    let mut loader = Loader { path, max_depth: limits.max_depth, model };
    loader.graph(graph, None, "main".to_string(), 0)?;
    loader.functions(functions)?;
    Ok(loader.model)
}

/// A node as read from the wire: names borrowed from the bytes.
struct WireNode<'a> {
    name: Option<&'a str>,
    op_type: Option<&'a str>,
    domain: Option<&'a str>,
    /// Where its inputs and outputs start in the graph's name list, and how many of each.
    names: usize,
    inputs: usize,
    outputs: usize,
    attrs: Vec<&'a [u8]>,
    /// Holds nothing the IR does not: no carry needed.
    plain: bool,
}

/// Reads a `NodeProto`, pushing its input and output names to `names`.
fn wire_node<'a>(bytes: &'a [u8], names: &mut Vec<&'a str>) -> Fast<WireNode<'a>> {
    let mut n = WireNode {
        name: None,
        op_type: None,
        domain: None,
        names: names.len(),
        inputs: 0,
        outputs: 0,
        attrs: Vec::new(),
        plain: true,
    };
    let mut outputs: smallvec::SmallVec<[&str; 4]> = smallvec::SmallVec::new();
    for f in fields(bytes) {
        let f = f?;
        match f.number {
            1 => {
                names.push(text(&f)?);
                n.inputs += 1;
            }
            2 => outputs.push(text(&f)?),
            3 => n.name = Some(text(&f)?),
            4 => n.op_type = Some(text(&f)?),
            7 => n.domain = Some(text(&f)?),
            5 => n.attrs.push(delimited(&f)?),
            // Known fields the IR does not hold go to the carry (prost checks them there).
            6 | 8..=10 => n.plain = false,
            // Unknown fields: prost drops them (the unknown-field walk records them).
            _ => {}
        }
    }
    n.outputs = outputs.len();
    names.extend(outputs);
    // An empty string that is present must be written back present: carry it.
    if [n.name, n.op_type, n.domain].contains(&Some("")) {
        n.plain = false;
    }
    Ok(n)
}

/// The node outputs a loader read last, by name hash: most inputs name one of them, and
/// the scope does not hold them until the graph's nodes are all read.
struct Recent(Box<[Option<ValueId>; Recent::SIZE]>);

impl Default for Recent {
    fn default() -> Recent {
        Recent(Box::new([None; Recent::SIZE]))
    }
}

impl Recent {
    const SIZE: usize = 4096;

    fn slot(hash: u64) -> usize {
        (hash >> 32) as usize % Recent::SIZE
    }

    fn put(&mut self, hash: u64, v: ValueId) {
        self.0[Recent::slot(hash)] = Some(v);
    }

    fn find(&self, model: &Model, hash: u64, name: &str) -> Option<ValueId> {
        self.0[Recent::slot(hash)].filter(|v| model.value(*v).name == name)
    }
}

/// The carry of a node that is not plain: its fields but inputs, outputs and attributes.
fn node_carry(bytes: &[u8]) -> Fast<Opaque> {
    let mut rest = Vec::new();
    for f in fields(bytes) {
        let f = f?;
        if !matches!(f.number, 1 | 2 | 5) {
            rest.extend_from_slice(f.whole);
        }
    }
    Ok(Opaque(onnx::NodeProto::decode(rest.as_slice())?.encode_to_vec()))
}

impl Loader<'_> {
    /// Loads the encoded `GraphProto` in `bytes`.
    fn graph(&mut self, bytes: &[u8], parent: Option<NodeId>, path: String, depth: usize) -> Fast<GraphId> {
        if depth > self.max_depth {
            return Err(Error::TooDeep { path: self.path.to_path_buf(), graph: path, limit: self.max_depth }.into());
        }
        let (mut nodes, mut inputs, mut outputs, mut value_info, mut initializers) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut rest = Vec::new();
        for f in fields(bytes) {
            let f = f?;
            match f.number {
                1 => nodes.push(delimited(&f)?),
                5 => initializers.push(delimited(&f)?),
                11 => inputs.push(delimited(&f)?),
                12 => outputs.push(delimited(&f)?),
                13 => value_info.push(delimited(&f)?),
                _ => rest.extend_from_slice(f.whole),
            }
        }
        let g = onnx::GraphProto::decode(rest.as_slice())?;
        let id = self.model.add_graph(Graph {
            name: g.name.clone().unwrap_or_default(),
            path,
            parent,
            order: Vec::with_capacity(nodes.len()),
            inputs: Vec::with_capacity(inputs.len()),
            outputs: Vec::with_capacity(outputs.len()),
            value_info: Vec::with_capacity(value_info.len()),
            initializers: Vec::with_capacity(initializers.len()),
            scope: Default::default(),
            proto: Opaque(g.encode_to_vec()),
        });
        self.model.reserve_names(id, inputs.len() + initializers.len() + nodes.len());
        // Most nodes have one output and one edge in: grow the arenas once.
        self.model.nodes.reserve_nodes(nodes.len());
        self.model.nodes.reserve_edges(nodes.len());
        self.model.values.reserve(inputs.len() + initializers.len() + nodes.len());

        // Definitions first: inputs, initializers, then every node's outputs, so that uses
        // resolve whatever order the file lists nodes in.
        for vi in inputs {
            let vi = onnx::ValueInfoProto::decode(vi)?;
            let v = self.model.add_value(id, vi.name.as_deref().unwrap_or(""), Def::Input);
            let info = value_info_from(vi, v, &mut self.model.spellings);
            self.model.graph_mut(id).inputs.push(info);
        }
        for t in initializers {
            let t = tensor_from(onnx::TensorProto::decode(t)?);
            let index = self.model.graph(id).initializers.len();
            let v = match self.model.local(id, &t.name) {
                Some(v) if self.model.value(v).def == Def::Input => v,
                _ => self.model.add_value(id, &t.name, Def::Initializer),
            };
            self.model.values[v.index()].initializer.get_or_insert(index);
            self.model.graph_mut(id).initializers.push(t);
        }
        // Room for three inputs and an output a node, so that a million nodes with more than
        // two inputs on average do not copy these lists as they grow.
        let mut names = Vec::with_capacity(nodes.len() * 4);
        // Each input name's value when this graph already defined it by the time its node was
        // read, found while the name is still in cache; `None` is looked up later. One entry
        // per name, outputs `None`, so it lines up with `names`. Node outputs enter the scope
        // only after the loop (`enter_names`), so here they are found among the recent ones.
        // Either way the answer is the one the full lookup gives once fixed up for shadowing:
        // the first definition of a name keeps it.
        let mut early: Vec<Option<ValueId>> = Vec::with_capacity(nodes.len() * 4);
        let mut pending = Vec::with_capacity(nodes.len());
        // Nodes without attributes whose every use was found as they were read: their inputs
        // are set and linked then, while the node is in cache, instead of in a second pass
        // over all nodes.
        let mut done = Vec::with_capacity(nodes.len());
        let mut defs = Vec::with_capacity(nodes.len());
        let mut recent = Recent::default();
        for bytes in nodes {
            let n = wire_node(bytes, &mut names)?;
            let model = &self.model;
            early.extend(names[n.names..n.names + n.inputs].iter().map(|name| {
                let hash = model.scope_hash(id, name);
                recent.find(model, hash, name).or_else(|| model.local_hashed(id, name, hash))
            }));
            early.extend(std::iter::repeat_n(None, n.outputs));
            let uses = n.names..n.names + n.inputs;
            let found = || names[uses.clone()].iter().zip(&early[uses.clone()]);
            let ready = n.attrs.is_empty() && found().all(|(name, v)| name.is_empty() || v.is_some());
            let inputs: Slots =
                if ready { found().map(|(name, v)| v.filter(|_| !name.is_empty())).collect() } else { Slots::new() };
            let node = Node {
                name: Name::new(n.name.unwrap_or("")),
                op_type: Name::new(n.op_type.unwrap_or("")),
                domain: Name::new(n.domain.unwrap_or("")),
                graph: id,
                inputs: inputs.clone(),
                outputs: Slots::new(),
                attrs: Vec::new(),
                proto: if n.plain { Opaque::default() } else { node_carry(bytes)? },
            };
            let nid = self.model.add_node(node);
            self.model.graph_mut(id).order.push(nid);
            if ready {
                for v in inputs.into_iter().flatten() {
                    self.model.link(v, nid);
                }
                done.push(nid);
            }
            let first = n.names + n.inputs;
            let mut outs = Slots::with_capacity(n.outputs);
            for (slot, name) in names[first..first + n.outputs].iter().enumerate() {
                outs.push((!name.is_empty()).then(|| {
                    let hash = self.model.scope_hash(id, name);
                    let v = self.model.push_value(id, name, Def::Node(nid, slot));
                    defs.push((hash, v));
                    recent.put(hash, v);
                    v
                }));
            }
            self.model.node_mut(nid).outputs = outs;
            if !ready {
                pending.push((nid, n.names, n.inputs, n.attrs));
            }
        }
        if self.model.enter_names(id, &defs) {
            // A use found a later definition of a name among the recent ones: the first
            // definition keeps the name.
            for v in early.iter_mut().flatten() {
                *v = self.model.value(*v).shadows.unwrap_or(*v);
            }
            for nid in done {
                for slot in 0..self.model.node(nid).inputs.len() {
                    let v = self.model.node(nid).inputs[slot];
                    if let Some(first) = v.and_then(|v| self.model.value(v).shadows) {
                        self.model.set_input(nid, slot, Some(first));
                    }
                }
            }
        }
        drop(defs);
        // Subgraphs and attributes, then uses.
        for (nid, first, count, attrs) in pending {
            let mut converted = Vec::with_capacity(attrs.len());
            for a in attrs {
                converted.push(self.attribute(a, nid, depth)?);
            }
            self.model.node_mut(nid).attrs = converted;
            let ins: Slots = names[first..first + count]
                .iter()
                .zip(&early[first..first + count])
                .map(|(name, found)| (!name.is_empty()).then(|| found.unwrap_or_else(|| self.use_name(id, name))))
                .collect();
            for v in ins.iter().flatten() {
                self.model.link(*v, nid);
            }
            self.model.node_mut(nid).inputs = ins;
        }
        for vi in outputs {
            let vi = onnx::ValueInfoProto::decode(vi)?;
            let v = self.use_name(id, vi.name.as_deref().unwrap_or(""));
            let info = value_info_from(vi, v, &mut self.model.spellings);
            self.model.graph_mut(id).outputs.push(info);
        }
        for vi in value_info {
            let vi = onnx::ValueInfoProto::decode(vi)?;
            let v = self.use_name(id, vi.name.as_deref().unwrap_or(""));
            let info = value_info_from(vi, v, &mut self.model.spellings);
            self.model.graph_mut(id).value_info.push(info);
        }
        Ok(id)
    }

    /// The value `name` refers to from graph `g`, or a new undefined value.
    fn use_name(&mut self, g: GraphId, name: &str) -> ValueId {
        match self.model.resolve(g, name) {
            Some(v) => v,
            None => self.model.add_value(g, name, Def::Undefined),
        }
    }

    /// Loads the encoded `AttributeProto` in `bytes` of node `node`.
    fn attribute(&mut self, bytes: &[u8], node: NodeId, depth: usize) -> Fast<Attribute> {
        let (mut g, mut gs) = (Vec::new(), Vec::new());
        let mut rest = Vec::new();
        for f in fields(bytes) {
            let f = f?;
            match f.number {
                6 => g.push(delimited(&f)?),
                11 => gs.push(delimited(&f)?),
                _ => rest.extend_from_slice(f.whole),
            }
        }
        if g.len() > 1 {
            // prost merges a repeated singular message; leave that to it.
            return Err(Fail::Wire);
        }
        let mut a = onnx::AttributeProto::decode(rest.as_slice())?;
        let name = a.name.clone().unwrap_or_default();
        // The kind of an attribute without `type` depends on which fields are set.
        if a.r#type.is_none_or(|t| t == 0) {
            a.g = g.first().map(|_| onnx::GraphProto::default());
            a.graphs = vec![onnx::GraphProto::default(); gs.len()];
        }
        let kind = attr_kind(&a);
        a.g = None;
        a.graphs = Vec::new();
        let t = a.t.take();
        let ts = std::mem::take(&mut a.tensors);
        // A subgraph's path names the node holding it; only graph attributes need it (the
        // label is a linear search for unnamed nodes, so not for every attribute).
        let sub_path = |model: &Model| {
            let base = match model.graph(model.node(node).graph).path.as_str() {
                "main" => String::new(),
                p => format!("{p}/"),
            };
            format!("{base}{}/{name}", model.node_label(node))
        };
        let value = match kind {
            K_TENSOR => AttrValue::Tensor(tensor_from(t.unwrap_or_default())),
            K_TENSORS => AttrValue::Tensors(ts.into_iter().map(tensor_from).collect()),
            K_GRAPH => {
                let path = sub_path(&self.model);
                AttrValue::Graph(self.graph(g.first().copied().unwrap_or(&[]), Some(node), path, depth + 1)?)
            }
            K_GRAPHS => {
                let mut ids = Vec::with_capacity(gs.len());
                let base = sub_path(&self.model);
                for (i, sub) in gs.into_iter().enumerate() {
                    let path = format!("{base}[{i}]");
                    ids.push(self.graph(sub, Some(node), path, depth + 1)?);
                }
                AttrValue::Graphs(ids)
            }
            _ => simple_attr(&a, kind),
        };
        Ok(Attribute { name, value, proto: Opaque(a.encode_to_vec()) })
    }
}

const K_FLOAT: i32 = 1;
const K_INT: i32 = 2;
const K_STRING: i32 = 3;
const K_TENSOR: i32 = 4;
const K_GRAPH: i32 = 5;
const K_FLOATS: i32 = 6;
const K_INTS: i32 = 7;
const K_STRINGS: i32 = 8;
const K_TENSORS: i32 = 9;
const K_GRAPHS: i32 = 10;

/// The attribute's kind: its `type`, or for old models that omit it, the field that is set.
fn attr_kind(a: &onnx::AttributeProto) -> i32 {
    match a.r#type {
        Some(t) if t != 0 => t,
        _ if a.f.is_some() => K_FLOAT,
        _ if a.i.is_some() => K_INT,
        _ if a.s.is_some() => K_STRING,
        _ if a.t.is_some() => K_TENSOR,
        _ if a.g.is_some() => K_GRAPH,
        _ if !a.floats.is_empty() => K_FLOATS,
        _ if !a.ints.is_empty() => K_INTS,
        _ if !a.strings.is_empty() => K_STRINGS,
        _ if !a.tensors.is_empty() => K_TENSORS,
        _ if !a.graphs.is_empty() => K_GRAPHS,
        _ => 0,
    }
}

fn simple_attr(a: &onnx::AttributeProto, kind: i32) -> AttrValue {
    match kind {
        K_FLOAT => AttrValue::Float(a.f.unwrap_or_default()),
        K_INT => AttrValue::Int(a.i.unwrap_or_default()),
        K_STRING => AttrValue::String(a.s.clone().unwrap_or_default()),
        K_FLOATS => AttrValue::Floats(a.floats.clone()),
        K_INTS => AttrValue::Ints(a.ints.clone()),
        K_STRINGS => AttrValue::Strings(a.strings.clone()),
        _ => AttrValue::Other,
    }
}

fn value_info_from(vi: onnx::ValueInfoProto, value: ValueId, spellings: &mut Spellings) -> ValueInfo {
    let ty = vi.r#type.as_ref().map(type_from);
    if let (Some(t), Some(declared)) = (&ty, &vi.r#type) {
        spell(t, declared, spellings);
    }
    ValueInfo { value, ty, proto: Opaque(vi.encode_to_vec()) }
}

/// The IR view of a `TypeProto`.
fn type_from(t: &onnx::TypeProto) -> Type {
    use onnx::type_proto::Value as V;
    match &t.value {
        Some(V::TensorType(tt)) => Type::Tensor {
            dtype: tt.elem_type.and_then(DType::from_onnx),
            shape: tt.shape.as_ref().map(|s| s.dim.iter().map(dim_from).collect()),
        },
        Some(V::SequenceType(s)) => Type::Sequence(s.elem_type.as_ref().map(|t| Box::new(type_from(t)))),
        Some(V::OptionalType(o)) => Type::Optional(o.elem_type.as_ref().map(|t| Box::new(type_from(t)))),
        _ => Type::Other,
    }
}

fn dim_from(d: &onnx::tensor_shape_proto::Dimension) -> Dim {
    use onnx::tensor_shape_proto::dimension::Value;
    match &d.value {
        Some(Value::DimValue(v)) if *v >= 0 => Dim::Known(*v),
        // `?` is a placeholder some exporters write for a size they do not name.
        Some(Value::DimParam(p)) if !p.is_empty() && p != "?" => Dim::parse(p),
        _ => Dim::Unknown,
    }
}

/// Records the model's text for each symbolic size of `t` (read from `declared`) whose
/// canonical text differs, where none was recorded yet.
fn spell(t: &Type, declared: &onnx::TypeProto, spellings: &mut Spellings) {
    use onnx::tensor_shape_proto::dimension::Value;
    let (Type::Tensor { shape: Some(shape), .. }, Some(onnx::type_proto::Value::TensorType(tt))) = (t, &declared.value)
    else {
        return;
    };
    let Some(declared) = &tt.shape else { return };
    for (d, dim) in shape.iter().zip(&declared.dim) {
        if let (Dim::Term(term), Some(Value::DimParam(text))) = (d, &dim.value) {
            if term.as_name().is_none() && spellings.get(term).is_none() && term.to_string() != *text {
                spellings.insert(term.clone(), text.as_str().into());
            }
        }
    }
}

/// A term's text as written to `dim_param`: the model's own spelling of it, else its name as
/// it is (without a copy), else its canonical text.
fn term_text<'a>(t: &'a Term, spellings: &'a Spellings) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    match spellings.get(t) {
        Some(text) => Cow::Borrowed(text),
        None => t.as_name().map_or_else(|| Cow::Owned(t.to_string()), Cow::Borrowed),
    }
}

fn type_to(t: &Type, sp: &Spellings) -> onnx::TypeProto {
    use onnx::tensor_shape_proto::{dimension::Value as DV, Dimension};
    use onnx::type_proto::{Optional, Sequence, Tensor as TT, Value as V};
    let value = match t {
        Type::Tensor { dtype, shape } => V::TensorType(TT {
            elem_type: Some(dtype.map(DType::onnx).unwrap_or(0)),
            shape: shape.as_ref().map(|s| onnx::TensorShapeProto {
                dim: s
                    .iter()
                    .map(|d| Dimension {
                        denotation: None,
                        value: match d {
                            Dim::Known(n) => Some(DV::DimValue(*n)),
                            Dim::Term(t) if !t.has_fresh() => Some(DV::DimParam(term_text(t, sp).into_owned())),
                            Dim::Term(_) | Dim::Unknown => None,
                        },
                    })
                    .collect(),
            }),
        }),
        Type::Sequence(e) => {
            V::SequenceType(Box::new(Sequence { elem_type: e.as_deref().map(|t| Box::new(type_to(t, sp))) }))
        }
        Type::Optional(e) => {
            V::OptionalType(Box::new(Optional { elem_type: e.as_deref().map(|t| Box::new(type_to(t, sp))) }))
        }
        Type::Other => return onnx::TypeProto::default(),
    };
    onnx::TypeProto { denotation: None, value: Some(value) }
}

/// The IR view of a tensor: data moved out, the rest carried.
fn tensor_from(mut t: onnx::TensorProto) -> Tensor {
    let data = if t.data_location == Some(onnx::tensor_proto::DataLocation::External as i32) {
        let get = |k: &str| t.external_data.iter().find(|e| e.key.as_deref() == Some(k)).and_then(|e| e.value.clone());
        TensorData::External {
            location: get("location").unwrap_or_default(),
            offset: get("offset").and_then(|v| v.parse().ok()).unwrap_or(0),
            length: get("length").and_then(|v| v.parse().ok()),
        }
    } else if let Some(raw) = t.raw_data.take() {
        TensorData::Raw(raw)
    } else if !t.float_data.is_empty() {
        TensorData::Floats(std::mem::take(&mut t.float_data))
    } else if !t.int32_data.is_empty() {
        TensorData::Int32s(std::mem::take(&mut t.int32_data))
    } else if !t.int64_data.is_empty() {
        TensorData::Int64s(std::mem::take(&mut t.int64_data))
    } else if !t.double_data.is_empty() {
        TensorData::Doubles(std::mem::take(&mut t.double_data))
    } else if !t.uint64_data.is_empty() {
        TensorData::Uint64s(std::mem::take(&mut t.uint64_data))
    } else if !t.string_data.is_empty() {
        TensorData::Strings(std::mem::take(&mut t.string_data))
    } else {
        TensorData::Empty
    };
    Tensor {
        name: t.name.clone().unwrap_or_default(),
        dtype: t.data_type.and_then(DType::from_onnx),
        dims: t.dims.clone(),
        data,
        proto: Opaque(t.encode_to_vec()),
    }
}

// ---------------------------------------------------------------------------------------------
// Saving.

fn carry<M: Message + Default>(o: &Opaque) -> M {
    // The carry was encoded by this module from a valid message, so it decodes.
    M::decode(o.0.as_slice()).unwrap_or_default()
}

fn put_str(slot: &mut Option<String>, v: &str) {
    if slot.as_deref().unwrap_or("") != v {
        *slot = Some(v.to_string());
    }
}

/// The model's own fields as saved, without the graph.
fn model_head(model: &Model) -> onnx::ModelProto {
    let mut p: onnx::ModelProto = carry(&model.proto);
    if p.ir_version.unwrap_or(0) != model.ir_version {
        p.ir_version = Some(model.ir_version);
    }
    let current: Vec<Opset> = p
        .opset_import
        .iter()
        .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
        .collect();
    if current != model.opsets {
        p.opset_import = model
            .opsets
            .iter()
            .map(|o| onnx::OperatorSetIdProto { domain: Some(o.domain.clone()), version: Some(o.version) })
            .collect();
    }
    p.graph = None;
    p
}

/// Writes `v` as a varint, as prost does; the one-byte ones (most keys, lengths and dims)
/// with one push.
#[inline]
fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, field: u32, wire: u32) {
    put_varint(u64::from(field << 3 | wire), out);
}

/// Writes the key and length of a length-delimited field whose `len` payload bytes follow.
fn put_len_prefix(out: &mut Vec<u8>, field: u32, len: usize) {
    put_key(out, field, 2);
    put_varint(len as u64, out);
}

/// Writes a length-delimited field (string, bytes or message).
fn put_len_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_len_prefix(out, field, bytes.len());
    out.extend_from_slice(bytes);
}

/// The encoded size of a length-delimited field whose payload is `len` bytes.
fn len_field_len(field: u32, len: usize) -> usize {
    prost::encoding::encoded_len_varint(u64::from(field << 3 | 2))
        + prost::encoding::encoded_len_varint(len as u64)
        + len
}

/// Writes graph `id` as length-delimited field `field` to `out`: the body is written in
/// place after room for the longest length prefix, then moved up to its prefix, so a large
/// graph is never held twice.
fn put_graph_field(model: &Model, id: GraphId, field: u32, out: &mut Vec<u8>) {
    put_key(out, field, 2);
    let at = out.len();
    out.extend_from_slice(&[0; 10]);
    graph_body(model, id, out);
    let len = out.len() - at - 10;
    let mut prefix = Vec::with_capacity(10);
    put_varint(len as u64, &mut prefix);
    out[at..at + prefix.len()].copy_from_slice(&prefix);
    out.copy_within(at + 10.., at + prefix.len());
    out.truncate(at + prefix.len() + len);
}

/// Appends the body of graph `id`'s `GraphProto` to `out`.
fn graph_body(model: &Model, id: GraphId, out: &mut Vec<u8>) {
    let (front, rest) = graph_carry(model, id);
    graph_front(model, id, front, out);
    value_infos(model, &model.graph(id).value_info, out);
    rest.encode_raw(out);
}

/// Graph `id`'s carried fields: those written between its nodes and its inputs (name,
/// doc_string), and the rest.
fn graph_carry(model: &Model, id: GraphId) -> (onnx::GraphProto, onnx::GraphProto) {
    let g = model.graph(id);
    let mut p: onnx::GraphProto = carry(&g.proto);
    put_str(&mut p.name, &g.name);
    let front = onnx::GraphProto { name: p.name.take(), doc_string: p.doc_string.take(), ..Default::default() };
    (front, p)
}

/// The first part of graph `id`'s body: nodes, the carried name and doc_string with the
/// initializers, inputs and outputs.
fn graph_front(model: &Model, id: GraphId, front: onnx::GraphProto, out: &mut Vec<u8>) {
    let g = model.graph(id);
    let mut scratch = Vec::new();
    for n in &g.order {
        node_bytes(model, *n, out, &mut scratch);
    }
    // prost writes fields in tag order; these come between `node` (1) and `input` (11).
    let mid = onnx::GraphProto { initializer: g.initializers.iter().map(tensor_to).collect(), ..front };
    mid.encode_raw(out);
    drop(mid);
    let mut last = LastType::new(model);
    for v in &g.inputs {
        value_info_bytes(model, v, 11, out, &mut last);
    }
    for v in &g.outputs {
        value_info_bytes(model, v, 12, out, &mut last);
    }
}

/// Writes `infos` as a graph's `value_info` fields (13). After them come what the graph's
/// carry holds beyond (quantization annotations, sparse initializers, metadata).
fn value_infos(model: &Model, infos: &[ValueInfo], out: &mut Vec<u8>) {
    let mut last = LastType::new(model);
    for v in infos {
        value_info_bytes(model, v, 13, out, &mut last);
    }
}

/// The encoded `type` field of the value info written last, copied for the next one when its
/// type is the same: a graph's tensors share a handful of types, mostly in runs (every value
/// info of a 10k-node chain after the first), and comparing a type costs less than
/// measuring and writing it again.
struct LastType<'m> {
    ty: Option<&'m Type>,
    field: Vec<u8>,
    spellings: &'m Spellings,
}

impl<'m> LastType<'m> {
    fn new(model: &'m Model) -> LastType<'m> {
        LastType { ty: None, field: Vec::new(), spellings: &model.spellings }
    }

    /// The `type` field (2) of a `ValueInfoProto` for `t`.
    fn field(&mut self, t: &'m Type) -> &[u8] {
        if self.ty != Some(t) {
            self.field.clear();
            put_key(&mut self.field, 2, 2);
            put_varint(type_len(t, self.spellings) as u64, &mut self.field);
            put_type(t, &mut self.field, self.spellings);
            self.ty = Some(t);
        }
        &self.field
    }
}

/// Writes node `id` as field 1 of a `GraphProto` to `out`; `scratch` is reused for its body.
fn node_bytes(model: &Model, id: NodeId, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    let n = model.node(id);
    scratch.clear();
    let name = |v: &Option<ValueId>| v.map_or("", |v| model.name(v));
    for v in &n.inputs {
        put_len_field(scratch, 1, name(v).as_bytes());
    }
    for v in &n.outputs {
        put_len_field(scratch, 2, name(v).as_bytes());
    }
    if n.proto.0.is_empty() {
        // Nothing carried: the fields `put_str` sets on an empty message, in tag order.
        for (field, text) in [(3, &n.name), (4, &n.op_type)] {
            if !text.is_empty() {
                put_len_field(scratch, field, text.as_bytes());
            }
        }
        for a in &n.attrs {
            attr_bytes(model, a, scratch);
        }
        if !n.domain.is_empty() {
            put_len_field(scratch, 7, n.domain.as_bytes());
        }
    } else {
        let mut p: onnx::NodeProto = carry(&n.proto);
        put_str(&mut p.name, &n.name);
        put_str(&mut p.op_type, &n.op_type);
        put_str(&mut p.domain, &n.domain);
        // prost writes fields in tag order; these come between `output` (2) and `attribute` (5).
        let head = onnx::NodeProto { name: p.name.take(), op_type: p.op_type.take(), ..Default::default() };
        head.encode_raw(scratch);
        for a in &n.attrs {
            attr_bytes(model, a, scratch);
        }
        // The rest: doc_string, domain, overload, metadata and device configurations.
        p.encode_raw(scratch);
    }
    put_len_field(out, 1, scratch);
}

/// Writes attribute `a` as field 5 of a `NodeProto` to `out`.
fn attr_bytes(model: &Model, a: &Attribute, out: &mut Vec<u8>) {
    let mut p = attr_to(a);
    let mut body = Vec::new();
    // prost writes fields in tag order: subgraphs go after the fields whose tags come first
    // (`g`, 6, follows `t`; `graphs`, 11, follows `tensors`), the rest after them.
    let (field, graphs): (u32, &[GraphId]) = match &a.value {
        AttrValue::Graph(g) => (6, std::slice::from_ref(g)),
        AttrValue::Graphs(gs) => (11, gs),
        _ => (0, &[]),
    };
    if field != 0 {
        let mut head = onnx::AttributeProto {
            name: p.name.take(),
            f: p.f.take(),
            i: p.i.take(),
            s: p.s.take(),
            t: p.t.take(),
            ..Default::default()
        };
        if field == 11 {
            head.floats = std::mem::take(&mut p.floats);
            head.ints = std::mem::take(&mut p.ints);
            head.strings = std::mem::take(&mut p.strings);
            head.tensors = std::mem::take(&mut p.tensors);
        }
        head.encode_raw(&mut body);
        for g in graphs {
            put_graph_field(model, *g, field, &mut body);
        }
    }
    p.encode_raw(&mut body);
    put_len_field(out, 5, &body);
}

/// The attribute as saved, without its subgraphs (`attr_bytes` writes those).
fn attr_to(a: &Attribute) -> onnx::AttributeProto {
    let mut p: onnx::AttributeProto = carry(&a.proto);
    put_str(&mut p.name, &a.name);
    let kind = match &a.value {
        AttrValue::Float(_) => K_FLOAT,
        AttrValue::Int(_) => K_INT,
        AttrValue::String(_) => K_STRING,
        AttrValue::Tensor(_) => K_TENSOR,
        AttrValue::Graph(_) => K_GRAPH,
        AttrValue::Floats(_) => K_FLOATS,
        AttrValue::Ints(_) => K_INTS,
        AttrValue::Strings(_) => K_STRINGS,
        AttrValue::Tensors(_) => K_TENSORS,
        AttrValue::Graphs(_) => K_GRAPHS,
        AttrValue::Other => return p,
    };
    match &a.value {
        AttrValue::Tensor(t) => p.t = Some(tensor_to(t)),
        AttrValue::Tensors(ts) => p.tensors = ts.iter().map(tensor_to).collect(),
        // Placeholders for the kind check below; `attr_bytes` writes the graphs themselves.
        AttrValue::Graph(_) => p.g = Some(onnx::GraphProto::default()),
        AttrValue::Graphs(gs) => p.graphs = vec![onnx::GraphProto::default(); gs.len()],
        simple => {
            let same = attr_kind(&p) == kind && matches!((simple_attr(&p, kind), simple), (x, y) if attr_eq(&x, y));
            if !same {
                p.f = None;
                p.i = None;
                p.s = None;
                p.floats.clear();
                p.ints.clear();
                p.strings.clear();
                match simple {
                    AttrValue::Float(f) => p.f = Some(*f),
                    AttrValue::Int(i) => p.i = Some(*i),
                    AttrValue::String(s) => p.s = Some(s.clone()),
                    AttrValue::Floats(v) => p.floats = v.clone(),
                    AttrValue::Ints(v) => p.ints = v.clone(),
                    AttrValue::Strings(v) => p.strings = v.clone(),
                    _ => {}
                }
            }
        }
    }
    // A loaded attribute keeps its `type` as read (old files omit it); one a rewrite created
    // (empty carry) states it, as the checker requires from IR version 2.
    if attr_kind(&p) != kind || a.proto.0.is_empty() {
        p.r#type = Some(kind);
    }
    p.g = None;
    p.graphs = Vec::new();
    p
}

/// Equality of simple attribute values, bitwise for floats (so NaN payloads round-trip).
fn attr_eq(a: &AttrValue, b: &AttrValue) -> bool {
    match (a, b) {
        (AttrValue::Float(x), AttrValue::Float(y)) => x.to_bits() == y.to_bits(),
        (AttrValue::Floats(x), AttrValue::Floats(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits())
        }
        (AttrValue::Int(x), AttrValue::Int(y)) => x == y,
        (AttrValue::Ints(x), AttrValue::Ints(y)) => x == y,
        (AttrValue::String(x), AttrValue::String(y)) => x == y,
        (AttrValue::Strings(x), AttrValue::Strings(y)) => x == y,
        _ => false,
    }
}

/// Writes value info `v` as field `field` of a `GraphProto` to `out`.
fn value_info_bytes<'m>(model: &Model, v: &'m ValueInfo, field: u32, out: &mut Vec<u8>, last: &mut LastType<'m>) {
    if !v.proto.0.is_empty() {
        put_len_field(out, field, &value_info_to(model, v).encode_to_vec());
        return;
    }
    // Nothing carried: the name when it is not empty, the type when there is one.
    let name = model.name(v.value);
    let ty = v.ty.as_ref().map_or(&[][..], |t| last.field(t));
    let len = if name.is_empty() { 0 } else { len_field_len(1, name.len()) } + ty.len();
    put_key(out, field, 2);
    put_varint(len as u64, out);
    if !name.is_empty() {
        put_len_field(out, 1, name.as_bytes());
    }
    out.extend_from_slice(ty);
}

/// The encoded size of [`type_to`]'s `TypeProto` for `t`.
fn type_len(t: &Type, sp: &Spellings) -> usize {
    match t {
        Type::Tensor { dtype, shape } => len_field_len(1, tensor_type_len(*dtype, shape.as_deref(), sp)),
        _ => type_to(t, sp).encoded_len(),
    }
}

fn elem_code(dtype: Option<DType>) -> u64 {
    i64::from(dtype.map(DType::onnx).unwrap_or(0)) as u64
}

fn tensor_type_len(dtype: Option<DType>, shape: Option<&[Dim]>, sp: &Spellings) -> usize {
    1 + prost::encoding::encoded_len_varint(elem_code(dtype)) + shape.map_or(0, |s| len_field_len(2, shape_len(s, sp)))
}

fn shape_len(shape: &[Dim], sp: &Spellings) -> usize {
    shape.iter().map(|d| len_field_len(1, dim_len(d, sp))).sum()
}

/// A dim's encoded size. A size inference invented (`?3`, or a term over one) is written as
/// an unnamed dim: its number means nothing outside one run of inference.
fn dim_len(d: &Dim, sp: &Spellings) -> usize {
    match d {
        Dim::Known(n) => 1 + prost::encoding::encoded_len_varint(*n as u64),
        Dim::Term(t) if !t.has_fresh() => len_field_len(2, term_text(t, sp).len()),
        Dim::Term(_) | Dim::Unknown => 0,
    }
}

/// Writes the fields of [`type_to`]'s `TypeProto` for `t`.
fn put_type(t: &Type, out: &mut Vec<u8>, sp: &Spellings) {
    let Type::Tensor { dtype, shape } = t else {
        type_to(t, sp).encode_raw(out);
        return;
    };
    put_key(out, 1, 2);
    put_varint(tensor_type_len(*dtype, shape.as_deref(), sp) as u64, out);
    put_key(out, 1, 0);
    put_varint(elem_code(*dtype), out);
    if let Some(shape) = shape {
        put_key(out, 2, 2);
        put_varint(shape_len(shape, sp) as u64, out);
        for d in shape {
            put_key(out, 1, 2);
            put_varint(dim_len(d, sp) as u64, out);
            match d {
                Dim::Known(n) => {
                    put_key(out, 1, 0);
                    put_varint(*n as u64, out);
                }
                Dim::Term(t) if !t.has_fresh() => put_len_field(out, 2, term_text(t, sp).as_bytes()),
                Dim::Term(_) | Dim::Unknown => {}
            }
        }
    }
}

fn value_info_to(model: &Model, v: &ValueInfo) -> onnx::ValueInfoProto {
    let mut p: onnx::ValueInfoProto = carry(&v.proto);
    put_str(&mut p.name, model.name(v.value));
    if p.r#type.as_ref().map(type_from) != v.ty {
        p.r#type = v.ty.as_ref().map(|t| type_to(t, &model.spellings));
    }
    p
}

fn tensor_to(t: &Tensor) -> onnx::TensorProto {
    let mut p: onnx::TensorProto = carry(&t.proto);
    put_str(&mut p.name, &t.name);
    if p.dims != t.dims {
        p.dims = t.dims.clone();
    }
    if p.data_type.and_then(DType::from_onnx) != t.dtype {
        p.data_type = Some(t.dtype.map(DType::onnx).unwrap_or(0));
    }
    match &t.data {
        TensorData::Raw(v) => p.raw_data = Some(v.clone()),
        TensorData::Floats(v) => p.float_data = v.clone(),
        TensorData::Int32s(v) => p.int32_data = v.clone(),
        TensorData::Int64s(v) => p.int64_data = v.clone(),
        TensorData::Doubles(v) => p.double_data = v.clone(),
        TensorData::Uint64s(v) => p.uint64_data = v.clone(),
        TensorData::Strings(v) => p.string_data = v.clone(),
        TensorData::External { .. } | TensorData::Empty => {}
    }
    p
}

/// The `dim_value`s a value's declared tensor type holds as written in the file (negative
/// ones included, which the IR reads as unknown): one entry per axis, `None` for a
/// `dim_param` or an unset dim. `None` when no tensor shape is declared.
pub fn declared_dims(info: &ValueInfo) -> Option<Vec<Option<i64>>> {
    use onnx::tensor_shape_proto::dimension::Value as DV;
    use onnx::type_proto::Value as V;
    let p: onnx::ValueInfoProto = carry(&info.proto);
    let mut ty = p.r#type?;
    // Look through sequences and optionals to the tensor inside.
    loop {
        match ty.value? {
            V::TensorType(t) => {
                let shape = t.shape?;
                return Some(
                    shape
                        .dim
                        .iter()
                        .map(|d| match d.value {
                            Some(DV::DimValue(v)) => Some(v),
                            _ => None,
                        })
                        .collect(),
                );
            }
            V::SequenceType(s) => ty = *s.elem_type?,
            V::OptionalType(o) => ty = *o.elem_type?,
            _ => return None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Unknown fields. prost drops fields its schema does not know, so a model that holds any
// cannot be written back whole; the wire format is walked once at load to say where.

/// The messages of `onnx.proto` whose fields the walk knows.
#[derive(Clone, Copy, Debug)]
enum Msg {
    Model,
    Graph,
    Node,
    Attr,
    Tensor,
    Segment,
    Sparse,
    ValueInfo,
    Type,
    TypeTensor,
    TypeSeq,
    TypeMap,
    TypeOpt,
    TypeOpaque,
    Shape,
    Dimension,
    Entry,
    Opset,
    Function,
    Training,
    DeviceConf,
    Annotation,
    NodeDevConf,
    Sharding,
    ShardedDim,
    SimpleSharded,
    IntIntList,
}

/// A known field: a scalar (or packed scalars, strings, bytes), or a message of type `Msg`
/// named `&str`, repeated or not.
enum Known {
    Scalar,
    Msg(&'static str, Msg, bool),
}

/// The field numbered `n` of message `m`, as `proto/onnx.proto` (ONNX 1.23.2) declares it.
fn field(m: Msg, n: u64) -> Option<Known> {
    use Known::{Msg as M, Scalar as S};
    use Msg::*;
    let f = match (m, n) {
        (Model, 1..=6) => S,
        (Model, 7) => M("graph", Graph, false),
        (Model, 8) => M("opset_import", Opset, true),
        (Model, 14) => M("metadata_props", Entry, true),
        (Model, 20) => M("training_info", Training, true),
        (Model, 25) => M("functions", Function, true),
        (Model, 26) => M("configuration", DeviceConf, true),
        (Graph, 2 | 10) => S,
        (Graph, 1) => M("node", Node, true),
        (Graph, 5) => M("initializer", Tensor, true),
        (Graph, 15) => M("sparse_initializer", Sparse, true),
        (Graph, 11) => M("input", ValueInfo, true),
        (Graph, 12) => M("output", ValueInfo, true),
        (Graph, 13) => M("value_info", ValueInfo, true),
        (Graph, 14) => M("quantization_annotation", Annotation, true),
        (Graph, 16) => M("metadata_props", Entry, true),
        (Node, 1..=4 | 6..=8) => S,
        (Node, 5) => M("attribute", Attr, true),
        (Node, 9) => M("metadata_props", Entry, true),
        (Node, 10) => M("device_configurations", NodeDevConf, true),
        (Attr, 1..=4 | 7..=9 | 13 | 20 | 21) => S,
        (Attr, 5) => M("t", Tensor, false),
        (Attr, 6) => M("g", Graph, false),
        (Attr, 10) => M("tensors", Tensor, true),
        (Attr, 11) => M("graphs", Graph, true),
        (Attr, 14) => M("tp", Type, false),
        (Attr, 15) => M("type_protos", Type, true),
        (Attr, 22) => M("sparse_tensor", Sparse, false),
        (Attr, 23) => M("sparse_tensors", Sparse, true),
        (Tensor, 1 | 2 | 4..=12 | 14) => S,
        (Tensor, 3) => M("segment", Segment, false),
        (Tensor, 13) => M("external_data", Entry, true),
        (Tensor, 16) => M("metadata_props", Entry, true),
        (Segment, 1 | 2) => S,
        (Sparse, 1) => M("values", Tensor, false),
        (Sparse, 2) => M("indices", Tensor, false),
        (Sparse, 3) => S,
        (ValueInfo, 1 | 3) => S,
        (ValueInfo, 2) => M("type", Type, false),
        (ValueInfo, 4) => M("metadata_props", Entry, true),
        (Type, 6) => S,
        (Type, 1) => M("tensor_type", TypeTensor, false),
        (Type, 4) => M("sequence_type", TypeSeq, false),
        (Type, 5) => M("map_type", TypeMap, false),
        (Type, 7) => M("opaque_type", TypeOpaque, false),
        (Type, 8) => M("sparse_tensor_type", TypeTensor, false),
        (Type, 9) => M("optional_type", TypeOpt, false),
        (TypeTensor, 1) => S,
        (TypeTensor, 2) => M("shape", Shape, false),
        (TypeSeq | TypeOpt, 1) => M("elem_type", Type, false),
        (TypeMap, 1) => S,
        (TypeMap, 2) => M("value_type", Type, false),
        (TypeOpaque, 1 | 2) => S,
        (Shape, 1) => M("dim", Dimension, true),
        (Dimension, 1..=3) => S,
        (Entry | Opset | IntIntList, 1 | 2) => S,
        (Function, 1 | 4..=6 | 8 | 10 | 13) => S,
        (Function, 7) => M("node", Node, true),
        (Function, 9) => M("opset_import", Opset, true),
        (Function, 11) => M("attribute_proto", Attr, true),
        (Function, 12) => M("value_info", ValueInfo, true),
        (Function, 14) => M("metadata_props", Entry, true),
        (Training, 1) => M("initialization", Graph, false),
        (Training, 2) => M("algorithm", Graph, false),
        (Training, 3) => M("initialization_binding", Entry, true),
        (Training, 4) => M("update_binding", Entry, true),
        (DeviceConf, 1..=3) => S,
        (Annotation, 1) => S,
        (Annotation, 2) => M("quant_parameter_tensor_names", Entry, true),
        (NodeDevConf, 1 | 3) => S,
        (NodeDevConf, 2) => M("sharding_spec", Sharding, true),
        (Sharding, 1 | 2) => S,
        (Sharding, 3) => M("index_to_device_group_map", IntIntList, true),
        (Sharding, 4) => M("sharded_dim", ShardedDim, true),
        (ShardedDim, 1) => S,
        (ShardedDim, 2) => M("simple_sharding", SimpleSharded, true),
        (SimpleSharded, 1..=3) => S,
        _ => return None,
    };
    Some(f)
}

/// How many places [`unknown_fields`] names before it only counts.
const MAX_LOSSY: usize = 20;

/// Where `bytes` (an encoded `ModelProto`) holds fields the schema does not know, and how deep
/// its messages nest.
fn unknown_fields(bytes: &[u8]) -> (Vec<String>, usize) {
    let mut w = Walk { out: Vec::new(), count: 0, deepest: 0, path: Vec::new() };
    w.walk(bytes, Msg::Model, 0);
    if w.count > MAX_LOSSY {
        let more = w.count - MAX_LOSSY;
        w.out.push(format!("and {more} more"));
    }
    (w.out, w.deepest)
}

fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Skips one field value of wire type `wire` at `pos` (for a group, up to its end).
fn skip(buf: &[u8], pos: &mut usize, wire: u64) -> Option<()> {
    let mut groups = 0usize;
    let mut wire = wire;
    loop {
        match wire {
            0 => {
                varint(buf, pos)?;
            }
            1 => *pos = pos.checked_add(8).filter(|p| *p <= buf.len())?,
            2 => {
                let len = usize::try_from(varint(buf, pos)?).ok()?;
                *pos = pos.checked_add(len).filter(|p| *p <= buf.len())?;
            }
            3 => groups += 1,
            4 => groups = groups.checked_sub(1)?,
            5 => *pos = pos.checked_add(4).filter(|p| *p <= buf.len())?,
            _ => return None,
        }
        if groups == 0 {
            return Some(());
        }
        wire = varint(buf, pos)? & 7;
    }
}

/// How deep the unknown-field walk descends; deeper messages are noted as unchecked.
const WALK_DEPTH: usize = 200;

/// True when the encoded `NodeProto` in `buf` holds only well-formed length-delimited scalar
/// fields the schema knows (inputs, outputs, name, op type, doc string, domain, overload): most
/// nodes, and nothing in them for the walk to note or descend into.
fn plain_node(buf: &[u8]) -> bool {
    let mut pos = 0;
    while pos < buf.len() {
        let Some(key) = varint(buf, &mut pos) else { return false };
        if key & 7 != 2
            || !matches!(field(Msg::Node, key >> 3), Some(Known::Scalar))
            || skip(buf, &mut pos, 2).is_none()
        {
            return false;
        }
    }
    true
}

/// The state of the unknown-field walk. The path to the current message is kept as a stack
/// of (field name, index) and rendered only when something is noted.
struct Walk {
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
        let mut pos = 0;
        while pos < buf.len() {
            let Some(key) = varint(buf, &mut pos) else {
                self.note(format_args!("malformed field"));
                return;
            };
            let (number, wire) = (key >> 3, key & 7);
            let start = pos;
            if skip(buf, &mut pos, wire).is_none() {
                self.note(format_args!("malformed field {number}"));
                return;
            }
            match field(msg, number) {
                None => self.note(format_args!("unknown field {number}")),
                Some(Known::Msg(name, sub, repeated)) if wire == 2 => {
                    let mut inner = start;
                    if varint(buf, &mut inner).is_none() {
                        continue;
                    }
                    let Some(body) = buf.get(inner..pos) else { continue };
                    let index = if repeated {
                        Some(match seen.iter_mut().find(|(n, _)| *n == number) {
                            Some((_, i)) => {
                                *i += 1;
                                *i
                            }
                            None => {
                                seen.push((number, 0));
                                0
                            }
                        })
                    } else {
                        None
                    };
                    if matches!(sub, Msg::Node) && depth < WALK_DEPTH && plain_node(body) {
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

// ---------------------------------------------------------------------------------------------
// Tensor files and external data.

/// Reads a serialized `TensorProto` (a backend test case's `input_0.pb`).
pub fn read_tensor(path: &Path) -> Result<Tensor> {
    let bytes = read_limited(path, MAX_MESSAGE)?;
    let p = onnx::TensorProto::decode(bytes.as_slice())
        .map_err(|e| Error::Decode { path: path.to_path_buf(), reason: format!("not a TensorProto: {e}") })?;
    Ok(tensor_from(p))
}

/// Encodes a tensor as a serialized `TensorProto`.
pub fn encode_tensor(t: &Tensor) -> Vec<u8> {
    tensor_to(t).encode_to_vec()
}

/// Why an external-data `location` is refused, if it is: it must be a plain relative path
/// (no root, drive, `.` or `..` component) so that it stays inside the model's folder. Checks
/// the text only; [`read_external`] also refuses links.
pub fn unsafe_location(location: &str) -> Option<String> {
    let rel = Path::new(location);
    if location.is_empty() {
        return Some("the location is empty".into());
    }
    if location.contains('\0') {
        return Some(format!("location '{}' holds a NUL byte", location.escape_debug()));
    }
    if rel.is_absolute() || rel.has_root() {
        return Some(format!(
            "location '{location}' is an absolute path; only paths inside the model's folder are read"
        ));
    }
    if rel.components().any(|c| !matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir)) {
        return Some(format!("location '{location}' leaves the model's folder ('..' or a drive)"));
    }
    // A backslash is a separator and `:` names a drive or stream on Windows: judge the
    // location as Windows would, too, so that a model is refused the same everywhere.
    if location.split(['/', '\\']).any(|part| part == "..") || location.starts_with('\\') {
        return Some(format!("location '{location}' leaves the model's folder ('..' or a drive)"));
    }
    if location.contains(':') {
        return Some(format!("location '{location}' holds ':', a drive or stream on Windows"));
    }
    None
}

/// Where an externally stored tensor's bytes are, checked with `stat` alone (nothing is read):
/// only a relative location inside `dir`, no symbolic links or multiply-linked files, and an
/// offset and length inside the file. Gives the file's path, its metadata and the length.
pub fn external_extent(
    dir: &Path,
    tensor: &str,
    location: &str,
    offset: u64,
    length: Option<u64>,
) -> Result<(PathBuf, fs::Metadata, u64)> {
    let bad = |reason: String| Error::ExternalData { tensor: tensor.to_string(), reason };
    if let Some(why) = unsafe_location(location) {
        return Err(bad(why));
    }
    let rel = Path::new(location);
    let full = dir.join(rel);
    // Every component below the model's folder must be a real directory or file, not a link.
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        let meta = fs::symlink_metadata(&at).map_err(|e| bad(format!("'{location}': {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(bad(format!("'{location}' goes through a symbolic link")));
        }
    }
    let meta = fs::symlink_metadata(&full).map_err(|e| bad(format!("'{location}': {e}")))?;
    if !meta.is_file() {
        return Err(bad(format!("'{location}' is not a regular file")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(bad(format!(
                "'{location}' has {} hard links; a linked file may live outside the model's folder",
                meta.nlink()
            )));
        }
    }
    let size = meta.len();
    let length = match length {
        Some(l) => l,
        None => size
            .checked_sub(offset)
            .ok_or_else(|| bad(format!("offset {offset} is past the end of '{location}' ({size} bytes)")))?,
    };
    if offset.checked_add(length).is_none_or(|end| end > size) {
        return Err(bad(format!("offset {offset} + length {length} is past the end of '{location}' ({size} bytes)")));
    }
    Ok((full, meta, length))
}

/// Reads the bytes of an externally stored tensor, after [`external_extent`]'s checks.
pub fn read_external(dir: &Path, tensor: &str, location: &str, offset: u64, length: Option<u64>) -> Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let bad = |reason: String| Error::ExternalData { tensor: tensor.to_string(), reason };
    let (full, meta, length) = external_extent(dir, tensor, location, offset, length)?;
    let size = meta.len();
    let capacity =
        usize::try_from(length).map_err(|_| bad(format!("length {length} does not fit in memory on this machine")))?;
    let mut f = fs::File::open(&full).map_err(|e| bad(format!("'{location}': {e}")))?;
    // The file opened must be the one checked above: a link swapped in since is refused.
    let opened = f.metadata().map_err(|e| bad(format!("'{location}': {e}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if opened.dev() != meta.dev() || opened.ino() != meta.ino() || opened.nlink() > 1 {
            return Err(bad(format!("'{location}' changed while it was being opened")));
        }
    }
    if opened.len() < size {
        return Err(bad(format!("'{location}' shrank while it was being opened")));
    }
    f.seek(SeekFrom::Start(offset)).map_err(|e| bad(format!("'{location}': {e}")))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(capacity).map_err(|_| bad(format!("cannot allocate {length} bytes")))?;
    f.take(length).read_to_end(&mut buf).map_err(|e| bad(format!("'{location}': {e}")))?;
    if buf.len() as u64 != length {
        return Err(bad(format!("'{location}' ended after {} of {length} bytes", buf.len())));
    }
    Ok(buf)
}

// ---------------------------------------------------------------------------------------------
// Model-local functions (FunctionProto). Each body is loaded as a graph without a parent so
// that inference can run through it; the functions themselves stay in the model's carry, so
// saving writes them back exactly as read.

impl Loader<'_> {
    fn functions(&mut self, functions: Vec<onnx::FunctionProto>) -> Fast<()> {
        for f in functions {
            let domain = f.domain.clone().unwrap_or_default();
            let name = f.name.clone().unwrap_or_default();
            // Attributes of body nodes that take the caller's value, by node position.
            let refs: Vec<(usize, String, String)> = f
                .node
                .iter()
                .enumerate()
                .flat_map(|(i, n)| {
                    n.attribute.iter().filter_map(move |a| {
                        let r = a.ref_attr_name.as_deref().filter(|r| !r.is_empty())?;
                        Some((i, a.name.clone().unwrap_or_default(), r.to_string()))
                    })
                })
                .collect();
            let value_info = |names: &[String]| -> Vec<onnx::ValueInfoProto> {
                names.iter().map(|n| onnx::ValueInfoProto { name: Some(n.clone()), ..Default::default() }).collect()
            };
            let body = onnx::GraphProto {
                name: Some(name.clone()),
                node: f.node.clone(),
                input: value_info(&f.input),
                output: value_info(&f.output),
                value_info: f.value_info.clone(),
                ..Default::default()
            };
            let label = if domain.is_empty() { name.clone() } else { format!("{domain}.{name}") };
            let graph = self.graph(&body.encode_to_vec(), None, format!("function {label}"), 1)?;
            let order = self.model.graph(graph).order.clone();
            let refs = refs.into_iter().filter_map(|(i, a, r)| Some((*order.get(i)?, a, r))).collect();
            let mut attributes: Vec<(String, Option<AttrValue>)> =
                f.attribute.iter().map(|a| (a.clone(), None)).collect();
            for a in &f.attribute_proto {
                attributes.push((a.name.clone().unwrap_or_default(), Some(simple_attr(a, attr_kind(a)))));
            }
            let opsets = f
                .opset_import
                .iter()
                .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
                .collect();
            self.model.functions.push(crate::ir::Function { domain, name, graph, opsets, attributes, refs });
        }
        Ok(())
    }
}

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
