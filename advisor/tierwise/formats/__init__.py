# SPDX-License-Identifier: MIT
"""The files tierwise reads and writes, one module per file format, each
owning its schema, reader, writer and validation (grammars and versions:
advisor/FORMATS.md, whose sections name these modules):

- `profile`: the profile directory (`tierwise-profile` v1): meta.json,
  sites.csv, objects.csv, modules.csv, sites_by_tier.csv, backend.json;
- `placement`: placement.json (`tierwise-placement` v1);
- `report`: the runtime's run report (`tierwise-run-report` v1) and the
  names of a job's other reports;
- `compare`: compare.csv of `tierwise compare`;
- `tiers`: tier model files (`tierwise-tiers` v1, TOML).

This package imports nothing: `placement` and `report` use the standard
library only, for `tierwise run` (cli.FAST_VERBS)."""
