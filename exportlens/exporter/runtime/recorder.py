"""``exportlens record``'s two halves inside the user's run (docs/spec.md, "Recorded specs").

``main`` is the launcher the owner starts: it writes a ``sitecustomize.py`` into the recording
folder, puts that folder first on the command's ``PYTHONPATH``, confines itself as an export's
job is confined (the project read-only, the recording folder writable) and becomes the user's
command (``exec``), so the sandbox holds for every process the command starts.

``start`` runs in each of those Python processes, from that ``sitecustomize``: once
``torch.nn`` is imported (never earlier: a script that sets threads or devices before its
``import torch`` keeps doing so) it wraps ``__init__`` of each watched class and
``nn.Module.__call__``, and for each class keeps its constructor's arguments and the inputs of
up to N calls that differ, written as a ``Recording`` (core/recorded.py) after each one kept:
a process that ends with ``os._exit`` or is killed loses nothing. Nothing here may break
the user's run: every failure to record is swallowed.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import os
import sys
import weakref
from pathlib import Path
from typing import Any

from ..core.recorded import (
    CALLS_FOLDER,
    CODEC,
    FOLDER_VARIABLE,
    TARGETS_FILE,
    USER_PATH_VARIABLE,
    Call,
    Kind,
    Recorded,
    Recording,
    Seen,
)

_BOOT = """\
import sys

def _exportlens_record():
    parent = {parent!r}
    sys.path.insert(0, parent)
    try:
        from exportlens.exporter.runtime.recorder import start, chain
    except Exception:
        return
    finally:
        sys.path.remove(parent)
    start()
    chain(__file__)

_exportlens_record()
"""


def main() -> None:
    """``recorder FOLDER SANDBOX ROOT... -- COMMAND...``: become the user's command, recorded."""
    from ...isolation import PACKAGE_PARENT

    folder, sandbox, *rest = sys.argv[1:]
    split = rest.index("--")
    roots, command = [Path(r) for r in rest[:split]], rest[split + 1 :]
    boot = Path(folder) / "boot"
    boot.mkdir()
    (boot / "sitecustomize.py").write_text(_BOOT.format(parent=PACKAGE_PARENT), encoding="utf-8")
    scratch = Path(folder) / "tmp"
    scratch.mkdir()
    env = _user_environment(boot)
    env["TMPDIR"] = str(scratch)
    if sandbox == "1":
        from ..workers.sandbox import confine

        confine(roots, [Path(folder)])
    try:
        os.execvpe(command[0], command, env)
    except OSError as e:
        print(f"exportlens record: cannot run {command[0]!r}: {e.strerror or e}", file=sys.stderr)
        sys.exit(127)


def _user_environment(boot: Path) -> dict[str, str]:
    """The environment the command would have had, but our ``sitecustomize`` first on its path."""
    env = dict(os.environ)
    env.pop("PYTHONSAFEPATH", None)  # ours (isolation.py), not the user's: a script's folder is on its path
    own = json.loads(env.pop(USER_PATH_VARIABLE, "null"))
    if own is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = own
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(boot), env.get("PYTHONPATH")) if p)
    return env


def chain(own: str) -> None:
    """Run the ``sitecustomize`` ours hides (a distribution's or a virtual environment's)."""
    here = os.path.dirname(os.path.abspath(own))
    path = [p for p in sys.path if p and os.path.abspath(p) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def start() -> None:
    folder = os.environ.get(FOLDER_VARIABLE)
    if not folder:
        return
    try:
        told = json.loads((Path(folder) / TARGETS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    recorder = _Recorder(Path(folder), told["classes"], told["calls"])
    loaded = sys.modules.get("torch.nn.modules.module")
    if loaded is not None and hasattr(loaded, "Module"):
        recorder.install(loaded.Module)
    else:
        sys.meta_path.insert(0, _WhenLoaded("torch.nn.modules.module", recorder))


class _WhenLoaded(importlib.abc.MetaPathFinder):
    """Installs the recorder the moment ``torch.nn.modules.module`` has run, before any class
    of the user's can subclass ``nn.Module``."""

    def __init__(self, name: str, recorder: _Recorder) -> None:
        self.name, self.recorder = name, recorder

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        others = [f for f in sys.meta_path if f is not self]
        spec = next((s for f in others if (s := _spec(f, name, path, target)) is not None), None)
        if spec is None or spec.loader is None:
            return spec
        sys.meta_path.remove(self)
        run, recorder = spec.loader.exec_module, self.recorder

        def exec_module(module):
            run(module)
            try:
                recorder.install(module.Module)
            except Exception:
                pass

        spec.loader.exec_module = exec_module
        return spec


def _spec(finder, name, path, target):
    find = getattr(finder, "find_spec", None)
    return find(name, path, target) if find else None


class _Recorder:
    def __init__(self, folder: Path, classes: dict[str, dict[str, str]], most: int) -> None:
        self.folder, self.classes, self.most = folder, classes, most
        self.watched: dict[type, str] = {}
        self.inits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.building: set[int] = set()
        self.kept: dict[tuple[str, str], dict[str, Any]] = {}  # (target, init) -> record's parts
        self.signatures: dict[type, inspect.Signature] = {}
        self.counted = False

    def install(self, module_class: type) -> None:
        recorder, call = self, module_class.__call__
        own = module_class.__dict__.get("__init_subclass__")

        def init_subclass(cls, **kwargs):
            if own is not None:
                own.__func__(cls, **kwargs)
            else:
                super(module_class, cls).__init_subclass__(**kwargs)
            try:
                recorder.watch(cls)
            except Exception:
                pass

        def recorded_call(self, *args, **kwargs):
            if type(self) in recorder.watched:
                try:
                    recorder.saw(self, args, kwargs)
                except Exception:
                    pass
            return call(self, *args, **kwargs)

        # wrapping nn.Module's methods is what recording is (mypy refuses any assignment to a method)
        module_class.__init_subclass__ = classmethod(init_subclass)  # type: ignore[method-assign, assignment]
        module_class.__call__ = recorded_call  # type: ignore[method-assign]

    def watch(self, cls: type) -> None:
        file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        target = file and self.classes.get(os.path.realpath(file), {}).get(cls.__qualname__)
        if not target:
            return
        self.watched[cls] = target
        if "__init__" in cls.__dict__:
            cls.__init__ = self._wrapped_init(cls.__dict__["__init__"])  # type: ignore[misc]  # (the class's own, wrapped)

    def _wrapped_init(self, init):
        recorder, signature = self, inspect.signature(init)

        def recorded_init(self, *args, **kwargs):
            if id(self) in recorder.building:  # a base's __init__, called by the class's own
                return init(self, *args, **kwargs)
            recorder.building.add(id(self))
            try:
                init(self, *args, **kwargs)
            finally:
                recorder.building.discard(id(self))
            try:
                recorder.inits[self] = _arguments(signature, self, args, kwargs)
            except Exception:
                pass

        recorded_init.__wrapped__ = init
        return recorded_init

    def saw(self, module, args: tuple, kwargs: dict) -> None:
        if _tracing():  # a call torch.export or torch.compile makes: fake sizes, not the run's
            return
        cls = type(module)
        signature = self.signatures.get(cls) or self.signatures.setdefault(cls, inspect.signature(cls.forward))
        bound = signature.bind(module, *args, **kwargs).arguments
        inputs = tuple((name, _seen(value, signature.parameters[name])) for name, value in list(bound.items())[1:])
        if any(type(n) is not int for _, seen in inputs for n in seen.shape):
            return
        init, unwritten = self.inits.get(module, ({}, ()))
        key = (self.watched[cls], json.dumps(init, sort_keys=True, default=repr))
        kept = self.kept.setdefault(key, {"init": init, "unwritten": unwritten, "calls": [], "seen": 0})
        kept["seen"] += 1
        call = Call(inputs)
        if call not in kept["calls"] and len(kept["calls"]) < self.most:
            kept["calls"].append(call)
            self.write()
        elif not self.counted:  # the counts of calls like those kept: at exit
            self.counted = True
            atexit.register(self.write)

    def write(self) -> None:
        """The whole recording, replaced at once: a reader never sees half of one."""
        records = tuple(
            Recorded(target, k["init"], tuple(k["unwritten"]), tuple(k["calls"]), k["seen"])
            for (target, _), k in self.kept.items()
        )
        calls = self.folder / CALLS_FOLDER
        calls.mkdir(exist_ok=True)
        part = calls / f".{os.getpid()}.part"
        part.write_text(CODEC.dumps(Recording(records)), encoding="utf-8")
        os.replace(part, calls / f"{os.getpid()}.json")


def _tracing() -> bool:
    compiler = getattr(sys.modules["torch"], "compiler", None)
    return bool(compiler and compiler.is_compiling())


def _arguments(signature: inspect.Signature, module, args: tuple, kwargs: dict) -> tuple[dict[str, Any], tuple]:
    """The constructor's arguments as given: the plain ones, and the names of the others."""
    plain, unwritten = {}, []
    for name, value in list(signature.bind(module, *args, **kwargs).arguments.items())[1:]:
        kind = signature.parameters[name].kind
        given = value if kind is inspect.Parameter.VAR_KEYWORD else {name: value}
        if kind is inspect.Parameter.VAR_POSITIONAL:
            unwritten.append(f"*{name}")
            continue
        for key, v in given.items():
            if _plain(v):
                plain[key] = list(v) if isinstance(v, tuple) else v
            else:
                unwritten.append(key)
    return plain, tuple(unwritten)


def _plain(value: Any) -> bool:
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) in (list, tuple):
        return all(_plain(v) for v in value)
    return type(value) is dict and all(isinstance(k, str) and _plain(v) for k, v in value.items())


def _seen(value: Any, parameter: inspect.Parameter) -> Seen:
    if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        return Seen(Kind.OTHER, type_name=f"{'*' if parameter.kind is inspect.Parameter.VAR_POSITIONAL else '**'}args")
    torch = sys.modules["torch"]
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool or not value.numel():
            return Seen(Kind.TENSOR, dtype, tuple(value.shape))
        # integer tensors are often indices (token ids): their range is part of the spec
        low, high = int(value.min()), int(value.max())
        return Seen(Kind.TENSOR, dtype, tuple(value.shape), value=[low, high + 1])
    if _plain(value):
        return Seen(Kind.VALUE, value=list(value) if isinstance(value, tuple) else value)
    return Seen(Kind.OTHER, type_name=type(value).__name__)
