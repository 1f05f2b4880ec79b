/* SPDX-License-Identifier: MIT */
/* Checks one of the runtime's grammars against its shared vectors (one
 * vector a line: INPUT, the last tab, then the expected result; '#' lines are
 * comments), as the advisor's Python checks them (size_check.py,
 * tier_check.py):
 *   sizes: runtime/common/tw_size.c, size-vectors.txt (bytes or "error");
 *   tiers: runtime/src/tw_tiername.c, tier-vectors.txt ("ok" or "error": a
 *          name parsed prints back as itself).
 * Prints one FAIL line per disagreement and "GRAMMAR: N vectors ok" or
 * "GRAMMAR: N failed". Usage: tw_vector_check sizes|tiers < VECTORS */
#include "tw_base.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void size_result(const char *in, char *out, size_t cap) {
  uint64_t v = 0;
  if (tw_parse_size(in, &v) == 0)
    snprintf(out, cap, "%" PRIu64, v);
  else
    snprintf(out, cap, "error");
}

static void tier_result(const char *in, char *out, size_t cap) {
  int t = tw_tier_parse(in);
  snprintf(out, cap, "%s",
           t >= 0 && !strcmp(tw_tier_str(t), in) ? "ok" : "error");
}

int main(int argc, char **argv) {
  const char *grammar = argc > 1 ? argv[1] : "";
  void (*result)(const char *, char *, size_t) =
      !strcmp(grammar, "sizes")   ? size_result
      : !strcmp(grammar, "tiers") ? tier_result
                                  : NULL;
  if (!result) {
    fprintf(stderr, "usage: tw_vector_check sizes|tiers < VECTORS\n");
    return 2;
  }
  char line[512];
  int n = 0, failed = 0;
  while (fgets(line, sizeof(line), stdin)) {
    line[strcspn(line, "\n")] = 0;
    char *tab = strrchr(line, '\t');
    if (line[0] == '#' || !tab)
      continue;
    *tab = 0;
    const char *want = tab + 1;
    char got[32];
    result(line, got, sizeof(got));
    n++;
    if (strcmp(got, want)) {
      printf("FAIL: \"%s\": gives %s, expected %s\n", line, got, want);
      failed++;
    }
  }
  if (failed)
    printf("%s: %d failed\n", grammar, failed);
  else
    printf("%s: %d vectors ok\n", grammar, n);
  return failed != 0;
}
