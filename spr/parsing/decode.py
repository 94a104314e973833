"""Fast greedy decoding of S-expressions: draft-and-verify with an n-gram drafter.

On a 2-core CPU one forward step of SmolLM2-135M costs ~30 ms for 1 token and ~47 ms for 9 (much
of it per-layer overhead and weight reads), and an S-expression is 25–45 tokens. Most of those tokens are predictable without the model: the grammar's fixed parts
("(JOIN (R [") recur in every training target, and entity labels are copied from the question. The
drafter proposes a continuation from the longest matching n-gram in (a) the question's tokens and
(b) the training targets; one forward pass verifies the whole draft and keeps the prefix the model
itself would have chosen, plus the model's next token. The output is exactly greedy decoding's
(speculative decoding with greedy acceptance), in several times fewer forward passes.

A third source, :class:`LabelDrafter`, knows the KB's relation labels: once the first tokens of a
relation single out one label, it drafts that label's rest and its closing bracket. Relations the
training targets never held (a KB's rarer ones; PathQuestion's held-out paths) are then guessed
right too.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


class NgramDrafter:
    """Drafts from two sources: copies from the prompt, and an n-gram model of the training targets.

    The n-gram model maps the last 1..``max_n`` tokens to the most frequent next token and its
    share; a memory draft extends token by token while that share stays above ``min_share``,
    so it stops where training targets branch too evenly to guess. ``min_share`` 0.2 rather than
    0.5: a wrong draft costs only a wider pass (12 tokens ~1.4x the time of one), a right guess of a
    relation label saves a whole pass. With the opening drafted along with the prompt and the rare
    token rule below, held-out PathQuestion (PQ-2H) parses take 5.0 passes instead of 7.9, the
    output unchanged (``bench/bench_parse.py``). A prompt draft continues the last occurrence of the
    context's tail in the prompt (labels copied from the question). The prompt draft wins when the
    last token is rare in the targets (in under ``rare_share`` of them: a piece of an entity's name,
    not grammar or a relation label; the memory would continue another entity of the training
    set) or when the memory draft matched no context at least two tokens longer."""

    def __init__(
        self, sequences: Iterable[Sequence[int]] = (), max_n: int = 4, max_draft: int = 12, min_share: float = 0.2,
        rare_share: float = 0.05, labels: LabelDrafter | None = None,
    ):
        self.labels = labels
        self.max_n = max_n
        self.max_draft = max_draft
        self.min_share = min_share
        counts: dict[tuple[int, ...], Counter[int]] = {}
        vocab: set[int] = set()
        sequences_list = [list(seq) for seq in sequences]
        for seq in sequences_list:
            vocab.update(seq)
            for i in range(1, len(seq)):
                for n in range(1, min(max_n, i) + 1):
                    counts.setdefault(tuple(seq[i - n : i]), Counter())[seq[i]] += 1
        starts: Counter[int] = Counter()
        for seq in sequences_list:
            if seq:
                starts[seq[0]] += 1
        # The empty key holds how targets begin: a draft before the first generated token rides
        # along with the prompt's forward pass.
        counts[()] = starts
        self.table: dict[tuple[int, ...], tuple[int, float]] = {}
        for key, c in counts.items():
            if c:
                token, hits = c.most_common(1)[0]
                self.table[key] = (token, hits / sum(c.values()))
        self.vocab = frozenset(vocab)  # every token of every target, minority continuations included
        in_targets = Counter(t for seq in sequences_list for t in set(seq))
        self.common = frozenset(t for t, n in in_targets.items() if n >= rare_share * len(sequences_list))

    def _next(self, context: Sequence[int]) -> tuple[int | None, float, int]:
        """(most frequent next token, its share, matched context length) for the longest known key
        (the empty key: how targets begin, for an empty context)."""
        for n in range(min(self.max_n, len(context)), 0, -1):
            found = self.table.get(tuple(context[-n:]))
            if found:
                return found[0], found[1], n
        if not context and () in self.table:
            token, share = self.table[()]
            return token, share, 0
        return None, 0.0, 0

    def _memory(self, context: Sequence[int]) -> tuple[list[int], int]:
        """The n-gram model's continuation of ``context`` while it is confident, and the length
        of the context it matched first."""
        token, share, matched = self._next(context)
        memory: list[int] = []
        ctx = list(context)
        while token is not None and share > self.min_share and len(memory) < self.max_draft:
            memory.append(token)
            ctx.append(token)
            token, share, _ = self._next(ctx)
        return memory, matched

    def draft(self, context: Sequence[int], prompt: Sequence[int]) -> list[int]:
        rest = self.labels.draft(context) if self.labels is not None else []
        if rest:  # a relation label the KB completes one way only, then what targets say follows
            return (rest + self._memory([*context, *rest])[0])[: self.max_draft]
        copy_n, copied = 0, []
        for n in range(min(self.max_n, len(context)), 0, -1):
            copied = _find_in(prompt, tuple(context[-n:]), self.max_draft)
            if copied:
                copy_n = n
                break
        memory, memory_n = self._memory(context)
        if copied and (not memory or copy_n + 2 > memory_n or context[-1] not in self.common):
            return copied
        return memory


# A relation label being written: after "(R [", "(JOIN [" or a comparison's "(lt [".
_OPEN_RELATION = re.compile(r"\((R|JOIN|lt|le|gt|ge)\s+\[((?:\\.|[^\]\\])*)$", re.IGNORECASE)


class LabelDrafter:
    """Drafts the rest of a relation label from the KB's labels once its first tokens fit one.

    ``labels`` are the token ids of each label as targets hold it (" " + label); ``decode`` turns
    ids into text (to see that a relation's label is open, and which of the last tokens are its
    beginning); ``close_reversed`` and ``close`` are the tokens that end a label inside ``(R [ … ])``
    and anywhere else. A beginning shared by labels that go on differently drafts nothing."""

    def __init__(
        self, labels: Iterable[Sequence[int]], decode: Callable[[Sequence[int]], str], close_reversed: Sequence[int],
        close: Sequence[int],
    ):
        self.decode = decode
        self.close_reversed, self.close = list(close_reversed), list(close)
        rests: dict[tuple[int, ...], tuple[int, ...] | None] = {}
        for seq in {tuple(s) for s in labels if s}:
            for i in range(1, len(seq) + 1):
                key = seq[:i]
                rests[key] = seq[i:] if rests.get(key, seq[i:]) == seq[i:] else None  # None: ambiguous
        self.rests = rests

    def draft(self, context: Sequence[int]) -> list[int]:
        m = _OPEN_RELATION.search(self.decode(context)) if context else None
        if m is None or not m.group(2).strip():
            return []
        for k in range(1, len(context) + 1):  # the shortest tail of the context that spells the label so far
            tail = self.decode(context[-k:])
            if tail == m.group(2):
                rest = self.rests.get(tuple(context[-k:]))
                if rest is None:
                    return []
                return [*rest, *(self.close_reversed if m.group(1).upper() == "R" else self.close)]
            if len(tail) > len(m.group(2)):
                return []
        return []


def _find_in(tokens: Sequence[int], key: tuple[int, ...], length: int) -> list[int]:
    """The tokens following the last occurrence of ``key`` in ``tokens``."""
    n = len(key)
    for i in range(len(tokens) - n, -1, -1):
        if tuple(tokens[i : i + n]) == key:
            return list(tokens[i + n : i + n + length])
    return []


@dataclass(frozen=True)
class Decoded:
    tokens: list[int]
    logprob: float  # sum over the generated tokens
    forward_passes: int

    @property
    def mean_prob(self) -> float:
        return math.exp(self.logprob / max(len(self.tokens), 1))


def greedy_draft_verify(
    model: Any,
    prompt_ids: list[int],
    drafter: NgramDrafter,
    max_new_tokens: int,
    stop: Callable[[list[int]], bool],
    eos_id: int | None,
    vocab: Iterable[int] | None = None,
) -> Decoded:
    """Greedy decoding of one prompt, drafting with ``drafter`` and verifying with ``model``.

    ``stop(generated)`` ends decoding (e.g. once the expression is closed). The KV cache is cropped
    back to the accepted prefix after each verification. ``vocab`` restricts the output to these
    token ids (the tokens of the training targets and of the prompt): only their rows of the output
    layer are computed, which on SmolLM2 skips a 49,152 × 576 product per position."""
    import torch

    scorer = _Scorer(model, vocab)
    with torch.inference_mode():
        # The first pass reads the prompt and verifies a draft of the expression's opening with it.
        fed: list[int] = list(prompt_ids)
        cache, generated, total, passes = None, [], 0.0, 0
        while True:
            draft = [t for t in drafter.draft(generated, prompt_ids) if scorer.known(t)][: max(max_new_tokens - len(generated) - 1, 0)]
            logps, cache = scorer(fed + draft, cache)
            passes += 1
            best = logps[len(fed) - 1 :].max(-1)  # row j: the model's choice after fed[-1], draft[:j]
            choice = [scorer.token(i) for i in best.indices.tolist()]
            accepted = 0
            while accepted < len(draft) and choice[accepted] == draft[accepted]:
                accepted += 1
            new = (draft[:accepted] + [choice[accepted]])[: max_new_tokens - len(generated)]
            total += float(best.values[: accepted + 1].sum())
            # Drop the rejected draft tokens from the cache (a negative crop removes from the end;
            # the same call means that in transformers 4 and 5).
            if len(draft) > accepted:
                cache.crop(-(len(draft) - accepted))
            cut = _first_end(generated, new, stop, eos_id)
            generated += new[:cut]
            if cut < len(new) or len(generated) >= max_new_tokens or generated[-1] == eos_id or stop(generated):
                break
            fed = [generated[-1]]  # the model's own token, not yet in the cache
        return Decoded(generated, total, passes)


class _Scorer:
    """Log-probabilities of the next token at each fed position, over the whole vocabulary or over
    a subset (softmax over the subset: a ranking score, not the model's full distribution)."""

    def __init__(self, model: Any, vocab: Iterable[int] | None):
        import torch

        self.model = model
        self.device = model.device
        self.ids: list[int] | None = sorted(set(vocab)) if vocab is not None else None
        if self.ids is not None:
            self.body, head = model.get_decoder(), model.get_output_embeddings()
            index = torch.tensor(self.ids, device=self.device)
            self.weight = head.weight.detach().index_select(0, index)
            self.bias = head.bias.detach().index_select(0, index) if getattr(head, "bias", None) is not None else None
            self.allowed = set(self.ids)

    def known(self, token: int) -> bool:
        return self.ids is None or token in self.allowed

    def token(self, index: int) -> int:
        return index if self.ids is None else self.ids[index]

    def __call__(self, tokens: list[int], cache: Any) -> tuple[Any, Any]:
        import torch

        x = torch.tensor([tokens], device=self.device)
        if self.ids is None:
            out = self.model(input_ids=x, past_key_values=cache, use_cache=True)
            return torch.log_softmax(out.logits[0].float(), -1), out.past_key_values
        out = self.body(input_ids=x, past_key_values=cache, use_cache=True)
        logits = torch.nn.functional.linear(out.last_hidden_state[0], self.weight, self.bias)
        return torch.log_softmax(logits.float(), -1), out.past_key_values


def _first_end(generated: list[int], new: list[int], stop: Callable[[list[int]], bool], eos_id: int | None) -> int:
    """How many of ``new`` to keep: up to and including the first token that ends decoding."""
    for i, tok in enumerate(new):
        if tok == eos_id or stop(generated + new[: i + 1]):
            return i + 1
    return len(new)
