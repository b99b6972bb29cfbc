"""The networks our agents build: MLPs and the Nature CNN in torch, and the MLP's forward pass in numpy on
views of the torch weights (acting on the few observations of one env step without torch's dispatch)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 - torch's own convention


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


def torch_mlp(layers: list[tuple[torch.Tensor, torch.Tensor]], activation: str, x: torch.Tensor) -> torch.Tensor:
    """``mlp(...)(x)`` on its layers' parameters: the same kernels (F.linear, torch.tanh / torch.relu, what
    nn.Linear, nn.Tanh and nn.ReLU call) without nn.Module's call machinery, which costs about as much as a
    64-unit layer's kernel, several times per gradient step."""
    act = torch.tanh if activation == "tanh" else torch.relu
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
