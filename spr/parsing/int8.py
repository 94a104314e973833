"""Int8 copies of the parser's weights for its narrowest decoding passes.

Draft-and-verify decoding (:mod:`spr.parsing.decode`) feeds the model 1–40 tokens per pass. For a
pass of a few tokens the time is reading the weights (a bfloat16 step is ~73 % ``aten::mm``), so
int8 weights with one scale per output row read half the bytes, through PyTorch's own CPU kernel
for that layout (``torch._weight_int8pack_mm``, the one int8 weight-only decoding calls on CPU).
That kernel's cost grows with the rows it multiplies, though: measured on SmolLM2-135M, a whole
step took 27 vs 44 ms (bfloat16) for 1 token and 34 vs 51 ms for 3, but 50 vs 52 ms for 12 and
91 vs 89 ms for 32. So each layer keeps both copies and picks by the rows of the pass
(``max_rows``): the wide passes stay exactly as before, the narrow ones (1.7 per PathQuestion
parse, mostly a two-token draft) get faster. Activations stay in floating point — unlike dynamic
int8 quantization, which also rounds them and cost PQ-3H parse EM 100 % → 73 % here.

Only with bfloat16 activations: with float32 ones the same kernel made whole parses 1.5x slower
(555 → 899 ms p50 on PQ-2H), so :class:`spr.parsing.lora.LoRAParser` adds the copies only when it
decodes in bfloat16.

A module of our own rather than torchao's: its tensor subclasses dispatch in Python on every call,
which costs as much as the kernel saves on a one-row product.
"""

from __future__ import annotations

from typing import Any

import torch

from core.errors import ModelError

DEFAULT_MAX_ROWS = 4  # measured crossover region: int8 wins clearly up to 4 rows, ties by 8-12


def int8_supported() -> bool:
    """Whether this PyTorch build has the int8 weight-only CPU kernel."""
    return hasattr(torch, "_weight_int8pack_mm")


class NarrowInt8Linear(torch.nn.Module):
    """``nn.Linear`` that multiplies up to ``max_rows`` rows with an int8 copy of its weight
    (symmetric, one scale per output row) and wider inputs with the original weight."""

    def __init__(self, linear: torch.nn.Linear, max_rows: int):
        super().__init__()
        self.linear = linear
        self.max_rows = max_rows
        weight = linear.weight.detach().float()
        scales = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0
        self.register_buffer("qweight", torch.round(weight / scales[:, None]).clamp(-127, 127).to(torch.int8))
        self.register_buffer("scales", scales.to(linear.weight.dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // x.shape[-1]
        if rows > self.max_rows:
            return self.linear(x)
        flat = x.reshape(rows, x.shape[-1]).contiguous()
        out = torch._weight_int8pack_mm(flat, self.qweight, self.scales)
        if self.linear.bias is not None:
            out = out + self.linear.bias
        return out.reshape(*x.shape[:-1], out.shape[-1])


def add_int8_copies(model: Any, max_rows: int = DEFAULT_MAX_ROWS, skip: tuple[str, ...] = ("lm_head",)) -> int:
    """Wrap every ``nn.Linear`` of ``model`` but those named in ``skip`` (the output layer: tied to
    the input embeddings, and cut to the targets' vocabulary by the decoder) so passes of at most
    ``max_rows`` tokens use an int8 copy. Returns how many layers were wrapped."""
    if not int8_supported():
        raise ModelError("this PyTorch build has no int8 weight-only kernel; set [spr] parser_int8_rows = 0")
    targets = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and name.rsplit(".", 1)[-1] not in skip
    ]
    for name, module in targets:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, NarrowInt8Linear(module, max_rows))
    return len(targets)
