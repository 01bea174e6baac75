"""Specs built right for any forward signature (issue 35): each module here exports with plain
torch.export when called right, so any failure is exportlens passing the arguments wrong."""

from __future__ import annotations

import pytest

from exportlens.exporter.core.report import Status

pytestmark = pytest.mark.slow  # real exports

MODELS = """
import dataclasses

import torch


class UNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 8)

    def forward(self, x, class_labels=None, timestep_cond=None, return_dict=True):
        if class_labels is not None or timestep_cond is not None:
            raise ValueError("only x was given")
        out = self.proj(x)
        return {"sample": out} if return_dict else (out,)


class Wrapper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(4, 8)

    def forward(self, *args, **kwargs):
        return self.inner(*args, **kwargs)


class Masked(torch.nn.Module):
    def forward(self, x, mask=None):
        return x if mask is None else x * mask


class KeywordOnly(torch.nn.Module):
    def forward(self, x, *, scale, bias=None):
        return x * scale if bias is None else x * scale + bias


class Summed(torch.nn.Module):
    def forward(self, *xs):
        return xs[0] + xs[1]


class Dicts(torch.nn.Module):
    def forward(self, batch):
        return batch["a"] + batch["pair"][0] * batch["pair"][1]
"""


def exported(project, table: str, name: str):
    project.write("models/nets.py", MODELS)
    project.write("pyproject.toml", f'[tool.exportlens.modules."models/nets.py:{name}"]\n{table}\n')
    module = project.module(name)
    assert module.status is Status.EXPORTED, [str(f) for f in module.findings]
    assert not module.errors
    return module.summary


def test_a_keyword_after_skipped_optional_parameters_is_passed_by_name(project):
    summary = exported(project, 'inputs = { x = "f32[batch, 4]", return_dict = false }', "UNet")
    assert summary.outputs == ("f32[batch, 8]",)  # the tuple: return_dict reached forward as False


def test_a_pass_through_wrapper_exports_with_a_dynamic_batch(project):
    summary = exported(project, 'inputs = { args = ["f32[batch, 4]"] }', "Wrapper")
    assert summary.outputs == ("f32[batch, 8]",)


def test_varargs_alone_take_their_array_by_position(project):
    summary = exported(project, 'inputs = { xs = ["f32[n, 4]", "f32[n, 4]"] }', "Summed")
    assert summary.outputs == ("f32[n, 4]",)


def test_a_pass_through_wrapper_passes_other_names_as_keywords(project):
    summary = exported(project, 'inputs = { kwargs = { input = "f32[3, 4]" } }', "Wrapper")
    assert summary.outputs == ("f32[3, 8]",)
    summary = exported(project, 'inputs = { input = "f32[3, 4]" }', "Wrapper")
    assert summary.outputs == ("f32[3, 8]",)


def test_a_dynamic_size_beside_a_gathered_keyword_is_refused_in_words(project):
    """torch 2.13 fails with an internal AssertionError there (pytorch/pytorch#150022): say so."""
    project.write("models/nets.py", MODELS)
    project.write(
        "pyproject.toml", '[tool.exportlens.modules."models/nets.py:Wrapper"]\ninputs = { input = "f32[batch, 4]" }\n'
    )
    module = project.module("Wrapper")
    (error,) = module.errors
    assert error.code == "EL404" and error.path == "pyproject.toml" and error.line == 1
    assert "**kwargs gathers 'input'" in error.message and "pytorch/pytorch#150022" in error.message
    assert "Traceback" not in error.message


def test_none_for_an_optional_mask(project):
    summary = exported(project, 'inputs = { x = "f32[batch, 4]", mask = "None" }', "Masked")
    assert summary.outputs == ("f32[batch, 4]",)


def test_keyword_only_arguments_are_passed_by_name(project):
    table = 'inputs = { x = "f32[batch, 4]", scale = 2.0, bias = "f32[batch, 4]" }'
    summary = exported(project, table, "KeywordOnly")
    assert summary.outputs == ("f32[batch, 4]",)


def test_a_dict_input_with_a_dynamic_dim(project):
    table = 'inputs = { batch = { a = "f32[n, 4]", pair = ["f32[n, 4]", "f32[n, 4]"] } }'
    summary = exported(project, table, "Dicts")
    assert summary.outputs == ("f32[n, 4]",)
