//! Rules for ops over sequences and for control flow: If's condition, RNN/GRU/LSTM, the
//! attention ops (Attention, RotaryEmbedding, FlexAttention, LinearAttention,
//! CausalConvWithState), TensorScatter, the Optional* and Sequence* ops, and the outputs of
//! Loop and Scan.

use super::{
    attr_dim, attr_dtype, axis_in, dim, exact_div, expect_rank, expect_shape, first_value, invalid, like_input,
    not_empty, one_element, op_err, outs, pin_shapes, rank_only, same_type_of, ty, unknown_rank, with_dim, R,
};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ops::{Ctx, Out, RuleError};
use crate::shape::{arith, render, uni, Assumption, Dim, Type};

/// If's condition holds one element (the spec); inference takes the outputs from the branches.
pub fn if_cond(c: &Ctx) -> R {
    one_element(c, 0)?;
    Ok(Out::default())
}

pub fn rnn(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let dirs = Dim::Known(if c.node.attr_str("direction").as_deref() == Some("bidirectional") { 2 } else { 1 });
    // Without the attribute the spec's hidden size is R's last (its reference reads it there).
    let op = c.node.op_type.as_str();
    let hidden_size = c.node.attr_int("hidden_size");
    let hidden = hidden_size.map_or_else(|| dim(c, 2, 2), Dim::Known);
    let layout = c.node.attr_int("layout").unwrap_or(0);
    // Every output is optional; onnxruntime: "At least one output should be requested".
    if c.node.outputs().iter().all(Option::is_none) {
        return invalid(format!("{op}: no output is asked for"));
    }
    expect_rank(c, 0, 3)?;
    let Some(x) = c.shape(0) else {
        let unknown = |rank| ty(dtype, Some(unknown_rank(rank)));
        return outs(vec![unknown(4), unknown(3), unknown(3)]);
    };
    // Layout 0: X is [seq, batch, input], Y [seq, dirs, batch, hidden], Y_h [dirs, batch,
    // hidden]; layout 1 puts the batch first in all three.
    let (x0, x1) = (x[0].clone(), x[1].clone());
    let (batch, y, yh) = if layout == 0 {
        (x1.clone(), vec![x0, dirs.clone(), x1.clone(), hidden.clone()], vec![dirs.clone(), x1, hidden.clone()])
    } else {
        (x0.clone(), vec![x0.clone(), x1, dirs.clone(), hidden.clone()], vec![x0, dirs.clone(), hidden.clone()])
    };
    // The weights as onnxruntime checks them: W [dirs, gates*hidden, input], R [dirs,
    // gates*hidden, hidden], B [dirs, 2*gates*hidden], sequence_lens [batch], initial states
    // like Y_h, LSTM's peepholes P [dirs, 3*hidden].
    let gates = hidden.mul(&Dim::Known(match op {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    }));
    let mut out = Out::default();
    expect_shape(c, 1, &[dirs.clone(), gates.clone(), x[2].clone()], &mut out)?;
    expect_shape(c, 2, &[dirs.clone(), gates.clone(), hidden.clone()], &mut out)?;
    expect_shape(c, 3, &[dirs.clone(), gates.mul(&Dim::Known(2))], &mut out)?;
    expect_shape(c, 4, &[batch], &mut out)?;
    for i in [5, 6] {
        expect_shape(c, i, &yh, &mut out)?;
    }
    expect_shape(c, 7, &[dirs, hidden.mul(&Dim::Known(3))], &mut out)?;
    if layout != 0 {
        let msg = format!("{op}: layout {layout}; onnxruntime runs only layout 0 (batch second)");
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    // onnxruntime 1.32 wants the attribute (and above 0 for GRU and LSTM) at load, and aborts
    // the process on an empty batch (and for GRU an empty sequence or input). GRU and LSTM
    // take a clip above 0 only ("clip_ > 0.f was false"); the spec bounds none.
    let clip = c.node.attr_float("clip").filter(|v| op != "RNN" && (v.is_nan() || *v <= 0.0));
    let refused = match hidden_size {
        None => Some("no hidden_size".to_string()),
        Some(0) if op != "RNN" => Some("hidden_size 0".to_string()),
        _ => clip.map(|v| format!("clip {v}")),
    };
    if let Some(what) = refused {
        out.warnings.push((Code::RuntimeDiffers, format!("{op}: {what}; onnxruntime refuses it")));
    }
    if layout == 0 && op != "RNN" {
        not_empty(&x[1], 1, &format!("{op}: an empty batch"), &mut out);
        if op == "GRU" {
            not_empty(&x[0], 0, "GRU: an empty sequence", &mut out);
            not_empty(&x[2], 2, "GRU: an empty input size", &mut out);
        }
    }
    out.types = smallvec::smallvec![ty(dtype, Some(y)), ty(dtype, Some(yh.clone())), ty(dtype, Some(yh))];
    Ok(out)
}

pub fn attention(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(q), Some(k), Some(v)) = (c.shape(0), c.shape(1), c.shape(2)) else {
        return outs(vec![
            ty(dtype, rank_only(c, 0)),
            ty(c.dtype(1), Some(unknown_rank(4))),
            ty(c.dtype(2), Some(unknown_rank(4))),
            ty(dtype, Some(unknown_rank(4))),
        ]);
    };
    let qh = attr_dim(c, "q_num_heads");
    let kvh = attr_dim(c, "kv_num_heads");
    // onnx's inference: "left_window_size must be -1 or nonnegative, got -2".
    for side in ["left_window_size", "right_window_size"] {
        if let Some(w) = c.node.attr_int(side).filter(|w| *w < -1) {
            return invalid(format!("Attention: {side} {w}; it takes -1 (no window) or 0 or more"));
        }
    }
    // The kernels of opsets 23 and 24 give the scores asked for as output 3 at one of four
    // points, or none at -1 ("qk_matmul_output_mode must be 0, 1, 2, or 3").
    let mode = c.node.attr_int("qk_matmul_output_mode").unwrap_or(0);
    if c.opset < 25 && c.asks(3) && !(-1..=3).contains(&mode) {
        return invalid(format!("Attention: qk_matmul_output_mode {mode}; it takes 0 to 3 (or -1)"));
    }
    // Head counts with 4-D inputs: onnx 25's inference refuses any ("q_num_heads and
    // kv_num_heads must not be specified for 4D inputs"); the kernels of opsets 23 and 24 check
    // a positive one against the heads axis ("q_num_heads different from Q.shape[1]").
    for (attr, x, given) in [("q_num_heads", q, &qh), ("kv_num_heads", k, &kvh)] {
        let Some(n) = given.known().filter(|_| x.len() == 4) else { continue };
        if c.opset >= 25 && q.len() == 4 {
            return invalid(format!("Attention: {attr} is given with 4-D inputs, which opset {} refuses", c.opset));
        }
        if n > 0 && x[1].known().is_some_and(|h| h != n) {
            return invalid(format!("Attention: {attr}={n}, and the 4-D input has {} heads", x[1]));
        }
    }
    // The schema wants both head counts for a 3-D Q, at every opset.
    let heads = match (q.len(), qh.known(), kvh.known()) {
        (3, Some(a), Some(b)) => Some((a, b)),
        (3, ..) => return invalid("Attention: 3-D inputs need q_num_heads and kv_num_heads".into()),
        _ => None,
    };
    let (b, q_heads, q_seq) = match q.len() {
        4 => (q[0].clone(), q[1].clone(), q[2].clone()),
        3 => (q[0].clone(), qh.clone(), q[1].clone()),
        r => return invalid(format!("Attention: Q has rank {r}")),
    };
    let (kv_heads, kv_seq, head) = match k.len() {
        4 => (k[1].clone(), k[2].clone(), k[3].clone()),
        3 => (kvh.clone(), k[1].clone(), k[2].div_floor(&kvh)),
        r => return invalid(format!("Attention: K has rank {r}")),
    };
    let v_head = match v.len() {
        4 => v[3].clone(),
        3 => v[2].div_floor(&kvh),
        r => return invalid(format!("Attention: V has rank {r}")),
    };
    // onnxruntime 1.32 has Attention kernels for opsets 23 and 24; from opset 25 it runs the
    // function body. Both multiply Q by K's transpose and the scores by V, so Q's head size is
    // K's and V's sequence K's, and split a 3-D input's last size into its heads (see
    // `attention_checks`); the kernels also want nonpad_kv_seqlen [batch] (as the spec says).
    let mut out = Out::default();
    // The kernels refuse a scale of 0 or below ("scale must be greater than 0 if specified").
    if let Some(s) = c.node.attr_float("scale").filter(|s| *s <= 0.0 && c.opset < 25) {
        let msg = format!("Attention: scale {s}; onnxruntime's kernel refuses a scale that is not positive");
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    let sizes = [&b, &q_heads, &q_seq, &kv_heads, &kv_seq, &head, &v_head];
    attention_checks(q, k, v, sizes, heads, c.opset < 25, &mut out)?;
    // The opset-25 body broadcasts it against the batch, so [1] serves any batch there.
    if c.opset < 25 || c.shape(6).is_some_and(|n| n.len() != 1 || n[0].known() != Some(1)) {
        expect_shape(c, 6, std::slice::from_ref(&b), &mut out)?;
    }
    // The spec's past_key [batch, kv heads, past, head size] and past_value (V's head size),
    // given together, which the kernels and the opset-25 body's Concat enforce; no
    // nonpad_kv_seqlen with them (nor, from opset 25, with present_key or present_value).
    if c.has(4) != c.has(5) {
        return invalid("Attention: past_key and past_value come together".into());
    }
    // present_key and present_value come together too (onnx 25's inference: "must be
    // requested together"); the kernels of opsets 23 and 24 write a past's through them
    // ("!((past_key != nullptr) && (present_key == nullptr)) was false").
    if c.asks(1) != c.asks(2) && (c.opset >= 25 || c.has(4)) {
        return invalid("Attention: present_key and present_value come together".into());
    }
    if c.opset < 25 && c.has(4) && !c.asks(1) {
        return invalid(format!(
            "Attention: a past without present_key and present_value, which the opset-{} kernel writes",
            c.opset
        ));
    }
    let present = c.opset >= 25 && c.asks(1);
    if c.has(6) && (c.has(4) || present) {
        return invalid("Attention: nonpad_kv_seqlen with a past or present cache".into());
    }
    let past = if c.has(4) { dim(c, 4, 2) } else { Dim::Known(0) };
    for (i, size) in [(4, &head), (5, &v_head)] {
        expect_shape(c, i, &[b.clone(), kv_heads.clone(), past.clone(), size.clone()], &mut out)?;
    }
    let y = if q.len() == 4 {
        vec![b.clone(), q_heads.clone(), q_seq.clone(), v_head.clone()]
    } else {
        vec![b.clone(), q_seq.clone(), q_heads.mul(&v_head)]
    };
    let total = past.add(&kv_seq);
    // The mask stretches to [batch, heads, q_seq]. Along its last axis it stretches to `total`
    // at opset 23 and holds at most `total` at 24, which pads a shorter one (onnxruntime
    // 1.32's kernels want it exact); the opset-25 body takes any.
    if let Some((last, lead)) = c.shape(3).and_then(|m| m.split_last()) {
        let scores = [b.clone(), q_heads.clone(), q_seq.clone()];
        let stretch = uni(&scores, lead, 3).map_err(|_| {
            let (m, scores) = (render(lead), render(&scores));
            RuleError::Invalid(format!("Attention: the mask's leading sizes {m} do not stretch to {scores}"))
        })?;
        out.assumptions.extend(stretch.assumptions);
        let fits = |(l, t): (i64, i64)| match c.opset {
            ..=23 => l == t || l == 1,
            24 => l <= t,
            _ => true,
        };
        if let Some((l, t)) = last.known().zip(total.known()).filter(|lt| !fits(*lt)) {
            return invalid(format!("Attention: the mask's last size {l} does not fit the {t} keys"));
        }
        // onnxruntime's kernels take a mask of rank 2 to 4 ending in exactly [q_seq, keys].
        let differs = |a: &Dim, b: &Dim| a.known().zip(b.known()).is_some_and(|(a, b)| a != b);
        let rows = lead.last().unwrap_or(&Dim::Known(1));
        if c.opset <= 24 && (!(1..=3).contains(&lead.len()) || differs(rows, &q_seq) || differs(last, &total)) {
            let mask = render(c.shape(3).unwrap_or_default());
            let msg = format!(
                "Attention: onnxruntime takes a mask only of rank 2 to 4 ending in [{q_seq}, {total}], not {mask}"
            );
            out.warnings.push((Code::RuntimeDiffers, msg));
        }
    }
    out.types = smallvec::smallvec![
        ty(dtype, Some(y)),
        ty(c.dtype(1), Some(vec![b.clone(), kv_heads.clone(), total.clone(), head])),
        ty(c.dtype(2), Some(vec![b.clone(), kv_heads, total.clone(), v_head])),
        ty(dtype, Some(vec![b, q_heads, q_seq, total])),
    ];
    Ok(out)
}

/// Attention's shape checks: Q's head size is K's, V's sequence K's, a 3-D input's last size
/// splits into its heads and K's heads divide Q's. With `kernel` (onnxruntime's opset-23/24
/// kernels) also one rank, one batch, V's heads K's and no size 0; without (the opset-25
/// function body) K's head size of 1 and a 4-D K's or V's batch or V's sequence of 1
/// broadcast.
fn attention_checks(
    q: &[Dim],
    k: &[Dim],
    v: &[Dim],
    sizes: [&Dim; 7],
    heads: Option<(i64, i64)>,
    kernel: bool,
    out: &mut Out,
) -> Result<(), RuleError> {
    if kernel && (q.len() != k.len() || k.len() != v.len()) {
        return invalid(format!("Attention: Q, K and V have ranks {}, {} and {}", q.len(), k.len(), v.len()));
    }
    let [b, q_heads, _, kv_heads, kv_seq, head, _] = sizes;
    let q_head = match heads {
        None if q.len() == 4 => q[3].clone(),
        None => Dim::Unknown,
        Some((qh, kvh)) => {
            let q_head = exact_head(&q[2], qh, "Attention: Q's hidden size", out)?;
            for (s, what) in [(k, "Attention: K's hidden size"), (v, "Attention: V's hidden size")] {
                if s.len() == 3 {
                    exact_head(&s[2], kvh, what, out)?;
                }
            }
            q_head
        }
    };
    let v_seq = if v.len() == 4 { &v[2] } else { &v[1] };
    // The opset-25 body broadcasts K's head size of 1, and a 4-D V's sequence of 1.
    for (what, x, y, ones) in [("head size", &q_head, head, true), ("sequence", kv_seq, v_seq, v.len() == 4)] {
        if !kernel && ones && *y == Dim::Known(1) {
            continue;
        }
        let (_, same) = x.pin(y).ok_or_else(|| RuleError::Invalid(format!("Attention: {what} {x} and {y} differ")))?;
        out.assumptions.extend(same.map(|s| (0, s)));
    }
    if let (Some(a), Some(h)) = (q_heads.known(), kv_heads.known()) {
        if h <= 0 || a % h != 0 {
            return invalid(format!("Attention: {h} heads of K and V do not divide Q's {a}"));
        }
    }
    if !kernel {
        // The spec names one batch; the body broadcasts 4-D inputs (a batch of 1 runs) and
        // onnxruntime refuses other batches ("invalid expand shape"), but reshapes a 3-D V by
        // Q's batch into a shape of no meaning ([2, 4, 60] from [5, 6, 6]).
        for (name, s) in [("K", k), ("V", v)] {
            if let Some((x, y)) = s[0].known().zip(b.known()).filter(|(x, y)| x != y && !(*x == 1 && s.len() == 4)) {
                return invalid(format!("Attention: {name} has a batch of {x}, Q of {y}"));
            }
        }
        return Ok(());
    }
    for y in [&k[0], &v[0]] {
        let (_, same) = b.pin(y).ok_or_else(|| RuleError::Invalid(format!("Attention: batch {b} and {y} differ")))?;
        out.assumptions.extend(same.map(|s| (0, s)));
    }
    if v.len() == 4 && v[1].known().zip(k[1].known()).is_some_and(|(x, y)| x != y) {
        return invalid(format!("Attention: V has {} heads, K {}", v[1], k[1]));
    }
    if sizes.iter().any(|d| d.known() == Some(0)) {
        return invalid("Attention: a batch, head count, sequence or head size is 0".into());
    }
    Ok(())
}

/// A packed attention input's last size `d` over its `heads`, which must divide it: an error
/// (`what` names the size) where it does not, the condition that it does for a symbolic one.
fn exact_head(d: &Dim, heads: i64, what: &str, out: &mut Out) -> Result<Dim, RuleError> {
    if heads <= 0 {
        return invalid(format!("{what}: {heads} heads"));
    }
    let (part, multiple) = exact_div(d, heads).map_err(|e| RuleError::Invalid(format!("{what}: {e}")))?;
    out.assumptions.extend(multiple.map(|m| (0, m)));
    Ok(part)
}

/// Inputs present with a known shape have the ranks `ranks` lists in input order
/// (onnxruntime refuses others: "Input i expected to have rank r").
fn expect_ranks(c: &Ctx, ranks: &[usize]) -> Result<(), RuleError> {
    ranks.iter().enumerate().try_for_each(|(i, r)| expect_rank(c, i, *r))
}

/// RotaryEmbedding: like the input, [batch, heads, seq, head] or [batch, seq, hidden] with
/// num_heads dividing hidden. The cos and sin caches, of one shape, hold half the rotary size
/// (the head size unless `rotary_embedding_dim`, at most it, says): [batch, seq, rot/2], or
/// [positions, rot/2] with position_ids [batch, seq]. The spec's rules, which onnxruntime checks.
/// onnxruntime also refuses a sequence longer than the positions.
pub fn rotary_embedding(c: &Ctx) -> R {
    let mut out = like_input(c);
    // onnxruntime: "num_heads_attr >= 0" (0, the default, reads the heads from a 4-D input).
    if let Some(n) = c.node.attr_int("num_heads").filter(|n| *n < 0) {
        return invalid(format!("RotaryEmbedding: num_heads {n} is negative"));
    }
    let Some(x) = c.shape(0) else { return Ok(out) };
    let (b, seq, head) = match (x.len(), c.node.attr_int("num_heads")) {
        (4, _) => (&x[0], &x[2], x[3].clone()),
        (3, Some(n)) => (&x[0], &x[1], exact_head(&x[2], n, "RotaryEmbedding: the hidden size", &mut out)?),
        (3, None) => return invalid("RotaryEmbedding: a 3-D input needs num_heads".into()),
        (r, _) => return invalid(format!("RotaryEmbedding: input rank {r} is not 3 or 4")),
    };
    let rot = match c.node.attr_int("rotary_embedding_dim").filter(|d| *d != 0) {
        Some(r) if r < 0 || head.known().is_some_and(|h| r > h) => {
            return invalid(format!("RotaryEmbedding: rotary_embedding_dim {r} is not in 0..={head}"))
        }
        Some(r) => Dim::Known(r),
        None => head,
    };
    let half = rot.div_floor(&Dim::Known(2));
    let cache = if c.has(3) {
        expect_shape(c, 3, &[b.clone(), seq.clone()], &mut out)?;
        // onnxruntime wants a cache row per position of the sequence ("Updating cos_cache and
        // sin_cache in RotaryEmbedding is not currently supported"); the spec only that the
        // ids index the cache.
        let rows = dim(c, 1, 0);
        match (seq, rows.known()) {
            (Dim::Known(s), Some(r)) if *s > r => {
                let msg =
                    format!("RotaryEmbedding: a sequence of {s} over a cache of {r} rows; onnxruntime refuses it");
                out.warnings.push((Code::RuntimeDiffers, msg));
            }
            (Dim::Term(t), Some(max)) => {
                out.assumptions.push((x.len() - 2, Assumption::AtMost { size: t.clone(), max }))
            }
            _ => {}
        }
        vec![rows, half]
    } else {
        vec![b.clone(), seq.clone(), half]
    };
    expect_shape(c, 1, &cache, &mut out)?;
    expect_shape(c, 2, &cache, &mut out)?;
    Ok(out)
}

pub fn flex_attention(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(q), Some(v)) = (c.shape(0), c.shape(2)) else { return outs(vec![ty(dtype, Some(unknown_rank(4)))]) };
    if q.len() != 4 || v.len() != 4 {
        return invalid("FlexAttention needs rank-4 Q, K and V".into());
    }
    outs(vec![ty(dtype, Some(vec![q[0].clone(), q[1].clone(), q[2].clone(), v[3].clone()]))])
}

/// LinearAttention (opset 27, and onnxruntime's com.microsoft op of that name): packed query
/// [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv], state [B, Hkv, dk, dv]. The
/// schema's inference (onnxruntime quotes it) wants both head counts, positive, Hkv dividing
/// Hq; the decay input exactly for the gated rules and beta for the delta ones; these ranks and
/// sizes; decay's last size Hkv or Hkv*dk and beta's 1 or Hkv. The contrib op, as its CPU
/// kernel checks it, also takes Hq dividing Hkv (an output per kv head), a key of fewer heads
/// dividing Hkv, decay and beta its rule does not read, and a `state_window` W > 0 leading the
/// states; its query and value sizes must be above 0.
pub fn linear_attention(c: &Ctx) -> R {
    let op = op_err("LinearAttention");
    let ms = c.node.domain == "com.microsoft";
    let (Some(qh), Some(kvh)) = (c.node.attr_int("q_num_heads"), c.node.attr_int("kv_num_heads")) else {
        return Err(op("q_num_heads and kv_num_heads are required".into()));
    };
    let window = c.node.attr_int("state_window").unwrap_or(0);
    if qh <= 0 || kvh <= 0 || window < 0 || (qh % kvh != 0 && !(ms && kvh % qh == 0)) {
        return Err(op(format!("q_num_heads {qh} is not a positive multiple of kv_num_heads {kvh}")));
    }
    update_rule(c, ms).map_err(&op)?;
    let lead: Vec<Dim> = if window > 0 { vec![Dim::Known(window)] } else { vec![] };
    expect_ranks(c, &[3, 3, 3, 4 + lead.len(), 3, 3])?;
    let dtype = c.dtype(0);
    let state = if c.has(3) { c.dtype(3) } else { dtype };
    let (Some(q), Some(k), Some(v)) = (c.shape(0), c.shape(1), c.shape(2)) else {
        return outs(vec![ty(dtype, Some(unknown_rank(3))), ty(state, Some(unknown_rank(4 + lead.len())))]);
    };
    if let Some(what) = [("query", &q[2]), ("value", &v[2])].iter().find(|(_, d)| ms && d.known() == Some(0)) {
        return Err(op(format!("the {} has a last size of 0", what.0)));
    }
    let mut out = Out::default();
    let dk = exact_head(&q[2], qh, "LinearAttention: the query's last size", &mut out)?;
    let dv = exact_head(&v[2], kvh, "LinearAttention: the value's last size", &mut out)?;
    // The key's heads: Hkv of them, or with the contrib op any count that divides Hkv.
    let key_heads = if ms { k[2].div_floor(&dk) } else { Dim::Known(kvh) };
    if let (true, Some(kd), Some(d), Some(n)) = (ms, k[2].known(), dk.known(), key_heads.known()) {
        if d == 0 || kd % d != 0 || n <= 0 || kvh % n != 0 {
            return Err(op(format!("a key of {kd} is not heads of {d} dividing kv_num_heads {kvh}")));
        }
    }
    let (b, t) = (&q[0], &q[1]);
    let key = [b.clone(), t.clone(), key_heads.mul(&dk)];
    // The contrib op's key heads were checked above: its batch and sequence are the query's.
    let key = if ms { &key[..2] } else { &key[..] };
    for (what, x, y) in [("key", &k[..key.len()], key), ("value", &v[..2], &q[..2])] {
        pin_shapes(x, y, &mut out).map_err(|e| op(format!("the {what} sizes are not the query's: {e}")))?;
    }
    let (kvh, qh) = (Dim::Known(kvh), Dim::Known(qh));
    let present = [&lead[..], &[b.clone(), kvh.clone(), dk.clone(), dv.clone()]].concat();
    expect_shape(c, 3, &present, &mut out)?;
    for (i, name, lasts) in [(4, "decay", [kvh.clone(), kvh.mul(&dk)]), (5, "beta", [Dim::Known(1), kvh.clone()])] {
        let Some(s) = c.shape(i) else { continue };
        pin_shapes(&s[..2], &q[..2], &mut out).map_err(|e| op(format!("{name}'s sizes are not the query's: {e}")))?;
        if s[2].known().is_some_and(|l| lasts.iter().all(|x| x.known().is_some_and(|x| x != l))) {
            return Err(op(format!("{name}'s last size {} is not {} or {}", s[2], lasts[0], lasts[1])));
        }
    }
    // onnxruntime 1.32 runs the standard op as its function body, which reshapes the query to
    // [B, T, heads, -1]: an empty batch or sequence leaves the -1 undetermined, and so do empty
    // heads where it repeats the key and value heads for the query's.
    if !ms {
        not_empty(b, 0, "LinearAttention: an empty batch", &mut out);
        not_empty(t, 1, "LinearAttention: an empty sequence", &mut out);
        if qh != kvh {
            not_empty(&dk.mul(&dv), 2, "LinearAttention: grouped heads of size 0", &mut out);
        }
    }
    let heads = if ms { Dim::max_of(&[&qh, &kvh]) } else { qh };
    out.types =
        smallvec::smallvec![ty(dtype, Some(vec![b.clone(), t.clone(), heads.mul(&dv)])), ty(state, Some(present))];
    Ok(out)
}

/// LinearAttention's and GatedDeltaNet's `update_rule` (default gated_delta) against the inputs
/// it reads: decay (input 4) for the gated rules, beta (input 5) for the delta ones. An input
/// the rule does not read must be absent, unless `unread_ok` (the contrib LinearAttention).
pub(crate) fn update_rule(c: &Ctx, unread_ok: bool) -> Result<(), String> {
    let rule = c.node.attr_str("update_rule").unwrap_or_else(|| "gated_delta".into());
    let Some(uses) = ["linear", "gated", "delta", "gated_delta"].iter().position(|r| *r == rule) else {
        return Err(format!("unknown update_rule '{rule}'"));
    };
    for (i, name, wanted) in [(4, "decay", uses % 2 == 1), (5, "beta", uses >= 2)] {
        if c.has(i) != wanted && (wanted || !unread_ok) {
            return Err(format!("update_rule '{rule}' {} the {name} input", ["forbids", "needs"][wanted as usize]));
        }
    }
    Ok(())
}

/// CausalConvWithState (opset 27, and onnxruntime's com.microsoft op of that name): like the
/// input [B, C, L], and a state [B, C, k-1] for a depthwise weight [C, 1, k]. The schema's
/// inference wants these ranks and sizes, a bias [C], k at least 1 and a known activation. The
/// contrib op's attributes widen it: `ndim` spatial axes (the state keeps all but the last
/// one's), a `dilation` d (a state of (k-1)*d), `channels_last` (input [B, L, d...] of C =
/// d1*..*dn channels, state [B, (k-1)*d, d...]) and a `state_window` W > 0 leading the states.
/// The CUDA path's other attributes leave the outputs unknown.
pub fn causal_conv(c: &Ctx) -> R {
    if let Some(a) = c.node.attr_str("activation").filter(|a| !["none", "silu", "swish"].contains(&a.as_str())) {
        return invalid(format!("CausalConvWithState: unknown activation '{a}'"));
    }
    let attr = |n: &str, default: i64| c.node.attr_int(n).unwrap_or(default);
    let (ndim, dilation, window, last) =
        (attr("ndim", 1), attr("dilation", 1), attr("state_window", 0), attr("channels_last", 0) != 0);
    if !(1..=3).contains(&ndim) || dilation < 1 || window < 0 {
        return invalid(format!("CausalConvWithState: ndim {ndim}, dilation {dilation} or state_window {window}"));
    }
    let extended = ["state_length", "input_channels", "input_channel_offset", "state_update_capacity"]
        .iter()
        .any(|n| attr(n, 0) != 0)
        || attr("state_channels_last", -1) != -1;
    if extended && (!last || ndim != 1 || window != 0) {
        return invalid("CausalConvWithState: its extended attributes need channels_last, ndim 1, no window".into());
    }
    let (dtype, spatial, x) = (c.dtype(0), ndim as usize, c.shape(0));
    if let Some(r) = x.map(<[Dim]>::len).filter(|r| if last { *r < 3 } else { *r != 2 + spatial }) {
        return invalid(format!("CausalConvWithState: input rank {r} for ndim {ndim}"));
    }
    if extended || (last && ndim != 1) || (x.is_none() && (last || ndim != 1)) {
        return outs(vec![ty(dtype, x.filter(|_| !extended).map(<[Dim]>::to_vec)), ty(dtype, None)]);
    }
    expect_rank(c, 1, 2 + spatial)?;
    expect_rank(c, 2, 1)?;
    let k = dim(c, 1, 1 + spatial);
    if let Some(k) = k.known().filter(|k| *k < 1) {
        return invalid(format!("CausalConvWithState: kernel size {k} is below 1"));
    }
    let ch = match x {
        Some(x) if last => Dim::product(&x[2..]),
        _ => dim(c, 0, 1),
    };
    let mut out = Out::default();
    let kernel = c.shape(1).map_or(vec![k.clone()], |w| w[2..].to_vec());
    expect_shape(c, 1, &[&[ch.clone(), Dim::Known(1)][..], &kernel].concat(), &mut out)?;
    expect_shape(c, 2, std::slice::from_ref(&ch), &mut out)?;
    let carried = [k.sub(&Dim::Known(1)).mul(&Dim::Known(dilation))];
    let mut state: Vec<Dim> = match x {
        Some(x) if last => [&x[..1], &carried, &x[2..]].concat(),
        Some(x) => [&x[..x.len() - 1], &carried].concat(),
        None => [&[dim(c, 0, 0), ch][..], &carried].concat(),
    };
    if window > 0 {
        state.insert(0, Dim::Known(window));
    }
    expect_shape(c, 3, &state, &mut out)?;
    // onnxruntime 1.32 runs the standard op as its function body, whose Conv of the state and
    // an empty input is one window short ("Invalid input shape: {3}"), and whose Conv of 0
    // groups kills the process (SIGFPE).
    if let (true, Some([_, channels, .., len])) = (c.node.domain.is_empty(), x) {
        not_empty(channels, 1, "CausalConvWithState: no channels", &mut out);
        not_empty(len, 2, "CausalConvWithState: an empty sequence", &mut out);
    }
    out.types = smallvec::smallvec![ty(dtype, x.map(<[Dim]>::to_vec)), ty(dtype, Some(state))];
    Ok(out)
}

/// TensorScatter: like the cache. The schema wants `axis` off the batch axis, the update of
/// the cache's sizes but along it and write_indices [batch]; the spec, no more updates along
/// it than the cache holds (onnxruntime checks at run time) and mode linear or circular.
pub fn tensor_scatter(c: &Ctx) -> R {
    let mut out = like_input(c);
    if let Some(m) = c.node.attr_str("mode").filter(|m| m != "linear" && m != "circular") {
        return invalid(format!("TensorScatter: unknown mode '{m}'"));
    }
    let Some(cache) = c.shape(0) else { return Ok(out) };
    let axis = c.node.attr_int("axis").unwrap_or(-2);
    let a = axis_in(axis, cache.len(), &c.node.op_type)?;
    if a == 0 {
        return invalid(format!("TensorScatter: axis {axis} is the batch axis"));
    }
    expect_shape(c, 2, &cache[..1], &mut out)?;
    if let Some(u) = c.shape(1) {
        if u.len() != cache.len() {
            return invalid(format!("TensorScatter: the update's rank {} is not the cache's {}", u.len(), cache.len()));
        }
        expect_shape(c, 1, &with_dim(cache, a, u[a].clone()), &mut out)?;
        if u[a].known().zip(cache[a].known()).is_some_and(|(u, m)| u > m) {
            return invalid(format!("TensorScatter: {} updates along axis {a} exceed the cache's {}", u[a], cache[a]));
        }
    }
    Ok(out)
}

pub fn optional_has_element(_: &Ctx) -> R {
    outs(vec![ty(Some(DType::Bool), Some(vec![]))])
}

pub fn optional_get_element(c: &Ctx) -> R {
    let t = match c.inputs.first().copied().flatten() {
        Some(Type::Optional(Some(inner))) => Some((**inner).clone()),
        Some(t @ Type::Tensor { .. }) => Some(t.clone()),
        Some(t @ Type::Sequence(_)) => Some(t.clone()),
        _ => None,
    };
    outs(vec![t])
}

pub fn optional(c: &Ctx) -> R {
    let inner = same_type_of(c, 0).map(Box::new);
    outs(vec![Some(Type::Optional(inner))])
}

/// The element type of input 0, a sequence, when known.
fn element<'a>(c: &Ctx<'a>) -> Option<&'a Type> {
    match c.inputs.first().copied().flatten() {
        Some(Type::Sequence(Some(e))) => Some(e),
        _ => None,
    }
}

/// A sequence of tensors of element type `dtype`, their shapes unknown.
fn sequence_of(dtype: Option<DType>) -> Option<Type> {
    Some(Type::Sequence(Some(Box::new(Type::tensor(dtype, None)))))
}

pub fn sequence_at(c: &Ctx) -> R {
    match element(c) {
        Some(e) => outs(vec![Some(e.clone())]),
        None => Ok(Out::default()),
    }
}

pub fn sequence_construct(c: &Ctx) -> R {
    let first = same_type_of(c, 0);
    let all_same = (1..c.inputs.len()).all(|i| same_type_of(c, i) == first);
    let elem = first.map(|t| if all_same { t } else { Type::tensor(t.dtype(), None) });
    outs(vec![Some(Type::Sequence(elem.map(Box::new)))])
}

pub fn sequence_empty(c: &Ctx) -> R {
    outs(vec![sequence_of(attr_dtype(c, "dtype", Some(DType::F32))?)])
}

pub fn sequence_same(c: &Ctx) -> R {
    outs(vec![element(c).and_then(|e| sequence_of(e.dtype()))])
}

pub fn sequence_length(_: &Ctx) -> R {
    outs(vec![ty(Some(DType::I64), Some(vec![]))])
}

pub fn split_to_sequence(c: &Ctx) -> R {
    outs(vec![sequence_of(c.dtype(0))])
}

pub fn concat_from_sequence(c: &Ctx) -> R {
    outs(vec![ty(element(c).and_then(Type::dtype), None)])
}

/// Loop's outputs: the final loop-carried values (typed like the body's outputs, with dims
/// that may change across iterations unknown) and the scan outputs, stacked along a new
/// first axis whose length is the trip count where that is known.
pub fn loop_outputs(c: &Ctx) -> R {
    one_element(c, 0)?;
    let Some((_, body)) = c.subgraph_outputs.iter().find(|(n, _)| *n == "body") else { return Ok(Out::default()) };
    // One output per body output after the condition (onnxruntime: "Graph attribute
    // inferencing returned type information for 3 outputs. Expected 2").
    let n = c.node.outputs().len();
    if body.len() != n + 1 {
        return invalid(format!(
            "Loop: the body gives {} values after its condition, the node has {n} outputs",
            body.len().saturating_sub(1)
        ));
    }
    let carried = c.inputs.len().saturating_sub(2);
    // The trip count is known when the condition is absent or provably stays true (its body
    // output is known true given a true input).
    let cond_stays = !c.has(1) || (c.value(1) == Some(&[Dim::Known(1)][..]) && c.loop_cond_stays_true);
    let trip = if c.has(0) && cond_stays { first_value(c, 0) } else { Dim::Unknown };
    let mut types = Vec::new();
    for (i, t) in body.iter().skip(1).enumerate() {
        let t = t.clone();
        if i < carried {
            // A carried value keeps the dims its initial value and the body's output agree on.
            let init = same_type_of(c, 2 + i);
            types.push(match (init, t) {
                (
                    Some(Type::Tensor { dtype: d0, shape: Some(s0) }),
                    Some(Type::Tensor { dtype: d1, shape: Some(s1) }),
                ) if s0.len() == s1.len() => {
                    let shape =
                        s0.iter().zip(&s1).map(|(a, b)| if a == b { a.clone() } else { Dim::Unknown }).collect();
                    ty(d0.or(d1), Some(shape))
                }
                (Some(Type::Tensor { dtype: d0, .. }), Some(Type::Tensor { dtype: d1, .. })) => ty(d0.or(d1), None),
                (init, body) => init.or(body).map(|t| Type::tensor(t.dtype(), None)),
            });
        } else {
            types.push(t.map(|t| match t {
                Type::Tensor { dtype, shape } => {
                    Type::Tensor { dtype, shape: shape.map(|s| std::iter::once(trip.clone()).chain(s).collect()) }
                }
                other => other,
            }));
        }
    }
    outs(types)
}

/// A Scan's state keeps its shape across iterations (the spec: "a restriction imposed to enable
/// efficient memory allocation"): the body must give state `i` back as it got it. onnxruntime
/// refuses another shape, at load or at run time.
fn keeps_shape(c: &Ctx, i: usize, body: Option<&Type>, out: &mut Out) -> Result<(), RuleError> {
    let (Some(fed), Some(back)) = (c.shape(i), body.and_then(Type::shape)) else { return Ok(()) };
    let changed = || format!("Scan: the body turns state {i} of shape {} into {}", render(fed), render(back));
    if fed.len() != back.len() {
        return invalid(changed());
    }
    // Known sizes the body's input declares otherwise are reported as a contradiction.
    let graph = c.node.subgraphs().into_iter().find(|(name, _)| *name == "body").map(|(_, g)| c.model.graph(g));
    let declared = graph.and_then(|g| g.inputs.get(i)?.ty.as_ref()?.shape());
    let declared_at = |axis: usize| declared.and_then(|d| d.get(axis)?.known());
    let contradicted = |axis: usize| matches!((fed[axis].known(), declared_at(axis)), (Some(f), Some(d)) if f != d);
    for (axis, (a, b)) in fed.iter().zip(back).enumerate() {
        // Sizes the body cannot tell (fresh unknowns) are no condition on the inputs.
        let fresh = |d: &Dim| matches!(d, Dim::Term(t) if t.has_fresh());
        match a.pin(b) {
            _ if contradicted(axis) => {}
            None => return invalid(changed()),
            Some((_, Some(same))) if !fresh(a) && !fresh(b) => out.assumptions.push((axis, same)),
            Some(_) => {}
        }
    }
    Ok(())
}

/// Scan's outputs (opset 9+): the final state values, then the scan outputs with the scan
/// axis (of the first scan input's length) inserted.
pub fn scan_outputs(c: &Ctx) -> R {
    let Some((_, body)) = c.subgraph_outputs.iter().find(|(n, _)| *n == "body") else { return Ok(Out::default()) };
    let Some(m) = c.node.attr_int("num_scan_inputs") else { return invalid("Scan needs num_scan_inputs".into()) };
    // One output per body output, as Loop's, none left out (onnxruntime: "FindDeviceForValue").
    let n = c.node.outputs().len();
    if body.len() != n {
        return invalid(format!("Scan: the body gives {} values, the node has {n} outputs", body.len()));
    }
    if let Some(k) = c.node.outputs().iter().position(Option::is_none) {
        return invalid(format!("Scan: output {k} is left out, which onnxruntime refuses"));
    }
    let offset = if c.opset < 9 { 1 } else { 0 };
    let n_state = c.inputs.len().saturating_sub(offset + m.max(0) as usize);
    let first_scan = offset + n_state;
    // Each scan input has its scan axis (axis 1 before opset 9, after the batch), and all have
    // one length there.
    let in_axes = c.node.attr_ints("scan_input_axes");
    let mut out = Out::default();
    // Before opset 9 every state and scan input leads with one batch axis.
    if c.opset < 9 {
        let mut batch = Dim::Unknown;
        for i in offset..c.inputs.len() {
            let Some(first) = c.shape(i).map(|s| s.first()) else { continue };
            let Some(b) = first else { return invalid(format!("Scan: input {i} has no batch axis")) };
            let Some((pinned, same)) = batch.pin(b) else {
                return invalid(format!("Scan: input {i} has a batch of {b}, an earlier one {batch}"));
            };
            out.assumptions.extend(same.map(|x| (0, x)));
            batch = pinned;
        }
        // Before opset 9 the batch (onnxruntime: "Invalid dim0_offset of 0").
        not_empty(&batch, 0, "Scan: a batch of 0", &mut out);
    }
    let (mut seq, mut scan_axis) = (Dim::Unknown, 0);
    for i in first_scan..c.inputs.len() {
        let Some(s) = c.shape(i) else { continue };
        let a = if c.opset < 9 { 1 } else { in_axes.and_then(|v| v.get(i - first_scan).copied()).unwrap_or(0) };
        let a = axis_in(a, s.len(), &c.node.op_type)?;
        let Some((pinned, same)) = seq.pin(&s[a]) else {
            return invalid(format!("Scan: scan input {i} has {} steps, an earlier one {seq}", s[a]));
        };
        out.assumptions.extend(same.map(|x| (0, x)));
        seq = pinned;
        scan_axis = a;
    }
    if c.opset >= 9 {
        // onnxruntime refuses it ("Invalid dim0_offset of 0"); the body never runs.
        not_empty(&seq, scan_axis, "Scan: no iterations (the scan axis is empty)", &mut out);
    }
    let out_axes = c.node.attr_ints("scan_output_axes");
    let mut types = Vec::new();
    for (i, t) in body.iter().enumerate() {
        if i < n_state {
            if c.opset >= 9 {
                keeps_shape(c, i, t.as_ref(), &mut out)?;
            }
            types.push(match (t, same_type_of(c, offset + i)) {
                (Some(Type::Tensor { dtype, shape: Some(s) }), Some(_)) if c.opset < 9 => {
                    // Before opset 9 the state keeps its batch axis outside the body.
                    let batch = dim(c, offset + i, 0);
                    ty(*dtype, Some(std::iter::once(batch).chain(s.iter().cloned()).collect()))
                }
                (Some(t), _) if c.opset >= 9 => Some(t.clone()),
                (_, init) => init,
            });
            continue;
        }
        let k = i - n_state;
        types.push(t.clone().map(|t| match t {
            Type::Tensor { dtype, shape: Some(mut s) } => {
                if c.opset < 9 {
                    s.splice(0..0, [dim(c, first_scan, 0), seq.clone()]);
                    return Type::Tensor { dtype, shape: Some(s) };
                }
                let a = out_axes.and_then(|v| v.get(k).copied()).unwrap_or(0);
                let shape = arith::axis(a, s.len() + 1).ok().map(|a| {
                    s.insert(a, seq.clone());
                    s
                });
                Type::Tensor { dtype, shape }
            }
            other => other,
        }));
    }
    out.types = types.into();
    Ok(out)
}
