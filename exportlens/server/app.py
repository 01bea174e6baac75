"""The language server: thin handlers over the session, the index and the exports.

Hover, CodeLens, inlay hints and code actions answer from the index and cached
reports only; exports run in worker processes and land asynchronously. Each
handler module registers on the one ``server`` object in ``base``.
"""

from __future__ import annotations

import logging
import sys

from . import commands, documents, lifecycle, requests  # noqa: F401 - registers the handlers
from .base import server


def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server.start_io()
