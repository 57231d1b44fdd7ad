"""Models as deployed: onnxruntime's contrib ops (com.microsoft) and quantized graphs, against
onnxruntime's run-time shapes. Run by hand, never inside `cargo test` (needs onnx, onnxruntime
with its `transformers` and `quantization` packages, numpy, torch and transformers):

    cargo build --release
    python3 scripts/deployed_models.py [--rebuild] [--only SUBSTRING] [--as-is] [--bin BINARY]

Build (into target/deployed-models/, never committed; a file that exists is kept unless
--rebuild; about 15 s). Tiny random-weight models, hidden 64, 2 layers, 4 heads, vocabulary
1000, exported by torch.onnx (TorchScript, opset 17, dynamic batch and seq) into export/:

  bert_opt           BertModel, then onnxruntime.transformers' optimize_model(model_type="bert")
  gpt2_opt           GPT2Model without past (use_cache=False), optimize_model(model_type="gpt2")
  llama_opt          LlamaModel (intermediate 128, 2 kv heads, use_cache=False); this onnxruntime
                     has no "llama" model type (MODEL_TYPES), so model_type="gpt2", whose
                     fusions are BERT's plus GPT-2's attention
  bert_mha           bert_opt with FusionOptions.use_multi_head_attention (MultiHeadAttention)
  bert_ort           the BERT export as onnxruntime writes it after its own C++ fusions
                     (ORT_ENABLE_EXTENDED, SessionOptions.optimized_model_filepath)
  llama_ort          the same for the Llama export
  bert_int8          quantize_dynamic of the BERT export
  bert_opt_int8      quantize_dynamic of bert_opt, after onnxruntime's symbolic shape inference
                     (onnx's knows no contrib op, and the quantizer needs every MatMul's type)
  bert_opt_int8_ort  bert_opt_int8 written by onnxruntime (ORT_ENABLE_EXTENDED)
  bert_qdq           quantize_static of the BERT export, QuantFormat.QDQ, 4 random calibration inputs
  bert_qdq_ort       bert_qdq written by onnxruntime (ORT_ENABLE_EXTENDED)
  cnn_qdq            the same for a small conv net (dynamic batch, height and width)
  cnn_qdq_ort        cnn_qdq written by onnxruntime (ORT_ENABLE_EXTENDED)
  llama_int4         llama_opt with its MatMuls quantized to 4 bits in blocks of 32
                     (MatMulNBitsQuantizer, asymmetric): MatMulNBits
  llama_int4_ort     llama_int4 written by onnxruntime (ORT_ENABLE_EXTENDED)
  cnn_ort_all        the conv net written by onnxruntime at ORT_ENABLE_ALL, the level a session
                     takes by default: NCHWc convolutions (com.microsoft.nchwc, blocked channels)
  cnn_qop            quantize_static of the conv net, QuantFormat.QOperator (QLinearConv, ...)
  cnn_qop_ort_all    cnn_qop written at ORT_ENABLE_ALL: NHWC QLinearConv, NhwcMaxPool, ...
  llama_genai_int4   a LlamaForCausalLM (2 kv heads) through onnxruntime-genai's model builder,
                     int4 for CPU, embeddings too: GroupQueryAttention, MatMulNBits,
                     GatherBlockQuantized, a KV cache (needs the onnxruntime-genai package;
                     skipped without it)
  qwen2_genai_fp32   the same of a Qwen2ForCausalLM in fp32
  gemma2_genai_int4  a Gemma2ForCausalLM in int4: a sliding-window cache of 16 on its first layer
  lfm2_genai_fp32    an Lfm2ForCausalLM (a short-convolution layer, then an attention one):
                     CausalConvWithState with its carried state as an input and output
  qwen35_genai_fp32  a Qwen3.5 text model (a gated-DeltaNet layer, then an attention one):
                     CausalConvWithState, LinearAttentionGate, LinearAttention, GatedRMSNorm
                     and multimodal rotary positions, position_ids [3, batch, seq], which
                     onnxruntime's CPU RotaryEmbedding refuses (the row names the node, and
                     whether `check` reports an error there)
  qwen35_genai_text  that graph with the RotaryEmbeddings reading the first of the three rows
                     of positions (text positions are the same in all three): it runs
  qwen35moe_genai_fp32, qwen35moe_genai_text
                     the same of a Qwen3.5 MoE (4 experts, 2 a token, a shared expert): MoE
                     and GatedAdd besides
  gptoss_genai_fp32  a GptOssForCausalLM (4 experts, 2 a token, a sliding window of 16 on its
                     first layer): MoE with its SwiGLU experts
  gpt2_beam          a GPT2LMHeadModel (hidden 32) through onnxruntime.transformers'
                     convert_generation: one BeamSearch node over the GPT-2 decoder subgraph.
                     Its GPT-2 export needs transformers 4 (5 dropped the past tuples it
                     traces): ONNX_BCAST_TRANSFORMERS4 names a folder holding transformers 4.x
                     (pip install --target DIR transformers==4.44.2 tokenizers==0.19.1
                     huggingface_hub==0.24.6 --no-deps); skipped without it
  gpt2_greedy        the same, num_beams 1: GreedySearch
  gpt2_sampling      the same, top_p 0.5: Sampling
  whisper_beam       a WhisperForConditionalGeneration (hidden 32, 1 layer each side, a
                     word-level tokenizer) through onnxruntime.transformers.models.whisper's
                     convert_to_onnx: WhisperBeamSearch over its encoder and decoder subgraphs
                     (transformers 4 as above). Its features input is declared [batch, 80,
                     3000], the only size its encoder's position table takes

Attention is exported eager (attn_implementation="eager"), the pattern the fusions look for.
optimize_model runs at opt_level=1 (onnxruntime's basic, portable rewrites, then the Python
fusions); the *_ort files keep onnxruntime's CPU fusions at the extended level, the *_ort_all
ones its layout rewrites too, which depend on the machine (the NCHWc block is 8 or 16 channels
by its vector width). A step that fails (an export, a fusion) is reported and skipped.

Compare. onnxruntime (CPU, ORT_DISABLE_ALL, so the graph runs as written) runs a copy of each
model with every output of the main graph's nodes made a graph output (typeless; not nameless
ones, nor names that are initializers or inputs), at batch=2, seq=7, images 2x3x32x24: ids in
[0, 1000), masks ones, token types zeros, floats random; generation's max_length 12, min_length
1, num_beams 3, num_return_sequences 2, penalties 1. Those are the top-level tensors. Then
`BIN infer --format json` runs twice, without bindings and with --dim NAME=VALUE for every
symbolic input dim at the run's size, on a copy without value_info and without declared output
shapes (target/deployed-models/stripped/), so that only onnx-bcast's rules speak: the quantizer
and symbolic shape inference write value_info for nearly every tensor. --as-is infers the files
as they are. Per run, of the top-level tensors:

  ranked  onnx-bcast gives the tensor a rank (its "shape" is not null);
  full    every dim is known (not null); with --dim, every dim is a number;
  wrong   the rank differs from the run's, a dim given as a number differs, the dtype given
          differs, or a symbol (an input's, an invented ?N, an expression) stands for two sizes:
          one symbol is one size everywhere, an input symbol the size it is bound to.
          A tensor wrong in both runs counts once.

Unknown ops are the distinct ops of onnx-bcast's `unknown-op` diagnostics (no --dim run).
Prints each model's op histogram ((domain, op_type) -> count), a markdown table, the first wrong
tensors of each model with both shapes, and the times. Exits 1 if any tensor is wrong, or if
onnx-bcast or onnxruntime fails on a model.
"""
from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "deployed-models")
VOCAB, HIDDEN, LAYERS, HEADS = 1000, 64, 2, 4
SIZES = {"batch": 2, "seq": 7, "height": 32, "width": 24,  # the run's sizes, by input symbol
         # onnxruntime-genai's names: a first prompt of 7 (onnxruntime takes a batch of 2 after a
         # past only one position at a time), heads of HIDDEN / HEADS.
         "batch_size": 2, "sequence_length": 7, "past_sequence_length": 0, "total_sequence_length": 7,
         "kv_cache_dim": HIDDEN // HEADS, "past_sliding_length": 16}
TEXT_AXES = {0: "batch", 1: "seq"}
IMAGE_AXES = {0: "batch", 2: "height", 3: "width"}


# ---------------------------------------------------------------------------------------- build

def export(make, keys, path, axes):
    """torch.onnx (TorchScript, opset 17) of make() with the inputs `keys` and dynamic `axes`."""
    import torch

    class Wrap(torch.nn.Module):  # one output, inputs by keyword
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *xs):
            out = self.m(**dict(zip(keys, xs)))
            return out if isinstance(out, torch.Tensor) else out.last_hidden_state

    torch.manual_seed(0)
    if keys == ["x"]:
        args = (torch.randn(SIZES["batch"], 3, SIZES["height"], SIZES["width"]),)
    else:
        args = tuple(feed_value(k, np.int64, (SIZES["batch"], SIZES["seq"])) for k in keys)
        args = tuple(torch.from_numpy(a) for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrap(make()).eval(), args, path, input_names=keys, output_names=["y"],
                          dynamic_axes={k: axes for k in keys}, opset_version=17, dynamo=False)


def text_model(kind):
    import transformers as T

    eager = dict(attn_implementation="eager")
    if kind == "bert":
        return lambda: T.BertModel(T.BertConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            intermediate_size=4 * HIDDEN, max_position_embeddings=128, **eager), add_pooling_layer=False)
    if kind == "gpt2":
        return lambda: T.GPT2Model(T.GPT2Config(
            vocab_size=VOCAB, n_positions=128, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, use_cache=False,
            bos_token_id=0, eos_token_id=0, **eager))
    return lambda: T.LlamaModel(T.LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=2, max_position_embeddings=128, use_cache=False, **eager))


def cnn():
    import torch
    from torch import nn

    class Net(nn.Module):  # Conv, Relu, Add, MaxPool, Concat, GlobalAveragePool, Flatten, Gemm
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
            self.c3, self.fc = nn.Conv2d(8, 8, 3, padding=1, stride=2), nn.Linear(16, 10)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            b = nn.functional.max_pool2d(a + torch.relu(self.c2(a)), 2)
            c = torch.cat([b, torch.relu(self.c3(a))], dim=1)
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(c, 1), 1))

    return Net


def ort_save(src, dst, level=ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED):
    """The model as onnxruntime itself writes it after its CPU fusions (ORT_ENABLE_EXTENDED, or
    ORT_ENABLE_ALL: the layout rewrites too, NCHWc convolutions and NHWC quantized ones)."""
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = dst
    so.log_severity_level = 3
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


def optimize(src, dst, model_type, mha=False):
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    options = FusionOptions(model_type)
    options.use_multi_head_attention = mha
    m = optimize_model(src, model_type=model_type, num_heads=HEADS, hidden_size=HIDDEN, opt_level=1,
                       optimization_options=options)
    m.save_model_to_file(dst)


def quant_dynamic(src, dst):
    """quantize_dynamic; onnx's shape inference knows no contrib op, so a fused model gets
    onnxruntime's symbolic shape inference first (the quantizer needs every MatMul's type)."""
    from onnxruntime.quantization import quantize_dynamic
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    m = onnx.load(src)
    if any(n.domain == "com.microsoft" for n in m.graph.node):
        m = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
    quantize_dynamic(m, dst)


def quant_static(src, dst, qdq=True):
    """quantize_static, QDQ format (or QOperator: QLinearConv and the like), calibrated on four
    random inputs at the run's sizes."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    model = onnx.load(src)
    rng = np.random.default_rng(1)
    samples = iter([feeds(model, bindings(model), rng) for _ in range(4)])

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(samples, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator)


def genai(kind, dst, precision, extra=()):
    """onnxruntime-genai's model builder (the LLM graphs genai ships: GroupQueryAttention with
    its rotary embedding, MatMulNBits for int4, a KV cache as inputs) on a tiny causal LM of
    `kind` with random weights and a word-level tokenizer, saved as one file."""
    import tempfile

    import transformers as T
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch_seed()
    config = dict(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=LAYERS,
                  num_attention_heads=HEADS, num_key_value_heads=2, max_position_embeddings=128)
    model = {"llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(**config)),
             "qwen2": lambda: T.Qwen2ForCausalLM(T.Qwen2Config(**config)),
             # A sliding window of 16 on its first layer, whose cache holds the window.
             "gemma2": lambda: T.Gemma2ForCausalLM(T.Gemma2Config(**config, head_dim=HIDDEN // HEADS,
                                                                  sliding_window=16)),
             "lfm2": lambda: T.Lfm2ForCausalLM(T.Lfm2Config(**config, layer_types=["conv", "full_attention"])),
             # One gated-DeltaNet layer (key heads 2, value heads 4), then a full attention one.
             "qwen35": lambda: T.Qwen3_5ForConditionalGeneration(T.Qwen3_5Config(text_config=dict(
                 **config, head_dim=HIDDEN // HEADS, layer_types=["linear_attention", "full_attention"],
                 linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                 linear_value_head_dim=16))),
             # The same with mixtures of 4 experts (2 a token) and a gated shared expert.
             "qwen35moe": lambda: T.Qwen3_5MoeForConditionalGeneration(T.Qwen3_5MoeConfig(text_config=dict(
                 **config, head_dim=HIDDEN // HEADS, layer_types=["linear_attention", "full_attention"],
                 linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                 linear_value_head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                 shared_expert_intermediate_size=32))),
             "gptoss": lambda: T.GptOssForCausalLM(T.GptOssConfig(
                 **config, head_dim=HIDDEN // HEADS, num_local_experts=4, num_experts_per_tok=2, sliding_window=16,
                 layer_types=["sliding_attention", "full_attention"]))}[kind]()
    words = Tokenizer(models.WordLevel(vocab={f"t{i}": i for i in range(VOCAB)}, unk_token="t0"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = T.PreTrainedTokenizerFast(tokenizer_object=words, unk_token="t0", bos_token="t1", eos_token="t2",
                                          pad_token="t3")
    with tempfile.TemporaryDirectory() as tmp:
        hf, built = os.path.join(tmp, "hf"), os.path.join(tmp, "onnx")
        model.save_pretrained(hf)
        tokenizer.save_pretrained(hf)
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf, "-m", kind, "-o", built,
                        "-p", precision, "-e", "cpu", "-c", os.path.join(tmp, "cache"), *extra],
                       check=True, capture_output=True)
        onnx.save(onnx.load(os.path.join(built, "model.onnx")), dst)


def text_positions(src, dst):
    """The graph with every RotaryEmbedding reading position_ids[0] (Gather on axis 0)."""
    m = onnx.load(src)
    rows = [n for n in m.graph.node if n.op_type == "RotaryEmbedding" and n.input[1] == "position_ids"]
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array(0, np.int64), "text_row"))
    m.graph.node.insert(0, helper.make_node("Gather", ["position_ids", "text_row"], ["text_positions"], axis=0))
    for n in rows:
        n.input[1] = "text_positions"
    onnx.save(m, dst)


# A tiny GPT-2 saved by transformers 4 and converted without convert_generation's own test (which
# wants a real tokenizer); attention eager, as its opset-11 export needs.
CONVERT = '''
import sys
import torch
import transformers
from transformers import modeling_utils
from onnxruntime.transformers import convert_generation as cg

hf, dst, kind = sys.argv[1:4]
torch.manual_seed(0)
cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=1000, n_positions=64,
                              bos_token_id=0, eos_token_id=1, pad_token_id=1)
transformers.GPT2LMHeadModel(cfg).save_pretrained(hf)
load = modeling_utils.PreTrainedModel.from_pretrained.__func__
modeling_utils.PreTrainedModel.from_pretrained = classmethod(
    lambda cls, *a, **kw: load(cls, *a, **{"attn_implementation": "eager", **kw}))
argv = ["-m", hf, "--model_type", "gpt2", "--output", dst, "--cache_dir", hf + "/cache", "--vocab_size", "1000",
        "--eos_token_id", "1", "--pad_token_id", "1"]
kinds = {"beam": (["--output_sequences_scores", "--output_token_scores"], None),
         "greedy": (["--num_beams", "1", "--num_return_sequences", "1"], cg.GenerationType.GREEDYSEARCH),
         "sampling": (["--num_beams", "1", "--num_return_sequences", "1", "--top_p", "0.5"], cg.GenerationType.SAMPLING)}
extra, how = kinds[kind]
args = cg.parse_arguments(argv + extra)
cg.convert_generation_model(args) if how is None else cg.convert_generation_model(args, how)
'''


# A tiny Whisper with a tokenizer of plain words and the special tokens Whisper's chain looks up.
WHISPER = '''
import json, sys
import torch
import transformers as T

hf = sys.argv[1]
torch.manual_seed(0)
cfg = T.WhisperConfig(vocab_size=1000, num_mel_bins=80, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                      decoder_attention_heads=2, d_model=32, encoder_ffn_dim=64, decoder_ffn_dim=64,
                      max_source_positions=1500, max_target_positions=448, decoder_start_token_id=1, pad_token_id=0,
                      eos_token_id=2, bos_token_id=1)
T.WhisperForConditionalGeneration(cfg).save_pretrained(hf)
special = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|translate|>", "<|notimestamps|>",
           "<|nospeech|>", "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|0.00|>"]
vocab = {t: i for i, t in enumerate(special)} | {f"t{i}": i for i in range(len(special), 1000)}
json.dump(vocab, open(hf + "/vocab.json", "w"))
open(hf + "/merges.txt", "w").write("#version: 0.2\\n")
e = "<|endoftext|>"
T.WhisperTokenizer(hf + "/vocab.json", hf + "/merges.txt", unk_token=e, bos_token=e, eos_token=e,
                   pad_token=e).save_pretrained(hf)
T.WhisperFeatureExtractor(feature_size=80).save_pretrained(hf)
'''
# onnxruntime's Whisper export, without its parity check against PyTorch: that check runs
# `pip install datasets` on its own and fetches a dataset.
WHISPER_EXPORT = '''
import sys
from onnxruntime.transformers.models.whisper import convert_to_onnx
import whisper_helper  # the module convert_to_onnx imports, by its folder on sys.path

whisper_helper.WhisperHelper.verify_onnx = staticmethod(lambda *a, **k: 0.0)
hf, out, cache = sys.argv[1:4]
convert_to_onnx.main(["-m", hf, "--output", out, "--cache_dir", cache, "-p", "fp32"])
'''


def transformers4(tmp, *args):
    """Runs `python ARGS` in `tmp` with transformers 4 first on its path (the folder
    ONNX_BCAST_TRANSFORMERS4 names); a failure raises with its last line."""
    path = os.environ.get("ONNX_BCAST_TRANSFORMERS4")
    if not path:
        raise RuntimeError("ONNX_BCAST_TRANSFORMERS4 is not set (a folder holding transformers 4.x)")
    r = subprocess.run([sys.executable, *args], env={**os.environ, "PYTHONPATH": path}, cwd=tmp, capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip().splitlines()[-1])


def whisper(dst):
    """onnxruntime's Whisper export of a tiny Whisper: one WhisperBeamSearch node, its features
    input declared [batch, 80, 3000]."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        hf, out = os.path.join(tmp, "hf"), os.path.join(tmp, "out")
        transformers4(tmp, "-c", WHISPER, hf)
        transformers4(tmp, "-c", WHISPER_EXPORT, hf, out, os.path.join(tmp, "cache"))
        m = onnx.load(os.path.join(out, "hf_beamsearch.onnx"))
        dims = m.graph.input[0].type.tensor_type.shape.dim
        dims[0].dim_param = "batch"
        dims[1].dim_value, dims[2].dim_value = 80, 3000
        onnx.save(m, dst)


def generation(kind, dst):
    """convert_generation's BeamSearch, GreedySearch or Sampling graph of a tiny GPT-2."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        transformers4(tmp, "-c", CONVERT, os.path.join(tmp, "hf"), os.path.join(tmp, "m.onnx"), kind)
        onnx.save(onnx.load(os.path.join(tmp, "m.onnx")), dst)


def torch_seed():
    import torch

    torch.manual_seed(0)


def quant_nbits(src, dst):
    """Weight-only 4-bit quantization of the MatMuls, as int4 LLM builds do."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.ERROR)
    q = MatMulNBitsQuantizer(onnx.load(src), block_size=32, is_symmetric=False)
    q.process()
    onnx.save(q.model.model, dst)


def steps():
    """(file, how to build it, the file it is built from): exports first, then their rewrites."""
    ALL = ort.GraphOptimizationLevel.ORT_ENABLE_ALL  # noqa: N806
    e = lambda n: os.path.join(OUT, "export", n + ".onnx")  # noqa: E731
    text = ["input_ids", "attention_mask"]
    return [
        (e("bert"), lambda p: export(text_model("bert"), text + ["token_type_ids"], p, TEXT_AXES), None),
        (e("gpt2"), lambda p: export(text_model("gpt2"), text, p, TEXT_AXES), None),
        (e("llama"), lambda p: export(text_model("llama"), text, p, TEXT_AXES), None),
        (e("cnn"), lambda p: export(cnn(), ["x"], p, IMAGE_AXES), None),
        ("bert_opt", lambda p: optimize(e("bert"), p, "bert"), e("bert")),
        ("gpt2_opt", lambda p: optimize(e("gpt2"), p, "gpt2"), e("gpt2")),
        ("llama_opt", lambda p: optimize(e("llama"), p, "gpt2"), e("llama")),
        ("bert_mha", lambda p: optimize(e("bert"), p, "bert", mha=True), e("bert")),
        ("bert_ort", lambda p: ort_save(e("bert"), p), e("bert")),
        ("llama_ort", lambda p: ort_save(e("llama"), p), e("llama")),
        ("bert_int8", lambda p: quant_dynamic(e("bert"), p), e("bert")),
        ("bert_opt_int8", lambda p: quant_dynamic(path_of("bert_opt"), p), path_of("bert_opt")),
        ("bert_opt_int8_ort", lambda p: ort_save(path_of("bert_opt_int8"), p), path_of("bert_opt_int8")),
        ("bert_qdq", lambda p: quant_static(e("bert"), p), e("bert")),
        ("bert_qdq_ort", lambda p: ort_save(path_of("bert_qdq"), p), path_of("bert_qdq")),
        ("cnn_qdq", lambda p: quant_static(e("cnn"), p), e("cnn")),
        ("cnn_qdq_ort", lambda p: ort_save(path_of("cnn_qdq"), p), path_of("cnn_qdq")),
        ("llama_int4", lambda p: quant_nbits(path_of("llama_opt"), p), path_of("llama_opt")),
        ("llama_int4_ort", lambda p: ort_save(path_of("llama_int4"), p), path_of("llama_int4")),
        ("cnn_ort_all", lambda p: ort_save(e("cnn"), p, ALL), e("cnn")),
        ("cnn_qop", lambda p: quant_static(e("cnn"), p, qdq=False), e("cnn")),
        ("cnn_qop_ort_all", lambda p: ort_save(path_of("cnn_qop"), p, ALL), path_of("cnn_qop")),
        ("llama_genai_int4", lambda p: genai("llama", p, "int4", ["--extra_options", "op_types_to_quantize=MatMul/Gather"]),
         None),
        ("qwen2_genai_fp32", lambda p: genai("qwen2", p, "fp32"), None),
        ("gemma2_genai_int4", lambda p: genai("gemma2", p, "int4"), None),
        ("lfm2_genai_fp32", lambda p: genai("lfm2", p, "fp32"), None),
        ("qwen35_genai_fp32", lambda p: genai("qwen35", p, "fp32"), None),
        ("qwen35_genai_text", lambda p: text_positions(path_of("qwen35_genai_fp32"), p), path_of("qwen35_genai_fp32")),
        ("qwen35moe_genai_fp32", lambda p: genai("qwen35moe", p, "fp32"), None),
        ("qwen35moe_genai_text", lambda p: text_positions(path_of("qwen35moe_genai_fp32"), p),
         path_of("qwen35moe_genai_fp32")),
        ("gptoss_genai_fp32", lambda p: genai("gptoss", p, "fp32"), None),
        ("gpt2_beam", lambda p: generation("beam", p), None),
        ("gpt2_greedy", lambda p: generation("greedy", p), None),
        ("gpt2_sampling", lambda p: generation("sampling", p), None),
        ("whisper_beam", whisper, None),
    ]


def path_of(name):
    return name if os.path.isabs(name) else os.path.join(OUT, name + ".onnx")


def histogram(model):
    """(domain, op_type) -> count over the main graph, com.microsoft first."""
    c = collections.Counter((n.domain or "ai.onnx", n.op_type) for n in model.graph.node)
    return dict(sorted(c.items(), key=lambda kv: (not kv[0][0].startswith("com.microsoft"), kv[0])))


def build(rebuild):
    """Builds what is missing (everything with --rebuild); returns the deployed models' paths."""
    os.makedirs(os.path.join(OUT, "export"), exist_ok=True)
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process
    built = []
    for name, make, src in steps():
        path = path_of(name)
        if rebuild or not os.path.exists(path):
            if src is not None and not os.path.exists(src):
                print(f"skip {name}: {os.path.relpath(src, ROOT)} was not built", file=sys.stderr)
                continue
            t = time.perf_counter()
            try:
                make(path)
            except Exception as err:  # noqa: BLE001 - a failed export or rewrite skips its models.
                print(f"skip {name}: {type(err).__name__}: {str(err).splitlines()[0][:300]}", file=sys.stderr)
                continue
            print(f"built {os.path.relpath(path, ROOT)} in {time.perf_counter() - t:.1f} s")
        if not os.path.isabs(name):
            built.append(path)
    return built


# -------------------------------------------------------------------------------------- compare

NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.FLOAT16: np.float16, onnx.TensorProto.INT64: np.int64,
      onnx.TensorProto.INT32: np.int32, onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.INT8: np.int8,
      onnx.TensorProto.BOOL: np.bool_}


# Generation's parameters, fed as these values.
GENERATION = {"max_length": 12, "min_length": 1, "num_beams": 3, "num_return_sequences": 2, "length_penalty": 1.0,
              "repetition_penalty": 1.0}


def feed_value(name, dtype, shape, rng=None):
    """An input by its name: masks are ones, token types zeros, ids in [0, VOCAB), floats random."""
    rng = rng or np.random.default_rng(0)
    if name in GENERATION:
        return np.full(shape, GENERATION[name], dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if "mask" in name:
        return np.ones(shape, dtype)
    if "token_type" in name:
        return np.zeros(shape, dtype)
    if "position" in name:
        return np.broadcast_to(np.arange(shape[-1]), shape).astype(dtype)
    return rng.integers(0, VOCAB, shape).astype(dtype)


def bindings(model):
    """Every symbolic input dim and the size the run gives it (by name, else by axis)."""
    out = {}
    for i in model.graph.input:
        axes = IMAGE_AXES if len(i.type.tensor_type.shape.dim) == 4 else TEXT_AXES
        for axis, d in enumerate(i.type.tensor_type.shape.dim):
            if d.dim_param:
                out.setdefault(d.dim_param, SIZES.get(d.dim_param, SIZES.get(axes.get(axis), 1)))
    return out


def feeds(model, dims, rng):
    """Inputs for one run, symbolic dims at their `dims` sizes."""
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for i in model.graph.input:
        if i.name not in inits:
            tt = i.type.tensor_type
            shape = [d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param, 1) for d in tt.shape.dim]
            out[i.name] = feed_value(i.name, NP[tt.elem_type], shape, rng)
    return out


def run_ort(model, dims):
    """{name: (shape, dtype)} of every top-level tensor in one onnxruntime run."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    # A graph output cannot also be an initializer or an input, nor be nameless (an absent output).
    taken = {o.name for o in m.graph.output} | {t.name for t in m.graph.initializer} | {i.name for i in m.graph.input}
    for n in [o for node in m.graph.node for o in node.output]:
        if n and n not in taken:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
            taken.add(n)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    values = sess.run(names, feeds(model, dims, np.random.default_rng(0)))
    tops = {o for node in model.graph.node for o in node.output}
    return {n: (tuple(v.shape), str(v.dtype)) for n, v in zip(names, values)
            if n in tops and isinstance(v, np.ndarray)}


def ours(binary, path, dims):
    cmd = [binary, "infer", path, "--format", "json"] + [f"--dim={k}={v}" for k, v in dims.items()]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 2 or not r.stdout.strip():
        raise RuntimeError(f"onnx-bcast exit {r.returncode}: {r.stderr.strip()[:300]}")
    return json.loads(r.stdout)


def judge(doc, run, dims, numbers):
    """(ranked, full, {tensor: why it is wrong}) of one onnx-bcast run against the run's shapes;
    `dims` are the input symbols and their sizes; full means all numbers if `numbers`."""
    ranked = full = 0
    wrong = {}
    seen = collections.defaultdict(lambda: collections.defaultdict(list))  # symbol -> size -> tensors
    for n, (rt, rdt) in run.items():
        t = doc["tensors"].get(n) or {}
        shape, dt = t.get("shape"), t.get("dtype")
        if dt is not None and dt != rdt:
            wrong[n] = f"dtype {dt} {shape} vs run {rdt} {list(rt)}"
        if shape is None:
            continue
        ranked += 1
        full += all(isinstance(d, int) if numbers else d is not None for d in shape)
        if len(shape) != len(rt):
            wrong[n] = f"rank {len(shape)} {shape} vs run {list(rt)}"
            continue
        for d, r in zip(shape, rt):
            if isinstance(d, int) and d != r:
                wrong.setdefault(n, f"{shape} vs run {list(rt)}")
            elif isinstance(d, str):
                seen[d][r].append(n)
    for sym, sizes in seen.items():
        want = dims.get(sym, max(sizes, key=lambda s: len(sizes[s])))
        if len(sizes) > 1 or want not in sizes:
            for size, names in sizes.items():
                for n in names if size != want else []:
                    where = "as bound" if sym in dims else "elsewhere"
                    wrong.setdefault(n, f"{doc['tensors'][n]['shape']} vs run {list(run[n][0])}: "
                                        f"{sym!r} is {size} here, {want} {where}")
    return ranked, full, wrong


def unknown_ops(doc):
    domains = {n["name"]: n.get("domain") or "ai.onnx" for n in doc.get("nodes", [])}
    ops = {f"{domains.get(d.get('node'), '?')}.{d.get('op_type')}" for d in doc.get("diagnostics", [])
           if d.get("code") == "unknown-op"}
    return sorted(ops)


def stripped(model, name):
    """A copy without value_info and declared output shapes, so that only inference speaks."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    os.makedirs(os.path.join(OUT, "stripped"), exist_ok=True)
    path = os.path.join(OUT, "stripped", name + ".onnx")
    onnx.save(m, path)
    return path


def compare(binary, path, as_is):
    """One row of the table, the wrong tensors, and whether the model failed."""
    model = onnx.load(path)
    name = os.path.splitext(os.path.basename(path))[0]
    inferred = path if as_is else stripped(model, name)
    hist = histogram(model)
    ms = ", ".join(f"{dom[14:] + '.' if dom != 'com.microsoft' else ''}{op} {k}"
                   for (dom, op), k in hist.items() if dom.startswith("com.microsoft")) or "-"
    dims = bindings(model)
    try:
        run = run_ort(model, dims)
    except Exception as err:  # noqa: BLE001 - a refusal `check` must report at the same node.
        return refused(binary, inferred, name, ms, str(err))
    try:
        free, bound = ours(binary, inferred, {}), ours(binary, inferred, dims)
    except RuntimeError as err:
        return f"| {name} | {ms} | {len(run)} | {err} |", [], True
    r0, f0, w0 = judge(free, run, dims, numbers=False)
    r1, f1, w1 = judge(bound, run, dims, numbers=True)
    wrong = {**{n: f"(no --dim) {w}" for n, w in w0.items()}, **{n: f"(--dim) {w}" for n, w in w1.items()}}
    unk = ", ".join(unknown_ops(free)) or "-"
    row = f"| {name} | {ms} | {len(run)} | {r0} / {f0} | {r1} / {f1} | {len(wrong)} | {unk} |"
    return row, [f"{n}: {w}" for n, w in wrong.items()], bool(wrong)


def refused(binary, path, name, ms, err):
    """The row of a model onnxruntime refuses: the node it names, and whether onnx-bcast reports
    an error at that node (failed when it does not)."""
    node = re.search(r"Name:'([^']*)'", err)
    why = err.split("Status Message: ")[-1].splitlines()[0][:120]
    if node is None:
        return f"| {name} | {ms} | onnxruntime failed: {err.splitlines()[0][:200]} |", [], True
    doc = ours(binary, path, {})
    errors = {d.get("node") for d in doc.get("diagnostics", []) if d.get("severity") == "error"}
    found = node.group(1) in errors
    row = (f"| {name} | {ms} | onnxruntime refuses it at {node.group(1)}: {why} | "
           f"{'check reports an error there' if found else 'check reports NO error there'} |")
    return row, [] if found else [f"{node.group(1)}: no error"], not found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rebuild", action="store_true", help="build every model again")
    ap.add_argument("--only", default="", help="compare only the models whose name contains this")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    ap.add_argument("--as-is", action="store_true", help="infer with the models' value_info and output shapes")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"{a.bin}: no such binary (cargo build --release, or --bin)")
    t = time.perf_counter()
    paths = build(a.rebuild)
    built = time.perf_counter() - t
    paths = [p for p in paths if a.only in os.path.basename(p)]
    for p in paths:
        hist = histogram(onnx.load(p, load_external_data=False))
        print(f"\n{os.path.basename(p)}: " + ", ".join(f"{d}:{op} {k}" for (d, op), k in hist.items()))
    t = time.perf_counter()
    rows, details, bad = [], [], False
    for p in paths:
        row, wrong, failed = compare(a.bin, p, a.as_is)
        rows.append(row)
        bad |= failed
        if wrong:
            details.append(f"{os.path.basename(p)}: {len(wrong)} wrong")
            details += [f"  {w}" for w in wrong[:8]]
    print("\n| model | com.microsoft ops (count) | top-level tensors | ranked / full (no --dim) | ranked / full (--dim)"
          " | wrong | unknown ops (onnx-bcast) |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if details:
        print("\n" + "\n".join(details))
    print(f"\nbuild {built:.1f} s, compare {time.perf_counter() - t:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
