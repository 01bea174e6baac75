"""How exportlens's own Python processes start: none of them imports from the folder it was
started in. An editor starts the server in the workspace, and `python -m` and `python -c`
put that folder first on ``sys.path``: a workspace's ``json.py`` or ``typing_extensions.py``
would run in the server, the indexer and the warm worker parent, trusted or not.

- The server and the CLI drop the current folder from ``sys.path`` before they import
  anything else (``forget_current_folder``, first thing in ``cli``).
- Every Python process we start runs ``python -c BOOT MODULE ARGS`` (``command``) with
  ``PYTHONSAFEPATH=1`` (``environment``): Python 3.11 and later then put nothing before
  the standard library (3.13 imports ``linecache`` before running ``-c`` code), and on
  3.10, which has no safe path, ``-c`` imports nothing before its code drops the ``''``
  entry. Site-packages, a venv, user site-packages and editable installs work as
  always; of ``PYTHONPATH`` only absolute entries other than the current folder are kept.

This module imports only what every interpreter has loaded before running our first
line (``os``, ``sys``): it runs before the current folder is gone.
"""

import os
import sys

# so a started process imports this exportlens, also under an interpreter that has none
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# first in `-c` code: the '' Python 3.10 puts first goes before the first import from the path
DROP = "import sys; sys.path[:] = [p for p in sys.path if p]"
BOOT = f"{DROP}; from exportlens.isolation import main; main()"


def forget_current_folder() -> None:
    """Remove the current folder (as ``''``, a relative entry or its absolute path) from ``sys.path``."""
    sys.path[:] = outside_current_folder(sys.path)


def outside_current_folder(entries: list[str]) -> list[str]:
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:  # a folder removed since: nothing can be imported from it
        here = None
    return [p for p in entries if p and os.path.isabs(p) and os.path.realpath(p) != here]


def command(python: str, module: str, *args: str) -> list[str]:
    """The command line that runs ``module``'s ``main()`` under ``python`` with ``args``, as
    ``python -m module args`` would, but importing nothing from the current folder."""
    return [python, "-c", BOOT, module, *args]


def code_command(python: str, source: str) -> list[str]:
    """The command line that runs the one-line ``source`` as ``python -c`` would, but
    importing nothing from the current folder."""
    return [python, "-c", f"{DROP}; {source}"]


def environment(**extra: str) -> dict[str, str]:
    """This process's environment for a process started with ``command``."""
    env = dict(os.environ)
    own = outside_current_folder(env.get("PYTHONPATH", "").split(os.pathsep))
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_PARENT, *own])
    env["PYTHONSAFEPATH"] = "1"
    env.update(extra)
    return env


# the warm parent: its import takes torch's seconds, and an owner killed meanwhile must not
# leave it running (docs/workers.md), so its owner is watched from before that import
WATCHED = frozenset({"exportlens.exporter.workers.worker"})


def main() -> None:
    """BOOT's second half: the module named first in ``sys.argv`` runs with the rest."""
    forget_current_folder()
    import contextlib
    import importlib

    module = sys.argv.pop(1)
    watch: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if module in WATCHED:
        from exportlens.exporter.workers.scratch import owner_watched  # (standard library only)

        watch = owner_watched(sys.argv)
    with watch:
        loaded = importlib.import_module(module)
    loaded.main()
