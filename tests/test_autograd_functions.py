"""Custom autograd functions (`torch.autograd.Function` subclasses): autograd calls `forward` and
`backward` with grad off, gives `backward` one gradient per output, and keeps in the context's
`saved_tensors` what `save_for_backward` was given (semantics.AUTOGRAD_FUNCTION_BASES). The
library facts are checked on the installed torch below."""

from __future__ import annotations

import pytest
import torch

from flake8_detach.engine import check_source


def codes(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source)]


STATIC = """\
import torch


class Cholesky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        l = torch.linalg.cholesky(a)
        ctx.save_for_backward(l)
        print(a.numpy(), a.cpu().detach())
        return l

    @staticmethod
    def backward(ctx, grad_output):
        l, = ctx.saved_tensors
        print(grad_output.numpy())
        return l.data.new(l.size(0)).fill_(0.5).diag() * grad_output
"""

OLD_STYLE = """\
import torch
from torch.autograd import Function


class Scale(Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * 2

    def backward(self, grad):
        x, = self.saved_tensors
        return grad * 2 + x.data * 0
"""


def test_saved_tensors_are_tensors_and_grad_is_off_in_both_methods() -> None:
    # Only the `.data` of a saved tensor: `a.numpy()`, `a.cpu().detach()` and `grad_output.numpy()`
    # run with grad off, so none raises or records anything.
    assert codes(STATIC) == [(16, "DET103")]


def test_an_old_style_function_names_its_context_self() -> None:
    assert codes(OLD_STYLE) == [(12, "DET103")]


def test_a_backward_that_builds_a_higher_order_graph_runs_with_grad_on() -> None:
    source = STATIC.replace("        print(grad_output.numpy())\n", "        print(l.cpu().detach())\n") + (
        "x = torch.eye(2, requires_grad=True)\n"
        "torch.autograd.grad(Cholesky.apply(x).sum(), x, create_graph=True)\n")
    assert (15, "DET102") in codes(source)  # the saved tensor may require grad, and grad is on there


def test_a_plain_class_with_the_same_methods_is_not_one() -> None:
    plain = STATIC.replace("(torch.autograd.Function)", "")
    assert (16, "DET103") not in codes(plain)


def test_the_library_facts() -> None:
    seen: dict[str, object] = {}

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward grad"] = torch.is_grad_enabled()
            seen["input numpy"] = x.numpy().tolist()  # requires grad, but grad is off: no error
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            seen["backward grad"] = torch.is_grad_enabled()
            seen["gradient requires grad"] = grad.requires_grad
            seen["saved"] = type(ctx.saved_tensors), type(ctx.saved_tensors[0])
            return grad * 2

    x = torch.ones(2, requires_grad=True)
    Probe.apply(x).sum().backward()
    assert seen == {"forward grad": False, "input numpy": [1.0, 1.0], "backward grad": False,
                    "gradient requires grad": False, "saved": (tuple, torch.Tensor)}
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()  # the same tensor outside, with grad on
