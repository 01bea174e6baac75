"""Each fault module calls record() at import: the test finds the job's process by it."""

import os
from pathlib import Path


def record(file: str, name: str = "") -> None:
    path = Path(file).with_suffix(f".{name or 'job'}.pid")
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(str(os.getpid()))
    os.replace(partial, path)  # a reader never sees it half written
