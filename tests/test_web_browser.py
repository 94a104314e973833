"""The web page in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): ask a
question and see the cited answer with its evidence; run a SPARQL query in YASGUI and see rows.

Screenshots go to tests/artifacts/. The page must load nothing from outside the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kbs import QUESTION  # ask_server, the session-scoped server, comes from conftest.py

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
# Root needs --no-sandbox; the rest keep Chromium from calling out of a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.slow


@pytest.fixture()
def page(ask_server) -> Iterator:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian chromium is missing: run scripts/setup.sh"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.outside = []  # requests that left the server
        page.errors = []  # uncaught exceptions and console errors
        page.on(
            "request",
            lambda r: None if r.url.startswith((ask_server, "data:", "blob:")) else page.outside.append(r.url),
        )
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.set_default_timeout(60_000)
        try:
            yield page
        finally:
            browser.close()


def test_question_box_shows_cited_answer_and_evidence(page, ask_server):
    page.goto(ask_server + "/")
    page.wait_for_function("document.getElementById('status').textContent.includes('quads')")
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    page.wait_for_selector("#result:not([hidden])", timeout=180_000)

    answer = page.inner_text("#answer-text")
    assert answer and "The documents do not say" not in answer
    assert page.locator("#answer-text a.cite").count() >= 1  # [n] markers link to citations
    quotes = page.locator("#citations li blockquote").all_inner_texts()
    assert quotes and all(q.strip() for q in quotes)
    assert page.locator("#chunks figure.chunk").count() >= 1
    caption = page.locator("#chunks figure.chunk figcaption").first.inner_text()
    assert "found by" in caption and "#" in caption  # which fused signals found the chunk, at which rank
    assert not any("##" in t for t in page.locator("#chunks blockquote").all_inner_texts())  # no source markup

    # dual admits facts only at full confidence; the structured mode draws its triples.
    page.select_option("#mode", "spr")
    page.click("#ask-button")
    page.wait_for_function("cy !== null && cy.nodes().length >= 2", timeout=180_000)
    # The evidence graph: cytoscape drew the answer's triples.
    assert page.evaluate("cy.edges().length") >= 1
    assert page.locator("#graph canvas").count() >= 1
    page.wait_for_timeout(300)  # let the graph layout settle for the picture
    page.screenshot(path=str(ARTIFACTS / "web-ask.png"), full_page=True)

    # The structured retriever's SPARQL opens in the editor and runs against /sparql.
    page.click("#trace summary")
    assert "SELECT" in page.inner_text("#trace-list")
    page.click("#open-sparql")
    page.locator("#yasgui .yasr table tbody tr").first.wait_for()
    assert page.evaluate("yasgui.getTab().getQuery()").startswith("SELECT")
    assert not page.outside, page.outside
    assert not page.errors, page.errors


def test_yasgui_runs_a_query_against_the_endpoint(page, ask_server):
    page.goto(ask_server + "/#sparql")
    page.wait_for_selector("#yasgui .CodeMirror")
    assert "dcterms:title" in page.evaluate("yasgui.getTab().getQuery()")  # the page's default query
    page.click("#yasgui .yasqe_queryButton")
    rows = page.locator("#yasgui .yasr table tbody tr")
    rows.first.wait_for()
    assert rows.count() >= 5
    assert "National Solar Plan" in page.inner_text("#yasgui .yasr table")
    page.screenshot(path=str(ARTIFACTS / "web-sparql.png"), full_page=True)

    # A syntax error is reported by the server and shown, not swallowed.
    page.evaluate("() => { yasgui.getTab().setQuery('SELECT ?x WHERE { ?x }'); }")
    page.click("#yasgui .yasqe_queryButton")
    page.wait_for_function("document.querySelector('#yasgui .yasr').innerText.includes('syntax error')")
    assert not page.outside, page.outside


def test_llm_answer_streams_in_then_shows_the_checked_answer(page, ask_server):
    page.goto(ask_server + "/")
    page.wait_for_function("document.getElementById('status').textContent.includes('quads')")
    page.fill("#question", QUESTION)
    page.select_option("#answer-kind", "llm")
    with page.expect_response(lambda r: r.url == f"{ask_server}/ask/stream") as streamed:
        page.click("#ask-button")
    assert streamed.value.headers["content-type"].startswith("text/event-stream")
    # Done: the checked answer replaced the draft (its meta names the mode), the page is idle again.
    page.wait_for_function(
        "!document.getElementById('result').hidden && !document.getElementById('result').classList.contains('streaming')"
        " && document.getElementById('answer-meta').textContent.includes('· mode')"
        " && !document.getElementById('ask-button').disabled",
        timeout=180_000,
    )
    assert page.evaluate("streamedPieces") >= 1  # the draft was shown from token events
    assert page.inner_text("#answer-meta").startswith("llm answer")
    assert page.inner_text("#answer-text").strip()
    assert page.locator("#ask-error").is_hidden()
    if not page.evaluate("document.getElementById('answer-text').classList.contains('abstained')"):
        cites = page.locator("#answer-text a.cite").count()
        assert cites >= 1 and page.locator("#citations li blockquote").count() >= 1
    assert page.locator("#result .evidence").is_visible()  # the sections hidden while streaming are back
    page.screenshot(path=str(ARTIFACTS / "web-ask-llm.png"), full_page=True)
    assert not page.outside, page.outside
    assert not page.errors, page.errors
