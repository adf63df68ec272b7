"""Every third-party module the code imports is declared in pyproject.toml: the application's
in ``dependencies``, what only tests and benchmarks use in ``dependencies`` or ``dev``. A
module that only arrives as someone else's dependency (``httpx2`` came with openai) breaks the
day that package stops bringing it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = {"apps", "config", "workers", "tests", "bench", "manage", "scripts", "__future__"}
APPLICATION = ("apps", "config", "workers")
#: The peers' benchmarks run partly in the peers' own virtual environments, with what
#: bench/peers/venvs.py installs there, never ours.
PEERS = ROOT / "bench" / "peers"


def _names(requirements: list[str]) -> set[str]:
    return {_normal(re.split(r"[<>=\[ ;!~]", r, maxsplit=1)[0]) for r in requirements}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imports(folder: str) -> set[str]:
    """Top-level modules imported anywhere under ``folder`` (absolute imports)."""
    found = set()
    for path in (ROOT / folder).rglob("*.py"):
        if "migrations" in path.parts or PEERS in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - OURS - set(sys.stdlib_module_names)


def _undeclared(folders: tuple[str, ...], declared: set[str]) -> list[str]:
    providers = packages_distributions()
    problems = []
    for module in sorted(set().union(*(_imports(f) for f in folders))):
        dists = providers.get(module, [])
        if not any(_normal(d) in declared for d in dists):
            problems.append(f"{module} (from {', '.join(dists) or 'no installed package'})")
    return problems


def test_every_import_of_the_application_is_a_declared_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    undeclared = _undeclared(APPLICATION, _names(project["dependencies"]))
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"


def test_every_import_of_the_tests_and_benchmarks_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = _names(project["dependencies"]) | _names(project["optional-dependencies"]["dev"])
    undeclared = _undeclared(("tests", "bench", "scripts"), declared)
    assert not undeclared, f"imported but not declared: {undeclared}"
