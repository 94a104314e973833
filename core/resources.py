"""Where the data folders read at run time live: ``ontologies/``, ``shapes/`` and ``web/``.

Their source of truth is the repository root: ontology engineers edit ``ontologies/*.owl`` in
Protégé there, ``policykb shapes`` writes ``shapes/generated/`` there, and npm installs
``web/node_modules/`` there. A wheel carries a copy of them inside this package, in
``core/_data/`` (``setup.py`` puts it there at build time); a source checkout or an editable
install has no such copy and reads the folders at the repository root instead.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
PACKAGED = _HERE / "_data"  # a wheel's copy; setup.py's RESOURCES_TARGET names the same folder
SOURCE_ROOT = _HERE.parent  # a source checkout (or editable install): the repository root


def resources_root() -> Path:
    """The folder holding the shipped ``ontologies/``, ``shapes/`` and ``web/``."""
    return PACKAGED if PACKAGED.is_dir() else SOURCE_ROOT


def resource_dir(path: str | Path) -> Path:
    """A configured folder: as given when absolute or an existing folder relative to the cwd (a
    user's own folder wins), else the shipped one of that name (wheel copy or source tree).

    Lets ``policykb`` run from any directory, installed from a wheel or from a checkout, while
    still honouring a user's own ontology, shapes or web folder.
    """
    path = Path(path)
    if path.is_absolute() or path.is_dir():
        return path
    return resources_root() / path
