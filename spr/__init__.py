"""Answering: the semantic parsing retriever, the question bank retriever, fusion and generation."""
