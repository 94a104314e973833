"""Derived index stages, rebuilt from the whole KB after documents change: the stage protocol
(:mod:`kgpipeline.derived.base`), chunk vectors, the entity-label index, disambiguation weights
(with the surface-form counts behind them) and the question bank (with its templates)."""
