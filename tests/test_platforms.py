"""macOS and Windows, checked on any machine: drive letters and backslashes in targets,
in the names reports and caches carry, and in the files edits go to (pure paths); the
platform layer's choices and the sandbox's word where it is off. (The worker suite's run
with no fork is the rest: docs/workers.md#platforms.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import PurePosixPath, PureWindowsPath

import pytest

from exportlens.exporter.core.regular_files import NotRegular, read_regular
from exportlens.exporter.core.report import Edit
from exportlens.exporter.core.sources import Sources
from exportlens.exporter.core.targets import Target
from exportlens.exporter.edit.text_edits import apply_edits
from exportlens.exporter.find.index_cache import IndexCache
from exportlens.exporter.workers import platform
from exportlens.exporter.workers.platform import NO_FORK, fork_is_safe
from exportlens.exporter.workers.sandbox import available, off_here
from exportlens.server.features.diagnostics import relative


@pytest.mark.parametrize(
    "text, path, name, variant",
    [
        ("C:\\proj\\models\\net.py:Net", "C:\\proj\\models\\net.py", "Net", None),
        (
            "C:\\proj\\models\\net.py",
            "C:\\proj\\models\\net.py",
            "",
            None,
        ),  # a file alone: the drive's colon names no class
        ("c:/proj/models/net.py:Outer.Inner[small]", "c:/proj/models/net.py", "Outer.Inner", "small"),
        ("D:net.py", "D:net.py", "", None),  # drive-relative
        ("models\\net.py:Net[a:b]", "models\\net.py", "Net", "a:b"),
        ("\\\\server\\share\\net.py:Net", "\\\\server\\share\\net.py", "Net", None),  # a UNC path
        ("models/net.py:Net", "models/net.py", "Net", None),
        ("net.py", "net.py", "", None),
    ],
)
def test_a_target_keeps_its_drive_and_names_the_class_after_the_last_colon(text, path, name, variant):
    target = Target.parse(text)
    assert (target.path, target.name, target.variant) == (path, name, variant)
    assert str(target) == text


def test_a_windows_file_is_named_relative_to_its_project_with_forward_slashes():
    root = PureWindowsPath("C:\\Users\\ada\\proj")
    assert relative(root, root / "models" / "net.py") == "models/net.py"
    assert relative(root, PureWindowsPath("D:\\other\\net.py")) == "D:/other/net.py"  # outside: absolute, as it is
    sources = Sources(root)  # type: ignore[arg-type]  # (its own constructor resolves on disk)
    assert sources.rel("models\\net.py") == "models/net.py"
    assert sources.rel(PureWindowsPath("C:\\Users\\ada\\proj\\models\\net.py")) == "models/net.py"
    assert str(sources.path("models/net.py")) == "C:\\Users\\ada\\proj\\models\\net.py"  # where an edit's file is


def test_a_windows_project_s_index_cache_is_one_plain_file_in_the_cache_folder():
    cache = IndexCache(PurePosixPath("/cache"))  # type: ignore[arg-type]
    file = cache._file(PureWindowsPath("C:\\Users\\ada\\proj"), "jsonl")  # type: ignore[arg-type]
    assert (
        file.parent == PurePosixPath("/cache")
        and file.name.endswith(".jsonl")
        and ":" not in file.name
        and "\\" not in file.name
    )


def test_an_edit_of_a_file_with_windows_line_ends_keeps_every_other_byte():
    text = (
        "import torch\r\n\r\nclass Net(torch.nn.Module):\r\n"
        "    def forward(self, x):\r\n        return x.view(4, -1)\r\n"
    )
    edit = Edit("models/net.py", 5, 23, 5, 24, "x.shape[0]")  # the 4 of view(4, -1)
    assert apply_edits(text, [edit]) == text.replace("view(4,", "view(x.shape[0],")
    insert = Edit("models/net.py", 2, 1, 2, 1, "import math\r\n")
    assert apply_edits(text, [insert]) == text.replace("torch\r\n\r\n", "torch\r\nimport math\r\n\r\n")


# -- the platform layer and the sandbox, as each system gets them ------------------------


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_the_sandbox_says_plainly_that_it_is_off_on_macos_and_windows(monkeypatch, platform):
    monkeypatch.setattr(sys, "platform", platform)
    assert available() == "none: Landlock and seccomp are Linux features"
    assert off_here() == "Landlock and seccomp are Linux features"  # what `exportlens check` prints


@pytest.mark.parametrize("value, forks", [(None, True), ("", True), ("0", True), ("1", False)])
def test_exportlens_no_fork_makes_linux_run_each_job_in_a_spare(monkeypatch, value, forks):
    if value is None:
        monkeypatch.delenv(NO_FORK, raising=False)
    else:
        monkeypatch.setenv(NO_FORK, value)
    assert fork_is_safe() is (forks and platform.LINUX)


def test_exportlens_no_proc_makes_linux_find_trees_and_memory_with_psutil(monkeypatch):
    """macOS's and Windows's path, run where there is /proc: a real child is found, measured
    and killed through psutil."""
    monkeypatch.setenv("EXPORTLENS_NO_PROC", "1")
    asked: list[int] = []
    through = platform._psutil_tree
    monkeypatch.setattr(platform, "_psutil_tree", lambda pid, recursive: asked.append(pid) or through(pid, recursive))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not platform.reads_proc()
        assert child.pid in platform.children(os.getpid()) and child.pid in platform.tree(os.getpid())
        assert platform.tree_private_bytes(child.pid) > 0
        assert os.getpid() in asked
        platform.kill_tree(child.pid)
        assert child.wait(60) != 0
    finally:
        child.kill()


def test_on_windows_a_worker_gets_a_group_of_its_own_and_its_memory_cap_is_said_to_be_missing(monkeypatch):
    monkeypatch.setattr(platform, "WINDOWS", True)
    monkeypatch.setattr(platform, "LINUX", False)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200, raising=False)  # (absent off Windows)
    assert platform.new_group() == {"creationflags": 0x200}
    assert platform.limit_memory(1 << 30) == "no per-process memory cap on Windows"  # said, not silently skipped
    assert platform.limit_memory(None) is None


def test_without_windows_s_missing_open_flags_a_file_is_read_and_a_link_in_a_cache_is_not(tmp_path, monkeypatch):
    """Windows has no ``O_NONBLOCK`` or ``O_NOFOLLOW``: files still open, and a cache entry
    that is a link is still refused (from ``lstat``) instead of followed."""
    for flag in ("O_NONBLOCK", "O_NOFOLLOW"):
        monkeypatch.delattr(os, flag, raising=False)
    (tmp_path / "net.py").write_text("class Net: ...\n")
    (tmp_path / "secret").write_text("key")
    (tmp_path / "entry.json").symlink_to(tmp_path / "secret")
    assert read_regular(tmp_path / "net.py") == b"class Net: ...\n"
    assert read_regular(tmp_path / "entry.json") == b"key"  # a project's file may be a link
    with pytest.raises(NotRegular, match="it is a link"):
        read_regular(tmp_path / "entry.json", follow=False)  # a cache's may not
