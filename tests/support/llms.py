"""A scripted model: a real ``core.llm.LLM`` subclass whose ``_generate`` returns a fixed reply, so
the model layer (request building, cache, usage accounting) runs for real while what is done with
the reply is under test."""

from __future__ import annotations

from core.llm.base import LLM, Completion, Request
from core.usage import Usage, UsageTracker


class ScriptedLLM(LLM):
    """Returns ``reply`` to every request (100 prompt and 20 completion tokens); keeps the requests."""

    def __init__(self, reply: str, tracker: UsageTracker | None = None):
        super().__init__("scripted", tracker=tracker)
        self.reply = reply
        self.requests: list[Request] = []

    def _generate(self, request: Request) -> Completion:
        self.requests.append(request)
        return Completion(self.reply, Usage(100, 20), False, self.model_id)
