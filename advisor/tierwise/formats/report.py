# SPDX-License-Identifier: MIT
"""The run report (advisor/FORMATS.md "Run report", format
`tierwise-run-report` v1), written by the runtime (runtime/src/tw_report.c)
and read here by every verb: `read()` validates it (ValueError naming the
file and field). A report path without `%p` names the process the user
started; every other process that loaded the runtime (a helper daemon such
as Open MPI's orted, a forked or exec'd child) writes PATH.COMMAND.PID
beside it (`other_reports()`). Standard library os and json only (and
tierwise.messages): `tierwise run` imports this (cli.FAST_VERBS)."""

import json
import os
from typing import Optional

from tierwise.messages import MOST, listed

FORMAT = "tierwise-run-report"
VERSION = 1


def read(path: "os.PathLike[str] | str") -> dict:
    """The report at `path`; ValueError (one line naming the file) when it
    cannot be read, is not JSON, or is not a run report (a report without
    `format` is taken as one: the runtime writes it first)."""
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path}: cannot read the run report ({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: cannot read the run report (nested too deeply)") from None
    if not isinstance(rep, dict):
        raise ValueError(f"{path}: not a tierwise run report (a JSON {type(rep).__name__})")
    if rep.get("format", FORMAT) != FORMAT or "sites" not in rep:
        raise ValueError(f"{path}: not a tierwise run report (format {rep.get('format')!r})")
    if rep.get("version", VERSION) != VERSION:
        raise ValueError(
            f"{path}: field 'version' is {rep.get('version')!r}; this tierwise reads version "
            f"{VERSION}"
        )
    return rep


def other_reports(report_path: "os.PathLike[str] | str", since: Optional[float] = None) -> list:
    """Paths of the reports of the other processes beside `report_path`
    (PATH.COMMAND.PID, no temporary names), written at or after `since` (a
    time.time() value) when given; oldest first."""
    report_path = str(report_path)
    folder, name = os.path.split(report_path)
    found = []
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return []
    for entry in entries:
        if not entry.startswith(name + ".") or ".tmp." in entry:
            continue
        cmd, _, pid = entry[len(name) + 1 :].rpartition(".")
        if not cmd or not pid.isdigit():
            continue
        path = os.path.join(folder, entry)
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        if since is None or mtime >= since - 1:
            found.append((mtime, path))
    return [p for _, p in sorted(found)]


def others_line(report_path: "os.PathLike[str] | str", others: list) -> str:
    """'2 other processes ran under the runtime (orted, sh); their reports:
    R.orted.123, R.sh.124' (the files' real names), or '' for none; a few
    of each and the count of the rest (a shell loop runs hundreds)."""
    if not others:
        return ""
    names = sorted({os.path.basename(str(q)).rsplit(".", 2)[-2] for q in others})
    n = len(others)
    rest = f", each {report_path}.PROGRAM.PID" if n > MOST else ""
    return (
        f"{n} other process{'es' if n > 1 else ''} ran under the runtime "
        f"({listed(names, sep=', ')}); {'their reports' if n > 1 else 'its report'}: "
        f"{listed((str(q) for q in others), sep=', ')}{rest}"
    )
