"""Semantic parsing: question → labelled S-expressions. The candidate record and parser protocol
(:mod:`spr.parsing.candidate`), the LoRA parser (:mod:`spr.parsing.lora`) on its base model
(:mod:`spr.parsing.base_model`) with fast decoding (:mod:`spr.parsing.decode`), the rule parser
(:mod:`spr.parsing.rules`), training (:mod:`spr.parsing.train`) and training-data synthesis
(:mod:`spr.parsing.synth`); :mod:`spr.parsing.factory` picks one for a KB."""
