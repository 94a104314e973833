"""What this CPU computes natively, for choosing the number format models run in, and how many
threads PyTorch work gets."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path


def cpu_flags(cpuinfo: str | None = None) -> set[str] | None:
    """The CPU's feature flags from Linux ``/proc/cpuinfo`` (or the given text); None where
    there is no such file (another OS), so callers can tell "unknown" from "absent"."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    return {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.partition(":")[2].split()}


def native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX-BF16; Linux
    ``/proc/cpuinfo`` flags). Elsewhere bfloat16 is emulated and slower than float32."""
    return bool((cpu_flags(cpuinfo) or set()) & {"avx512_bf16", "amx_bf16"})


def missing_instructions(built_for: str, cpuinfo: str | None = None) -> list[str]:
    """The instruction sets a llama.cpp build uses (its ``llama_print_system_info()`` text,
    "AVX512 = 1 | AVX512_VNNI = 1 | ...") that this CPU does not report: running it would end the
    process with SIGILL, not an exception. Empty when all are there or the flags are unknown."""
    flags = cpu_flags(cpuinfo)
    if flags is None:
        return []
    needs = {"AVX512": "avx512f", "AVX512_VNNI": "avx512_vnni", "AVX512_VBMI": "avx512vbmi", "AVX512_BF16": "avx512_bf16"}
    used = {m.group(1) for m in re.finditer(r"\b(AVX512\w*) = 1", built_for)}
    return sorted(name for name, flag in needs.items() if name in used and flag not in flags)


def resolve_dtype(setting: str, cpuinfo: str | None = None) -> str:
    """A dtype setting resolved: 'auto' is bfloat16 where the CPU has it natively, else float32."""
    if setting == "auto":
        return "bfloat16" if native_bf16(cpuinfo) else "float32"
    return setting


# PyTorch's CPU threads meet at a barrier after every operation, like llama.cpp's. Measured on two
# cores (bench/bench_torch_threads.py, docs/structured.md "PyTorch threads"): on an idle machine two threads
# parse 20 % and embed a question 15-50 % faster than one; beside one CPU-bound process two threads
# parse 2.9x and embed a question 1.5-1.7x *slower*, while a batch of 64 chunks still embeds 2x
# faster idle and only 8-48 % slower busy. So narrow work (one question, a parse) gets half of
# PyTorch's threads, as llama.cpp's generation does, and wide work (a batch) all of them.
NARROW_TEXTS = 4  # an embedding call of at most this many texts is narrow work
_TORCH_DEFAULT: list[int] = []  # PyTorch's own thread count (physical cores), read once
_TORCH_LOCK = threading.Lock()


def torch_threads(wide: bool, default: int) -> int:
    """Threads for PyTorch work: ``default`` (PyTorch's own count) for wide work, half for narrow."""
    return max(1, default if wide else default // 2)


def use_torch_threads(wide: bool) -> None:
    """Set PyTorch's (process-wide) thread count for the work about to run. Left alone where the
    user chose it (``OMP_NUM_THREADS``). Concurrent callers may overwrite each other's setting:
    that changes speed only, never results."""
    if os.environ.get("OMP_NUM_THREADS"):
        return
    import torch

    with _TORCH_LOCK:
        if not _TORCH_DEFAULT:
            _TORCH_DEFAULT.append(torch.get_num_threads())
        wanted = torch_threads(wide, _TORCH_DEFAULT[0])
        if torch.get_num_threads() != wanted:
            torch.set_num_threads(wanted)
