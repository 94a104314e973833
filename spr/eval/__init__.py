"""The evaluation harness behind ``policykb eval``.

Modules: :mod:`~spr.eval.datasets` (loaders for the public QA sets, one record shape) and
:mod:`~spr.eval.pathquestion`; :mod:`~spr.eval.metrics` (pure scoring functions);
:mod:`~spr.eval.citations` (ALCE citation recall/precision of an answer);
:mod:`~spr.eval.judge` (RAGAS-style LLM-judged metrics, the judge as citation support check); :mod:`~spr.eval.significance` (paired
Wilcoxon + Benjamini-Hochberg, bootstrap intervals); :mod:`~spr.retrieval.naive_kg` (the Naive-KG-RAG
baseline, registered as retrieval mode ``naive-kg``); :mod:`~spr.eval.runner` (KB per dataset, every
system over every question); :mod:`~spr.eval.report` (Markdown + JSONL); :mod:`~spr.eval.plots`
(PNG figures); :mod:`~spr.eval.harness` (all of it for one request). Nothing loads at import.
"""
