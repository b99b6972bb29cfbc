"""Render the performance figures of README.md and docs/ from bench/results/*.json (nobody types one).

Each figure sits between marker comments, ``<!-- generated: NAME -->`` and ``<!-- end generated -->``;
this script replaces what is between them with what RENDERERS[NAME] renders from the results files,
the command, commit, machine, library versions and load included. A hand edit inside a block is
undone by the next run and fails tests/test_bench_results.py.

    .venv/bin/python bench/render_tables.py           # rewrite the blocks (make docs-tables)
    .venv/bin/python bench/render_tables.py --check   # exit 1 naming each stale block
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_check  # noqa: E402 - a sibling script, not a package
import bench_results  # noqa: E402 - a sibling script, not a package
import render_ab  # noqa: E402 - a sibling script, not a package
import render_any_env  # noqa: E402 - a sibling script, not a package
import render_diagnosis  # noqa: E402 - a sibling script, not a package
import render_install  # noqa: E402 - a sibling script, not a package
import render_speed  # noqa: E402 - a sibling script, not a package
import render_spread  # noqa: E402 - a sibling script, not a package
import render_targets  # noqa: E402 - a sibling script, not a package
from bench_results import Measured, Results, Row, Spread, spread  # noqa: E402
from render_text import fill, provenance, seeds_text, steps  # noqa: E402

ROOT = bench_results.ROOT
BLOCK = re.compile(r"^(?P<indent>[ \t]*)<!-- generated: (?P<name>[\w-]+) -->\n(?P<body>.*?)^[ \t]*<!-- end generated -->",
                   re.MULTILINE | re.DOTALL)


def doc_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _spread_text(s: Spread) -> str:
    ge = ">= " if s.lower_bound else ""
    return (f"median {ge}{steps(s.median_env_steps)} env steps, slowest {ge}{steps(s.slowest_env_steps)} "
            f"(seed {s.slowest_seed}), {s.solved}/{len(s.seeds)} solved")


def _spread_p90_text(s: Spread, rows: list[Row]) -> str:
    """_spread_text with the 90th percentile and the slowest seed's ratio to the median (issue 23's spread)."""
    from gymnasium_solver.jobs.seeds import aggregate

    ge = ">= " if s.lower_bound else ""
    p90 = aggregate([r.env_steps for r in rows], "p90")
    slowest_solved = next(r.solved for r in rows if r.seed == s.slowest_seed)
    slowest = (f"slowest {steps(s.slowest_env_steps)} (seed {s.slowest_seed}, "
               f"{s.slowest_env_steps / s.median_env_steps:.2f}x the median)" if slowest_solved
               else f"slowest >= {steps(s.slowest_env_steps)} (seed {s.slowest_seed}, not solved)")
    return f"median {ge}{steps(s.median_env_steps)} env steps, p90 {ge}{steps(p90)}, {slowest}, {s.solved}/{len(s.seeds)} solved"


def vs_zoo(results: Results, config_id: str) -> tuple[Spread, Spread, float]:
    """Our spread, the Zoo's, and the Zoo's median wall over ours."""
    arms = results.presets[config_id].arms
    ours, zoo = spread(arms["ours"]), spread(arms["zoo"])
    return ours, zoo, zoo.median_wall_s / ours.median_wall_s


def _commit(m: Measured) -> str:
    return f"`{m.commit}`" + (" + uncommitted edits listed in its results file" if m.edited else "")


# Comparisons with SB3 + the RL Zoo's settings that the docs show: block name -> (results file, preset, SB3's
# algorithm). Each results file's seeds were never used to tune its preset.
VS_ZOO = {
    "cartpole-ppo-vs-zoo": ("cartpole_ppo_vs_zoo", "CartPole-v1:ppo", "PPO"),
    "cartpole-a2c-vs-zoo": ("cartpole_a2c_vs_zoo", "CartPole-v1:a2c", "A2C"),
    # The same comparisons on a second machine (AMD EPYC; the presets were tuned on an Intel Xeon).
    "cartpole-ppo-vs-zoo-amd-epyc": ("cartpole_ppo_vs_zoo_amd_epyc", "CartPole-v1:ppo", "PPO"),
    "cartpole-a2c-vs-zoo-amd-epyc": ("cartpole_a2c_vs_zoo_amd_epyc", "CartPole-v1:a2c", "A2C"),
    "cartpole-a2c-vs-zoo-clip": ("cartpole_a2c_vs_zoo_clip_32000", "CartPole-v1:a2c", "A2C"),  # tried/cartpole-a2c-clip05
    "cartpole-dqn-vs-zoo": ("cartpole_dqn_vs_zoo", "CartPole-v1:dqn", "DQN"),
    "cartpole-dqn-vs-zoo-amd-epyc": ("cartpole_dqn_vs_zoo_amd_epyc", "CartPole-v1:dqn", "DQN"),
    "cartpole-dqn-vs-zoo-double-q": ("cartpole_dqn_vs_zoo_34000", "CartPole-v1:dqn", "DQN"),  # tried/cartpole-dqn-double-q
    "acrobot-ppo-vs-zoo": ("acrobot_ppo_vs_zoo", "Acrobot-v1:ppo", "PPO"),
    "pendulum-sac-vs-zoo": ("pendulum_sac_vs_zoo", "Pendulum-v1:sac", "SAC"),
    "pendulum-td3-vs-zoo": ("pendulum_td3_vs_zoo", "Pendulum-v1:td3", "TD3"),
    "pendulum-ppo-vs-zoo": ("pendulum_ppo_vs_zoo", "Pendulum-v1:ppo", "PPO"),
    "pendulum-ppo-vs-zoo-target-kl": ("pendulum_ppo_vs_zoo_target_kl", "Pendulum-v1:ppo", "PPO"),
    "pendulum-ppo-vs-zoo-adaptive-lr": ("pendulum_ppo_vs_zoo_adaptive_lr", "Pendulum-v1:ppo", "PPO"),
    "lunarlander-ppo-vs-zoo": ("lunarlander_ppo_vs_zoo", "LunarLander-v3:ppo", "PPO"),
    "lunarlander-ppo-vs-zoo-1m": ("lunarlander_ppo_vs_zoo_1m", "LunarLander-v3:ppo", "PPO"),
    "lunarlander-dqn-vs-zoo": ("lunarlander_dqn_vs_zoo", "LunarLander-v3:dqn", "DQN"),
    "lunarlander-dqn-vs-zoo-amd-epyc": ("lunarlander_dqn_vs_zoo_amd_epyc", "LunarLander-v3:dqn", "DQN"),
}
# Blocks the README's speed line leaves out: LunarLander's Zoo arm capped at 300,000 env steps (lunarlander-ppo-vs-zoo-1m
# gives its real env steps); Pendulum-v1:ppo's earlier versions; CartPole-v1:a2c's candidate that was not adopted.
README_SKIPS = ("lunarlander-ppo-vs-zoo", "pendulum-ppo-vs-zoo", "pendulum-ppo-vs-zoo-target-kl", "cartpole-a2c-vs-zoo-clip",
                "cartpole-dqn-vs-zoo-double-q")  # tried candidates and superseded tables: not the presets as shipped


def _vs_zoo_sentence(results: dict[str, Results], block: str) -> str:
    name, config_id, algo = VS_ZOO[block]
    r = results[name]
    ours, zoo, ratio = vs_zoo(r, config_id)
    ge = ">= " if zoo.lower_bound else ""
    return (f"{config_id} against SB3's {algo} on seeds {seeds_text(ours.seeds)}: ours {_spread_text(ours)}, vs "
            f"the Zoo's {_spread_text(zoo)}; {ge}{ratio:.1f}x less median wall time ({ours.median_wall_s:.1f} s vs "
            f"{ge}{zoo.median_wall_s:.1f} s at load {r.measured.load_start:g}-{r.measured.load_end:g} on "
            f"{r.measured.machine.cores} cores of an {r.measured.machine.cpu}; commit {_commit(r.measured)})")


def render_readme_speed(results: dict[str, Results]) -> str:
    gate = results["gate"]
    compared = ". ".join(_vs_zoo_sentence(results, block) for block in VS_ZOO
                         if VS_ZOO[block][0] in results and block not in README_SKIPS)
    others = "; ".join(f"{config_id} {' / '.join(steps(row.env_steps) for row in p.arms['ours'])} "
                       f"(seeds {seeds_text([row.seed for row in p.arms['ours']])})"
                       for config_id, p in gate.presets.items())
    lunar = "LunarLander's other presets" if "lunarlander_ppo_vs_zoo" in results else "LunarLander"
    return fill(
        f"Against SB3 with the RL Zoo's tuned settings side by side (same solve definition: the mean of the "
        f"preset's deterministic evaluation episodes at its threshold; arms alternating seed by seed; seeds never "
        f"used to tune the preset): {compared}. Env steps to solve on the drift gate's fixed seeds (commit "
        f"{_commit(gate.measured)}): {others}. Commands, machine, library versions and load: "
        f"[docs/benchmarks.md](docs/benchmarks.md). Earlier comparisons (other presets vs the Zoo, SB3's "
        f"SAC/TD3 on seeds 0-4, {lunar}) were measured once and are kept there as dated history, not current figures.")


def _per_seed_table(results: Results, config_id: str) -> str:
    arms = results.presets[config_id].arms
    zoo = {r.seed: r for r in arms.get("zoo", [])}
    lines = ["| seed | ours: solved, env steps, wall s | Zoo: solved, env steps, wall s |", "|---|---|---|"]

    def cell(r: Row | None) -> str:
        return "-" if r is None else f"{'yes' if r.solved else 'NO'}, {steps(r.env_steps)}, {r.wall_s:.1f}"

    lines += [f"| {r.seed} | {cell(r)} | {cell(zoo.get(r.seed))} |" for r in arms["ours"]]
    return "\n".join(lines)


def vs_zoo_renderer(block: str) -> Callable[[dict[str, Results]], str]:
    """The renderer of one VS_ZOO block: the spread of both arms, the wall ratio, each seed, provenance."""
    name, config_id, algo = VS_ZOO[block]

    def render(results: dict[str, Results]) -> str:
        r = results[name]
        arms = r.presets[config_id].arms
        ours, zoo, ratio = vs_zoo(r, config_id)
        ge = ">= " if zoo.lower_bound else ""
        bound = (" An unsolved Zoo seed counts with the env steps and seconds it spent (its budget, or the cap in "
                 "the command below), so the Zoo's medians and the ratio are lower bounds." if zoo.lower_bound else "")
        summary = fill(
            f"**{config_id} vs SB3's {algo} with the Zoo's settings, seeds {seeds_text(ours.seeds)}** (never used "
            f"to tune the preset): ours {_spread_p90_text(ours, arms['ours'])}, median wall {ours.median_wall_s:.2f} s "
            f"(slowest {ours.slowest_wall_s:.1f} s); the Zoo {_spread_p90_text(zoo, arms['zoo'])}, median wall "
            f"{ge}{zoo.median_wall_s:.2f} s; Zoo median wall / ours {ge or '= '}{ratio:.2f}.{bound} Wall times are from this "
            f"shared machine's load (below); env steps are exact per seed on it.")
        return f"{summary}\n\n{_per_seed_table(r, config_id)}\n\n{fill(provenance(r.measured))}"

    return render


# Presets retuned for every seed (issue 23): each version of a preset trained on the same held-out seeds, never
# used to tune it. Block name -> preset -> (version, results file): `bench_presets_vs_zoo.py --arms ours --write
# NAME`, or the ours arm of a side-by-side run.
HELDOUT: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "robust-cartpole": {
        "CartPole-v1:ppo": (("before: trial 31 of a sweep on seed 0", "cartpole_ppo_heldout_before"),
                            ("second: trial 14 of sweep-20261127-115025-4971 (p90 env steps over seeds 0-9)",
                             "cartpole_ppo_vs_zoo_trial14"),
                            ("after: trial 4 of sweep-20261127-195057-a375 (p90 wall seconds over seeds 0-9)",
                             "cartpole_ppo_vs_zoo")),
        "CartPole-v1:dqn": (("before: trial #32 of a sweep on seed 0", "cartpole_dqn_heldout_before"),
                            ("after: trial 11 of sweep-20261127-115442-0d56 (p90 over seeds 0-9)", "cartpole_dqn_heldout")),
        "CartPole-v1:a2c": (("before: trial #0 of a sweep on seed 0, picked on seeds 100-119", "cartpole_a2c_heldout_before"),
                            ("after: trial 38 of sweep-20261127-142039-bbee (p90 over seeds 0-9)", "cartpole_a2c_vs_zoo"),
                            ("tried, not adopted: trial 27 of sweep-20261127-203203-4dbf (the slowest of seeds 0-19)",
                             "cartpole_a2c_vs_zoo_trial27")),
        "CartPole-v1:reinforce": (("as shipped (not retuned: it meets the spread targets)", "cartpole_reinforce_heldout"),),
    },
    "robust-cartpole-a2c-amd": {
        "CartPole-v1:a2c": (("as shipped: trial 38 (the ours arm of the side by side with the Zoo)",
                             "cartpole_a2c_vs_zoo_amd_epyc"),
                            ("tried, not adopted: trial 11 of sweep-20261204-233321-0429 (the slowest of seeds 0-19, "
                             "picked on seeds 2000-2019; the ours arm of the side by side with the Zoo)",
                             "cartpole_a2c_vs_zoo_amd_epyc_trial11"),
                            ("as shipped: trial 38 (its own arm alone)", "cartpole_a2c_heldout_amd_trial38"),
                            ("tried, not adopted: trial 11 (its own arm alone)", "cartpole_a2c_heldout_amd_trial11")),
    },
    "robust-acrobot": {
        "Acrobot-v1:ppo": (("as shipped (not retuned: it meets the spread targets)", "acrobot_ppo_heldout_before"),),
        "Acrobot-v1:reinforce": (("as shipped (the ours arm of a side by side with the Zoo's PPO; a 10-trial sweep "
                                  "found nothing that solved all of seeds 0-4)", "acrobot_reinforce_vs_zoo"),),
    },
    "robust-pendulum": {
        "Pendulum-v1:sac": (("as shipped (the ours arm of the side by side with the Zoo)", "pendulum_sac_vs_zoo"),),
        "Pendulum-v1:td3": (("before: the Zoo's entry on a 64x64 network (the ours arm of the side by side with the "
                             "Zoo)", "pendulum_td3_vs_zoo_before"),
                            ("before (its own arm alone)", "pendulum_td3_heldout_1010_before"),
                            ("after: trial 11 of sweep-20261127-221922-d319 (p90 wall seconds over seeds 0-4; the ours "
                             "arm of the side by side with the Zoo)", "pendulum_td3_vs_zoo"),
                            ("after (its own arm alone)", "pendulum_td3_heldout_1010")),
    },
    "robust-pendulum-ppo": {
        "Pendulum-v1:ppo": (("before target_kl (the ours arm of the side by side with the Zoo)", "pendulum_ppo_vs_zoo"),
                            ("target_kl 0.1 (the ours arm of the side by side with the Zoo)",
                             "pendulum_ppo_vs_zoo_target_kl"),
                            ("as shipped, target_kl 0.1 and adaptive_lr_kl 0.02 (the ours arm of the side by side "
                             "with the Zoo)", "pendulum_ppo_vs_zoo_adaptive_lr")),
    },
    "robust-lunarlander-ppo": {
        "LunarLander-v3:ppo": (("as shipped (its own arm alone)", "lunarlander_ppo_heldout"),),
        "LunarLander-v3:ppo_continuous": (("as shipped (its own arm alone)", "lunarlander_ppo_continuous_heldout"),),
        "LunarLander-v3:dqn": (("as shipped (its own arm alone)", "lunarlander_dqn_heldout"),),
    },
}


# The same held-out seeds of the shipped presets trained on a second CPU (`bench_presets_vs_zoo.py --arms ours
# --write presets_heldout_amd_epyc`), each held against the results file of its shipped version on the first one.
SECOND_MACHINE = "presets_heldout_amd_epyc"
FIRST_MACHINE_FILES = {
    "CartPole-v1:ppo": "cartpole_ppo_vs_zoo", "CartPole-v1:a2c": "cartpole_a2c_vs_zoo",
    "CartPole-v1:dqn": "cartpole_dqn_heldout", "CartPole-v1:reinforce": "cartpole_reinforce_heldout",
    "Acrobot-v1:ppo": "acrobot_ppo_heldout_before", "Acrobot-v1:reinforce": "acrobot_reinforce_vs_zoo",
    "Pendulum-v1:ppo": "pendulum_ppo_vs_zoo", "Pendulum-v1:sac": "pendulum_sac_vs_zoo",
    "Pendulum-v1:td3": "pendulum_td3_vs_zoo",
}


def render_second_machine(results: dict[str, Results]) -> str:
    """Each shipped preset on its held-out seeds on a second CPU against the first: solved, median, slowest and its
    ratio to the median on each, and on how many seeds the two machines gave the same env steps."""
    second = results[SECOND_MACHINE]
    lines = ["| preset | seeds | solved (here / there) | median env steps (here / there) | slowest, seed (here) | "
             "slowest / median (here / there) | seeds with the same env steps |", "|---|---|---|---|---|---|---|"]
    differ = []
    for config_id, p in second.presets.items():
        rows = p.arms["ours"]
        first = results[FIRST_MACHINE_FILES[config_id]]
        before = first.presets[config_id]
        there = {r.seed: r for r in before.arms["ours"]}
        here, then = spread(rows), spread([there[r.seed] for r in rows if r.seed in there])
        same = sum(1 for r in rows if r.seed in there and (there[r.seed].solved, there[r.seed].env_steps) ==
                   (r.solved, r.env_steps))
        if before.config_sha != p.config_sha:
            differ.append(f"`{config_id}`")
        lines.append(f"| `{config_id}` | {seeds_text(here.seeds)} | {here.solved}/{len(here.seeds)} / "
                     f"{then.solved}/{len(then.seeds)} | {steps(here.median_env_steps)} / {steps(then.median_env_steps)} | "
                     f"{steps(here.slowest_env_steps)} ({here.slowest_seed}) | "
                     f"{here.slowest_env_steps / here.median_env_steps:.2f} / "
                     f"{then.slowest_env_steps / then.median_env_steps:.2f} | {same}/{len(rows)} |")
    m = second.measured
    machines = sorted({results[name].measured.machine.cpu for name in FIRST_MACHINE_FILES.values() if name in results})
    changed = (f" The resolved config of {', '.join(differ)} hashes differently from the one the first machine's file "
               "recorded: a value of the preset changed, or a setting was added to the config model since (at its "
               "default it changes the hash too)." if differ else
               " Every preset's resolved config is the one the first machine's file measured.")
    note = fill(f"**Here**: {m.machine.cpu}; **there**: {', '.join(machines)}, the machine the presets were tuned and "
                f"first measured on (the files named in FIRST_MACHINE_FILES of bench/render_tables.py, whose blocks above "
                f"give their commands). An unsolved seed counts last, at its budget.{changed} "
                + provenance(m))
    return "\n".join(lines) + "\n\n" + note


def heldout_renderer(block: str) -> Callable[[dict[str, Results]], str]:
    """Per preset and version on its held-out seeds: solved, median, p90 (the sweep's statistic, an unsolved seed
    at its budget), the slowest seed and its ratio to the median, then each results file's provenance."""

    def render(results: dict[str, Results]) -> str:
        from gymnasium_solver.jobs.seeds import aggregate

        lines = ["| preset | version | seeds | solved | median env steps | p90 | slowest (seed) | slowest / median | "
                 "median wall s |", "|---|---|---|---|---|---|---|---|---|"]
        notes = []
        for config_id, versions in HELDOUT[block].items():
            for label, name in versions:
                rows = results[name].presets[config_id].arms["ours"]
                s = spread(rows)
                p90 = aggregate([r.env_steps for r in rows], "p90")
                lines.append(f"| `{config_id}` | {label} | {seeds_text(s.seeds)} | {s.solved}/{len(s.seeds)} | "
                             f"{steps(s.median_env_steps)} | {steps(p90)} | {steps(s.slowest_env_steps)} "
                             f"({s.slowest_seed}) | {s.slowest_env_steps / s.median_env_steps:.2f} | "
                             f"{s.median_wall_s:.1f} |")
                notes.append(fill(f"`{config_id}`, {label}: {provenance(results[name].measured)}"))
        note = fill("Median wall seconds come from each row's own load (below): compare env steps, which are exact "
                    "per seed on one machine.")
        return "\n".join(lines) + "\n\n" + note + "\n\n" + "\n\n".join(notes)

    return render


def render_gate_table(results: dict[str, Results]) -> str:
    gate = results["gate"]
    lines = ["| preset | seed | solved | env steps | wall s |", "|---|---|---|---|---|"]
    for config_id, p in gate.presets.items():
        lines += [f"| `{config_id}` | {r.seed} | {'yes' if r.solved else 'NO'} | {steps(r.env_steps)} | {r.wall_s:.1f} |"
                  for r in p.arms["ours"]]
    note = ("Wall seconds are `solved_at.wall_seconds` (environment creation to the solving evaluation), with "
            "two presets training at once beside other work; compare env steps, not seconds.")
    parts = [chr(10).join(lines), fill(note + " " + provenance(gate.measured))]
    others = [r for name, r in sorted(results.items()) if name.startswith(bench_check.MACHINE_PREFIX)]
    if others:
        parts.append(fill("Env steps are exact on one machine, not across CPUs, so the gate holds a record per machine "
                          "and checks against its own machine's: " + "; ".join(_other_machine(gate, r) for r in others) + "."))
    return "\n\n".join(parts)


def _other_machine(gate: Results, other: Results) -> str:
    """How another machine's record of the gate differs from the table's, figure by figure."""
    m = other.measured
    table = {(c, r.seed): r for c, p in gate.presets.items() for r in p.arms["ours"]}
    moved = [f"`{c}` seed {r.seed} {steps(r.env_steps) if r.solved else 'unsolved'}" for c, p in other.presets.items()
             for r in p.arms["ours"]
             if (c, r.seed) not in table or (table[c, r.seed].solved, table[c, r.seed].env_steps) != (r.solved, r.env_steps)]
    n = sum(len(p.arms["ours"]) for p in other.presets.values())
    differ = f"{len(moved)} of its {n} figures differ from the table's ({', '.join(moved)})" if moved else \
        f"its {n} figures are the table's"
    return (f"`bench/results/{other.name}.json`, {m.machine.label} ({m.machine.cores} cores, Python {m.machine.python}), "
            f"recorded at commit `{m.commit}` ({m.date}): {differ}")


def render_gate_time(results: dict[str, Results]) -> str:
    gate = results["gate"]
    m = gate.measured
    n = sum(len(p.arms["ours"]) for p in gate.presets.values())
    took = f"took {m.wall_s:.0f} s" if m.wall_s is not None else "has no recorded wall time"
    return fill(f"The gate trains {n} figures ({len(gate.presets)} presets: {', '.join(gate.presets)}). Its last "
                f"recording {took} on {m.machine.cores} cores at load average {m.load_start:g}-{m.load_end:g} "
                f"(commit `{m.commit}`, {m.date}); a check does the same work.")


# One arm alone of a bench_presets_vs_zoo.py file (--arms zoo): block -> (results file, preset, arm).
ONE_ARM: dict[str, tuple[str, str, str]] = {
    "cartpole-a2c-zoo-50000": ("cartpole_a2c_zoo_50000", "CartPole-v1:a2c", "zoo"),  # normalize_observations' A/B
}


def one_arm_renderer(block: str) -> Callable[[dict[str, Results]], str]:
    def render(results: dict[str, Results]) -> str:
        name, config_id, arm = ONE_ARM[block]
        rows = results[name].presets[config_id].arms[arm]
        s = spread(rows)
        who = "SB3's A2C with the Zoo's settings" if arm == "zoo" else f"`{config_id}`"
        return fill(f"{who}, seeds {seeds_text(s.seeds)}: {s.solved}/{len(s.seeds)} solved, median "
                    f"{steps(s.median_env_steps)} env steps, slowest {steps(s.slowest_env_steps)} (seed "
                    f"{s.slowest_seed}). " + provenance(results[name].measured))

    return render


RENDERERS: dict[str, Callable[[dict[str, Results]], str]] = {
    **render_diagnosis.RENDERERS,
    **render_install.RENDERERS,
    **render_any_env.RENDERERS,
    "readme-speed": render_readme_speed,
    **{block: vs_zoo_renderer(block) for block in VS_ZOO},
    "gate-table": render_gate_table,
    "gate-time": render_gate_time,
    **render_speed.RENDERERS,
    **render_spread.RENDERERS,
    **render_targets.RENDERERS,
    **render_ab.RENDERERS,
    **{block: heldout_renderer(block) for block in HELDOUT},
    **{block: one_arm_renderer(block) for block in ONE_ARM},
    "second-machine": render_second_machine,
}


def render_text(text: str, results: dict[str, Results], where: str = "") -> str:
    """``text`` with every generated block re-rendered."""

    def one(m: re.Match[str]) -> str:
        name, indent = m["name"], m["indent"]
        if name not in RENDERERS:
            raise SystemExit(f"{where}: unknown generated block {name!r} (known: {', '.join(RENDERERS)})")
        body = "\n".join(indent + line if line else line for line in RENDERERS[name](results).splitlines())
        return f"{indent}<!-- generated: {name} -->\n{body}\n{indent}<!-- end generated -->"

    return BLOCK.sub(one, text)


def stale_blocks(root: Path = ROOT, results_dir: Path | None = None) -> list[str]:
    """'file: block' for every block whose text differs from what the results files render."""
    results = bench_results.all_results(results_dir or root / "bench" / "results")
    stale = []
    for path in doc_files(root):
        text = path.read_text(encoding="utf-8")
        rendered = render_text(text, results, str(path))
        if rendered != text:
            olds = {m["name"]: m[0] for m in BLOCK.finditer(text)}
            news = {m["name"]: m[0] for m in BLOCK.finditer(rendered)}
            stale += [f"{path.relative_to(root)}: {name}" for name in olds if olds[name] != news.get(name)]
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each stale block")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_blocks()
        for s in stale:
            print(f"stale generated block (run make docs-tables): {s}")
        return 1 if stale else 0
    results = bench_results.all_results()
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        rendered = render_text(text, results, str(path))
        if rendered != text:
            path.write_text(rendered, encoding="utf-8")
            print(f"rendered {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
