"""The sandbox's shape: its modules import one another in one direction only (no cycle, not even through an import
inside a function), and none grows past MAX_LINES. Read from the source with ast; nothing is imported."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
MAX_LINES = 450


def modules() -> dict[str, Path]:
    """The package's own modules by name ("__init__", "state", …): the .py files next to __init__.py."""
    return {p.stem: p for p in sorted(PACKAGE.glob("*.py"))}


def imported(path: Path, known: set[str]) -> set[str]:
    """The package's modules that path imports anywhere in its text: at the top, in a function, under
    TYPE_CHECKING — `from . import x`, `from .x import y`, `import sandbox.x`, `from sandbox.x import y`."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level > 1:
                raise AssertionError(f"{path.name}: `from {'.' * node.level}{node.module or ''}` leaves the package")
            if node.level == 1:
                base = node.module
            elif node.module and (node.module == "sandbox" or node.module.startswith("sandbox.")):
                base = node.module.partition(".")[2] or None
            else:
                continue
            if base is None:  # from . import a, b: each name is a module, or a name of __init__
                out.update(a.name if a.name in known else "__init__" for a in node.names)
            else:
                out.add(base.partition(".")[0])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("sandbox."):
                    out.add(a.name.split(".")[1])
    out.discard(path.stem)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imported(path, set(mods)) for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path [a, b, …, a], or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_is_read():
    edges = graph()
    assert "__main__" in edges and "server" in edges
    assert edges["server"], "server.py imports the feature modules"
    unknown = {m for targets in edges.values() for m in targets} - set(edges)
    assert not unknown, f"imports of modules that do not exist: {unknown}"


def test_no_import_cycle_among_sandbox_modules():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_function_local_imports_are_seen(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from . import y\n    from .z import w\n    from sandbox.v import u\n")
    assert imported(f, {"x", "y", "z", "v"}) == {"y", "z", "v"}


def test_serving_code_reads_no_seed_data():
    """The demo data is written by whoever opens or resets a sandbox; what serving reads (menus, OAuth clients)
    lives in menu.py and clients.py, below every handler."""
    readers = sorted(name for name, targets in graph().items() if "seed" in targets)
    assert readers == ["__main__", "admin_control"], readers


def test_no_module_passes_the_line_limit():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these by concept (at most {MAX_LINES} lines each): {long}"
