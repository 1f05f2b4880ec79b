# SPDX-License-Identifier: MIT
"""The run reports of a job's processes (runtime/src/tw_report.c): a report
path without `%p` names the process the user started; every other process
that loaded the runtime (a helper daemon such as Open MPI's orted, a forked
or exec'd child) writes PATH.COMMAND.PID beside it. Standard library os
only: `tierwise run` imports this (cli.FAST_VERBS)."""

import os


def other_reports(report_path, since=None) -> list:
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


def others_line(report_path, others) -> str:
    """'2 other processes ran under the runtime (orted, sh); their reports:
    R.COMMAND.PID', or '' for none."""
    if not others:
        return ""
    names = sorted({os.path.basename(str(q)).rsplit(".", 2)[-2] for q in others})
    n = len(others)
    return (
        f"{n} other process{'es' if n > 1 else ''} ran under the runtime "
        f"({', '.join(names)}); {'their reports' if n > 1 else 'its report'}: "
        f"{report_path}.COMMAND.PID"
    )
