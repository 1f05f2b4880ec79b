// SPDX-License-Identifier: MIT
// Calibration for test/bench/runtime_startup.py --calibrate: the runtime's
// placement.json reader (runtime/src/tw_placement_json.cc) alone, on one
// file read into memory once, repeated in one process. The first read pays
// the first touch of simdjson's buffers (page faults); the best of the rest
// is the reader's instructions alone, which callgrind counts (one read).
//   placement_read FILE [REPS]   prints: sites N first MS best MS
#include "tw_pjson.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

static int nsites;
static int site(void *, const tw_pjsite *) { return ++nsites > 0; }
static void module(void *, const tw_pjstr *, const tw_pjstr *) {}

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : nullptr;
  if (!f) {
    fprintf(stderr, "usage: placement_read FILE [REPS]\n");
    return 2;
  }
  fseek(f, 0, SEEK_END);
  size_t len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  std::vector<char> buf(len + TW_PJSON_PADDING + 1, 0);
  if (fread(buf.data(), 1, len, f) != len)
    return 2;
  fclose(f);
  int reps = argc > 2 ? atoi(argv[2]) : 200;
  double first = 0, best = 1e9;
  for (int r = 0; r < reps; r++) {
    tw_pjroot root;
    tw_pjsink sink = {nullptr, site, module};
    const char *at;
    nsites = 0;
    auto t0 = std::chrono::steady_clock::now();
    if (tw_pjson_read(buf.data(), len, &root, &sink, &at) != 1)
      return 1;
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - t0;
    if (!r)
      first = ms.count();
    else if (ms.count() < best)
      best = ms.count();
  }
  printf("sites %d first %.3f best %.3f\n", nsites, first, best);
  return 0;
}
