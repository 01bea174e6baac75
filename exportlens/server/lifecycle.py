"""Start, settings, trust, status and shutdown."""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from typing import Any

from lsprotocol import types

from .. import __version__
from ..exporter.spec.loading import PYPROJECT
from ..exporter.workers.sandbox import available
from . import compat
from . import settings as settings_mod
from .index import folders
from .methods import STATUS_REQUEST, TRUST_NOTIFICATION
from .server import ExportLensServer
from .snapshots import path_of


def initialize(ls: ExportLensServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    if isinstance(options, dict):
        trusted = options.get("trusted", True)  # plain LSP clients send nothing: they trust, as their user does
        ls.session.trusted = trusted is True  # anything but true fails closed (`bool("no")` is True)
        if not isinstance(trusted, bool):
            ls.say(
                f"initializationOptions.trusted = {trusted!r} is not true or false: running no workspace code",
                types.MessageType.Warning,
            )
        ls.session.settings, problems = settings_mod.resolve(options)
        for p in problems:
            ls.say(p, types.MessageType.Warning)
    folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
    ls.session.folders = [p for p in (path_of(u) for u in folders) if p is not None]


def initialized(ls: ExportLensServer, params: types.InitializedParams) -> None:
    ls.event_loop = asyncio.get_running_loop()
    ls.say(
        f"{__version__} serving {', '.join(map(str, ls.session.folders)) or 'no folder'}; pid {os.getpid()}; "
        f"{'trusted' if ls.session.trusted else 'untrusted: static features only'}"
    )
    if ls.session.trusted and ls.session.settings.export_on != "manual":
        ls.exports.start_pool()  # started at launch (app.main): restarted where python or jobs differ
    elif ls.exports.pool is not None:
        ls.exports.close()  # untrusted, or exports only when asked: no worker until one is needed
    asyncio.get_running_loop().create_task(ls.pull_settings())
    _watch_files(ls)
    folders.start(ls)


def _watch_files(ls: ExportLensServer) -> None:
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps else None
    if not (watched and watched.dynamic_registration):
        return
    watchers = [types.FileSystemWatcher(glob_pattern=g) for g in ("**/*.py", f"**/{PYPROJECT}")]
    registration = types.Registration(
        id="exportlens-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )
    ls.client_register_capability(types.RegistrationParams([registration]))


def shutdown(ls: ExportLensServer, params: None) -> None:
    compat.cancel_requests_before_shutdown(ls)
    ls.stop_work()


def on_trust(ls: ExportLensServer, params: Any) -> None:
    trusted = compat.field_of(params, "trusted")
    if not isinstance(trusted, bool):
        ls.say(
            f'{TRUST_NOTIFICATION} needs {{"trusted": true or false}}, got {params!r}: trust unchanged',
            types.MessageType.Warning,
        )
        return
    ls.set_trusted(trusted)


RUNNING_NAMED = 10  # the status names this many of the exports under way, and counts them all


def status(ls: ExportLensServer, params: Any) -> dict[str, Any]:
    pool = ls.exports.pool
    return {
        "pid": os.getpid(),
        "torch_imported": "torch" in sys.modules,
        "trusted": ls.session.trusted,
        "modules_indexed": len(ls.session.index),
        "files_indexed": len(ls.session.index.files),
        "exports_started": ls.session.exports_started,
        "plans_built": ls.session.plans.built,  # modules planned: once per text, however often asked
        # tests and benchmarks ask every few ms through a storm of hundreds of exports: naming
        # each would make these replies most of what the server writes; a few names tell enough
        "running": [str(key.target) for key in itertools.islice(ls.session.running, RUNNING_NAMED)],
        "running_count": len(ls.session.running),
        "worker_pid": pool.warm_pid if pool else None,
        "sandbox": available(),  # what confines an export here, or "none: " and why
        "jobs": [{"root": r, "target": t, "pid": p} for (r, t), p in (pool.job_pids() if pool else {}).items()],
        "settings": {k: v for k, v in vars(ls.session.settings).items()},
    }


def did_change_configuration(ls: ExportLensServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("exportlens"), dict):
        ls.apply_settings(settings["exportlens"])
    else:
        asyncio.get_running_loop().create_task(ls.pull_settings())


def register(server: ExportLensServer) -> None:
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.SHUTDOWN)(shutdown)
    server.feature(TRUST_NOTIFICATION)(on_trust)
    server.feature(STATUS_REQUEST)(status)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
