"""policykb: policy documents → an RDF knowledge base → answers with verifiable evidence.

Kept import-light on purpose: heavy dependencies load only in the modules that need them.
"""

__version__ = "0.1.0"
