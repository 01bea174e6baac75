"""Per-class box offsets for batched NMS, after an early return when no box is left.

From: pytorch/pytorch#146152 (torchvision's fasterrcnn fails torch.export on the guard in
`_batched_nms_coordinate_trick`, which returns early when there is no box).
Expect: the marked line; the preferred fix exports.
Remedy: branch-free: take the offset from `torch.cat([boxes.flatten(), boxes.new_zeros(1)]).max()`,
which is defined on no box; the rest of forward already gives an empty result for no box.
Probes: scores that keep no box, one box, and every box.
Before torch 2.13: EL101 on line 29, its fix does not export, as in the torch.cond, torch's own kernels still guard on the unbacked box count (checked 2.9.1, 2.10.0, 2.11.0, 2.12.1).
"""

import torch
from torch import nn


class Case(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.rand(5, 4) * 50, torch.tensor([0.9, 0.1, 0.7, 0.2, 0.6]), torch.tensor([0, 1, 0, 1, 2]))

    @staticmethod
    def probe_inputs():
        scores = ([0.1] * 5, [0.1, 0.9, 0.1, 0.1, 0.1], [0.9] * 5)
        return [(torch.rand(5, 4) * 50, torch.tensor(s), torch.tensor([0, 1, 0, 1, 2])) for s in scores]

    def forward(self, boxes, scores, classes):
        keep = scores > 0.5
        boxes, classes = boxes[keep], classes[keep]
        if boxes.numel() == 0:  # expect: EL101, fix exports
            return boxes
        offsets = classes.to(boxes) * (boxes.max() + 1)
        return boxes + offsets[:, None]
