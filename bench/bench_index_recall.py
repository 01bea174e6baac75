"""The static module index against Python's own answer, on real transformers files.

For each model's ``transformers/models/<name>/modeling_<name>.py`` (``--all``: every
``models/*/modeling_*.py``, some 540 files) the index (the language server's indexer,
``exportlens.server.index.scanner.scan``, over the installed ``transformers`` folder: no
pyproject.toml above it) lists the nn.Module classes it finds. Only those files are
scanned; the files they import (``modeling_utils.py``, ``modeling_layers.py``, ...) are
read as the bases need them, not the whole 2,900-file tree. Then the same files are
imported, and every class defined in each (``__module__`` is the file's) that
``issubclass(c, torch.nn.Module)`` is the truth. A file that does not import is skipped.
Classes are compared by name.

Goal (issue 12): recall and precision 100 % each.

    python bench/bench_index_recall.py                    # 20 models: about 1 minute on 2 cores
    python bench/bench_index_recall.py --models bert llama
    python bench/bench_index_recall.py --all              # every modeling file (538): about 5 minutes
    python bench/bench_index_recall.py --quick            # bert only: that it runs (CI)
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import time
from pathlib import Path

MODELS = (
    "bert llama t5 whisper vit gpt2 clip mixtral qwen2_moe distilbert"
    " mistral wav2vec2 detr sam blip bart deberta mobilevit swin convnext"
).split()


def static_index(package: Path, files: list[Path]) -> tuple[dict[Path, set[str]], float]:
    """The classes the index finds in each file, and the seconds it took."""
    from exportlens.server.index.scanner import scan  # no torch: the index runs first, in a clean process

    start = time.perf_counter()
    found = {path: {m.name for m in entry.modules} for path, entry in scan(package, files)}
    return {f: found.get(f, set()) for f in files}, time.perf_counter() - start


def runtime_modules(package: Path, file: Path) -> set[str] | str:
    """The nn.Module classes the file defines, by importing it; why not, if it does not import."""
    import torch

    name = ".".join(("transformers", *file.relative_to(package).with_suffix("").parts))
    try:
        module = importlib.import_module(name)
    except Exception as e:  # a model that needs what is not installed
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    classes = (c for _, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == name)
    return {c.__name__ for c in classes if issubclass(c, torch.nn.Module)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--all", action="store_true", help="every models/*/modeling_*.py; rows only where they differ")
    parser.add_argument("--quick", action="store_true", help="bert only (CI)")
    args = parser.parse_args()
    if args.quick:
        args.models, args.all = ["bert"], False
    import transformers  # its __init__ is lazy: no torch, no model imported yet

    package = Path(transformers.__file__).resolve().parent
    files = (
        sorted(package.glob("models/*/modeling_*.py"))
        if args.all
        else [package / "models" / m / f"modeling_{m}.py" for m in args.models]
    )
    files = [f for f in files if f.is_file()]
    static, seconds = static_index(package, files)
    print(f"transformers {transformers.__version__} at {package}; index of {len(files)} files: {seconds:.1f} s\n")
    print(f"{'file':<40}{'runtime':>8}{'static':>8}{'missed':>8}{'extra':>7}  names")
    totals = [0, 0, 0]  # runtime, static, both
    for file in files:
        label = file.relative_to(package / "models").as_posix()
        truth = runtime_modules(package, file)
        if isinstance(truth, str):
            print(f"{label:<40}skipped: {truth}")
            continue
        found = static[file]
        missed, extra = sorted(truth - found), sorted(found - truth)
        names = "; ".join(
            filter(None, (missed and f"missed {', '.join(missed)}", extra and f"extra {', '.join(extra)}"))
        )
        if names or not args.all:
            print(f"{label:<40}{len(truth):>8}{len(found):>8}{len(missed):>8}{len(extra):>7}  {names}")
        totals = [totals[0] + len(truth), totals[1] + len(found), totals[2] + len(truth & found)]
    recall = totals[2] / totals[0] if totals[0] else 1.0
    precision = totals[2] / totals[1] if totals[1] else 1.0
    print(
        f"\nrecall {recall:.1%} ({totals[2]}/{totals[0]}), precision {precision:.1%} ({totals[2]}/{totals[1]});"
        " goal 100 % each"
    )


if __name__ == "__main__":
    main()
