"""The import rule of docs/ARCHITECTURE.md, held by parsing every module's imports (ast, including the
imports inside functions): which layer may import which, no circle between modules, no module over
500 lines. A known exception is listed below with its reason; the list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gymnasium_solver", "mcp_server")
MAX_LINES = 500

# Each module's layer: the first prefix that matches, longest first (see docs/ARCHITECTURE.md).
LAYERS: dict[str, str] = {
    # contract: what a run folder, a config and an algorithm are; imports nothing of ours above it
    "gymnasium_solver.contract": "contract", "gymnasium_solver.config": "contract",
    "gymnasium_solver.imports.mapping": "contract",
    # maths: pure functions of arrays
    "gymnasium_solver.maths": "maths",
    # algorithms: one module per algorithm, and the environments' description they act in
    "gymnasium_solver.agents": "algorithms", "gymnasium_solver.envs": "envs", "gymnasium_solver.vector_envs": "envs",
    # train: the loop, its session, rollouts, evaluation, checkpoints, the run writer, tracking sinks
    "gymnasium_solver.train": "train",
    # readers: the run store, the diagnosis, plots (never the trainer, never torch)
    "gymnasium_solver.run_store": "readers", "gymnasium_solver.diagnostics": "readers",
    "gymnasium_solver.plotting": "readers",
    # services: use cases over many runs (jobs, fix experiments, sweeps, ops, imports, the Python API)
    "gymnasium_solver.jobs": "services", "gymnasium_solver.experiments": "services",
    "gymnasium_solver.sweeps": "services", "gymnasium_solver.launcher": "services",
    "gymnasium_solver.ops": "services", "gymnasium_solver.imports": "services",
    "gymnasium_solver.api": "services", "gymnasium_solver.environment_list": "services",
    "gymnasium_solver": "services",
    # adapters: thin; they import the library, never each other
    "gymnasium_solver.cli": "cli", "mcp_server": "mcp",
}
_LIBRARY = {"contract", "maths", "envs", "algorithms", "train", "readers", "services"}
MAY_IMPORT: dict[str, set[str]] = {
    "contract": {"contract"},
    "maths": {"maths"},
    "envs": {"contract", "envs"},
    "algorithms": {"contract", "maths", "envs", "algorithms"},  # never the loop or the rollout machinery
    "readers": {"contract", "maths", "readers"},
    "train": {"contract", "maths", "envs", "algorithms", "train", "readers"},
    "services": _LIBRARY,
    "cli": _LIBRARY | {"cli"},
    "mcp": _LIBRARY | {"mcp"},
}
# Third-party packages a layer must never import, even inside a function: the read side and the
# contract start fast and read runs of any trainer version.
FORBIDDEN_EXTERNAL = {"contract": {"torch", "stable_baselines3", "sb3_contrib"},
                      "readers": {"torch", "stable_baselines3", "sb3_contrib"}}

# Known exceptions: (importer, imported) -> why. Keep this list short; fix before adding.
KNOWN_LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("gymnasium_solver.train.resume", "gymnasium_solver.launcher"):
        "start_resume starts `gsolve train --resume` as a subprocess: the core starting the CLI with hidden "
        "flags (issue 24 item 3), to move with the launcher into jobs/",
    ("gymnasium_solver.cli.mcp", "mcp_server.server"):
        "`gsolve mcp` is the MCP server's entry point; a console script of its own would end this",
}
# A circle all of whose modules are inside one package (the package's prefix) -> why.
KNOWN_CIRCLES: dict[str, str] = {
    "gymnasium_solver.train.tracking.":
        "each sink imports its base class from sinks.py, which imports the sinks a config turns on (lazily); "
        "tracking/ is being reworked by another change: the base class belongs in a module of its own",
}


def _known(circle: frozenset[str]) -> bool:
    return any(all(m.startswith(prefix) for m in circle) for prefix in KNOWN_CIRCLES)


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """Every module named by an import statement anywhere in the file (functions included), absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            # ``from pkg import sub`` names the submodule when there is one
            found += [(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base, node.lineno) for a in node.names]
    return found


def _graph() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """(our module -> our modules it imports, with a line), (our module -> third-party top-level names)."""
    ours: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    external: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    for name, path in MODULES.items():
        for target, line in _imports(name, path):
            top = target.split(".")[0]
            if top not in PACKAGES:
                external[name].setdefault(top, line)
            elif target in MODULES and target != name:
                ours[name].setdefault(target, line)
            elif target not in MODULES and target.rpartition(".")[0] in MODULES and target.rpartition(".")[0] != name:
                ours[name].setdefault(target.rpartition(".")[0], line)  # ``import pkg.name`` of an attribute
    return ours, external


GRAPH, EXTERNAL = _graph()


def layer(module: str) -> str:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + ".") or (prefix == "gymnasium_solver.cli.app"
                                                                    and module.startswith("gymnasium_solver.cli_")):
            return LAYERS[prefix]
    raise AssertionError(f"{module} has no layer: add it to LAYERS (and to docs/ARCHITECTURE.md)")


def _circles(graph: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(frozenset(component))
    return out


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer(module)


def test_no_import_breaks_the_layer_rule() -> None:
    broken = []
    for module, targets in GRAPH.items():
        mine = layer(module)
        for target, line in targets.items():
            if layer(target) not in MAY_IMPORT[mine] and (module, target) not in KNOWN_LAYER_EXCEPTIONS:
                broken.append(f"{MODULES[module].relative_to(ROOT)}:{line}: {mine} {module} imports "
                              f"{layer(target)} {target}")
    assert broken == [], "imports against docs/ARCHITECTURE.md:\n" + "\n".join(broken)


def test_the_contract_and_the_readers_never_import_torch() -> None:
    broken = [f"{MODULES[m].relative_to(ROOT)}:{line}: {m} imports {name}"
              for m, names in EXTERNAL.items() for name, line in names.items()
              if name in FORBIDDEN_EXTERNAL.get(layer(m), set())]
    assert broken == []


def test_no_import_closes_a_circle() -> None:
    circles = [c for c in _circles(GRAPH) if not _known(c)]
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in circles)


def test_the_known_exceptions_are_still_needed() -> None:
    """An exception that no longer happens is deleted, so the list says what is left to fix."""
    stale = [pair for pair in KNOWN_LAYER_EXCEPTIONS if pair[1] not in GRAPH.get(pair[0], {})]
    stale += [prefix for prefix in KNOWN_CIRCLES
              if not any(all(m.startswith(prefix) for m in c) for c in _circles(GRAPH))]
    assert stale == []


def test_the_rule_catches_what_it_should() -> None:
    """The checker itself: a reader importing the trainer, and a two-module circle, are found."""
    assert "train" not in MAY_IMPORT[layer("gymnasium_solver.diagnostics.diagnose")]
    assert "cli" not in MAY_IMPORT[layer("mcp_server.server")] and "mcp" not in MAY_IMPORT["cli"]
    assert "train" not in MAY_IMPORT[layer("gymnasium_solver.agents.ppo")]
    assert _circles({"a": {"b": 1}, "b": {"a": 1}, "c": {"a": 1}}) == [frozenset({"a", "b"})]
    # imports inside functions count: resume's are function-level
    assert "gymnasium_solver.launcher" in GRAPH["gymnasium_solver.train.resume"]


def test_the_cli_reaches_the_mcp_server_only_inside_gsolve_mcp() -> None:
    """The one adapter crossing (KNOWN_LAYER_EXCEPTIONS) is an import inside a function, so no other command
    pays for the MCP SDK or depends on it."""
    crossings = [(m, t) for m, targets in GRAPH.items() for t in targets
                 if layer(m) == "cli" and layer(t) == "mcp"]
    assert crossings == [("gymnasium_solver.cli.mcp", "mcp_server.server")]
    tree = ast.parse(MODULES["gymnasium_solver.cli.mcp"].read_text(encoding="utf-8"))
    top_level = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not [n for n in top_level if (n.module if isinstance(n, ast.ImportFrom) else "") == "mcp_server.server"]


def test_no_module_is_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"split these by responsibility: {long}"
