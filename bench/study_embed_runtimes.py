"""The embedder on other CPU runtimes: ONNX Runtime (float32, dynamic int8) and PyTorch dynamic int8.

    .venv/bin/python bench/study_embed_runtimes.py --embed all-mpnet-base-v2

A study, not a product path: ONNX Runtime is not a policykb dependency (optimum, the library
sentence-transformers' ONNX backend needs, pins transformers 4.x). Install it beside the venv to
run this: ``.venv/bin/pip install --target /tmp/ort onnxruntime==1.31.1 onnx==1.23.2 flatbuffers
protobuf ml_dtypes`` and run with ``PYTHONPATH=/tmp/ort``. Without it only the PyTorch rows run.

The model's encoder is exported to ONNX (``torch.onnx.export``, opset 17), tokenized and
mean-pooled here as sentence-transformers does, and each runtime embeds the same texts as the
product's embedder: short texts (sentences of the EU regulations) and long ones (260-word windows,
near mpnet's 384-token limit), sorted by length, batches of 32, two threads, after one warm-up
batch. Quality is the cosine of each vector with the product's float32 vector (1.0 = identical).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.embed import SentenceTransformerEmbedder  # noqa: E402

ARTICLES = ROOT.parent / "shared" / "data" / "policy_corpora" / "eu_regulations_pypi" / "articles.jsonl"


def texts(short_n: int, long_n: int) -> dict[str, list[str]]:
    lines = ARTICLES.read_text(encoding="utf-8").splitlines()[:120]
    text = " ".join(json.loads(line).get("text", "") for line in lines)
    sentences = [s.strip() for s in re.split(r"(?<=[.;])\s+", text) if 40 < len(s.strip()) < 600]
    rng = np.random.default_rng(0)
    words = text.split()
    short = [sentences[i] for i in rng.choice(len(sentences), short_n, replace=False)]
    long = [" ".join(words[i : i + 260]) for i in rng.choice(len(words) - 300, long_n, replace=False)]
    return {"short": sorted(short, key=len), "long": sorted(long, key=len)}


def timed(encode, items: list[str]) -> tuple[float, np.ndarray]:
    encode(items[:8])  # warm-up
    started = time.perf_counter()
    vectors = encode(items)
    return time.perf_counter() - started, vectors


def onnx_encoder(model, path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tokenizer, limit = model.tokenizer, model.max_seq_length

    def encode(items: list[str]) -> np.ndarray:
        out = []
        for start in range(0, len(items), 32):
            enc = tokenizer(items[start : start + 32], padding=True, truncation=True, max_length=limit, return_tensors="np")
            feeds = {"input_ids": enc["input_ids"].astype(np.int64), "attention_mask": enc["attention_mask"].astype(np.int64)}
            hidden = session.run(None, feeds)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(1) / mask.sum(1)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out)

    return encode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embed", default="all-mpnet-base-v2")
    parser.add_argument("--short", type=int, default=256, help="sentences")
    parser.add_argument("--long", type=int, default=48, help="260-word windows")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(2)
    embedder = SentenceTransformerEmbedder(args.embed, dtype="float32")
    model = embedder.model
    sets = texts(args.short, args.long)

    def st(m):
        return lambda items: m.encode(items, batch_size=32, normalize_embeddings=True, show_progress_bar=False)

    runtimes = {"PyTorch float32 (the product on AVX2)": st(model)}
    quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    runtimes["PyTorch dynamic int8 (Linear layers)"] = st(quantized)
    try:
        import onnxruntime  # noqa: F401
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        print("onnxruntime is not importable: ONNX rows skipped (see the docstring)")
    else:
        work = Path(tempfile.mkdtemp(prefix="embed-onnx-"))
        fp32 = work / "model.onnx"
        encoder = model[0].auto_model.eval()
        sample = model.tokenizer(["a sentence"], return_tensors="pt")
        axes = {0: "batch", 1: "tokens"}
        torch.onnx.export(
            encoder, (sample["input_ids"], sample["attention_mask"]), str(fp32), input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"], opset_version=17, dynamo=False,
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
        )  # fmt: skip
        runtimes["ONNX Runtime float32"] = onnx_encoder(model, fp32)
        for name, kwargs in {
            "ONNX Runtime int8, per tensor": {"weight_type": QuantType.QInt8},
            "ONNX Runtime int8, per channel, reduced range": {"weight_type": QuantType.QInt8, "per_channel": True, "reduce_range": True},
            "ONNX Runtime uint8 weights": {"weight_type": QuantType.QUInt8},
        }.items():
            path = work / f"{len(runtimes)}.onnx"
            quantize_dynamic(str(fp32), str(path), op_types_to_quantize=["MatMul"], **kwargs)
            runtimes[name] = onnx_encoder(model, path)

    print(f"| runtime | {args.short} sentences | {args.long} windows of 260 words | cosine to float32, min / mean |")
    print("|---|---|---|---|")
    base: dict[str, tuple[float, np.ndarray]] = {}
    for name, encode in runtimes.items():
        cells, cosines = [], []
        for kind, items in sets.items():
            seconds, vectors = timed(encode, items)
            base.setdefault(kind, (seconds, vectors))
            cells.append(f"{seconds:.1f} s ({base[kind][0] / seconds:.2f}×)")
            cosines.append((vectors * base[kind][1]).sum(1))
        cos = np.concatenate(cosines)
        print(f"| {name} | {cells[0]} | {cells[1]} | {cos.min():.4f} / {cos.mean():.4f} |", flush=True)


if __name__ == "__main__":
    main()
