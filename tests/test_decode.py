"""Draft-and-verify greedy decoding gives exactly greedy decoding's output, in fewer forward passes.

The model is a real ``transformers`` Llama with a tiny random configuration (built locally, no
download), in float64 so that verifying several tokens at once and one at a time agree bit for bit
on argmax."""

from __future__ import annotations

import pytest

from spr.parsing.decode import NgramDrafter, greedy_draft_verify

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(7)
    config = LlamaConfig(
        vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=True,
        initializer_range=0.5,  # varied outputs, not one repeated token
    )
    return LlamaForCausalLM(config).double().eval()


def reference_greedy(model, prompt: list[int], n: int) -> list[int]:
    with torch.no_grad():
        out = model.generate(
            input_ids=torch.tensor([prompt]), max_new_tokens=n, min_new_tokens=n, do_sample=False,
            pad_token_id=0, eos_token_id=None,
        )
    return out[0, len(prompt) :].tolist()


PROMPTS = [[5, 17, 33, 2, 41, 8], [90, 1, 1, 64, 12, 30, 30, 7, 55], [3]]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_same_output_as_greedy_with_good_bad_and_no_drafts(tiny_model, prompt):
    expected = reference_greedy(tiny_model, prompt, 20)

    def never(_generated):
        return False

    for sequences in ([expected], [[(t * 7 + 3) % 96 for t in range(40)]], []):  # right, wrong, none
        drafter = NgramDrafter(sequences, max_n=3, max_draft=6, min_share=0.5)
        out = greedy_draft_verify(tiny_model, prompt, drafter, 20, never, eos_id=None)
        assert out.tokens == expected
        if sequences == [expected]:
            assert out.forward_passes < len(expected) / 2  # drafts were accepted
    everything = NgramDrafter([expected])
    out = greedy_draft_verify(tiny_model, prompt, everything, 20, never, None, vocab=range(96))
    assert out.tokens == expected  # the output-layer subset path, with the subset = the vocabulary


def test_stop_and_token_limit(tiny_model):
    expected = reference_greedy(tiny_model, PROMPTS[0], 20)
    drafter = NgramDrafter([expected])
    out = greedy_draft_verify(tiny_model, PROMPTS[0], drafter, 20, lambda g: len(g) >= 7, eos_id=None)
    assert out.tokens == expected[:7]
    out = greedy_draft_verify(tiny_model, PROMPTS[0], drafter, 5, lambda g: False, eos_id=None)
    assert out.tokens == expected[:5] and out.mean_prob <= 1.0
    out = greedy_draft_verify(tiny_model, PROMPTS[0], drafter, 20, lambda g: False, eos_id=expected[3])
    assert out.tokens == expected[: expected.index(expected[3]) + 1]


def test_drafter_stops_at_branches_and_prefers_copying():
    # After token 1 the targets continue 2 3 4 (always); after 4 they branch (5 or 6, equally).
    drafter = NgramDrafter([[1, 2, 3, 4, 5], [1, 2, 3, 4, 6]], max_n=2, max_draft=10, min_share=0.5)
    assert drafter.draft([1], prompt=[]) == [2, 3, 4]
    # at the default share (0.2) it guesses on through an even branch
    assert NgramDrafter([[1, 2, 3, 4, 5], [1, 2, 3, 4, 6]], max_n=2, max_draft=10).draft([1], prompt=[])[:4] == [2, 3, 4, 5]
    assert drafter.draft([9], prompt=[]) == []
    # Copying from the prompt: the context's last token occurs there.
    assert drafter.draft([7, 40], prompt=[11, 40, 41, 42]) == [41, 42]
    # A memory match two or more tokens longer than the prompt match wins.
    long_memory = NgramDrafter([[8, 9, 40, 77, 78]], max_n=3)
    assert long_memory.draft([8, 9, 40], prompt=[40, 41]) == [77, 78]
    assert {1, 2, 3, 4, 5, 6} <= drafter.vocab


def test_the_prompt_pass_verifies_the_opening(tiny_model):
    # The drafter knows how targets begin, so the prompt's own forward pass verifies a draft too:
    # with a right draft the whole output comes in one pass.
    expected = reference_greedy(tiny_model, PROMPTS[1], 10)
    drafter = NgramDrafter([expected], max_n=4, max_draft=12)
    assert drafter.draft([], prompt=[]) == expected
    out = greedy_draft_verify(tiny_model, PROMPTS[1], drafter, 10, lambda g: False, eos_id=None)
    assert out.tokens == expected and out.forward_passes == 1
    wrong_start = NgramDrafter([[(expected[0] + 1) % 96, *expected[1:]]], max_n=4, max_draft=12)
    out = greedy_draft_verify(tiny_model, PROMPTS[1], wrong_start, 10, lambda g: False, eos_id=None)
    assert out.tokens == expected


def test_after_a_rare_token_the_prompt_is_copied():
    # Forty targets "1 2 <entity> 3" and one "1 2 50 51 52 3": after "1 2 50" the memory has a
    # three-token match (another entity's continuation), the prompt a one-token one. Token 50 is in
    # 2 of 41 targets — part of a name, not grammar — so the question's own continuation is drafted.
    targets = [[1, 2, 50 + i, 3] for i in range(40)] + [[1, 2, 50, 51, 52, 3]]
    assert NgramDrafter(targets).draft([1, 2, 50], prompt=[9, 50, 60, 61]) == [60, 61]
    # with every token counted common, the longer memory match wins as before
    assert NgramDrafter(targets, rare_share=0.0).draft([1, 2, 50], prompt=[9, 50, 60, 61])[:1] != [60]
