//! Rules for the `ai.onnx.ml` ops (LabelEncoder, the tree ensembles, classifiers and
//! regressors, ...) and for the text and image ops: TfIdfVectorizer, StringSplit,
//! StringNormalizer, StringConcat, RegexFullMatch and ImageDecoder.

use super::{attr_dim, dim, expect_rank, expect_shape, invalid, numel, outs, tensor_floats, ty, R};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ir::AttrValue;
use crate::ops::{Ctx, Out, RuleError};
use crate::shape::{multi, Assumption, Dim, Shape, Type};

pub fn ml_float_same(c: &Ctx) -> R {
    outs(vec![ty(Some(DType::F32), c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn tfidf(c: &Ctx) -> R {
    // The n-gram lengths run from min_gram_length (1 or more) to max_gram_length, each with
    // its entry of ngram_counts, which onnxruntime checks ("Required min_gram_length must be
    // positive", "max_gram_length must be inbounds of ngram_counts", "max_skip_count must be
    // non-negative").
    let attr = |name| c.node.attr_int(name);
    let (lo, hi, skip) = (attr("min_gram_length"), attr("max_gram_length"), attr("max_skip_count"));
    let counts = c.node.attr_ints("ngram_counts").map_or(0, <[i64]>::len);
    let problem = match (lo, hi, skip) {
        (Some(lo), ..) if lo < 1 => Some(format!("min_gram_length {lo}; it takes 1 or more")),
        (Some(lo), Some(hi), _) if hi < lo => Some(format!("max_gram_length {hi} is below min_gram_length {lo}")),
        (_, Some(hi), _) if hi as u64 > counts as u64 => {
            Some(format!("max_gram_length {hi} with {counts} ngram_counts"))
        }
        (.., Some(skip)) if skip < 0 => Some(format!("max_skip_count {skip} is negative")),
        _ => None,
    };
    if let Some(p) = problem.or_else(|| tfidf_pool(c)) {
        return invalid(format!("TfIdfVectorizer: {p}"));
    }
    let width = c
        .node
        .attr_ints("ngram_indexes")
        .and_then(|v| v.iter().max().and_then(|m| m.checked_add(1)).map(Dim::Known))
        .unwrap_or(Dim::Unknown);
    let shape = match c.shape(0) {
        None => None,
        Some([_]) => Some(vec![width]),
        // onnxruntime: "Input shape must have either [C] or [B,C] dimensions with B > 0".
        Some([Dim::Known(0), _]) => return invalid("TfIdfVectorizer: a batch of 0 rows".into()),
        Some([n, _]) => Some(vec![n.clone(), width]),
        Some(s) => return invalid(format!("TfIdfVectorizer needs a 1-D or 2-D input, not {}-D", s.len())),
    };
    outs(vec![ty(Some(DType::F32), shape)])
}

/// What is wrong with a TfIdfVectorizer's pool: ngram_counts[i] is where its (i+1)-grams
/// start, so each run of the pool holds whole n-grams (onnx's inference: "ngram_indexes must
/// be non-empty with no negative values"; onnxruntime: "non-empty pool_int64s", "items %
/// ngram_size == 0").
fn tfidf_pool(c: &Ctx) -> Option<String> {
    let indexes = c.node.attr_ints("ngram_indexes").unwrap_or_default();
    if indexes.is_empty() || indexes.iter().any(|i| *i < 0) {
        return Some("ngram_indexes must be non-empty with no negative values".into());
    }
    let pool = attr_len(c, "pool_int64s").or_else(|| attr_len(c, "pool_strings")).unwrap_or(0);
    if pool == 0 {
        return Some("the pool is empty".into());
    }
    let counts = c.node.attr_ints("ngram_counts").unwrap_or_default();
    let mut ngrams = 0;
    for (i, start) in counts.iter().enumerate() {
        let end = counts.get(i + 1).copied().unwrap_or(pool as i64);
        match end.checked_sub(*start).filter(|n| *start >= 0 && *n >= 0) {
            Some(n) if n % (i as i64 + 1) == 0 => ngrams += n / (i as i64 + 1),
            _ => return Some(format!("ngram_counts {counts:?} do not cut the pool of {pool} into whole n-grams")),
        }
    }
    // The i-th n-gram of the pool counts at ngram_indexes[i]: onnxruntime reads past a
    // shorter list (it ran one such model and died on another). It refuses weights that are
    // not one per index ("weights and indexes must have equal size").
    if (indexes.len() as i64) < ngrams {
        return Some(format!("{} ngram_indexes for the pool's {ngrams} n-grams", indexes.len()));
    }
    attr_len(c, "weights")
        .filter(|w| *w != indexes.len())
        .map(|w| format!("{w} weights for {} ngram_indexes; it takes one per index", indexes.len()))
}

pub fn string_split(c: &Ctx) -> R {
    let x = c.shape(0).map(<[Dim]>::to_vec);
    // With known strings the widest split is known (Python's `str.split`).
    let width = c.string_value(0).filter(|v| x.as_deref().and_then(numel) == Some(v.len())).map(|v| {
        let delim = c.node.attr_str("delimiter").unwrap_or_default();
        let max = c.node.attr_int("maxsplit").filter(|m| *m >= 0);
        let count = |s: &String| -> usize {
            let pieces = if delim.is_empty() { s.split_whitespace().count() } else { s.split(delim.as_str()).count() };
            max.map_or(pieces, |m| pieces.min(m as usize + 1))
        };
        Dim::Known(v.iter().map(count).max().unwrap_or(0) as i64)
    });
    // An empty input splits into nothing.
    let width = width.or_else(|| (x.as_deref().and_then(numel) == Some(0)).then_some(Dim::Known(0)));
    let y: Option<Shape> = x.as_ref().map(|s| s.iter().cloned().chain([width.unwrap_or(Dim::Unknown)]).collect());
    outs(vec![ty(Some(DType::Str), y), ty(Some(DType::I64), x)])
}

pub fn string_normalizer(c: &Ctx) -> R {
    let mut out = Out::default();
    let shape = match c.shape(0) {
        None => None,
        // The spec's inference: "Input shape must have either [C] or [1,C] dimensions where C > 0".
        Some([] | [.., Dim::Known(0)] | [_, _, _, ..]) => {
            return invalid("StringNormalizer: the input must be [C] or [1, C] with C > 0".into())
        }
        Some(x) => {
            if let [b, n] = x {
                expect_shape(c, 0, &[Dim::Known(1), n.clone()], &mut out)?;
                // onnxruntime runs the spec's inference at load, which wants a literal 1 there.
                if *b != Dim::Known(1) {
                    let msg = format!(
                        "StringNormalizer: onnxruntime refuses to load a 2-D input whose first size is not \
                         declared 1 (here {b})"
                    );
                    out.warnings.push((Code::RuntimeDiffers, msg));
                }
            }
            let stops: Vec<String> = match c.node.attr("stopwords") {
                Some(AttrValue::Strings(w)) => w.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect(),
                _ => Vec::new(),
            };
            let sensitive = c.node.attr_int("is_case_sensitive").unwrap_or(0) != 0;
            let kept = |w: &&String| {
                !w.is_empty()
                    && !stops.iter().any(|s| if sensitive { s == *w } else { s.to_lowercase() == w.to_lowercase() })
            };
            // The words kept, at least one (an empty string where none is).
            let words = c.string_value(0).filter(|v| x.last().and_then(Dim::known) == Some(v.len() as i64));
            let mut shape = vec![Dim::Known(1); x.len() - 1];
            shape.push(words.map_or(Dim::Unknown, |v| Dim::Known(v.iter().filter(kept).count().max(1) as i64)));
            Some(shape)
        }
    };
    out.types = smallvec::smallvec![ty(Some(DType::Str), shape)];
    Ok(out)
}

pub fn string_concat(c: &Ctx) -> R {
    let shape = match (c.shape(0), c.shape(1)) {
        (Some(a), Some(b)) => Some(multi(&[a, b]).map_err(RuleError::Broadcast)?.shape),
        _ => None,
    };
    outs(vec![ty(Some(DType::Str), shape)])
}

pub fn regex_full_match(c: &Ctx) -> R {
    let mut out = Out::default();
    // The schema leaves `pattern` optional, with no default; onnxruntime wants one.
    if c.node.attr("pattern").is_none() {
        let msg = "RegexFullMatch without a pattern, which onnxruntime refuses".to_string();
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    out.types = smallvec::smallvec![ty(Some(DType::Bool), c.shape(0).map(<[Dim]>::to_vec))];
    Ok(out)
}

/// ImageDecoder: height and width come from the encoded header when the bytes are known
/// (PNG, BMP, PNM, JPEG, TIFF, JPEG 2000, WebP); channels from `pixel_format`.
pub fn image_decoder(c: &Ctx) -> R {
    expect_rank(c, 0, 1)?;
    let channels = if c.node.attr_str("pixel_format").as_deref() == Some("Grayscale") { 1 } else { 3 };
    let hw = c.ints(0).and_then(|v| {
        let b: Vec<u8> = v.iter().map(|x| *x as u8).collect();
        image_size(&b).filter(|(h, w)| *h > 0 && *w > 0)
    });
    let (h, w) = hw.map_or((Dim::Unknown, Dim::Unknown), |(h, w)| (Dim::Known(h), Dim::Known(w)));
    outs(vec![ty(Some(DType::U8), Some(vec![h, w, Dim::Known(channels)]))])
}

/// (height, width) from an encoded image's header.
fn image_size(b: &[u8]) -> Option<(i64, i64)> {
    // The unsigned integer in the `n` bytes at `i`, big-endian or little-endian.
    let uint = |i: usize, n: usize, big: bool| -> Option<i64> {
        let bytes = b.get(i..i.checked_add(n)?)?;
        let push = |acc: i64, x: &u8| acc << 8 | i64::from(*x);
        Some(if big { bytes.iter().fold(0, push) } else { bytes.iter().rev().fold(0, push) })
    };
    let be16 = |i| uint(i, 2, true);
    let be32 = |i| uint(i, 4, true);
    if b.starts_with(b"\x89PNG") {
        return Some((be32(20)?, be32(16)?));
    }
    if b.starts_with(b"BM") {
        // Signed: a negative height stores the rows top-down.
        let le32 = |i| Some(uint(i, 4, false)? as u32 as i32 as i64);
        return Some((le32(22)?.abs(), le32(18)?));
    }
    if b.len() > 2 && b[0] == b'P' && (b'1'..=b'6').contains(&b[1]) {
        let text = String::from_utf8_lossy(&b[2..b.len().min(256)]);
        let mut nums = text
            .lines()
            .flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace())
            .map(|t| t.parse::<i64>().ok());
        let (w, h) = (nums.next()??, nums.next()??);
        return Some((h, w));
    }
    if b.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xFF {
                return None;
            }
            i += match b[i + 1] {
                // A start of frame: its height and width.
                0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => return Some((be16(i + 5)?, be16(i + 7)?)),
                // A fill byte, then markers without a length.
                0xFF => 1,
                0xD0..=0xD9 | 0x01 => 2,
                _ => 2 + be16(i + 2)? as usize,
            };
        }
        return None;
    }
    // TIFF: the first IFD's ImageWidth (256) and ImageLength (257) entries.
    if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        let big = b[0] == b'M';
        let u16_at = |i| uint(i, 2, big);
        let u32_at = |i| uint(i, 4, big);
        let ifd = usize::try_from(u32_at(4)?).ok()?;
        let (mut w, mut h) = (None, None);
        for k in 0..u16_at(ifd)? as usize {
            let e = ifd + 2 + 12 * k;
            let value = match u16_at(e + 2)? {
                3 => u16_at(e + 8)?,
                4 => u32_at(e + 8)?,
                _ => continue,
            };
            match u16_at(e)? {
                256 => w = Some(value),
                257 => h = Some(value),
                _ => {}
            }
        }
        return Some((h?, w?));
    }
    // JPEG 2000: the JP2 header box, or a bare codestream's SIZ marker.
    if b.get(4..8) == Some(b"jP  ") {
        let i = b.windows(4).position(|x| x == b"ihdr")?;
        return Some((be32(i + 4)?, be32(i + 8)?));
    }
    if b.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) {
        return Some((be32(12)? - be32(20)?, be32(8)? - be32(16)?));
    }
    if b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WEBP") {
        return match b.get(12..16)? {
            b"VP8 " => Some((uint(28, 2, false)? & 0x3FFF, uint(26, 2, false)? & 0x3FFF)),
            b"VP8L" => {
                let bits = uint(21, 4, false)?;
                Some((((bits >> 14) & 0x3FFF) + 1, (bits & 0x3FFF) + 1))
            }
            b"VP8X" => Some((uint(27, 3, false)? + 1, uint(24, 3, false)? + 1)),
            _ => None,
        };
    }
    None
}

pub fn label_encoder(c: &Ctx) -> R {
    // onnx's inference: one key per value ("The number of keys 3 and the number of values 4
    // must be the same"), and some values at all.
    let count = |names: [&str; 4]| names.iter().find_map(|a| attr_len(c, a));
    let keys = count(["keys_strings", "keys_int64s", "keys_floats", "keys_tensor"]);
    match (keys, count(["values_strings", "values_int64s", "values_floats", "values_tensor"])) {
        (_, None) => return invalid("LabelEncoder: no values are given".into()),
        // "At least one of keys_tensor, keys_strings, keys_int64s, keys_floats must be set".
        (None, _) => return invalid("LabelEncoder: no keys are given".into()),
        (Some(k), Some(v)) if k != v => return invalid(format!("LabelEncoder: {k} keys for {v} values")),
        _ => {}
    }
    let dtype = ["values_strings", "values_int64s", "values_floats", "values_tensor"]
        .iter()
        .find_map(|a| c.node.attr(a).map(|v| (*a, v)))
        .and_then(|(a, v)| match (a, v) {
            ("values_strings", _) => Some(DType::Str),
            ("values_int64s", _) => Some(DType::I64),
            ("values_floats", _) => Some(DType::F32),
            (_, AttrValue::Tensor(t)) => t.dtype,
            _ => None,
        });
    outs(vec![ty(dtype, c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn tree_ensemble(c: &Ctx) -> R {
    targets_fit(c, "leaf_targetids", c.node.attr_int("n_targets"))?;
    if let Some(p) = tree_structure(c) {
        return invalid(format!("TreeEnsemble: {p}"));
    }
    let mut out = model_input(c)?;
    let n = dim(c, 0, 0);
    let t = attr_dim(c, "n_targets");
    out.types = smallvec::smallvec![ty(c.dtype(0), Some(vec![n, t]))];
    Ok(out)
}

/// The input of an ai.onnx.ml model: of rank 2 for the tree ensembles and 1 or 2 for the linear
/// ones (onnx's inference and onnxruntime's kernels refuse others). A tree's branches read its
/// features by index, so it has more than the highest index a branch reads (onnxruntime: "One
/// path in the graph requests feature 2 but input tensor has 2 features"); a leaf's is not read,
/// and TreeEnsemble's nodes are all branches.
fn model_input(c: &Ctx) -> Result<Out, RuleError> {
    let (op, mut out) = (c.node.op_type.as_str(), Out::default());
    let (ranks, want) = match op {
        _ if op.starts_with("TreeEnsemble") => (2..=2, "2"),
        "LinearClassifier" | "LinearRegressor" => (1..=2, "1 or 2"),
        _ => return Ok(out),
    };
    let Some(x) = c.shape(0) else { return Ok(out) };
    if !ranks.contains(&x.len()) {
        return invalid(format!("{op}: input of rank {}, not {want}", x.len()));
    }
    let modes = match c.node.attr("nodes_modes") {
        Some(AttrValue::Strings(m)) => m.as_slice(),
        _ => &[],
    };
    let ids = c.node.attr_ints("nodes_featureids").unwrap_or_default();
    let read = ids.iter().enumerate().filter(|(k, _)| modes.get(*k).is_none_or(|m| m != b"LEAF"));
    let (Some(need), [_, features]) = (read.map(|(_, id)| id.saturating_add(1)).max(), x) else { return Ok(out) };
    match features {
        Dim::Known(n) if *n < need => {
            return invalid(format!("{op}: a branch reads feature {} of an input with {n}", need - 1))
        }
        Dim::Term(t) if need > 1 => out.assumptions.push((1, Assumption::AtLeast { size: t.clone(), min: need })),
        _ => {}
    }
    Ok(out)
}

pub fn array_feature_extractor(c: &Ctx) -> R {
    let shape = match (c.shape(0), c.shape(1)) {
        (Some(x), Some(y)) if !x.is_empty() => {
            // onnxruntime gives a 1-D input a leading axis of 1.
            let mut s = if x.len() == 1 { vec![Dim::Known(1)] } else { x[..x.len() - 1].to_vec() };
            s.push(Dim::product(y));
            Some(s)
        }
        _ => None,
    };
    let mut out = outs(vec![ty(c.dtype(0), shape)])?;
    if c.shape(1).and_then(|y| Dim::product(y).known()) == Some(0) {
        let msg = "ArrayFeatureExtractor: no indices; onnxruntime refuses them (\"num_indices = 0\")";
        out.warnings.push((Code::RuntimeDiffers, msg.into()));
    }
    Ok(out)
}

/// The batch size of an ai.onnx.ml input: its first dim, or 1 for a 1-D input.
fn ml_batch(c: &Ctx) -> Dim {
    match c.shape(0) {
        Some([n, _]) => n.clone(),
        Some([_]) => Dim::Known(1),
        _ => Dim::Unknown,
    }
}

/// LinearClassifier, SVMClassifier, TreeEnsembleClassifier: a label per row (int64 or string,
/// as the class labels are) and a score per row and class.
pub fn ml_classifier(c: &Ctx) -> R {
    let mut out = model_input(c)?;
    let n = ml_batch(c);
    let label = if c.node.attr("classlabels_strings").is_some() { DType::Str } else { DType::I64 };
    out.types =
        smallvec::smallvec![ty(Some(label), Some(vec![n.clone()])), ty(Some(DType::F32), Some(vec![n, Dim::Unknown]))];
    Ok(out)
}

/// What is wrong with TreeEnsemble's nodes and leaves: one entry per node in each nodes_*
/// attribute and one target per leaf weight (onnx's inference: "Attribute 'nodes_falseleafs'
/// must have 3 elements"), roots that are nodes, and each branch to a node or, where its leaf
/// flag is set, a leaf that exists (onnxruntime checks each tree as it reads it).
fn tree_structure(c: &Ctx) -> Option<String> {
    let ints = |a: &str| c.node.attr_ints(a).unwrap_or_default();
    let len = |a: &str| attr_len(c, a);
    let nodes = len("nodes_featureids")?;
    let per_node = [
        "nodes_truenodeids",
        "nodes_falsenodeids",
        "nodes_trueleafs",
        "nodes_falseleafs",
        "nodes_modes",
        "nodes_splits",
    ];
    if let Some((a, k)) = per_node.iter().find_map(|a| len(a).filter(|k| *k != nodes).map(|k| (a, k))) {
        return Some(format!("{a} has {k} entries for {nodes} nodes"));
    }
    let leaves = len("leaf_weights").unwrap_or(0);
    if let Some(k) = len("leaf_targetids").filter(|k| *k != leaves) {
        return Some(format!("{k} leaf_targetids for {leaves} leaf_weights"));
    }
    if let Some(r) = ints("tree_roots").iter().find(|r| usize::try_from(**r).map_or(true, |r| r >= nodes)) {
        return Some(format!("tree root {r} is not one of the {nodes} nodes"));
    }
    if let Some(f) = ints("nodes_featureids").iter().find(|f| **f < 0) {
        return Some(format!("nodes_featureids holds {f}"));
    }
    if let Some(t) = ints("leaf_targetids").iter().find(|t| **t < 0) {
        return Some(format!("leaf_targetids holds {t}"));
    }
    // Each BRANCH_MEMBER node (mode 6) tests its own set of membership_values, the sets in
    // node order, each ended by a NaN (onnxruntime: "TreeEnsemble membership node 1 must have
    // at least one membership value").
    let tensor = |a: &str| match c.node.attr(a) {
        Some(AttrValue::Tensor(t)) => Some(t),
        _ => None,
    };
    let modes = tensor("nodes_modes").and_then(|t| t.ints(nodes)).unwrap_or_default();
    let members: Vec<usize> = modes.iter().enumerate().filter(|(_, m)| **m == 6).map(|(k, _)| k).collect();
    if !members.is_empty() {
        let values = tensor("membership_values").and_then(|t| tensor_floats(t, usize::MAX)).unwrap_or_default();
        let sets: Vec<usize> = values.split(|v| v.is_nan()).map(<[f64]>::len).collect();
        if let Some((_, k)) = members.iter().enumerate().find(|(i, _)| sets.get(*i).is_none_or(|n| *n == 0)) {
            return Some(format!("membership node {k} has no membership_values"));
        }
    }
    // Each node's branches to nodes (the lists hold one entry per node, checked above).
    let mut next = vec![Vec::new(); nodes];
    for (ids, flags) in [("nodes_truenodeids", "nodes_trueleafs"), ("nodes_falsenodeids", "nodes_falseleafs")] {
        for (k, (to, leaf)) in ints(ids).iter().zip(ints(flags)).enumerate() {
            let (bound, what) = if *leaf != 0 { (leaves, "leaves") } else { (nodes, "nodes") };
            let Some(to) = usize::try_from(*to).ok().filter(|t| *t < bound) else {
                return Some(format!("node {k} branches ({ids}) to {to}, not one of the {bound} {what}"));
            };
            if *leaf == 0 {
                next[k].push(to);
            }
        }
    }
    // Within a tree no node is reached twice, by a cycle or by two branches (onnxruntime:
    // "TreeEnsemble contains a cycle or shared internal node"); trees may share nodes.
    let mut seen = vec![usize::MAX; nodes];
    for (tree, root) in ints("tree_roots").iter().filter_map(|r| usize::try_from(*r).ok()).enumerate() {
        let mut stack = vec![root];
        while let Some(k) = stack.pop() {
            if std::mem::replace(&mut seen[k], tree) == tree {
                return Some(format!("node {k} is reached twice in tree {tree}"));
            }
            stack.extend(&next[k]);
        }
    }
    None
}

/// The number of entries of an attribute: a list's length, a tensor's elements.
fn attr_len(c: &Ctx, name: &str) -> Option<usize> {
    match c.node.attr(name)? {
        AttrValue::Ints(v) => Some(v.len()),
        AttrValue::Floats(v) => Some(v.len()),
        AttrValue::Strings(v) => Some(v.len()),
        AttrValue::Tensor(t) => t.len(),
        _ => None,
    }
}

/// The tree ensembles give `count` targets, each leaf's id one of them (onnxruntime: "target/class
/// count must be positive", "At least one value (3) in target/class ids is greater or equal to
/// the target/class count (3)").
fn targets_fit(c: &Ctx, ids: &str, count: Option<i64>) -> Result<(), RuleError> {
    let op = &c.node.op_type;
    match (count, c.node.attr_ints(ids).and_then(|v| v.iter().max())) {
        (Some(n), _) if n < 1 => invalid(format!("{op}: n_targets {n}; it takes 1 or more")),
        (Some(n), Some(id)) if *id >= n => invalid(format!("{op}: {ids} holds {id}, past the {n} targets")),
        _ => Ok(()),
    }
}

/// LinearRegressor, SVMRegressor, TreeEnsembleRegressor: `[N, targets]` floats.
pub fn ml_regressor(c: &Ctx) -> R {
    if c.node.op_type == "TreeEnsembleRegressor" {
        targets_fit(c, "target_ids", c.node.attr_int("n_targets"))?;
    }
    let targets = c.node.attr_int("targets").or(c.node.attr_int("n_targets")).unwrap_or(1);
    let targets = if c.node.op_type == "SVMRegressor" { 1 } else { targets };
    let mut out = model_input(c)?;
    out.types = smallvec::smallvec![ty(Some(DType::F32), Some(vec![ml_batch(c), Dim::Known(targets)]))];
    Ok(out)
}

/// FeatureVectorizer: `[N, sum(inputdimensions)]` floats.
pub fn feature_vectorizer(c: &Ctx) -> R {
    let width = c
        .node
        .attr_ints("inputdimensions")
        .and_then(|d| d.iter().try_fold(0i64, |a, x| a.checked_add(*x)))
        .map_or(Dim::Unknown, Dim::Known);
    outs(vec![ty(Some(DType::F32), Some(vec![ml_batch(c), width]))])
}

/// OneHotEncoder: the input's shape with a trailing axis of one entry per category.
pub fn ml_one_hot_encoder(c: &Ctx) -> R {
    let cats = match (c.node.attr("cats_int64s"), c.node.attr("cats_strings")) {
        (Some(AttrValue::Ints(v)), _) => Dim::Known(v.len() as i64),
        (_, Some(AttrValue::Strings(v))) => Dim::Known(v.len() as i64),
        _ => Dim::Unknown,
    };
    let shape = c.shape(0).map(|s| s.iter().cloned().chain(std::iter::once(cats.clone())).collect());
    outs(vec![ty(Some(DType::F32), shape)])
}

/// ZipMap: a sequence of maps, one per row (not a tensor).
pub fn zip_map(_: &Ctx) -> R {
    outs(vec![Some(Type::Sequence(Some(Box::new(Type::Other))))])
}

pub fn category_mapper(c: &Ctx) -> R {
    let to = if c.dtype(0) == Some(DType::Str) { DType::I64 } else { DType::Str };
    outs(vec![ty(Some(to), c.shape(0).map(<[Dim]>::to_vec))])
}
