"""The HTTP server: SPARQL 1.1 endpoint, the QA API and the web page, thin over the Python APIs.

``create_app(config)`` builds the ASGI app; ``policykb serve`` runs it with uvicorn. Routes only
parse requests and render responses: queries go to the store (``policykb.server.engine``),
questions to ``spr.qa``. Every error leaves as JSON (``policykb.server.errors``).
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Receive, Scope, Send

from core.config import ANSWER_KINDS, Config
from core.errors import ModelUnavailableError
from core.resources import resource_dir
from policykb.server.errors import ErrorBody, install_error_handlers
from policykb.server.protocol import HANDLERS, OPENAPI_PATHS, sparql_protocol
from policykb.server.sse import stream_response
from policykb.server.state import QAOpener, QAService, ServerState
from store.base import RDFStore
from store.freshness import stale_since

_DEFAULT = object()  # "use spr.qa", distinct from None = "no answering API"

# web/ files the page needs: the page itself, and the npm packages' built assets (no CDN).
_PAGE_FILES = {"app.js": "text/javascript", "style.css": "text/css"}
_VENDOR_DIRS = {
    "yasgui": "node_modules/@zazuko/yasgui/build",
    "cytoscape": "node_modules/cytoscape/dist",
    "swagger-ui": "node_modules/swagger-ui-dist",
}


# --- typed HTTP bodies ---------------------------------------------------------------------------
class AskRequest(BaseModel):
    """A question for ``POST /ask``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, examples=["Who supports rooftop photovoltaic projects?"])
    mode: str | None = Field(None, description="Retrieval mode of spr.qa (e.g. 'spr'); omitted = its default.")
    answer: Literal["extractive", "llm"] = Field("extractive", description="'extractive' quotes; 'llm' generates.")


class CitationOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: int
    chunk: str
    document: str
    title: str
    start: int
    end: int
    quote: str = Field(description="Exactly the document's characters start..end (source markup included).")
    reading_quote: str = Field("", description="The quote as it reads: no footnote marks or Markdown headings.")


class AnswerOut(BaseModel):
    """``spr.records.Answer.to_dict()``: the answer, its citations and the evidence behind it."""

    model_config = ConfigDict(extra="allow")

    question: str
    text: str
    mode: str
    kind: str
    citations: list[CitationOut] = []
    triples: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    trace: dict[str, Any] = {}
    abstained: bool = False
    timings_ms: dict[str, float] = {}


class AskOptions(BaseModel):
    modes: list[str]
    default_mode: str
    answers: list[str]


class StoreHealth(BaseModel):
    backend: str
    reachable: bool
    quads: int | None = None
    named_graphs: int | None = None
    error: str | None = None


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    version: str
    store: StoreHealth
    qa: str
    updates_enabled: bool
    web_assets: bool
    queries_running: int
    queries_abandoned: int = Field(description="Timed-out queries still running (thread mode: pyoxigraph cannot cancel).")
    queries_killed: int = Field(0, description="Query processes killed at a deadline since the server started.")
    indexes: str = Field(
        "current", description="'current', or 'stale since: <what changed the store, when>' until `policykb reindex`."
    )


_STREAM_DOC = (
    "Server-sent events, each `event: <name>` with one `data:` line of JSON: `token` {\"text\"} for each piece"
    " the LLM writes (none for extractive answers); then `done`, the object `POST /ask` returns (its text replaces"
    " the streamed draft), or `error` {\"error\", \"kind\", \"status\"} when the answer fails mid-stream."
    " Failures before the first event are the JSON errors of `POST /ask`."
)



def _sse_event(name: str, data: dict) -> dict:
    return {
        "type": "object",
        "required": ["event", "data"],
        "properties": {
            "event": {"const": name},
            "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": data},
        },
    }


# One event of the stream (a JSON Schema of each event, the form SSE tools such as schemathesis
# validate): its name and its one data line of JSON.
_STREAM_EVENT = {
    "oneOf": [
        _sse_event("token", {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}),
        _sse_event("done", {"$ref": "#/components/schemas/AnswerOut"}),
        _sse_event(
            "error",
            {
                "type": "object",
                "required": ["error", "kind", "status"],
                "properties": {"error": {"type": "string"}, "kind": {"type": "string"}, "status": {"type": "integer"}},
            },
        ),
    ]
}

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (400, 401, 403, 404, 406, 413, 415, 422, 500, 503, 504)
}


# --- the app ---------------------------------------------------------------------------------------
def create_app(
    config: Config, store: RDFStore | None = None, qa_opener: QAOpener | None | object = _DEFAULT
) -> FastAPI:
    """The ASGI app over ``store`` (default: the configured one, opened now and closed at shutdown)."""
    owns_store = store is None
    if store is None:
        from store.layout import KBLayout
        from store.open import open_store

        store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri)
    if qa_opener is _DEFAULT:
        qa_opener = _spr_opener(config, store)
    state = ServerState(config, store, QAService(qa_opener))  # type: ignore[arg-type]
    web = resource_dir(Path(config.server.web_dir))

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        await state.start()  # e.g. the query processes: ready before the first request
        yield
        state.close()
        if owns_store:
            store.close()

    app = _PolicyKBApp(
        title="policykb",
        version=_version(),
        summary="SPARQL 1.1 endpoint, question answering with evidence, and a web page over a policy KB.",
        docs_url=None,  # served below from local assets instead of a CDN
        redoc_url=None,
        lifespan=lifespan,
        responses=_ERRORS,
    )
    app.state.policykb = state
    install_error_handlers(app)
    origins = [o.strip() for o in config.server.cors_origins.split(",") if o.strip()]
    if origins:
        app.cors = {
            "allow_origins": ["*"] if "*" in origins else origins,
            "allow_methods": ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
            "allow_headers": ["Authorization", "Content-Type", "Accept"],
            "expose_headers": ["X-SPARQL-MaxRows", "Location"],
        }
    _add_api_routes(app, state, web)
    _add_web_routes(app, web)
    _document_sparql(app)
    return app


def _document_sparql(app: FastAPI) -> None:
    """Add /sparql and /store, answered by ``sparql_protocol``, to the OpenAPI schema."""
    from fastapi.openapi.utils import get_openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
            schema["paths"] = {**OPENAPI_PATHS, **schema["paths"]}
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


class _PolicyKBApp(FastAPI):
    """FastAPI, with /sparql and /store answered before its per-request machinery runs.

    A small SPARQL query takes tens of microseconds to evaluate; FastAPI's per-request work
    (telemetry, middleware stack, routing, dependency solving) would cost several times that.
    CORS, when configured, applies to both paths.
    """

    cors: dict | None = None
    _protocol: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in HANDLERS:
            if self._protocol is None:
                self._protocol = CORSMiddleware(sparql_protocol, **self.cors) if self.cors else sparql_protocol
            scope["app"] = self
            await self._protocol(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        return CORSMiddleware(stack, **self.cors) if self.cors else stack


def _add_api_routes(app: FastAPI, state: ServerState, web: Path) -> None:
    @app.post("/ask", response_model=AnswerOut, tags=["QA"], summary="Answer a question with citations and evidence")
    async def ask(body: AskRequest) -> dict:
        return await state.asks.run(lambda cancel: state.qa.ask(body.question, body.mode, body.answer))

    @app.post(
        "/ask/stream",
        tags=["QA"],
        summary="Answer a question, streaming an LLM answer as server-sent events",
        response_class=StreamingResponse,
        responses={200: {"description": _STREAM_DOC, "content": {"text/event-stream": {"schema": _STREAM_EVENT}}}},
    )
    async def ask_stream(body: AskRequest, request: Request) -> Response:
        return await stream_response(
            state.asks,
            lambda emit, cancel: state.qa.ask_stream(body.question, body.mode, body.answer, emit, cancel),
            request.is_disconnected,
        )

    @app.get("/ask/options", response_model=AskOptions, tags=["QA"], summary="Retrieval modes and answer kinds")
    async def ask_options() -> AskOptions:
        return AskOptions(**_qa_options(state.config))

    @app.get("/health", response_model=Health, tags=["Service"], summary="Store reachable, counts, components")
    async def health() -> JSONResponse:
        backend = state.config.store.backend
        try:
            # Not on the query pool: a pool full of slow queries must not read as a dead store.
            counts = await asyncio.wait_for(asyncio.to_thread(state.counts), timeout=10)
            store = StoreHealth(backend=backend, reachable=True, **counts)
        except Exception as exc:  # noqa: BLE001 - health reports any store failure instead of raising
            store = StoreHealth(
                backend=backend, reachable=False, error=" ".join(str(exc).split()) or type(exc).__name__
            )
        report = Health(
            status="ok" if store.reachable else "degraded",
            version=_version(),
            store=store,
            qa=state.qa.status,
            updates_enabled=state.token is not None,
            web_assets=all((web / d).is_dir() for d in _VENDOR_DIRS.values()),
            indexes=f"stale since: {since}" if (since := stale_since(state.config.kb_dir)) else "current",
            **state.query_load(),
        )
        return JSONResponse(report.model_dump(exclude_none=True), status_code=200 if store.reachable else 503)


def _add_web_routes(app: FastAPI, web: Path) -> None:
    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(web / "index.html", media_type="text/html")

    for name, media in _PAGE_FILES.items():
        app.add_api_route(f"/{name}", _file_route(web / name, media), include_in_schema=False)

    for name, folder in _VENDOR_DIRS.items():
        # check_dir=False: the server still starts (SPARQL, /ask) when `npm ci` has not run yet.
        app.mount(f"/vendor/{name}", StaticFiles(directory=web / folder, check_dir=False), name=f"vendor-{name}")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="policykb API",
            swagger_js_url="/vendor/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/vendor/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/vendor/swagger-ui/favicon-32x32.png",
        )


def _file_route(path: Path, media: str):
    async def serve() -> FileResponse:
        return FileResponse(path, media_type=media)

    return serve


def _spr_opener(config: Config, store: RDFStore) -> QAOpener:
    def open_kb():
        try:
            from spr.qa import KnowledgeBase
        except ImportError as exc:
            raise ModelUnavailableError(f"the answering API (spr.qa) cannot be imported: {exc}") from None
        # Share the server's store: a second open of the embedded store would hit its lock.
        return KnowledgeBase(config, store)

    return open_kb


def _qa_options(config: Config) -> dict:
    try:
        from spr.retrieval.registry import MODES
    except ImportError:
        return {"modes": [], "default_mode": "", "answers": []}
    return {"modes": list(MODES), "default_mode": config.answer.mode, "answers": list(ANSWER_KINDS)}


def _version() -> str:
    try:
        return version("policykb")
    except PackageNotFoundError:
        return "0+unknown"
