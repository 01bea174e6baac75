"""Draft export sees the same values every run: it runs the real ops beside the fake ones,
and a tensor made with ``torch.empty`` there would hold whatever bytes the allocator hands
back, so a branch on it (the mixture of experts' `torch.nonzero(...)` loop in test_converge.py)
would go one way or the other from one process to the next, and with it the findings and fixes."""

from __future__ import annotations

import torch
from torch import nn

from exportlens.exporter.runtime.compat.internals import draft_export


class ReadsFreshMemory(nn.Module):
    def forward(self, x):
        if torch.empty(x.shape[0] * 4).isnan().all():
            return x + 1
        return x - 1


def test_draft_export_runs_on_filled_memory_not_on_leftover_bytes():
    """A fresh float tensor is NaN under draft export (as ``torch.utils.deterministic`` fills
    it), not the bytes freed a moment before; and the setting is the user's again after."""
    leftover = torch.zeros(12)  # the bytes an empty tensor of the same size would likely be given
    del leftover
    dims = {"x": {0: torch.export.Dim("n", max=64)}}
    failures = draft_export(ReadsFreshMemory(), (torch.randn(3, 2),), {}, dims)
    assert [(f.failure_type.name, f.data["result"]) for f in failures] == [("DATA_DEPENDENT_ERROR", "True")]
    assert not torch.are_deterministic_algorithms_enabled()
