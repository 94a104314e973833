"""Int8 weight copies for the parser's narrow passes (spr/parsing/int8.py): narrow inputs go
through the int8 kernel, close to the original layer; wider ones through the original, exactly."""

from __future__ import annotations

import pytest
import torch

from spr.parsing.int8 import add_int8_copies, int8_supported

pytestmark = pytest.mark.skipif(not int8_supported(), reason="no int8 weight-only kernel in this torch")


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.SiLU(), torch.nn.Linear(96, 32, bias=False)).to(torch.bfloat16)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_narrow_passes_use_int8_and_wide_ones_the_original_weights(dtype):
    reference = _model().to(dtype)
    wrapped = _model().to(dtype)
    assert add_int8_copies(wrapped, max_rows=4) == 2
    with torch.inference_mode():
        for rows in (1, 3, 4):
            x = torch.randn(1, rows, 64, dtype=dtype)
            want, got = reference(x).float(), wrapped(x).float()
            assert got.shape == want.shape
            assert not torch.equal(got, want)  # the int8 copy ran
            assert ((got - want).abs().mean() / want.abs().mean()) < 0.03  # ~1 % rounding
        x = torch.randn(1, 5, 64, dtype=dtype)
        assert torch.equal(wrapped(x), reference(x))  # wider than max_rows: the original weights


def test_output_layer_is_left_alone():
    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(8, 8)
            self.lm_head = torch.nn.Linear(8, 16)

    model = Tiny()
    assert add_int8_copies(model) == 1
    assert isinstance(model.lm_head, torch.nn.Linear) and not isinstance(model.proj, torch.nn.Linear)
