"""Negative control: boxes kept by a score threshold with `masked_select`, then viewed back as boxes.

From: pytorch/pytorch#26034 (`bbs.masked_select(conf > thresh)` in a detector's
post-processing does not export).
Expect: clean (torch 2.13 exports it and agrees with eager on the probes).
Probes: scores that keep no box, one box, and every box.
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.rand(5, 4), torch.tensor([0.9, 0.1, 0.7, 0.2, 0.6]))

    @staticmethod
    def probe_inputs():
        scores = ([0.1] * 5, [0.1, 0.9, 0.1, 0.1, 0.1], [0.9] * 5)
        return [(torch.rand(5, 4), torch.tensor(s)) for s in scores]

    def forward(self, boxes, scores):
        boxes = boxes * 2.0
        keep = scores > 0.5
        kept = boxes.masked_select(keep[:, None]).view(-1, 4)
        return kept.sum(0)
