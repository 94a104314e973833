"""Bounding JSON schemas so that grammar-constrained generation always terminates.

Why: under a grammar, a small model (SmolLM2-135M) often keeps emitting array items or string
characters until ``max_tokens``; the output is then cut mid-value and does not parse. A grammar
built from a schema with ``maxItems``/``maxLength`` forces the closing ``]``/``"`` after the bound,
so the output always parses. Bounds a schema already sets are kept; only missing ones are added.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

# Keywords whose values are schemas, or maps / lists of schemas, to walk into.
_SUB_SCHEMA = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
# A string under these already has a finite or structured shape; a length bound would conflict.
_STRING_SHAPED = ("enum", "const", "pattern", "format", "maxLength")


def bound_schema(schema: Mapping[str, Any], max_items: int, max_length: int) -> dict[str, Any]:
    """A copy of ``schema`` with ``maxItems`` on every array and ``maxLength`` on every free
    string that lacks one. A bound of 0 leaves that kind unbounded."""
    out = copy.deepcopy(dict(schema))
    _bound(out, max_items, max_length)
    return out


def _types(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _bound(node: Any, max_items: int, max_length: int) -> None:
    if not isinstance(node, dict):
        return
    kinds = _types(node)
    if max_items and ("array" in kinds or "items" in node) and "maxItems" not in node:
        node["maxItems"] = max(max_items, int(node.get("minItems", 0)))
    if max_length and "string" in kinds and not any(k in node for k in _STRING_SHAPED):
        node["maxLength"] = max(max_length, int(node.get("minLength", 0)))
    for key in _SUB_SCHEMA:
        _bound(node.get(key), max_items, max_length)
    for key in _SCHEMA_MAPS:
        sub = node.get(key)
        if isinstance(sub, dict):
            for child in sub.values():
                _bound(child, max_items, max_length)
    for key in _SCHEMA_LISTS:
        sub = node.get(key)
        if isinstance(sub, list):
            for child in sub:
                _bound(child, max_items, max_length)
