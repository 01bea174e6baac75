"""What a sandboxed job may read of the interpreter that runs it (the rest is the project
and the system's folders: ``sandbox``). Found from the interpreter itself, not from
``sys.path``: ``python -m`` puts the current folder there, and a job started from $HOME or
``/`` could then read all of it. Never ``/``, a home folder or a folder above one, whatever
names it (a prefix, a ``.pth`` line, an editable install): reading it reads ``~/.ssh``."""

from __future__ import annotations

import functools
import json
import os
import site
import sys
from importlib.metadata import distributions
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..core.homes import holds_a_home

OWN = str(Path(__file__).resolve().parents[2])  # the exportlens package, which a job's child still imports from


@functools.cache
def interpreter_folders() -> tuple[Path, ...]:
    """The interpreter's prefixes and its executable's folder, its site-packages (the user's
    where it reads them), the folders its ``.pth`` files add and those of editable installs,
    and exportlens's own package. Found once per process: the warm parent finds them while
    warming up, and each job's child inherits the answer instead of reading every installed
    distribution's metadata again."""
    paths = [
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
    ]
    sites = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    return tuple(
        Path(p)
        for p in [*paths, *sites, *_pth_folders(sites), *_editable_projects(sites), OWN]
        if not holds_a_home(Path(p))
    )


def _pth_folders(sites: list[str]) -> list[str]:
    """The folders the ``.pth`` files in ``sites`` put on ``sys.path``: their lines that are
    not comments or ``import`` lines, relative to the site folder (as ``site`` reads them)."""
    found = []
    for folder in sites:
        for pth in Path(folder).glob("*.pth"):
            try:
                lines = pth.read_text(errors="replace").splitlines()
            except OSError:
                continue
            found += [
                os.path.join(folder, ln.strip())
                for ln in lines
                if ln.strip() and not ln.startswith(("#", "import ", "import\t"))
            ]
    return found


def _editable_projects(sites: list[str]) -> list[str]:
    """The folders of editable installs (PEP 610's ``direct_url.json``): a setuptools editable
    install adds an import hook, not a ``.pth`` line."""
    found = []
    for dist in distributions(path=sites):
        try:
            url = json.loads(dist.read_text("direct_url.json") or "{}")
            if url.get("dir_info", {}).get("editable") is True and url["url"].startswith("file:"):
                found.append(unquote(urlparse(url["url"]).path))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return found
