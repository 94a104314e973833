"""The ground floor: services every other package may use, and that import none of them.

Errors (:mod:`core.errors`), typed configuration (:mod:`core.config`), caches (:mod:`core.cache`),
usage accounting (:mod:`core.usage`), embeddings (:mod:`core.embed`), LLM providers
(:mod:`core.llm`), packaged resources (:mod:`core.resources`) and shared text helpers
(:mod:`core.text`, :mod:`core.jsonl`). Nothing here imports ``store``, ``kgpipeline``, ``spr`` or
the ``policykb`` shell (an import-linter contract checks it).
"""
