"""Grounding: S-expressions (:mod:`spr.grounding.sexpr`, read by :mod:`spr.grounding.sexpr_reader`),
entity linking (:mod:`spr.grounding.link`), relation and class matching
(:mod:`spr.grounding.relations`), grounding of a parse into ranked variants
(:mod:`spr.grounding.ground`) and compilation to SPARQL (:mod:`spr.grounding.compile`)."""
