"""Replies that may end only in a given way: the model layer's ``end_after`` and the LLM answer's
:data:`spr.llm_answer.CITED_END`, which keeps a reply going until it names its evidence.

``end_after`` runs on the real SmolLM2 GGUF in-process; the generator's choice of passing it is
checked with a model that records its requests.
"""

from __future__ import annotations

import re

import pytest

from core.cache import ResponseCache
from core.errors import ModelError
from core.llm import LLM, Completion, LlamaCppLLM, Request
from core.usage import Usage, UsageTracker
from spr.fuse import fuse
from spr.llm_answer import CITED_END, LLMGenerator
from spr.records import ChunkRef, Evidence

ENDS = re.compile(f"(?:{CITED_END})\\s*$")
FINE = "An operator who fails to register an installation shall pay a fine of up to EUR 50,000."
ACT = ChunkRef("urn:c1", "urn:d1", "Renewable Energy Act", 0, len(FINE), FINE)
CONTEXT = fuse([Evidence("chunk", FINE, 0.9, "k", chunk=ACT)], 1000)
# SmolLM2 asked for no markers: left alone it ends without one.
MESSAGES = [{"role": "user", "content": f"{FINE}\n\nHow much is the fine? Answer in one short sentence."}]


@pytest.fixture(scope="module")
def smol() -> LlamaCppLLM:
    return LlamaCppLLM(max_tokens=64, cache=False)


def test_the_embedded_model_ends_only_on_a_citation_when_asked(smol):
    free = smol.complete(MESSAGES)
    assert free.finish_reason == "stop" and not ENDS.search(free.text), free.text  # the premise: it ends uncited
    held = smol.complete(MESSAGES, end_after=CITED_END)
    # held past its own end, it either cites or runs to max_tokens; it never stops uncited
    assert ENDS.search(held.text) or held.finish_reason == "length", held.text
    assert held.text.startswith(free.text.rstrip()[:20])  # greedy: the same words up to where it wanted to stop


def test_a_streamed_reply_is_held_alike(smol):
    streamed = "".join(smol.stream(MESSAGES, end_after=CITED_END))
    assert streamed == smol.complete(MESSAGES, end_after=CITED_END).text


def test_an_invalid_pattern_is_a_model_error(smol):
    with pytest.raises(ModelError, match="invalid end_after pattern"):
        smol.complete(MESSAGES, end_after="(unclosed", max_tokens=4)


def test_end_after_enters_the_cache_key_only_when_given(tmp_path):
    tracker = UsageTracker()
    llm = LlamaCppLLM(max_tokens=12, cache=ResponseCache(tmp_path / "cache.sqlite"), tracker=tracker)
    plain = llm.complete(MESSAGES)
    held = llm.complete(MESSAGES, end_after=CITED_END)
    assert llm.complete(MESSAGES).text == plain.text and llm.complete(MESSAGES, end_after=CITED_END).text == held.text
    assert (tracker.totals.calls, tracker.totals.cache_hits) == (2, 2)  # two model calls, two hits
    bare = Request(messages=(("user", "q"),), max_tokens=1, temperature=0.0)
    assert llm._cache_key(bare) != llm._cache_key(Request(bare.messages, 1, 0.0, end_after="x"))


class Recording(LLM):
    """Records requests; ``supports_end_after`` set per instance."""

    def __init__(self, reply: str, holds: bool):
        super().__init__("recording")
        self.supports_end_after = holds
        self.reply = reply
        self.requests: list[Request] = []

    def _generate(self, request: Request) -> Completion:
        self.requests.append(request)
        return Completion(self.reply, Usage(10, 5), False, self.model_id)


def test_the_generator_asks_for_a_cited_end_where_the_model_can_hold_it():
    reply = "The fine is up to EUR 50,000 [1]."
    for holds, wanted, expected in ((True, True, CITED_END), (True, False, None), (False, True, None)):
        llm = Recording(reply, holds)
        draft = LLMGenerator(llm, 64, True, end_on_citation=wanted).generate("How much is the fine?", CONTEXT)
        assert llm.requests[0].end_after == expected and draft.text == reply
    streaming = Recording(reply, True)
    pieces = LLMGenerator(streaming, 64, True, end_on_citation=True).stream("How much is the fine?", CONTEXT)
    assert "".join(pieces) == reply and streaming.requests[0].end_after == CITED_END  # /ask's server-sent events
