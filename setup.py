"""Build step that puts the data folders of the repository root into the wheel.

Everything else is declared in pyproject.toml. ``ontologies/``, ``shapes/`` and ``web/`` stay at
the root, where they are edited (Protégé, ``policykb shapes``, npm); a wheel, and an sdist, carry a
copy of the files below, which the wheel installs as ``core/_data/<folder>/...``, where
``core.resources`` finds them. An editable install copies nothing: ``core.resources`` reads the
folders at the root instead.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

ROOT = Path(__file__).resolve().parent
RESOURCES_TARGET = "core/_data"  # core.resources.PACKAGED names the same folder

# Glob patterns relative to the root; each must match at least one file, so that a wheel never
# silently lacks what the code reads (e.g. built before `npm ci` ran in web/).
RESOURCES = [
    "ontologies/*.owl",
    "ontologies/catalog-v001.xml",  # Protégé's import catalog
    "shapes/*.ttl",
    "shapes/generated/*.ttl",
    "web/index.html",
    "web/app.js",
    "web/style.css",
    # What the page and /docs load from policykb.server.app's /vendor/ mounts (no source maps),
    # with each npm package's licence and metadata.
    "web/node_modules/@zazuko/yasgui/package.json",
    "web/node_modules/@zazuko/yasgui/build/yasgui.min.js",
    "web/node_modules/@zazuko/yasgui/build/yasgui.min.css",
    "web/node_modules/cytoscape/package.json",
    "web/node_modules/cytoscape/LICENSE",
    "web/node_modules/cytoscape/dist/cytoscape.min.js",
    "web/node_modules/swagger-ui-dist/package.json",
    "web/node_modules/swagger-ui-dist/LICENSE",
    "web/node_modules/swagger-ui-dist/NOTICE",
    "web/node_modules/swagger-ui-dist/swagger-ui-bundle.js",
    "web/node_modules/swagger-ui-dist/swagger-ui.css",
    "web/node_modules/swagger-ui-dist/favicon-32x32.png",
]


def resource_files(strict: bool = True) -> list[str]:
    """The files of RESOURCES, as POSIX paths relative to the root. ``strict``: a pattern that
    matches nothing is an error (building a wheel); otherwise it is passed over (the file list
    that egg_info writes, also for an editable install, which runs before ``npm ci`` may have)."""
    files: list[str] = []
    for pattern in RESOURCES:
        found = sorted(p for p in ROOT.glob(pattern) if p.is_file())
        if not found and strict:
            hint = " (run `npm ci` in web/, or scripts/setup.sh)" if "node_modules" in pattern else ""
            raise SetupError(f"no file matches {pattern!r} under {ROOT}{hint}")
        files.extend(p.relative_to(ROOT).as_posix() for p in found)
    return files


class BuildPyWithResources(build_py):
    """build_py that also copies RESOURCES into the build tree (not for an editable install)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for name in resource_files():
            target = Path(self.build_lib, RESOURCES_TARGET, name)
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / name), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return [*outputs, *(str(Path(self.build_lib, RESOURCES_TARGET, name)) for name in resource_files())]

    def get_source_files(self) -> list[str]:
        return [*super().get_source_files(), *resource_files(strict=False)]  # into the sdist, too


setup(cmdclass={"build_py": BuildPyWithResources})
