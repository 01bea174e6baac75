"""The words by which the owner knows what an error raised in a job was, where all it has is a
finding's text (owner side, no torch).

An error the user's code raised becomes a finding at any of some 17 places in a job (import,
construction, example inputs, export, serving), which keep its words and not its kind. Two of
those kinds change what the owner says: an allocation refused under the memory cap (EL503,
not the user's error) and a ``PermissionError`` under the sandbox (the sandbox's doing). The
words live here, not in ``runtime/compat/messages.py`` (the one reader of torch's texts): the
owner side imports no torch, and ``workers/`` may not import ``runtime/``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Words:
    text: str
    said_by: str  # who writes it, and where it was seen


# an allocation refused, in the words of whatever refused it (one of them is enough)
ALLOCATION_REFUSED = (
    Words("can't allocate memory", "torch's DefaultCPUAllocator (RuntimeError), torch 2.13"),
    Words("Cannot allocate memory", "the OS's ENOMEM, in the same RuntimeError and in an OSError"),
    Words("std::bad_alloc", "C++'s operator new, through torch's C++ code"),
    Words("MemoryError", "Python's, as a finding names an exception (``MemoryError: ...``)"),
    Words("out of memory", "a device's allocator (CUDA's ``CUDA out of memory``)"),
)
# a PermissionError, as a finding names an exception (``PermissionError: [Errno 13] ...``)
PERMISSION_REFUSED = Words("PermissionError", "Python's")


def allocation_refused(text: str) -> bool:
    """Whether a finding's message or detail says an allocation was refused."""
    return any(words.text in text for words in ALLOCATION_REFUSED)


def permission_refused(text: str) -> bool:
    """Whether a finding's message says the system refused the job something."""
    return PERMISSION_REFUSED.text in text
