"""DESIGN.md's import rules, held in one list and checked over every module of ours.

Imports are read with ``ast`` (never executed), lazy ones inside functions included: a lazy import
is still a dependency, it only moves the cost.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("gymnasium_solver", "agents", "mcp_server")


class Import(NamedTuple):
    importer: str
    imported: str  # dotted module name, resolved to a submodule when `from pkg import submodule`
    lineno: int
    lazy: bool  # inside a function or class body, not at module level


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports_of(path: Path) -> list[Import]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    out: list[Import] = []
    for node in ast.walk(tree):
        lazy = id(node) not in top_level and not _under_type_checking(tree, node)
        if isinstance(node, ast.Import):
            out.extend(Import(name, a.name, node.lineno, lazy) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                out.append(Import(name, full if _is_module(full) else base, node.lineno, lazy))
    return out


def _under_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
            if any(child is node for child in ast.walk(stmt)):
                return True
    return False


def _all_imports() -> list[Import]:
    paths = sorted(p for root in ROOTS for p in (REPO / root).rglob("*.py"))
    return [imp for p in paths for imp in _imports_of(p)]


def _in(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _ours(name: str) -> bool:
    return _in(name, *ROOTS) and name not in ROOTS  # a bare package (empty __init__) carries nothing


CONTRACT = ("gymnasium_solver.run_folder", "gymnasium_solver.metric_names", "gymnasium_solver.config",
            "gymnasium_solver.algorithms")
ALGORITHMS = ("agents",)
# The maths the algorithms share, and the description of the spaces they act in.
ALGORITHM_MAY_USE = (*CONTRACT, "agents", "gymnasium_solver.advantages", "gymnasium_solver.envs")
READERS = ("gymnasium_solver.run_store", "gymnasium_solver.diagnostics", "gymnasium_solver.plotting")
TRAINER = ("torch", "agents", "gymnasium_solver.training", "gymnasium_solver.rollout", "gymnasium_solver.checkpoints",
           "gymnasium_solver.evaluation", "gymnasium_solver.run_writer")
CLI = ("gymnasium_solver.cli", "gymnasium_solver.cli_error", "gymnasium_solver.cli_train", "gymnasium_solver.cli_runs",
       "gymnasium_solver.cli_diagnose", "gymnasium_solver.cli_fix", "gymnasium_solver.cli_mcp")
MCP = ("mcp_server",)


def _is_cli(name: str) -> bool:
    return name.startswith("gymnasium_solver.cli")


def _is_library(name: str) -> bool:
    return _in(name, "gymnasium_solver", "agents") and not _is_cli(name)


class Rule(NamedTuple):
    why: str
    applies_to: object  # (importer: str) -> bool
    forbidden: object  # (imported: str) -> bool


# DESIGN.md, "Who may import whom, in one list".
RULES = [
    Rule("the contract (run-folder names, config) imports nothing of ours but the contract",
         lambda m: _in(m, *CONTRACT), lambda i: _ours(i) and not _in(i, *CONTRACT)),
    Rule("algorithms import the contract and the maths, never the training loop or the rollout machinery",
         lambda m: _in(m, *ALGORITHMS), lambda i: _ours(i) and not _in(i, *ALGORITHM_MAY_USE)),
    Rule("readers (store, diagnosis, plots) never import torch, the agents or the trainer",
         lambda m: _in(m, *READERS), lambda i: _in(i, *TRAINER)),
    Rule("the library never imports its own adapters (CLI, MCP)",
         _is_library, lambda i: _is_cli(i) or _in(i, *MCP)),
    Rule("the MCP adapter never imports the CLI", lambda m: _in(m, *MCP), _is_cli),
    Rule("the CLI never imports the MCP adapter", _is_cli, lambda i: _in(i, *MCP)),
    # Within each adapter, the entry point imports its parts, never the other way round (a circle).
    Rule("CLI subcommand modules never import the entry point cli.py (CliError is in cli_error.py)",
         lambda m: _is_cli(m) and m != "gymnasium_solver.cli", lambda i: i == "gymnasium_solver.cli"),
    Rule("MCP tool modules use mcp_server.common, never the server that registers them",
         lambda m: _in(m, *MCP) and m != "mcp_server.server", lambda i: i == "mcp_server.server"),
]

# The one allowed crossing: `gsolve mcp` starts the MCP server, through a lazy import in cmd_mcp,
# so no other command pays for (or depends on) the MCP SDK.
ALLOWED = {("gymnasium_solver.cli_mcp", "mcp_server.server")}


def test_the_scan_sees_every_layer() -> None:
    names = {imp.importer for imp in _all_imports()}
    for expected in ("gymnasium_solver.run_folder", "gymnasium_solver.config", "agents.ppo", "gymnasium_solver.rollout",
                     "gymnasium_solver.cli", "gymnasium_solver.cli_mcp", "mcp_server.server", "mcp_server.common",
                     "gymnasium_solver.plotting"):
        assert expected in names, f"{expected} was not scanned: update the rule list with the new layout"
    assert any(_in(n, "gymnasium_solver.run_store") for n in names)
    assert any(_in(n, "gymnasium_solver.diagnostics") for n in names)


def test_design_import_rules_hold() -> None:
    broken = []
    for imp in _all_imports():
        if (imp.importer, imp.imported) in ALLOWED:
            continue
        for rule in RULES:
            if rule.applies_to(imp.importer) and rule.forbidden(imp.imported):  # type: ignore[operator]
                broken.append(f"{imp.importer}:{imp.lineno} imports {imp.imported}: {rule.why}")
    assert not broken, "\n".join(broken)


def test_the_cli_reaches_the_mcp_server_in_exactly_one_lazy_place() -> None:
    crossings = [imp for imp in _all_imports() if _is_cli(imp.importer) and _in(imp.imported, *MCP)]
    assert [(c.importer, c.imported) for c in crossings] == sorted(ALLOWED)
    assert all(c.lazy for c in crossings), "the CLI must import the MCP server only inside `gsolve mcp`"


def test_no_import_cycles_between_our_modules() -> None:
    """Module-level imports only: a lazy import inside a function cannot deadlock a start-up."""
    graph: dict[str, set[str]] = {}
    for imp in _all_imports():
        if not imp.lazy and _ours(imp.imported) and imp.imported != imp.importer:
            graph.setdefault(imp.importer, set()).add(imp.imported)

    def parents(name: str) -> set[str]:  # importing a.b.c runs a/__init__ and a/b/__init__ first
        parts = name.split(".")
        return {".".join(parts[:k]) for k in range(2, len(parts))}

    for mod, deps in list(graph.items()):
        graph[mod] = {d for d in deps | {p for d in deps for p in parents(d)} if not _in(mod, d)}
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "\n".join(cycles)
