"""Retrieval modes: one interface (:mod:`spr.retrieval.base`), one module per mode, and the
registry that names them (:mod:`spr.retrieval.registry`)."""
