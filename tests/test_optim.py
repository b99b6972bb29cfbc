"""gymnasium_solver/agents/optim.py against torch's own: our Adam, RMSprop and gradient clipping must give
torch.optim.Adam(fused=True)'s, torch.optim.RMSprop(foreach=True)'s and clip_grad_norm_'s exact bits (the drift gate's
env steps to solve depend on every one), and a state dict saved by one loads into the other (checkpoints written
before PPO's Adam and A2C's RMSprop were ours resume with them)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from gymnasium_solver.agents.optim import Adam, RMSprop, clip_grad_norm


def _net(seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))


def _loss(net: nn.Module, step: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(100 + step)
    x, y = torch.randn(32, 4, generator=g), torch.randn(32, 2, generator=g)
    return (net(x) - y).pow(2).mean() * 50  # large gradients: the clip acts


def _train(net: nn.Sequential, step_fn, clip_fn, steps: int, lrs: list[float]) -> list[torch.Tensor]:  # noqa: ANN001
    norms = []
    for i in range(steps):
        for p in net.parameters():
            p.grad = None
        _loss(net, i).backward()
        norms.append(clip_fn(list(net.parameters())))
        step_fn(lrs[i % len(lrs)])
    return norms


def test_adam_and_clipping_give_torchs_exact_weights_moments_and_norms() -> None:
    ours_net, torch_net = _net(), _net()
    ours = Adam(ours_net.parameters(), lr=3e-3, eps=1e-5)
    theirs = torch.optim.Adam(torch_net.parameters(), lr=3e-3, eps=1e-5, fused=True)
    lrs = [3e-3, 1e-3, 0.0, 5e-2]  # a schedule sets the group's lr before each step, as step_schedules does

    def ours_step(lr: float) -> None:
        ours.param_groups[0]["lr"] = lr
        ours.step()

    def theirs_step(lr: float) -> None:
        theirs.param_groups[0]["lr"] = lr
        theirs.step()

    ours_norms = _train(ours_net, ours_step, lambda ps: clip_grad_norm(ps, 0.5), 12, lrs)
    theirs_norms = _train(torch_net, theirs_step, lambda ps: nn.utils.clip_grad_norm_(ps, 0.5), 12, lrs)
    assert max(float(n) for n in theirs_norms) > 0.5  # the clip scaled gradients down at least once
    assert all(torch.equal(a, b) for a, b in zip(ours_norms, theirs_norms, strict=True))
    for a, b in zip(ours_net.parameters(), torch_net.parameters(), strict=True):
        assert torch.equal(a, b)
    mine, torchs = ours.state_dict(), theirs.state_dict()
    assert mine["param_groups"] == torchs["param_groups"]
    assert mine["state"].keys() == torchs["state"].keys()
    for i, moments in torchs["state"].items():
        assert moments.keys() == mine["state"][i].keys()
        assert all(torch.equal(v, mine["state"][i][k]) and v.dtype == mine["state"][i][k].dtype
                   for k, v in moments.items())


@pytest.mark.parametrize("direction", ["torch to ours", "ours to torch"])
def test_a_state_dict_of_either_loads_into_the_other_and_training_goes_on_identically(direction: str) -> None:
    saved_net, a_net, b_net = _net(), _net(), _net()
    first = (torch.optim.Adam(saved_net.parameters(), lr=1e-3, eps=1e-5, fused=True) if direction == "torch to ours"
             else Adam(saved_net.parameters(), lr=1e-3, eps=1e-5))
    _train(saved_net, lambda lr: first.step(), lambda ps: clip_grad_norm(ps, 0.5), 3, [1e-3])
    state = copy.deepcopy(first.state_dict())
    for net in (a_net, b_net):
        net.load_state_dict(saved_net.state_dict())
    a, b = Adam(a_net.parameters(), lr=9.0), torch.optim.Adam(b_net.parameters(), lr=9.0, fused=True)
    a.load_state_dict(state)
    b.load_state_dict(copy.deepcopy(state))  # torch's keeps the tensors it is given (ours copies them)
    assert a.param_groups[0]["lr"] == 1e-3 and a.param_groups[0]["eps"] == 1e-5  # the settings come with the state
    _train(a_net, lambda lr: a.step(), lambda ps: clip_grad_norm(ps, 0.5), 3, [1e-3])
    _train(b_net, lambda lr: b.step(), lambda ps: clip_grad_norm(ps, 0.5), 3, [1e-3])
    for x, y in zip(a_net.parameters(), b_net.parameters(), strict=True):
        assert torch.equal(x, y)
    assert float(a.state_dict()["state"][0]["step"]) == 6.0 and float(state["state"][0]["step"]) == 3.0


def test_a_parameter_without_a_gradient_is_left_alone_and_gets_no_state() -> None:
    net = _net()
    frozen = nn.Parameter(torch.ones(3))
    opt = Adam([*net.parameters(), frozen], lr=1e-2)
    _loss(net, 0).backward()
    opt.step()
    assert torch.equal(frozen, torch.ones(3)) and frozen not in opt.state
    assert sorted(opt.state_dict()["state"]) == [0, 1, 2, 3]
    opt.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_a_mismatched_state_dict_is_refused_in_a_sentence() -> None:
    opt = Adam(_net().parameters(), lr=1e-2)
    other = Adam(nn.Linear(2, 2).parameters(), lr=1e-2)
    with pytest.raises(ValueError, match="different number of parameter groups or parameters"):
        opt.load_state_dict(other.state_dict())


def test_rmsprop_gives_torchs_exact_weights_and_square_averages() -> None:
    """A2C's optimizer (SB3's settings: alpha 0.99, eps 1e-5) against torch's foreach RMSprop under a schedule."""
    ours_net, torch_net = _net(), _net()
    ours = RMSprop(ours_net.parameters(), lr=7e-4, alpha=0.99, eps=1e-5)
    theirs = torch.optim.RMSprop(torch_net.parameters(), lr=7e-4, alpha=0.99, eps=1e-5, foreach=True)
    lrs = [7e-4, 1e-3, 0.0, 5e-2]

    def stepper(opt):  # noqa: ANN001, ANN202
        def step(lr: float) -> None:
            opt.param_groups[0]["lr"] = lr
            opt.step()
        return step

    _train(ours_net, stepper(ours), lambda ps: clip_grad_norm(ps, 0.5), 12, lrs)
    _train(torch_net, stepper(theirs), lambda ps: nn.utils.clip_grad_norm_(ps, 0.5), 12, lrs)
    for a, b in zip(ours_net.parameters(), torch_net.parameters(), strict=True):
        assert torch.equal(a, b)
    mine, torchs = ours.state_dict(), theirs.state_dict()
    assert mine["param_groups"] == torchs["param_groups"]
    for i, state in torchs["state"].items():
        assert state.keys() == mine["state"][i].keys()
        assert all(torch.equal(v, mine["state"][i][k]) and v.dtype == mine["state"][i][k].dtype for k, v in state.items())


def test_an_rmsprop_state_dict_of_torchs_resumes_in_ours_identically() -> None:
    saved_net, a_net, b_net = _net(), _net(), _net()
    first = torch.optim.RMSprop(saved_net.parameters(), lr=1e-3, alpha=0.9, eps=1e-5, foreach=True)
    _train(saved_net, lambda lr: first.step(), lambda ps: clip_grad_norm(ps, 0.5), 3, [1e-3])
    state = copy.deepcopy(first.state_dict())
    for net in (a_net, b_net):
        net.load_state_dict(saved_net.state_dict())
    a = RMSprop(a_net.parameters(), lr=9.0)
    b = torch.optim.RMSprop(b_net.parameters(), lr=9.0, foreach=True)
    a.load_state_dict(state)
    b.load_state_dict(copy.deepcopy(state))
    assert a.param_groups[0]["alpha"] == 0.9 and a.param_groups[0]["lr"] == 1e-3  # the settings come with the state
    _train(a_net, lambda lr: a.step(), lambda ps: clip_grad_norm(ps, 0.5), 3, [1e-3])
    _train(b_net, lambda lr: b.step(), lambda ps: clip_grad_norm(ps, 0.5), 3, [1e-3])
    for x, y in zip(a_net.parameters(), b_net.parameters(), strict=True):
        assert torch.equal(x, y)
    with pytest.raises(ValueError, match="different number of parameter groups or parameters"):
        a.load_state_dict(RMSprop(nn.Linear(2, 2).parameters(), lr=1e-2).state_dict())
