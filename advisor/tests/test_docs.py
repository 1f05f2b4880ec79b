# SPDX-License-Identifier: MIT
"""The documents are true to the code (issue 25): every `tierwise VERB
--option` shown in the README, docs/ and the component READMEs names a verb
and options the CLI has (its argparse parser, what `tierwise VERB --help`
prints), and every relative link in them points at a file that exists, and
at a heading of it when it names one (#anchor, GitHub's heading slugs). And
short enough to act on (issue 39): README.md, runtime/README.md and
docs/numa-tiering.md within their sizes."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tierwise.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^ {0,3}(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]`]|`[^`]*`)*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
SHELL_STOP = {"|", "||", "&&", ";", ">", ">>", "<", "2>&1", ")", "&"}


def markdown_files() -> list[Path]:
    """Every Markdown file git tracks (README.md, docs/, the components')."""
    git = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"]
    out = subprocess.run(git, cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / f for f in out.stdout.split()]


def split_fences(text: str) -> tuple[list[str], str]:
    """(code lines of the fenced blocks, continuation lines joined; the text
    outside them)."""
    code: list[str] = []
    prose: list[str] = []
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            prose.append(line)
        elif code and code[-1].endswith("\\"):
            code[-1] = code[-1][:-1] + " " + line.strip()
        else:
            code.append(line)
    return code, "\n".join(prose)


def commands(text: str) -> list[str]:
    """The `tierwise ...` command lines of a document: in fenced blocks and
    in inline code (`$T` too, where the document sets T=.../tierwise)."""
    code, prose = split_fences(text)
    spans = re.findall(r"`([^`]+)`", re.sub(r"\s*\n\s*", " ", prose))
    name = r"\btierwise"
    if re.search(r"\bT=\S*tierwise\b", text):
        name = r"(?:\$T\b|\$\{T\}|\btierwise)"
    found = []
    for line in code + spans:
        line = re.sub(r"(^|\s)#\s.*$", "", line)  # a shell comment
        pattern = rf"(?:^|(?<=[\s/;(]))(?:\S*/)?{name}\s+([a-z][a-z-]*)(?=\s|$)(.*)"
        for m in re.finditer(pattern, line):
            found.append(f"{m.group(1)}{m.group(2)}")
    return found


def options_of(verb: str) -> set[str] | None:
    """The option strings of `tierwise VERB` (None: no such verb)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    p = sub.choices.get(verb)
    if p is None:
        return None
    return {o for a in p._actions for o in a.option_strings}


def check_command(cmd: str) -> list[str]:
    """What is wrong with one `VERB ARGS...` as shown (empty: nothing)."""
    try:
        words = shlex.split(cmd, comments=False)
    except ValueError:
        words = cmd.split()
    verb, args = words[0], words[1:]
    opts = options_of(verb)
    if opts is None:
        return [f"no verb {verb!r}"]
    bad = []
    for w in args:
        if w == "--" or w in SHELL_STOP or w.startswith(("$(", ">", "|")):
            break
        if w.startswith("-") and len(w) > 1 and not re.match(r"-\d", w):
            opt = w.split("=", 1)[0]
            if opt not in opts:
                bad.append(f"{verb}: no option {opt!r}")
    return bad


DOCS = markdown_files()


def test_docs_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in DOCS}
    assert {"README.md", "runtime/README.md", "advisor/README.md"} <= names
    assert any(n.startswith("docs/") for n in names)


def test_readme_is_a_guide() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= 20 * 1024, f"README.md is {len(text.encode())} bytes"
    for must in ("make demo", "make test", "## Install", "make install PREFIX="):
        assert must in text


# Documents kept short enough to act on (issue 39, "Docs as contracts"): the
# runtime's reference and the yardstick's current results; the design of
# each part has its own page in docs/, earlier runs live in git history.
SIZE_LIMITS = {"runtime/README.md": 25 * 1024, "docs/numa-tiering.md": 15 * 1024}


@pytest.mark.parametrize("name", sorted(SIZE_LIMITS))
def test_doc_size(name: str) -> None:
    size, limit = len((ROOT / name).read_text().encode()), SIZE_LIMITS[name]
    assert size <= limit, f"{name} is {size} bytes (at most {limit})"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_commands_exist(doc: Path) -> None:
    cmds = commands(doc.read_text())
    bad = [f"`tierwise {c}`: {why}" for c in cmds for why in check_command(c)]
    assert not bad, "\n".join(bad)


def test_command_checker_catches() -> None:
    """The checks above can fail: a wrong verb, a wrong option, each found."""
    text = "```sh\ntierwise advise prof --dram-budgett 20%\n```\nand `tierwise frobnicate -x`"
    found = commands(text)
    assert found == ["advise prof --dram-budgett 20%", "frobnicate -x"]
    assert check_command(found[0]) == ["advise: no option '--dram-budgett'"]
    assert check_command(found[1]) == ["no verb 'frobnicate'"]
    assert check_command("run --placement p.json --report r.json -- ./app -g 14 --x") == []
    assert commands("T=build/bin/tierwise\n```\n$T report prof --top 5\n```") == [
        "report prof --top 5"
    ]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation other than
    - and _ dropped, spaces as -."""
    h = re.sub(r"[`*]", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    _, prose = split_fences(path.read_text())
    seen: dict[str, int] = {}
    out = set()
    for line in prose.splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def links(doc: Path) -> list[str]:
    _, prose = split_fences(doc.read_text())
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return LINK.findall(prose)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(doc: Path) -> None:
    bad = []
    for target in links(doc):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            bad.append(f"{target}: no {path.relative_to(ROOT) if ROOT in path.parents else path}")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            bad.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not bad, "\n".join(bad)


def test_link_checker_catches(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Top `x`: y\n\n[b](b.md) [top](#top-x-y) [no](#nope) `[c](c.md)`\n")
    assert links(doc) == ["b.md", "#top-x-y", "#nope"]
    assert anchors(doc) == {"top-x-y"}
