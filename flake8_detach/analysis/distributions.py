"""torch.distributions objects: what their draws and their densities carry (torch 2.13).

`Categorical(probs).sample()` runs under `torch.no_grad()` inside the library, so an action drawn
from a policy's distribution never requires grad, however the probabilities were computed; its
`log_prob(action)`, `entropy()`, `rsample()` and its parameters (`probs`, `mean`, `loc`) carry the
grad of what the distribution was built from. A draw lives where the parameters live.
"""

from __future__ import annotations

from dataclasses import dataclass

from .values import EMPTY, Flag, Value, passed_tensors

# Methods whose result is computed from the parameters (with their grad), and the ones that draw
# without it; attributes that are parameters or computed from them.
DIFFERENTIABLE_METHODS = frozenset({"rsample", "log_prob", "entropy", "cdf", "icdf", "perplexity"})
DRAWING_METHODS = frozenset({"sample", "sample_n", "enumerate_support"})
PARAMETER_ATTRIBUTES = frozenset({"probs", "logits", "mean", "mode", "stddev", "variance", "loc", "scale",
                                  "concentration", "rate", "covariance_matrix", "scale_tril", "precision_matrix"})


@dataclass(frozen=True)
class Distribution:
    """A distribution built from `parameters` (the join of the tensors given to its constructor)."""

    parameters: Value

    def method(self, name: str, arguments: list[Value]) -> Value:
        if name in DRAWING_METHODS:
            return Value(Flag.TENSOR).with_device_of(self.parameters)
        if name in DIFFERENTIABLE_METHODS:
            return self.parameters.merge(passed_tensors(arguments)).with_flags(add=Flag.TENSOR)
        return EMPTY

    def attribute(self, name: str) -> Value | None:
        return self.parameters.with_flags(add=Flag.TENSOR) if name in PARAMETER_ATTRIBUTES else None


def built(arguments: list[Value]) -> Value:
    """The value of `torch.distributions.X(...)`: no tensor itself, its parameters kept."""
    return Value(Flag.NOT_TENSOR, callee=Distribution(passed_tensors(arguments)))
