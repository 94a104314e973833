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


def test_narrow_torch_work_gets_half_the_threads_and_wide_work_all():
    from core.cpu import torch_threads

    assert [torch_threads(True, 2), torch_threads(False, 2)] == [2, 1]
    assert [torch_threads(True, 16), torch_threads(False, 16), torch_threads(False, 1)] == [16, 8, 1]


def test_the_embedder_sets_the_threads_by_the_width_of_the_call(monkeypatch):
    # Measured (bench/bench_torch_threads.py): beside another busy process, two threads made a
    # question's embedding 1.5x and a parse 2.9x slower than one; batches still gain from all.
    import torch

    from core import cpu
    from core.embed import SentenceTransformerEmbedder

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    try:
        embedder.embed_batch(["Who issues the permit?"])
        default = cpu._TORCH_DEFAULT[0]
        assert torch.get_num_threads() == cpu.torch_threads(False, default)
        embedder.embed_batch([f"passage {i}" for i in range(cpu.NARROW_TEXTS + 1)])
        assert torch.get_num_threads() == default
        monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the user's choice is left alone
        torch.set_num_threads(default)
        embedder.embed_batch(["Who issues the permit?"])
        assert torch.get_num_threads() == default
    finally:
        torch.set_num_threads(before)
