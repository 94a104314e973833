"""What this CPU computes natively, for choosing the number format models run in."""

from __future__ import annotations

from pathlib import Path


def native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX-BF16; Linux
    ``/proc/cpuinfo`` flags). Elsewhere bfloat16 is emulated and slower than float32."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.partition(":")[2].split()}
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def resolve_dtype(setting: str, cpuinfo: str | None = None) -> str:
    """A dtype setting resolved: 'auto' is bfloat16 where the CPU has it natively, else float32."""
    if setting == "auto":
        return "bfloat16" if native_bf16(cpuinfo) else "float32"
    return setting
