#!/usr/bin/env bash
# The demo on the embedded defaults: build a KB from the ontologies and the sample data,
# then query it. Every step is a plain `policykb` command a user can type.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
KB=demo-kb
rm -rf "$KB"
set -x
policykb --kb "$KB" init
policykb --kb "$KB" load examples/sample-kb.trig
policykb --kb "$KB" stats
# Two agencies share the surface form "Energy Bureau"; their jurisdiction tells them apart.
policykb --kb "$KB" sparql '
SELECT ?agency ?label ?jurisdiction WHERE {
  ?agency skos:altLabel|skos:prefLabel "Energy Bureau"@en ;
          skos:prefLabel ?label .
  OPTIONAL { ?agency pkb:hasJurisdiction/skos:prefLabel ?jurisdiction }
} ORDER BY ?label'
# Ingest the example corpus (documents → triples, chunk/question/entity indexes), then ask it:
# the answer quotes the sentences it rests on, with their documents and character spans.
policykb --kb "$KB" ingest examples/corpus
policykb --kb "$KB" ask "How much is the fine for an operator who fails to register an installation?"
policykb --kb "$KB" ask "What did the National Energy Bureau establish?" --explain
