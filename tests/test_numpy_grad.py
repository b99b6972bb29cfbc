"""The numpy forward and backward pass of PPO's and A2C's updates (gymnasium_solver/agents/numpy_grad.py) against
torch's autograd: the same network outputs, the same gradients, the same updates, to float32 rounding."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

from gymnasium_solver.agents import numpy_grad
from gymnasium_solver.agents.a2c import A2C
from gymnasium_solver.agents.common import ActorCritic, Batch, Rollout
from gymnasium_solver.agents.optim import clip_grad_norm
from gymnasium_solver.agents.ppo import PPO
from gymnasium_solver.config import resolve_config
from gymnasium_solver.envs import SpaceSpec


@pytest.fixture(autouse=True)
def _one_thread() -> Iterator[None]:
    """One torch and BLAS thread, as training sets them: on a loaded 2-core machine two threads on products of a few
    hundred rows spin-wait on each other (a 44-step update took 30 s instead of 0.1 s beside other work)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(limits=1, user_api="blas"):
        yield
    torch.set_num_threads(threads)


NETWORKS = [  # (overrides, obs_dim, n_actions)
    (["hidden_sizes=[64,64]"], 4, 2),
    (["hidden_sizes=[32]", "activation=relu"], 8, 5),
    (["hidden_sizes=[16,24,8]", "shared_network=true"], 3, 3),
    (["hidden_sizes=[64,64]", "shared_network=true", "activation=relu"], 6, 4),
]


def _policy(overrides: list[str], obs_dim: int, n_actions: int) -> ActorCritic:
    cfg = resolve_config("CartPole-v1:ppo", overrides)
    torch.manual_seed(1)
    policy = ActorCritic(SpaceSpec(obs_dim, (obs_dim,), True, n_actions, None, None), cfg, with_critic=True)
    with torch.no_grad():  # away from the initialisation's small policy head, so every term carries weight
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return policy


@pytest.mark.parametrize(("overrides", "obs_dim", "n_actions"), NETWORKS)
def test_the_forward_pass_and_every_parameters_gradient_equal_autograds(overrides: list[str], obs_dim: int,
                                                                        n_actions: int) -> None:
    policy = _policy(overrides, obs_dim, n_actions)
    rng = np.random.default_rng(0)
    obs = rng.standard_normal((300, obs_dim)).astype(np.float32)
    d_logits = rng.standard_normal((300, n_actions)).astype(np.float32)
    d_values = rng.standard_normal(300).astype(np.float32)
    net = policy.numpy_net()
    assert net is not None
    tape = net.forward(obs)
    _, logits, values = policy._heads(torch.from_numpy(obs))
    assert values is not None
    np.testing.assert_allclose(tape.logits, logits.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tape.values, values.detach().numpy(), rtol=1e-5, atol=1e-5)
    ours = net.backward(tape, d_logits, d_values)
    assert [p.grad.data_ptr() for p in _grad_order(policy)] == [g.ctypes.data for g in ours]  # no copies
    mine = {name: p.grad.clone() for name, p in policy.named_parameters()}
    policy.zero_grad()
    ((logits * torch.from_numpy(d_logits)).sum() + (values * torch.from_numpy(d_values)).sum()).backward()
    for name, p in policy.named_parameters():
        scale = float(p.grad.abs().max())
        assert scale > 0, name  # every parameter is exercised
        torch.testing.assert_close(mine[name], p.grad, rtol=1e-4, atol=1e-5 * scale, msg=name)


def _grad_order(policy: ActorCritic) -> list[torch.Tensor]:
    """The parameters in the order NumpyActorCritic.backward returns their gradients."""
    bodies = [policy.actor_body] + ([] if policy.critic_body is None else [policy.critic_body])
    heads = [policy.actor_head, policy.value_head]
    return [p for body in bodies for p in body.parameters()] + [p for head in heads for p in head.parameters()]


def test_the_categorical_log_probs_entropy_and_logit_gradient_equal_autograds() -> None:
    rng = np.random.default_rng(1)
    logits = (3 * rng.standard_normal((200, 4))).astype(np.float32)
    actions = rng.integers(0, 4, 200)
    d_log_probs = rng.standard_normal(200).astype(np.float32)
    dist = numpy_grad.categorical(logits, actions)
    ours = numpy_grad.categorical_logit_grad(dist, actions, d_log_probs, 0.37)
    z = torch.from_numpy(logits).requires_grad_()
    logp = torch.log_softmax(z, -1)
    log_probs = logp.gather(1, torch.from_numpy(actions)[:, None])[:, 0]
    entropy = -(logp.exp() * logp).sum(-1)
    np.testing.assert_allclose(dist.log_probs, log_probs.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.entropy, entropy.detach().numpy(), rtol=1e-5, atol=1e-6)
    ((log_probs * torch.from_numpy(d_log_probs)).sum() + 0.37 * entropy.sum()).backward()
    assert z.grad is not None
    np.testing.assert_allclose(ours, z.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_the_numpy_gradient_clip_is_torchs() -> None:
    rng = np.random.default_rng(2)
    for max_norm in (0.1, 1e9):
        grads = [rng.standard_normal(shape).astype(np.float32) for shape in ((64, 4), (64,), (2, 64))]
        tensors = [torch.zeros(g.shape, requires_grad=True) for g in grads]
        for t, g in zip(tensors, grads, strict=True):
            t.grad = torch.from_numpy(g.copy())
        norm = numpy_grad.clip_grad_norm(grads, max_norm)
        assert norm == pytest.approx(float(clip_grad_norm(tensors, max_norm)), rel=1e-6)
        for t, g in zip(tensors, grads, strict=True):
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-6)


def _ppo_pair(overrides: list[str]) -> tuple[PPO, PPO]:
    cfg = resolve_config("CartPole-v1:ppo", overrides)
    spec = SpaceSpec(4, (4,), True, 2, None, None)
    agents = []
    for _ in range(2):
        torch.manual_seed(0)
        agents.append(PPO(cfg, spec))
    agents[1].policy.numpy_net = lambda: None  # type: ignore[method-assign] - autograd's path
    assert agents[0].policy.numpy_net() is not None
    return agents[0], agents[1]


def _batch(agent: PPO, n: int, seed: int, drift: tuple[float, float]) -> Batch:
    """n CartPole-shaped samples scored by ``agent``'s policy, their stored log-probs and values moved by
    ``drift`` (standard deviations), random advantages and returns."""
    rng = np.random.default_rng(seed)
    obs = torch.from_numpy(rng.standard_normal((n, 4)).astype(np.float32))
    actions = torch.from_numpy(rng.integers(0, 2, n))
    with torch.no_grad():
        ev = agent.policy.evaluate(obs, actions)
    assert ev.values is not None
    return Batch(obs, actions, ev.log_probs + drift[0] * torch.randn(n), ev.values + drift[1] * torch.randn(n),
                 torch.randn(n), torch.randn(n), 0.0)


@pytest.mark.parametrize("overrides", [
    [],
    ["clip_range_vf=0.1", "ent_coef=0.02", "normalize_advantages=false", "vf_coef=0.7", "max_grad_norm=0.05"],
    ["shared_network=true", "activation=relu", "batch_size=300", "n_epochs=3"],
])
def test_a_ppo_update_through_numpy_moves_the_weights_as_autograds(overrides: list[str]) -> None:
    ours, autograd = _ppo_pair(overrides)
    batch = _batch(ours, 2048, seed=3, drift=(0.05, 0.3))  # the stored log-probs and values off the policy's
    for progress in (0.1, 0.5):
        torch.manual_seed(7)
        a = ours.update(batch, progress)
        torch.manual_seed(7)
        b = autograd.update(batch, progress)
        assert a.epochs_completed == b.epochs_completed
        for field in ("policy_loss", "value_loss", "entropy", "grad_norm", "approx_kl", "clip_fraction"):
            assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-3, abs=1e-6), field
    for (name, p), q in zip(ours.policy.named_parameters(), autograd.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=name)
        assert not torch.equal(p, q) or name.endswith("bias")  # the paths really differ (else the test is empty)


def test_the_target_kl_stop_is_the_same_on_both_paths() -> None:
    ours, autograd = _ppo_pair(["target_kl=0.001", "n_epochs=10"])
    batch = _batch(ours, 1024, seed=4, drift=(0.0, 0.0))
    torch.manual_seed(5)
    a = ours.update(batch, 0.0)
    torch.manual_seed(5)
    b = autograd.update(batch, 0.0)
    assert 0 < a.epochs_completed == b.epochs_completed < 10
    assert a.approx_kl == pytest.approx(b.approx_kl, rel=1e-3)


@pytest.mark.parametrize("all_valid", [True, False])
def test_an_a2c_update_through_numpy_moves_the_weights_as_autograds(all_valid: bool) -> None:
    """One pass for targets and update when every step is valid; a second forward of the valid rows when not."""
    cfg = resolve_config("CartPole-v1:a2c", ["ent_coef=0.05", "normalize_advantages=true", "max_grad_norm=0.5"])
    spec = SpaceSpec(4, (4,), True, 2, None, None)
    agents = []
    for _ in range(2):
        torch.manual_seed(0)
        agents.append(A2C(cfg, spec))
    ours, autograd = agents
    autograd.policy.numpy_net = lambda: None  # type: ignore[method-assign]
    rng = np.random.default_rng(6)
    t, n = 8, 4
    valid = np.ones((t, n), bool)
    if not all_valid:
        valid[3, 1] = False
    for _ in range(3):
        rollout = Rollout(rng.standard_normal((t, n, 4)).astype(np.float32), rng.integers(0, 2, (t, n)),
                          rng.standard_normal((t, n)).astype(np.float32), rng.random((t, n)) < 0.1,
                          np.zeros((t, n), bool), valid, rng.standard_normal((n, 4)).astype(np.float32), t * n)
        a = ours.update(ours.targets(rollout), 0.2)
        b = autograd.update(autograd.targets(rollout), 0.2)
        for field in ("policy_loss", "value_loss", "entropy", "grad_norm"):
            assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-4, abs=1e-6), field
    for (name, p), q in zip(ours.policy.named_parameters(), autograd.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=name)


BOX = SpaceSpec(3, (3,), False, 2, np.array([-2.0, -1.0], np.float32), np.array([2.0, 1.0], np.float32))


def test_the_gaussian_log_probs_entropy_and_gradients_equal_autograds() -> None:
    """A diagonal Gaussian with a learned log std: d loss / d means and d loss / d log std against autograd of the
    ActorCritic's own log-prob and entropy (agents/common.py)."""
    cfg = resolve_config("Pendulum-v1:ppo", ["use_sde=false", "log_std_init=-0.3"])
    policy = ActorCritic(BOX, cfg, with_critic=True)
    rng = np.random.default_rng(8)
    mean = rng.standard_normal((150, 2)).astype(np.float32)
    actions = (mean + rng.standard_normal((150, 2))).astype(np.float32)
    d_log_probs = rng.standard_normal(150).astype(np.float32)
    assert policy.log_std is not None
    dist = numpy_grad.gaussian(mean, policy.log_std.detach().numpy(), actions)
    d_mean, d_log_std = numpy_grad.gaussian_grads(dist, d_log_probs, 0.21)
    out = torch.from_numpy(mean).requires_grad_()
    log_probs, entropy = policy._log_prob_entropy(out, torch.from_numpy(actions), out)
    np.testing.assert_allclose(dist.log_probs, log_probs.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dist.entropy, entropy.detach().numpy(), rtol=1e-6)
    ((log_probs * torch.from_numpy(d_log_probs)).sum() + 0.21 * entropy.sum()).backward()
    assert out.grad is not None and policy.log_std.grad is not None
    np.testing.assert_allclose(d_mean, out.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(d_log_std, policy.log_std.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_a_gaussian_policys_update_through_numpy_moves_the_weights_as_autograds(algo: str) -> None:
    """Box actions (unclipped samples stored), a learned log std and an entropy bonus: PPO's and A2C's updates on
    both paths from the same start."""
    cfg = resolve_config(f"Pendulum-v1:{algo}" if algo == "ppo" else "CartPole-v1:a2c",
                         ["use_sde=false", "ent_coef=0.01"] if algo == "ppo" else ["ent_coef=0.01"])
    agents = []
    for _ in range(2):
        torch.manual_seed(0)
        agents.append(PPO(cfg, BOX) if algo == "ppo" else A2C(cfg, BOX))  # type: ignore[arg-type]
    ours, autograd = agents
    autograd.policy.numpy_net = lambda: None  # type: ignore[method-assign]
    assert ours.policy.numpy_net() is not None
    rng = np.random.default_rng(9)
    t, n = 16, 4
    for _ in range(3):
        mean = rng.standard_normal((t, n, 2)).astype(np.float32)
        rollout = Rollout(rng.standard_normal((t, n, 3)).astype(np.float32), mean,
                          rng.standard_normal((t, n)).astype(np.float32), rng.random((t, n)) < 0.1,
                          np.zeros((t, n), bool), np.ones((t, n), bool), rng.standard_normal((n, 3)).astype(np.float32),
                          t * n)
        torch.manual_seed(3)
        a = ours.update(ours.targets(rollout), 0.2)
        torch.manual_seed(3)
        b = autograd.update(autograd.targets(rollout), 0.2)
        for field in ("policy_loss", "value_loss", "entropy", "grad_norm", "action_std"):
            assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-3, abs=1e-6), field
    for (name, p), q in zip(ours.policy.named_parameters(), autograd.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=name)
    assert not torch.equal(ours.policy.log_std, torch.full_like(ours.policy.log_std, float(cfg.log_std_init)))


def test_pixel_and_gsde_policies_keep_autograd() -> None:
    assert ActorCritic(BOX, resolve_config("Pendulum-v1:ppo", ["use_sde=true"]), with_critic=True).numpy_net() is None
    assert ActorCritic(BOX, resolve_config("Pendulum-v1:ppo", ["use_sde=false"]), with_critic=True).numpy_net()
    cfg = resolve_config("CartPole-v1:ppo")
    assert ActorCritic(SpaceSpec(4, (4,), True, 2, None, None), cfg, with_critic=False).numpy_net() is None
    kind = SimpleNamespace(pixels=True, discrete=True, sde=False)
    assert numpy_grad.numpy_trainable(kind, []) is False
    kind.pixels = False
    assert numpy_grad.numpy_trainable(kind, [torch.zeros(2)]) is True
    assert numpy_grad.numpy_trainable(kind, [torch.zeros(2, dtype=torch.float64)]) is False


@pytest.mark.parametrize(("hidden", "activation"), [([64, 64], "relu"), ([32], "tanh"), ([16, 8, 12], "relu")])
def test_a_q_networks_forward_and_gradients_equal_autograds(hidden: list[int], activation: str) -> None:
    from gymnasium_solver.agents.dqn import QNetwork

    cfg = resolve_config("CartPole-v1:dqn", [f"hidden_sizes={hidden}".replace(" ", ""), f"activation={activation}"])
    torch.manual_seed(2)
    q = QNetwork(SpaceSpec(5, (5,), True, 3, None, None), cfg)
    rng = np.random.default_rng(7)
    obs = rng.standard_normal((100, 5)).astype(np.float32)
    d_out = rng.standard_normal((100, 3)).astype(np.float32)
    net = q.numpy_net()
    assert net is not None
    acts = net.forward(obs)
    out = q(torch.from_numpy(obs))
    np.testing.assert_allclose(acts[-1], out.detach().numpy(), rtol=1e-5, atol=1e-5)
    ours = net.backward(acts, d_out)
    assert [p.grad.data_ptr() for p in q.parameters()] == [g.ctypes.data for g in ours]
    mine = [p.grad.clone() for p in q.parameters()]
    q.zero_grad()
    (out * torch.from_numpy(d_out)).sum().backward()
    for (name, p), g in zip(q.named_parameters(), mine, strict=True):
        scale = float(p.grad.abs().max())
        assert scale > 0, name
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5 * scale, msg=name)
