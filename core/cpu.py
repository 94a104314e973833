"""What this CPU computes natively, for choosing the number format models run in."""

from __future__ import annotations

import re
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
