# SPDX-License-Identifier: MIT
"""Every public function and method of the tierwise package has type hints
on all its parameters and its return (issue 16), so that mypy (`make test`,
advisor/pyproject.toml [tool.mypy]) checks their bodies and their callers.
Public: a name without a leading underscore, at module level or in a class
at module level; nested helpers are private to their function."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tierwise"


def missing_hints(name: str, text: str) -> list:
    """'name:line function' for each public function of module text `text`
    with a parameter (self and cls aside) or its return not annotated."""
    tree = ast.parse(text, name)
    defs = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.append(node)
        elif isinstance(node, ast.ClassDef):
            defs += [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out = []
    for f in defs:
        if f.name.startswith("_"):
            continue
        a = f.args
        params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
        bare = [p.arg for p in params if p.annotation is None and p.arg not in ("self", "cls")]
        if bare or f.returns is None:
            what = f"parameters {', '.join(bare)}" if bare else "return"
            out.append(f"{name}:{f.lineno} {f.name}: no hint for {what}")
    return out


def test_public_functions_have_type_hints():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        missing += missing_hints(str(path.relative_to(PACKAGE)), path.read_text())
    assert not missing, "\n".join(missing)


def test_the_check_sees_a_missing_hint():
    """cli.py as it is passes; with main()'s hints taken off it does not."""
    text = (PACKAGE / "cli.py").read_text()
    assert missing_hints("cli.py", text) == []
    hinted = "def main(argv: Sequence[str] | None = None) -> int:"
    assert hinted in text
    bare = missing_hints("cli.py", text.replace(hinted, "def main(argv=None) -> int:"))
    assert len(bare) == 1 and "main: no hint for parameters argv" in bare[0]
    bare = missing_hints("cli.py", text.replace(hinted, "def main(argv: Sequence[str] | None = None):"))
    assert len(bare) == 1 and "main: no hint for return" in bare[0]
