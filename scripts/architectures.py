"""Tiny models of 56 `transformers` architectures (text, vision, speech, state-space), each
exported by torch.onnx's TorchScript and dynamo exporters with dynamic batch and sequence (or
image size), compared with onnxruntime by scripts/compare_ort.py at four sets of sizes. Run by
hand (needs torch, transformers, onnx, onnxruntime and numpy; the models go to
target/real-models/architectures/, never committed):

    cargo build --release
    python3 scripts/architectures.py [--only NAME] [--bin target/release/onnx-bcast]

It prints one row per model and size set (compare_ort.py's columns) and, last, the runs
whose inferred shapes disagree with onnxruntime's (exit 1 if any), and the runs onnxruntime
refused with whether `check` with the same sizes reports an error for each. Some exports fail
in torch itself (they are listed and skipped). Sizes: sequence 7, 13, 1 and 3
(decoder 5, 3, 1, 2), image 32, 48, 16 and 64 pixels, audio 400, 1003, 20 and 777 samples.
"""
import argparse
import os
import subprocess
import sys
import warnings

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "target", "real-models", "architectures")
SIZES = [(7, 5, 32, 400), (13, 3, 48, 1003), (1, 1, 16, 20), (3, 2, 64, 777)]


def export(only):
    import torch
    import transformers as T

    from real_models import export_both

    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    S = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    ids = torch.randint(3, 90, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    text = (["input_ids", "attention_mask"], (ids, mask))
    ido = (["input_ids"], (ids,))
    aud = (["input_values"], (torch.randn(2, 400),))

    def img(n=32):
        return (["pixel_values"], (torch.randn(2, 3, n, n),))

    M = {
        "distilbert": (lambda: T.DistilBertModel(T.DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64)), text),
        "roberta": (lambda: T.RobertaModel(T.RobertaConfig(vocab_size=100, max_position_embeddings=64, **S)), text),
        "albert": (lambda: T.AlbertModel(T.AlbertConfig(vocab_size=100, embedding_size=16, max_position_embeddings=64, **S)), text),
        "electra": (lambda: T.ElectraModel(T.ElectraConfig(vocab_size=100, embedding_size=16, max_position_embeddings=64, **S)), text),
        "deberta_v2": (lambda: T.DebertaV2Model(T.DebertaV2Config(vocab_size=100, max_position_embeddings=64, relative_attention=True, position_buckets=16, pos_att_type=["p2c","c2p"], **S)), text),
        "mobilebert": (lambda: T.MobileBertModel(T.MobileBertConfig(vocab_size=100, hidden_size=32, embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)), text),
        "opt": (lambda: T.OPTModel(T.OPTConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64, max_position_embeddings=64, word_embed_proj_dim=32, use_cache=False)), text),
        "bloom": (lambda: T.BloomModel(T.BloomConfig(vocab_size=100, hidden_size=32, n_layer=2, n_head=4, use_cache=False)), text),
        "gpt_neo": (lambda: T.GPTNeoModel(T.GPTNeoConfig(vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global","local"],1]], window_size=4, max_position_embeddings=64, use_cache=False)), text),
        "gptj": (lambda: T.GPTJModel(T.GPTJConfig(vocab_size=100, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64, use_cache=False)), text),
        "falcon": (lambda: T.FalconModel(T.FalconConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, use_cache=False)), text),
        "mistral": (lambda: T.MistralModel(T.MistralConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64, sliding_window=4, use_cache=False)), text),
        "phi": (lambda: T.PhiModel(T.PhiConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=64, use_cache=False)), text),
        "qwen2": (lambda: T.Qwen2Model(T.Qwen2Config(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64, use_cache=False)), text),
        "gemma": (lambda: T.GemmaModel(T.GemmaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, head_dim=8, intermediate_size=64, max_position_embeddings=64, use_cache=False)), text),
        "codegen": (lambda: T.CodeGenModel(T.CodeGenConfig(vocab_size=100, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64, n_ctx=64, use_cache=False)), text),
        "mpt": (lambda: T.MptModel(T.MptConfig(vocab_size=100, d_model=32, n_layers=2, n_heads=4, max_seq_len=64, use_cache=False)), text),
        "swin": (lambda: T.SwinModel(T.SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[1,1], num_heads=[2,2], window_size=4)), img()),
        "resnet": (lambda: T.ResNetModel(T.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8,16], depths=[1,1])), img()),
        "mobilevit": (lambda: T.MobileViTModel(T.MobileViTConfig(image_size=32, hidden_sizes=[16,16,16], neck_hidden_sizes=[8,8,16,16,16,24,32])), img()),
        "deit": (lambda: T.DeiTModel(T.DeiTConfig(image_size=32, patch_size=8, **S)), img()),
        "beit": (lambda: T.BeitModel(T.BeitConfig(image_size=32, patch_size=8, use_relative_position_bias=True, **S)), img()),
        "segformer": (lambda: T.SegformerModel(T.SegformerConfig(num_encoder_blocks=2, depths=[1,1], sr_ratios=[2,1], hidden_sizes=[8,16], num_attention_heads=[1,2], patch_sizes=[7,3], strides=[4,2], mlp_ratios=[2,2])), img()),
        "wav2vec2": (lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(8,8), conv_stride=(5,2), conv_kernel=(10,3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)), aud),
        "hubert": (lambda: T.HubertModel(T.HubertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(8,8), conv_stride=(5,2), conv_kernel=(10,3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)), aud),
        "clip_text": (lambda: T.CLIPTextModel(T.CLIPTextConfig(vocab_size=100, max_position_embeddings=64, **S)), text),
        "bart": (lambda: T.BartModel(T.BartConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64, use_cache=False)), text),
        "t5": (lambda: T.T5Model(T.T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4, use_cache=False)), (["input_ids", "decoder_input_ids"], (ids, ids[:, :5]))),
        "llama": (lambda: T.LlamaModel(T.LlamaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64, use_cache=False)), text),
        "funnel": (lambda: T.FunnelModel(T.FunnelConfig(vocab_size=100, block_sizes=[1,1], d_model=32, n_head=4, d_head=8, d_inner=64, num_decoder_layers=1)), text),
        "longformer": (lambda: T.LongformerModel(T.LongformerConfig(vocab_size=100, attention_window=4, max_position_embeddings=80, **S)), text),
        "bigbird": (lambda: T.BigBirdModel(T.BigBirdConfig(vocab_size=100, attention_type="original_full", max_position_embeddings=64, **S)), text),
        "led_enc": (lambda: T.LEDModel(T.LEDConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, attention_window=[4], max_encoder_position_embeddings=64, max_decoder_position_embeddings=64)).get_encoder(), text),
        "sew": (lambda: T.SEWModel(T.SEWConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(8,8), conv_stride=(5,2), conv_kernel=(10,3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, squeeze_factor=2)), aud),
        "data2vec_audio": (lambda: T.Data2VecAudioModel(T.Data2VecAudioConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(8,8), conv_stride=(5,2), conv_kernel=(10,3), num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=4, conv_pos_kernel_size=5, num_conv_pos_embeddings_layers=1)), aud),
        "wav2vec2_conformer": (lambda: T.Wav2Vec2ConformerModel(T.Wav2Vec2ConformerConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(8,8), conv_stride=(5,2), conv_kernel=(10,3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, conv_depthwise_kernel_size=3, position_embeddings_type="relative")), aud),
        "poolformer": (lambda: T.PoolFormerModel(T.PoolFormerConfig(num_channels=3, hidden_sizes=[8,16], depths=[1,1], num_encoder_blocks=2, patch_sizes=[7,3], strides=[4,2], padding=[2,1])), img()),
        "levit": (lambda: T.LevitModel(T.LevitConfig(image_size=32, hidden_sizes=[16,32,48], num_attention_heads=[1,2,3], depths=[1,1,1], key_dim=[8,8,8], patch_size=16, stride=2)), img()),
        "dinov2": (lambda: T.Dinov2Model(T.Dinov2Config(image_size=32, patch_size=8, **S)), img()),
        "pvt": (lambda: T.PvtModel(T.PvtConfig(image_size=32, num_encoder_blocks=2, depths=[1,1], sequence_reduction_ratios=[2,1], hidden_sizes=[8,16], num_attention_heads=[1,2], patch_sizes=[4,2], strides=[4,2], mlp_ratios=[2,2])), img()),
        "mamba": (lambda: T.MambaModel(T.MambaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, state_size=4, expand=2, conv_kernel=4, use_cache=False)), ido),
        "rwkv": (lambda: T.RwkvModel(T.RwkvConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, attention_hidden_size=32, intermediate_size=64, context_length=64, use_cache=False)), ido),
        "xlm": (lambda: T.XLMModel(T.XLMConfig(vocab_size=100, emb_dim=32, n_layers=2, n_heads=4, max_position_embeddings=64)), text),
        "xlnet": (lambda: T.XLNetModel(T.XLNetConfig(vocab_size=100, d_model=32, n_layer=2, n_head=4, d_inner=64, use_mems_eval=False)), text),
        "canine": (lambda: T.CanineModel(T.CanineConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, downsampling_rate=2, num_hash_functions=2, num_hash_buckets=64, max_position_embeddings=64)), text),
        "gpt2": (lambda: T.GPT2Model(T.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64)), text),
        "gpt_neox": (lambda: T.GPTNeoXModel(T.GPTNeoXConfig(vocab_size=100, max_position_embeddings=64, rotary_pct=0.5, use_cache=False, **S)), text),
        "stablelm": (lambda: T.StableLmModel(T.StableLmConfig(vocab_size=100, max_position_embeddings=64, num_key_value_heads=2, use_cache=False, **S)), text),
        "squeezebert": (lambda: T.SqueezeBertModel(T.SqueezeBertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, embedding_size=32, max_position_embeddings=64)), text),
        "convbert": (lambda: T.ConvBertModel(T.ConvBertConfig(vocab_size=100, embedding_size=32, max_position_embeddings=64, **S)), text),
        "ibert": (lambda: T.IBertModel(T.IBertConfig(vocab_size=100, max_position_embeddings=64, **S)), text),
        "yoso": (lambda: T.YosoModel(T.YosoConfig(vocab_size=100, max_position_embeddings=80, **S)), text),
        "fnet": (lambda: T.FNetModel(T.FNetConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, intermediate_size=64, max_position_embeddings=64)), ido),
        "vit": (lambda: T.ViTModel(T.ViTConfig(image_size=32, patch_size=8, **S)), img()),
        "convnext": (lambda: T.ConvNextModel(T.ConvNextConfig(num_channels=3, hidden_sizes=[8,16], depths=[1,1], num_stages=2)), img()),
        "regnet": (lambda: T.RegNetModel(T.RegNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8,16], depths=[1,1], groups_width=8)), img()),
    }

    class Wrap(torch.nn.Module):
        def __init__(self, m, keys):
            super().__init__()
            self.m, self.keys = m, keys

        def forward(self, a, b=None):
            o = self.m(**dict(zip(self.keys, [a] if b is None else [a, b])))
            return o.last_hidden_state if getattr(o, "last_hidden_state", None) is not None else o[0]

    for name, (make, (keys, args)) in M.items():
        if only and only not in name:
            continue
        dyn = {k: {0: "batch", 2: "h", 3: "w"} if k == "pixel_values" else
               {0: "batch", 1: "dseq" if k == "decoder_input_ids" else "seq"} for k in keys}
        export_both(lambda: Wrap(make(), keys), keys, args, dyn, os.path.join(OUT, name), "out")


def dims_for(path, size):
    seq, dseq, img, aud = size
    shapes = {"input_ids": [2, seq], "attention_mask": [2, seq], "decoder_input_ids": [2, dseq],
              "pixel_values": [2, 3, img, img], "input_values": [2, aud]}
    m = onnx.load(path, load_external_data=False)
    dims = {}
    for i in m.graph.input:
        for axis, d in enumerate(i.type.tensor_type.shape.dim):
            if d.dim_param and i.name in shapes:
                dims.setdefault(d.dim_param, shapes[i.name][axis])
    return [f"--dim={k}={v}" for k, v in dims.items()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    a = ap.parse_args()
    export(a.only)
    models = sorted(f for f in os.listdir(OUT) if f.endswith(".onnx") and ".stripped." not in f and a.only in f)
    wrong, refused, rows = [], [], 0
    for size in SIZES:
        for f in models:
            path = os.path.join(OUT, f)
            dims = dims_for(path, size)
            r = subprocess.run([sys.executable, os.path.join(HERE, "compare_ort.py"), path, "--bin", a.bin, "--strip", *dims],
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                if not line.startswith(path):
                    continue
                rows += 1
                print(f"{size} {line[len(OUT) + 1:]}", flush=True)
                if "could not run" in line:
                    chk = subprocess.run([a.bin, "check", path, *dims], capture_output=True, text=True)
                    refused.append((f, size, chk.returncode))
                elif line.rsplit("|", 1)[1].strip() != "0":
                    wrong.append((f, size))
    silent = [(f, s) for f, s, rc in refused if rc != 1]
    print(f"\n{len(models)} models, {rows} runs; disagreements in {len(wrong)}: {wrong}")
    print(f"onnxruntime refused {len(refused)} runs; check reports an error for {len(refused) - len(silent)}, "
          f"not for {len(silent)}: {silent}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
