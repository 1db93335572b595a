"""The draws of the trial that takes its inputs from the problem's second distribution
(docs/problem_format.md, [second_distribution]): what a normal, uniform or integer draw becomes, as
fill functions with the signatures of counter_fill's and generator_fill's, so make_inputs runs
unchanged. An answer that assumes the usual values (a closed-form result, a clamp, a fixed scale)
fails on them, while the problem's maths still holds: where it depends on a range, the draws keep
their range and change their shape."""

import counter_fill
import torch

# heavy_tailed: each normal value times (1 - u)^(-1/3), a Pareto scale of tail index 3 (finite
# variance, a few values per million beyond 50 standard deviations), capped at 100 standard
# deviations so no value leaves a half-precision range.
_TAIL = 1.0 / 3.0
_MIN_ONE_LESS_U = 100.0 ** -3


def _second_key(key):
    """The key of a draw's second stream (the Pareto scale, the skew), apart from its first."""
    return counter_fill.stream_key(key, "second_distribution")


def _scratch(out, dtype=torch.float32):
    return torch.empty(tuple(out.shape), dtype=dtype, device=out.device)


class Fills:
    """The fill functions of the trial that draws from the second distribution. `usual` is the
    module the trial draws with otherwise (counter_fill or generator_fill), `change` the plan's
    {"normal": ..., "uniform": ..., "integers": ...}."""

    def __init__(self, usual, change):
        self._usual = usual
        self._normal = change.get("normal", "same")
        self._uniform = change.get("uniform", "same")
        self._integers = change.get("integers", "same")

    def fill_normal(self, out, key, mean=0.0, std=1.0):
        if self._normal == "shifted_scaled":
            return self._usual.fill_normal(out, key, mean + std, 4.0 * std)
        if self._normal != "heavy_tailed":
            return self._usual.fill_normal(out, key, mean, std)
        z = self._usual.fill_normal(_scratch(out), key)
        u = self._usual.fill_uniform(_scratch(out), _second_key(key))
        z.mul_((1.0 - u).clamp_min_(_MIN_ONE_LESS_U).pow_(-_TAIL))
        out.copy_(z.mul_(std).add_(mean))
        return out

    def _skewed_unit(self, out, key, dtype=torch.float32):
        """Values in [0, 1) with density falling towards 1: u^3, most of them near 0."""
        return self._usual.fill_uniform(_scratch(out, dtype), key).pow_(3)

    def fill_uniform(self, out, key, low=0.0, high=1.0):
        if self._uniform != "skewed":
            return self._usual.fill_uniform(out, key, low, high)
        out.copy_(self._skewed_unit(out, key).mul_(high - low).add_(low))
        return out

    def fill_integers(self, out, key, low, high):
        if self._integers != "skewed":
            return self._usual.fill_integers(out, key, low, high)
        low, high = int(low), int(high)
        if high <= low:
            raise ValueError(f"integers need low < high, got [{low}, {high})")
        v = self._skewed_unit(out, key, torch.float64).mul_(high - low).floor_().add_(low).clamp_(max=high - 1)
        out.copy_(v)
        return out


def fills(usual, change):
    """`usual` where the trial draws as usual (change None), else the second distribution's fills."""
    return usual if change is None else Fills(usual, change)
