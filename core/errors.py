"""The one error hierarchy of policykb.

Every failure a user can cause or meet (bad input, bad query, a model or endpoint that is down)
is raised as a subclass of :class:`PolicyKBError`. The CLI maps these to a one-line message and an
exit code; the HTTP server maps them to JSON 4xx/5xx. Anything else escaping is a bug.
"""

from __future__ import annotations


class PolicyKBError(Exception):
    """Base class. ``exit_code`` is what the CLI returns for this kind of failure."""

    exit_code = 1


class ConfigError(PolicyKBError):
    """The configuration file or an environment override is invalid."""

    exit_code = 2


class InputError(PolicyKBError):
    """A user-supplied file or argument cannot be used (missing, empty, corrupt, unknown format)."""

    exit_code = 2


class StoreError(PolicyKBError):
    """The RDF store failed."""

    exit_code = 3


class QuerySyntaxError(StoreError):
    """A SPARQL query or update does not parse. ``line``/``column`` are 1-based when known."""

    exit_code = 2

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.line = line
        self.column = column
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"SPARQL syntax error{where}: {message}")


class StoreConnectionError(StoreError):
    """A remote SPARQL endpoint cannot be reached."""


class UnsupportedOperationError(StoreError):
    """The backend does not declare the capability the operation needs."""


class ModelError(PolicyKBError):
    """A language or embedding model failed."""

    exit_code = 4


class ModelNotFoundError(ModelError):
    """A model file, directory or package is missing."""


class ModelUnavailableError(ModelError):
    """A model endpoint is down or kept failing after retries."""


class ModelOutputError(ModelError):
    """A model returned output that does not parse or does not fit the requested schema."""


class ValidationError(PolicyKBError):
    """Data failed SHACL or ontology validation where that is fatal."""
