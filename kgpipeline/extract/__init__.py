"""Extraction: the extractor interface and records (:mod:`kgpipeline.extract.base`), the
ontology lexicon (:mod:`kgpipeline.extract.lexicon`) and the mention spans it finds
(:mod:`kgpipeline.extract.mentions`), the deterministic extractor
(:mod:`kgpipeline.extract.lexicon_extractor`) and the LLM extractor
(:mod:`kgpipeline.extract.llm_extractor`)."""
