"""The dtype models run in follows what the CPU computes natively."""

from __future__ import annotations

from core.cpu import native_bf16, resolve_dtype


def test_decode_dtype_follows_the_cpu():
    sapphire = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_tile\n"
    zen2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
    assert native_bf16(sapphire) and not native_bf16(zen2) and not native_bf16("")
    assert resolve_dtype("auto", sapphire) == "bfloat16" and resolve_dtype("auto", zen2) == "float32"
    assert resolve_dtype("float32", sapphire) == "float32" and resolve_dtype("bfloat16", zen2) == "bfloat16"
