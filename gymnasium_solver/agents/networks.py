"""The networks our agents build: MLPs and the Nature CNN in torch, and the MLP's forward pass in numpy on
views of the torch weights (acting on the few observations of one env step without torch's dispatch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from torch import nn
from torch.nn import functional as F  # noqa: N812 - torch's own convention


def limit_threads(threads: int) -> None:
    """torch's intra-op threads and numpy's BLAS threads (the OpenBLAS of numpy and scipy, through threadpoolctl) to
    ``threads`` (config ``torch_threads``) for the rest of the process. Left to itself OpenBLAS splits a product of a
    few rows by a wide layer over every core and waits for each: the numpy forward of the RL Zoo's 256x256
    HalfCheetah policy on 10 evaluation envs took 11.7 ms on this 2-core machine's default threads against 0.13 ms
    on one, at load 2.6 (its evaluations 90% of the run). The small presets' products run on one thread either way."""
    torch.set_num_threads(threads)
    threadpool_limits(limits=threads, user_api="blas")


def numpy_views(linears: list[nn.Linear]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(weight, bias) of each layer as numpy views of the parameters: optimizers update them in place,
    so the views stay current (a load_state_dict with assign=True needs new ones)."""
    return [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in linears]


def numpy_mlp(layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
              x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An MLP (hidden layers with ``activation``, then a linear head) in numpy: (last hidden, output).
    For the few observations of one env step this is several times faster than torch's dispatch."""
    h = x
    for weight, bias in layers[:-1]:
        h = h @ weight.T + bias
        h = np.tanh(h) if activation == "tanh" else np.maximum(h, 0.0)
    weight, bias = layers[-1]
    return h, h @ weight.T + bias


def linear_params(modules: nn.Module) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(weight, bias) of each nn.Linear in ``modules``, in order: the parameters themselves (optimizers update
    them in place; a load_state_dict with assign=True needs new ones)."""
    return [(m.weight, m.bias) for m in modules.modules() if isinstance(m, nn.Linear)]


class _NumpyTanh(torch.autograd.Function):
    """tanh with numpy's forward and torch's own backward kernel (``tanh_backward``, 1 - y^2 times the
    gradient, from the saved output as torch.tanh's autograd does)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.from_numpy(np.tanh(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


def tanh(x: torch.Tensor) -> torch.Tensor:
    """``torch.tanh(x)``, with numpy's forward for a large enough CPU float tensor. torch 2.13's CPU tanh kernel
    takes about 3.5 ns an element here (AVX512 and AVX2 dispatch alike: 110-140 us for a 512 x 64 minibatch's
    hidden layer, a fifth of a CartPole PPO update's CPU time, more than its matrix products), numpy's about
    0.5 ns; the two agree to 1 ulp (numpy's is what the numpy forward acting in the collector computes). The
    autograd Function costs about 40 us of Python a gradient step, so numpy takes over from _NUMPY_TANH_GRAD
    elements under autograd and from _NUMPY_TANH_NO_GRAD without it (bench/bench_tanh.py measures both and
    prints the crossover). Other devices and dtypes keep torch's kernel."""
    if x.device.type != "cpu" or x.dtype not in _NUMPY_FLOATS:
        return torch.tanh(x)
    if x.requires_grad and torch.is_grad_enabled():
        return _NumpyTanh.apply(x) if x.numel() >= _NUMPY_TANH_GRAD else torch.tanh(x)
    return torch.from_numpy(np.tanh(x.detach().numpy())) if x.numel() >= _NUMPY_TANH_NO_GRAD else torch.tanh(x)


_NUMPY_FLOATS = (torch.float32, torch.float64)
_NUMPY_TANH_GRAD = 16_384  # 256 x 64: forward and backward as fast as torch's there, faster above
_NUMPY_TANH_NO_GRAD = 2_048  # 32 x 64


def torch_mlp(layers: list[tuple[torch.Tensor, torch.Tensor]], activation: str, x: torch.Tensor) -> torch.Tensor:
    """``mlp(...)(x)`` on its layers' parameters: the kernels nn.Linear and nn.ReLU call (F.linear, torch.relu)
    and our ``tanh`` for nn.Tanh, without nn.Module's call machinery, which costs about as much as a 64-unit
    layer's kernel, several times per gradient step."""
    act = tanh if activation == "tanh" else torch.relu
    for weight, bias in layers:
        x = act(F.linear(x, weight, bias))
    return x


def mlp(sizes: list[int], activation: str) -> nn.Sequential:
    act: type[nn.Module] = nn.Tanh if activation == "tanh" else nn.ReLU
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers)


class _ScalePixels(nn.Module):
    """uint8 pixels to floats in [0, 1], inside the network: the rollout stores uint8 (4x less memory)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float() / 255.0


def nature_cnn(in_channels: int, height: int, width: int) -> nn.Sequential:
    """The Nature DQN trunk (Mnih et al. 2015, https://doi.org/10.1038/nature14236) as SB3's
    NatureCNN and CleanRL's ppo_atari use it: 3 convolutions, then a 512-unit ReLU layer."""
    convs = nn.Sequential(
        _ScalePixels(),
        nn.Conv2d(in_channels, 32, 8, stride=4), nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
        nn.Flatten(),
    )
    with torch.no_grad():
        n_flat = int(convs(torch.zeros(1, in_channels, height, width, dtype=torch.uint8)).shape[1])
    return nn.Sequential(*convs, nn.Linear(n_flat, 512), nn.ReLU())


def init_linear(layer: nn.Linear | nn.Conv2d, gain: float) -> None:
    # Orthogonal init with small policy-head gain, as in the PPO implementation details study
    # (https://iclr-blog-track.github.io/2022/03/25/ppo-implementation-details/, detail 2).
    nn.init.orthogonal_(layer.weight, gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
