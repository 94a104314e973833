// The policykb page: a question box over POST /ask (and /ask/stream) and a YASGUI editor over /sparql.
// Data from the server is always inserted as text (textContent), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const ENDPOINT = `${window.location.origin}/sparql`;
const DEFAULT_QUERY = `PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
SELECT ?document ?title ?issued WHERE {
  ?document dcterms:title ?title .
  OPTIONAL { ?document dcterms:issued ?issued }
}
ORDER BY ?title
LIMIT 50`;

let yasgui = null;
let lastSparql = "";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

// --- tabs -----------------------------------------------------------------------------------------
function showTab(button) {
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const selected = tab === button;
    tab.setAttribute("aria-selected", String(selected));
    $(tab.dataset.panel).hidden = !selected;
  }
  if (button.id === "tab-sparql") {
    ensureYasgui().catch((error) => { $("yasgui").textContent = `The SPARQL editor did not load: ${error.message}`; });
  }
}

// YASGUI (1 MB of script) loads on first view of its tab; CodeMirror also needs a visible container.
let yasguiLoading = null;

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = el("script", { src });
    script.onload = resolve;
    script.onerror = () => reject(new Error(`cannot load ${src}`));
    document.head.append(script);
  });
}

async function ensureYasgui() {
  if (yasgui) return yasgui;
  yasguiLoading = yasguiLoading || loadScript("/vendor/yasgui/yasgui.min.js");
  await yasguiLoading;
  yasgui = yasgui || new Yasgui($("yasgui"), {
    requestConfig: { endpoint: ENDPOINT, method: "POST" },
    copyEndpointOnNewTab: true,
    // The default catalogue lists public endpoints; this page talks to its own server only.
    endpointCatalogueOptions: { getData: () => [{ endpoint: ENDPOINT }], keys: [] },
    persistenceId: null, // no tabs restored from an older session of the page
    // 'class' and 'property' completion query a public vocabulary service: not offline.
    yasqe: { value: DEFAULT_QUERY, autocompleters: ["prefixes", "variables"] },
  });
  return yasgui;
}

async function openInEditor(query) {
  showTab($("tab-sparql"));
  const tab = (await ensureYasgui()).getTab();
  tab.setQuery(query);
  tab.query();
}

// --- health ---------------------------------------------------------------------------------------
async function loadStatus() {
  try {
    const response = await fetch("/health");
    const health = await response.json();
    const store = health.store || {};
    $("status").textContent = store.reachable
      ? `${(store.quads ?? 0).toLocaleString()} quads · ${(store.named_graphs ?? 0).toLocaleString()} graphs`
      : "store unreachable";
    $("status").classList.toggle("bad", !store.reachable);
  } catch (error) {
    $("status").textContent = "server unreachable";
    $("status").classList.add("bad");
  }
}

async function loadOptions() {
  const select = $("mode");
  try {
    const options = await (await fetch("/ask/options")).json();
    for (const mode of options.modes) {
      select.append(el("option", mode === options.default_mode ? { value: mode, selected: "" } : { value: mode }, mode));
    }
  } catch (error) {
    /* the server picks its default mode */
  }
}

// --- asking ---------------------------------------------------------------------------------------
// An extractive answer comes whole from POST /ask. An LLM answer streams from POST /ask/stream
// (server-sent events): the draft grows as the model writes it, then the checked answer replaces it.
let streamedPieces = 0; // token events of the last streamed answer

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const body = { question, answer: $("answer-kind").value };
  if ($("mode").value) body.mode = $("mode").value;
  $("ask-error").hidden = true;
  $("ask-busy").hidden = false;
  $("ask-button").disabled = true;
  try {
    renderAnswer(body.answer === "llm" ? await askStreaming(body) : await askOnce(body));
  } catch (error) {
    if ($("result").classList.contains("streaming")) $("result").hidden = true; // an unchecked draft is no answer
    $("ask-error").textContent = `Could not answer: ${error.message}`;
    $("ask-error").hidden = false;
  } finally {
    $("result").classList.remove("streaming");
    $("result").removeAttribute("aria-busy");
    $("ask-busy").hidden = true;
    $("ask-button").disabled = false;
  }
}

async function askOnce(body) {
  const response = await fetch("/ask", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.message || `HTTP ${response.status}`);
  return data;
}

async function askStreaming(body) {
  streamedPieces = 0;
  const response = await fetch("/ask/stream", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  if (!response.ok || !(response.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
    // Failures before the first event are the JSON errors of /ask.
    const data = await response.json().catch(() => ({}));
    throw new Error(data.message || `HTTP ${response.status}`);
  }
  let draft = "";
  let answer = null;
  for await (const { event, data } of serverEvents(response)) {
    if (event === "token") {
      draft += data.text;
      streamedPieces += 1;
      showDraft(draft);
    } else if (event === "done") {
      answer = data;
    } else if (event === "error") {
      throw new Error(data.error || "the answer failed");
    }
  }
  if (!answer) throw new Error("the answer stream ended early");
  return answer;
}

// The events of a text/event-stream response, as they arrive: { event, data } with data parsed as JSON.
async function* serverEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
      }
    }
  } finally {
    reader.cancel().catch(() => {}); // a consumer that stops early closes the connection
  }
}

// The model's draft so far; citations and evidence stay hidden until the checked answer comes.
function showDraft(text) {
  $("ask-busy").hidden = true;
  $("result").hidden = false;
  $("result").classList.add("streaming");
  $("result").setAttribute("aria-busy", "true");
  $("answer-text").classList.remove("abstained");
  $("answer-text").textContent = text;
  $("answer-meta").textContent = "llm answer · writing… (the checked answer and its citations follow)";
}

// "[1]" markers in the answer become links to their citation.
function answerWithLinks(text, citationIds) {
  const fragment = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    fragment.append(text.slice(last, match.index));
    const id = Number(match[1]);
    fragment.append(citationIds.has(id) ? el("a", { href: `#cite-${id}`, class: "cite" }, match[0]) : match[0]);
    last = match.index + match[0].length;
  }
  fragment.append(text.slice(last));
  return fragment;
}

function renderAnswer(answer) {
  $("result").hidden = false;
  const citations = answer.citations || [];
  const ids = new Set(citations.map((c) => c.id));
  $("answer-text").replaceChildren(answerWithLinks(answer.text || "", ids));
  $("answer-text").classList.toggle("abstained", Boolean(answer.abstained));
  const total = answer.timings_ms?.total;
  $("answer-meta").textContent = `${answer.kind} answer · mode ${answer.mode}` + (total ? ` · ${Math.round(total)} ms` : "")
    + (answer.abstain_reason ? ` · abstained: ${answer.abstain_reason}` : "");

  $("citations").replaceChildren(
    ...citations.map((c) =>
      el("li", { id: `cite-${c.id}`, value: String(c.id) },
        el("blockquote", {}, c.reading_quote || c.quote),
        el("span", { class: "source" }, `${c.title || c.document} · characters ${c.start}–${c.end}`))));
  $("no-citations").hidden = citations.length > 0;

  const facts = (answer.triples && answer.triples.length)
    ? answer.triples
    : (answer.evidence || []).filter((e) => e.kind === "triple" && e.fact).map((e) => e.fact);
  renderGraph(facts);

  const chunks = (answer.evidence || []).filter((e) => e.kind === "chunk" && e.chunk);
  $("chunks").replaceChildren(
    ...(chunks.length ? chunks.map((e) =>
      el("figure", { class: "chunk" },
        el("blockquote", {}, e.chunk.reading_text || e.chunk.text),
        el("figcaption", {}, [
          e.chunk.heading_path || e.chunk.title || e.chunk.document,
          e.source,
          (e.ranks || []).length ? "found by " + e.ranks.map(([name, rank]) => `${name} #${rank}`).join(", ") : `score ${Number(e.score).toFixed(3)}`,
        ].join(" · "))))
      : [el("p", { class: "meta" }, "No text chunks were retrieved.")]));

  renderTrace(answer.trace || {});
}

function renderTrace(trace) {
  const rows = [];
  const add = (name, value, pre = false) => {
    if (!value) return;
    rows.push(el("dt", {}, name), el("dd", {}, pre ? el("pre", {}, value) : value));
  };
  add("S-expression", trace.sexpr, true);
  add("SPARQL", trace.sparql, true);
  add("linked", (trace.linked || []).map((l) => `${l.mention} → ${l.label}`).join("; "));
  add("note", trace.note);
  const timings = Object.entries(trace.timings_ms || {}).map(([k, v]) => `${k} ${Math.round(v)} ms`).join(", ");
  add("timings", timings);
  $("trace-list").replaceChildren(...rows);
  lastSparql = trace.sparql || "";
  $("open-sparql").hidden = !lastSparql;
}

// --- the evidence graph ---------------------------------------------------------------------------
let cy = null;

function renderGraph(facts) {
  $("triple-count").textContent = facts.length ? `(${facts.length})` : "";
  $("no-triples").hidden = facts.length > 0;
  $("graph").hidden = facts.length === 0;
  if (cy) { cy.destroy(); cy = null; }
  if (!facts.length || typeof cytoscape === "undefined") return;
  const nodes = new Map();
  const edges = [];
  const node = (id, label, literal) => {
    if (!nodes.has(id)) nodes.set(id, { data: { id, label: shorten(label || id, 40) }, classes: literal ? "literal" : "entity" });
  };
  facts.forEach((f, i) => {
    const objectId = f.object_is_literal ? `literal:${i}:${f.object}` : f.object;
    node(f.subject, f.subject_label, false);
    node(objectId, f.object_label || f.object, f.object_is_literal);
    edges.push({ data: { id: `e${i}`, source: f.subject, target: objectId, label: shorten(f.predicate_label || f.predicate, 30) } });
  });
  cy = cytoscape({
    container: $("graph"),
    elements: [...nodes.values(), ...edges],
    layout: { name: "cose", animate: false, padding: 20, nodeRepulsion: 9000, idealEdgeLength: 110 },
    wheelSensitivity: 0.3,
    maxZoom: 1.4, // a graph of one or two triples should not fill the box
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 11, "text-wrap": "wrap", "text-max-width": 120,
          "text-valign": "bottom", "text-margin-y": 4, color: "#1f2937" } },
      { selector: "node.entity", style: { "background-color": "#2563eb", width: 18, height: 18 } },
      { selector: "node.literal", style: { shape: "round-rectangle", "background-color": "#f59e0b", width: 14, height: 14 } },
      { selector: "edge", style: { label: "data(label)", "font-size": 10, "curve-style": "bezier", "target-arrow-shape": "triangle",
          width: 1.5, "line-color": "#9ca3af", "target-arrow-color": "#9ca3af", "text-rotation": "autorotate",
          "text-background-color": "#ffffff", "text-background-opacity": 0.85, color: "#374151" } },
    ],
  });
}

function shorten(text, max) {
  let value = String(text);
  if (/^https?:\/\//.test(value)) value = value.replace(/^.*[/#]/, "") || value; // an IRI: its local name
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

// --- start ----------------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  $("endpoint").textContent = ENDPOINT;
  for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", () => showTab(tab));
  $("ask-form").addEventListener("submit", ask);
  $("open-sparql").addEventListener("click", () => openInEditor(lastSparql));
  if (window.location.hash === "#sparql") showTab($("tab-sparql"));
  loadStatus();
  loadOptions();
});
