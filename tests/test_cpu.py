"""The dtype models run in follows what the CPU computes natively."""

from __future__ import annotations

from core.cpu import cpu_flags, missing_instructions, native_bf16, resolve_dtype


def test_decode_dtype_follows_the_cpu():
    sapphire = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_tile\n"
    zen2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
    assert native_bf16(sapphire) and not native_bf16(zen2) and not native_bf16("")
    assert resolve_dtype("auto", sapphire) == "bfloat16" and resolve_dtype("auto", zen2) == "float32"
    assert resolve_dtype("float32", sapphire) == "float32" and resolve_dtype("bfloat16", zen2) == "bfloat16"


def test_an_avx512_llama_build_on_a_cpu_without_it_is_named_not_run():
    avx512 = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | REPACK = 1 | "
    avx2 = "CPU : SSE3 = 1 | AVX2 = 1 | LLAMAFILE = 1 | REPACK = 1 | "
    zen2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
    icelake = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n"
    assert missing_instructions(avx512, zen2) == ["AVX512", "AVX512_BF16", "AVX512_VNNI"]
    assert missing_instructions(avx512, icelake) == ["AVX512_BF16"]
    assert missing_instructions(avx2, zen2) == [] and missing_instructions(avx512, "") == ["AVX512", "AVX512_BF16", "AVX512_VNNI"]
    assert cpu_flags(zen2) == {"fpu", "sse2", "avx", "avx2", "fma"}


def test_this_machines_llama_build_runs_here():
    # scripts/setup.sh builds llama.cpp for this CPU: nothing it uses may be missing.
    import llama_cpp

    assert missing_instructions(llama_cpp.llama_print_system_info().decode()) == []
