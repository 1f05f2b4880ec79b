#!/bin/sh
# SPDX-License-Identifier: MIT
# A two-step job for the child-process tests: BFS then PageRank, each its own
# process (usage: job.sh EXAMPLES_DIR). Every process tierwise follows here
# must get its own profile and its own placement.
set -e
"$1/bfs" -g 11
"$1/pagerank-pull" -g 11 -n 5
