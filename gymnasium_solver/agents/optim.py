"""Adam, RMSprop and gradient-norm clipping for our small networks, without torch.optim's per-call machinery.

``Adam`` runs what ``torch.optim.Adam(fused=True)`` runs (each step counter + 1, then one
``torch._fused_adam_`` kernel over every parameter with a gradient); ``RMSprop`` runs what
``torch.optim.RMSprop(foreach=True)`` runs without momentum, centring or weight decay (SB3's A2C
optimizer). Each keeps its state in torch's layout, so its ``state_dict`` loads into torch's optimizer
and torch's into it; ``clip_grad_norm`` runs ``torch.nn.utils.clip_grad_norm_``'s kernels. Same
kernels, same arguments, same bits (tests/test_optim.py holds each against torch's). Why (issue 23 item 4): torch.optim imports
torch._dynamo when its first optimizer is built (as long as importing torch itself, 1-2 s on our
2-core machine: more than a CartPole run trains), and wraps every step in a profiler scope, hooks,
dynamo guards and a grouping of tensors by device and dtype that cost more than the kernel does for
a 64-unit MLP, thousands of times a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

# The settings of torch.optim.Adam / RMSprop that ours take as they are (their state_dict carries every one).
_ADAM_FIXED: dict[str, Any] = {"weight_decay": 0, "amsgrad": False, "maximize": False, "foreach": None,
                               "capturable": False, "differentiable": False, "fused": True,
                               "decoupled_weight_decay": False}
_RMSPROP_FIXED: dict[str, Any] = {"momentum": 0, "centered": False, "weight_decay": 0, "capturable": False,
                                  "foreach": True, "maximize": False, "differentiable": False}


class _Optimizer:
    """What our optimizers share with torch.optim's: one ``param_groups`` entry (a schedule sets its ``lr``),
    ``state`` by parameter, ``zero_grad`` and ``state_dict`` in torch's layout."""

    name = ""
    moments: tuple[str, ...] = ()  # each parameter's state tensors, beside its step counter

    def __init__(self, params: Iterable[torch.Tensor], group: dict[str, Any]):
        group = {"params": list(params), **group}
        if not group["params"]:
            raise ValueError(f"{self.name} got an empty parameter list")
        devices = {(p.device, p.dtype) for p in group["params"]}
        if len(devices) != 1 or not group["params"][0].is_floating_point():
            raise ValueError(f"{self.name} takes floating-point parameters of one device and dtype, "
                             f"got {sorted(map(str, devices))}")
        self.param_groups = [group]
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    @property
    def params(self) -> list[torch.Tensor]:
        return self.param_groups[0]["params"]

    def _state(self, p: torch.Tensor) -> dict[str, torch.Tensor]:
        state = self.state.get(p)
        if state is None:  # created at a parameter's first step, as torch does
            state = self.state[p] = {"step": torch.zeros((), dtype=torch.float32, device=p.device)}
            for name in self.moments:
                state[name] = torch.zeros_like(p, memory_format=torch.preserve_format)
        return state

    def _stepping(self) -> tuple[list[torch.Tensor], list[torch.Tensor], list[dict[str, torch.Tensor]]]:
        """The parameters that have a gradient, their gradients, and their states (made at a first step)."""
        with_grads = [(p, p.grad) for p in self.params if p.grad is not None]
        return [p for p, _ in with_grads], [g for _, g in with_grads], [self._state(p) for p, _ in with_grads]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop the gradients (``set_to_none=False`` is not offered: nothing of ours needs zeroed tensors)."""
        if not set_to_none:
            raise ValueError(f"{self.name}.zero_grad sets gradients to None only")
        for p in self.params:
            p.grad = None

    def state_dict(self) -> dict[str, Any]:
        """torch.optim's layout: ``state`` by parameter index (the tensors themselves, as torch gives them),
        ``param_groups`` with the settings and the indices."""
        index = {id(p): i for i, p in enumerate(self.params)}
        group = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return {"state": {index[id(p)]: dict(s) for p, s in self.state.items()},
                "param_groups": [{**group, "params": list(range(len(self.params)))}]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take ``state_dict`` (ours or torch.optim's): the settings, and a copy of each state tensor cast to its
        parameter's device and dtype, the step counter to float32 (torch's rule)."""
        groups = state_dict["param_groups"]
        params = self.params
        if len(groups) != 1 or len(groups[0]["params"]) != len(params):
            raise ValueError("loaded state dict has a different number of parameter groups or parameters")
        self.param_groups = [{**self.param_groups[0], **{k: v for k, v in groups[0].items() if k != "params"},
                              "params": params}]
        self.state = {}
        for i, saved in state_dict["state"].items():
            p = params[int(i)]
            step = saved["step"]
            # Copies (torch's keeps the caller's tensors where no cast is needed): a step never writes into them.
            self.state[p] = {
                "step": (step.to(dtype=torch.float32, device=p.device, copy=True) if isinstance(step, torch.Tensor)
                         else torch.tensor(float(step), dtype=torch.float32, device=p.device)),
                **{name: saved[name].to(dtype=p.dtype, device=p.device, copy=True) for name in self.moments},
            }


class Adam(_Optimizer):
    """``torch.optim.Adam(params, lr, betas, eps, fused=True)``: ``param_groups`` (one group; a schedule sets
    its ``lr``), ``state``, ``step``, ``zero_grad``, ``state_dict`` and ``load_state_dict`` as torch's."""

    name = "Adam"
    moments = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Iterable[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, **_ADAM_FIXED})

    def step(self) -> None:
        """One Adam step of every parameter that has a gradient (torch's order: counters, then the kernel)."""
        params, grads, states = self._stepping()
        if not params:
            return
        group = self.param_groups[0]
        steps = [s["step"] for s in states]
        beta1, beta2 = group["betas"]
        with torch.no_grad():
            torch._foreach_add_(steps, 1)
            torch._fused_adam_(params, grads, [s["exp_avg"] for s in states],
                               [s["exp_avg_sq"] for s in states], [], steps, amsgrad=False, lr=group["lr"],
                               beta1=float(beta1), beta2=float(beta2), weight_decay=group["weight_decay"],
                               eps=group["eps"], maximize=False, grad_scale=None, found_inf=None)


class RMSprop(_Optimizer):
    """``torch.optim.RMSprop(params, lr, alpha, eps, foreach=True)`` (no momentum, not centred, no weight decay),
    with the same attributes as ``Adam`` above."""

    name = "RMSprop"
    moments = ("square_avg",)

    def __init__(self, params: Iterable[torch.Tensor], lr: float, alpha: float = 0.99, eps: float = 1e-8):
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, **_RMSPROP_FIXED})

    def step(self) -> None:
        """One RMSprop step of every parameter that has a gradient: torch's foreach kernels in torch's order
        (counters; square_avg = alpha * square_avg + (1 - alpha) * grad^2; param -= lr * grad / (sqrt + eps))."""
        params, grads, states = self._stepping()
        if not params:
            return
        group = self.param_groups[0]
        square_avgs = [s["square_avg"] for s in states]
        alpha = group["alpha"]
        with torch.no_grad():
            torch._foreach_add_([s["step"] for s in states], 1)
            torch._foreach_mul_(square_avgs, alpha)
            torch._foreach_addcmul_(square_avgs, grads, grads, value=1 - alpha)
            avg = torch._foreach_sqrt(square_avgs)
            torch._foreach_add_(avg, group["eps"])
            torch._foreach_addcdiv_(params, grads, avg, value=-group["lr"])


def clip_grad_norm(params: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """``torch.nn.utils.clip_grad_norm_(params, max_norm)`` for parameters of one device and dtype: the norm of
    the per-tensor norms, then every gradient times min(max_norm / (norm + 1e-6), 1), the same kernels."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    with torch.no_grad():
        total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
        torch._foreach_mul_(grads, torch.clamp(float(max_norm) / (total + 1e-6), max=1.0))
    return total


def part_grad_norms(parts: Sequence[Sequence[torch.Tensor]]) -> torch.Tensor:
    """The gradient L2 norm of each part's parameters (0 for a part without gradients), one tensor of
    ``len(parts)`` values; call it before ``clip_grad_norm``, which scales the gradients in place. The parts'
    norms add up to ``clip_grad_norm``'s total in squares when together they hold every parameter."""
    with torch.no_grad():
        norms = []
        for part in parts:
            grads = [p.grad for p in part if p.grad is not None]
            norms.append(torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
                         if grads else torch.tensor(0.0))
        return torch.stack(norms)


class GradParts:
    """``grad_norm_parts: true``: each part's gradient norm, measured before every clip (``measure``) and
    averaged over an update's gradient steps (``take``), as ``train/grad_norm`` is. ``parts`` maps each
    metrics.csv column to its parameters; a part without parameters (no critic, nothing shared) stays empty."""

    def __init__(self, parts: Mapping[str, Sequence[torch.Tensor]]):
        self.columns = list(parts)
        self._measured = [column for column in self.columns if parts[column]]
        self._parts = [parts[column] for column in self._measured]
        self._norms: list[torch.Tensor] = []

    def measure(self) -> None:
        self._norms.append(part_grad_norms(self._parts))

    def take(self) -> dict[str, float | None]:
        """The mean of each part's norms since the last ``take`` (None for all when nothing was measured)."""
        out: dict[str, float | None] = dict.fromkeys(self.columns)
        if self._norms and self._measured:
            out.update(zip(self._measured, torch.stack(self._norms).mean(0).tolist(), strict=True))
        self._norms = []
        return out
