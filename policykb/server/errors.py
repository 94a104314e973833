"""Every failure of the HTTP server becomes one JSON body: ``{"error", "message", "status", ...}``.

policykb's own errors are mapped to a status here, once; HTTP-only conditions (406, 401, 503 busy,
504 timeout, ...) are raised as :class:`HTTPProblem`.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.errors import (
    ConfigError,
    InputError,
    ModelError,
    ModelNotFoundError,
    ModelOutputError,
    ModelUnavailableError,
    PolicyKBError,
    QuerySyntaxError,
    StoreConnectionError,
    StoreError,
    UnsupportedOperationError,
    ValidationError,
)

log = logging.getLogger("policykb.server")


class ErrorBody(BaseModel):
    """The JSON body of every 4xx/5xx response."""

    error: str  # a stable machine-readable kind, e.g. "query_syntax", "timeout"
    message: str
    status: int
    line: int | None = None  # 1-based position of a SPARQL syntax error, when known
    column: int | None = None


class HTTPProblem(Exception):
    """A failure that already is an HTTP status (negotiation, auth, capacity, deadlines)."""

    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = headers or {}


# Most specific class first: the first match wins.
_STATUS: tuple[tuple[type[PolicyKBError], int, str], ...] = (
    (QuerySyntaxError, 400, "query_syntax"),
    (InputError, 400, "bad_input"),
    (ValidationError, 422, "validation"),
    (StoreConnectionError, 502, "store_unreachable"),
    (UnsupportedOperationError, 501, "unsupported"),
    (StoreError, 500, "store"),
    (ModelUnavailableError, 503, "model_unavailable"),
    (ModelOutputError, 502, "model_output"),
    (ModelNotFoundError, 500, "model_missing"),
    (ModelError, 500, "model"),
    (ConfigError, 500, "config"),
    (PolicyKBError, 500, "error"),
)


def error_body(exc: BaseException) -> ErrorBody:
    """The status and body for any exception the server lets escape."""
    if isinstance(exc, HTTPProblem):
        return ErrorBody(error=exc.error, message=exc.message, status=exc.status)
    if isinstance(exc, PolicyKBError):
        message = " ".join(str(exc).split())
        for cls, status, kind in _STATUS:
            if isinstance(exc, cls):
                line = getattr(exc, "line", None)
                column = getattr(exc, "column", None)
                return ErrorBody(error=kind, message=message, status=status, line=line, column=column)
    return ErrorBody(error="internal", message="internal server error (see the server log)", status=500)


def logged_error_body(exc: BaseException) -> ErrorBody:
    """:func:`error_body`, logging server-side failures (5xx of ours, and anything unexpected)."""
    body = error_body(exc)
    if body.status >= 500 and isinstance(exc, PolicyKBError):
        log.error("request failed: %s", body.message)
    elif body.error == "internal":
        log.error("unexpected error", exc_info=exc)
    return body


def error_response(exc: BaseException, headers: dict[str, str] | None = None) -> JSONResponse:
    body = logged_error_body(exc)
    if headers is None and isinstance(exc, HTTPProblem):
        headers = exc.headers
    return JSONResponse(body.model_dump(exclude_none=True), status_code=body.status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    async def on_problem(_: Request, exc: Exception) -> JSONResponse:
        return error_response(exc, getattr(exc, "headers", None))

    async def on_policykb(_: Request, exc: Exception) -> JSONResponse:
        return error_response(exc)

    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in first["loc"] if p != "body")
        message = f"{where}: {first['msg']}" if where else str(first["msg"])
        return error_response(HTTPProblem(422, "bad_request", message))

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
        detail = exc.detail if isinstance(exc, StarletteHTTPException) else str(exc)
        kind = {404: "not_found", 405: "method_not_allowed"}.get(status, "http")
        return error_response(HTTPProblem(status, kind, str(detail)), getattr(exc, "headers", None))

    async def on_anything(_: Request, exc: Exception) -> JSONResponse:
        return error_response(exc)

    app.add_exception_handler(HTTPProblem, on_problem)
    app.add_exception_handler(PolicyKBError, on_policykb)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_anything)
