"""Adam and gradient-norm clipping for our small networks, without torch.optim's per-call machinery.

``Adam`` runs what ``torch.optim.Adam(fused=True)`` runs (each step counter + 1, then one
``torch._fused_adam_`` kernel over every parameter with a gradient) and keeps its state in torch's
layout, so its ``state_dict`` loads into torch's Adam and torch's into it; ``clip_grad_norm`` runs
``torch.nn.utils.clip_grad_norm_``'s kernels. Same kernels, same arguments, same bits
(tests/test_optim.py holds each against torch's). Why (issue 23 item 4): torch.optim imports
torch._dynamo when its first optimizer is built (as long as importing torch itself, 1-2 s on our
2-core machine: more than a CartPole run trains), and wraps every step in a profiler scope, hooks,
dynamo guards and a grouping of tensors by device and dtype that cost more than the kernel does for
a 64-unit MLP, thousands of times a run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

# torch.optim.Adam's settings that our Adam takes as they are (its state_dict carries every one of them).
_FIXED: dict[str, Any] = {"weight_decay": 0, "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                          "differentiable": False, "fused": True, "decoupled_weight_decay": False}


class Adam:
    """``torch.optim.Adam(params, lr, betas, eps, fused=True)``: ``param_groups`` (one group; a schedule sets
    its ``lr``), ``state``, ``step``, ``zero_grad``, ``state_dict`` and ``load_state_dict`` as torch's."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        group: dict[str, Any] = {"params": list(params), "lr": lr, "betas": betas, "eps": eps, **_FIXED}
        if not group["params"]:
            raise ValueError("Adam got an empty parameter list")
        devices = {(p.device, p.dtype) for p in group["params"]}
        if len(devices) != 1 or not group["params"][0].is_floating_point():
            raise ValueError(f"Adam takes floating-point parameters of one device and dtype, got {sorted(map(str, devices))}")
        self.param_groups = [group]
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    @property
    def params(self) -> list[torch.Tensor]:
        return self.param_groups[0]["params"]

    def _state(self, p: torch.Tensor) -> dict[str, torch.Tensor]:
        state = self.state.get(p)
        if state is None:  # created at a parameter's first step, as torch does
            state = self.state[p] = {
                "step": torch.zeros((), dtype=torch.float32, device=p.device),
                "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
            }
        return state

    def step(self) -> None:
        """One Adam step of every parameter that has a gradient (torch's order: counters, then the kernel)."""
        group = self.param_groups[0]
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        states = [self._state(p) for p in params]
        steps = [s["step"] for s in states]
        beta1, beta2 = group["betas"]
        with torch.no_grad():
            torch._foreach_add_(steps, 1)
            torch._fused_adam_(params, [p.grad for p in params], [s["exp_avg"] for s in states],
                               [s["exp_avg_sq"] for s in states], [], steps, amsgrad=False, lr=group["lr"],
                               beta1=float(beta1), beta2=float(beta2), weight_decay=group["weight_decay"],
                               eps=group["eps"], maximize=False, grad_scale=None, found_inf=None)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop the gradients (``set_to_none=False`` is not offered: nothing of ours needs zeroed tensors)."""
        if not set_to_none:
            raise ValueError("Adam.zero_grad sets gradients to None only")
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
        """Take ``state_dict`` (ours or torch.optim.Adam's): the settings, and a copy of each moment cast to its
        parameter's device and dtype, the step counter to float32 (torch's rule for fused Adam)."""
        groups = state_dict["param_groups"]
        params = self.params
        if len(groups) != 1 or len(groups[0]["params"]) != len(params):
            raise ValueError("loaded state dict has a different number of parameter groups or parameters")
        self.param_groups = [{"params": params, "lr": self.param_groups[0]["lr"], "betas": (0.9, 0.999),
                              "eps": 1e-8, **_FIXED, **{k: v for k, v in groups[0].items() if k != "params"}}]
        self.state = {}
        for i, saved in state_dict["state"].items():
            p = params[int(i)]
            step = saved["step"]
            # Copies (torch's keeps the caller's tensors where no cast is needed): a step never writes into them.
            self.state[p] = {
                "step": (step.to(dtype=torch.float32, device=p.device, copy=True) if isinstance(step, torch.Tensor)
                         else torch.tensor(float(step), dtype=torch.float32, device=p.device)),
                "exp_avg": saved["exp_avg"].to(dtype=p.dtype, device=p.device, copy=True),
                "exp_avg_sq": saved["exp_avg_sq"].to(dtype=p.dtype, device=p.device, copy=True),
            }


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
