# SPDX-License-Identifier: MIT
# 6-vertex test graph: src dst weight. From 0: BFS depths 0 1 1 2 3 -1,
# shortest distances 0 3 1 4 7 -1 (0->2->1 beats 0->1; 5 is unreachable).
0 1 4
0 2 1
2 1 2
1 3 1
2 3 5   # longer way to 3
3 4 3
5 0 1
