"""What every configuration section shares, and the limits several sections use."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

DEFAULT_BASE_IRI = "https://w3id.org/policykb/id/"
MAX_K = 50  # most text chunks one question may retrieve (CLI, server, API and eval alike)
AnswerKind = Literal["extractive", "llm"]
ANSWER_KINDS: tuple[str, ...] = get_args(AnswerKind)


class Section(BaseModel):
    """A configuration section: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
