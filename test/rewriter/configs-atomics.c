// SPDX-License-Identifier: MIT
// A C Pregel-style kernel compiled twice (issue 35 item 3): -DPUSH combines
// messages with atomic_compare_exchange_strong on a plain double (and
// counts them in an _Atomic int), which GCC accepts and Clang refuses in
// both its own and GCC's <stdatomic.h>, more than 20 times (Clang's error
// limit used to stop the parse); the pull configuration has no atomics and
// other allocations. Whatever the order of the two entries in
// compile_commands.json, `tierwise rewrite` parses the one that built the
// profiled binary (its object is named after it) and says so, and the tool
// alone parses both and rewrites the sites; never "does not parse". The
// patch applies with patch -p1 from the project (the database's
// directory), builds with -Wall -Werror and prints what the original does.
// RUN: rm -rf %t && mkdir -p %t/pmem %t/o && cp %s %t/k.c
// RUN: cd %t && gcc -std=c11 -g -O2 -DPUSH -c k.c -o o/pr-push.o && gcc o/pr-push.o -o pr-push && gcc -std=c11 -g -O2 -c k.c -o o/pr-pull.o && gcc o/pr-pull.o -o pr-pull
// RUN: ./pr-push > push.out
// RUN: %python %S/Inputs/callsites.py %t/pr-push malloc pmem pmem > %t/p.json
// RUN: printf '[{"directory": "%t", "file": "k.c", "command": "gcc -std=c11 -g -O2 -DPUSH -c k.c -o o/pr-push.o"},\n {"directory": "%t", "file": "k.c", "command": "gcc -std=c11 -g -O2 -c k.c -o o/pr-pull.o"}]\n' > %t/push-first.json
// RUN: printf '[{"directory": "%t", "file": "k.c", "command": "gcc -std=c11 -g -O2 -c k.c -o o/pr-pull.o"},\n {"directory": "%t", "file": "k.c", "command": "gcc -std=c11 -g -O2 -DPUSH -c k.c -o o/pr-push.o"}]\n' > %t/pull-first.json
// RUN: cp %t/push-first.json %t/compile_commands.json
// RUN: cd / && env GIT_CEILING_DIRECTORIES=%t %tierwise rewrite --placement %t/p.json -p %t --binary %t/pr-push -o %t/a.patch %t/k.c 2> %t/a.err
// RUN: FileCheck --check-prefix=PICK %s < %t/a.err
// RUN: FileCheck %s < %t/a.patch
// RUN: cp %t/pull-first.json %t/compile_commands.json
// RUN: cd / && env GIT_CEILING_DIRECTORIES=%t %tierwise rewrite --placement %t/p.json -p %t --binary %t/pr-push -o %t/b.patch %t/k.c 2> %t/b.err
// RUN: FileCheck --check-prefix=PICK %s < %t/b.err
// RUN: cmp %t/a.patch %t/b.patch
// PICK: note: k.c: 2 compile commands; using the one built with -O2 -DPUSH (its object is named after the binary)
// PICK-NOT: does not parse
// PICK: note: {{.*}}k.c parsed with 24 errors on atomic operations {{.*}} tolerated
// PICK-NOT: does not parse
// PICK: 2 of 2 placed sites rewritten in 1 files
// The tool alone, both configurations, either order: the same patch.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/configs-atomics.json %t/k.c > %t/loc.json
// RUN: cd / && env GIT_CEILING_DIRECTORIES=%t %bin/tierwise-rewrite --placement %t/loc.json -p %t -o %t/c.patch %t/k.c 2> %t/c.err
// RUN: cp %t/push-first.json %t/compile_commands.json
// RUN: cd / && env GIT_CEILING_DIRECTORIES=%t %bin/tierwise-rewrite --placement %t/loc.json -p %t -o %t/d.patch %t/k.c 2> %t/d.err
// RUN: cmp %t/c.patch %t/d.patch
// RUN: cmp %t/a.patch %t/c.patch
// RUN: FileCheck --check-prefix=BOTH %s < %t/c.err
// RUN: FileCheck --check-prefix=BOTH %s < %t/d.err
// BOTH-NOT: does not parse
// BOTH: note: {{.*}}k.c parsed with 24 errors on atomic operations {{.*}} tolerated
// BOTH-NOT: does not parse
// BOTH: note: {{.*}}k.c: its 2 compile commands disagree: the one with -DPUSH alone has the allocations at k.c:{{[0-9]+}} (malloc)
// BOTH: note: the patch's paths are relative to {{.*}} (the compile database's directory;
// BOTH: 2 of 2 placed sites rewritten in 1 files
// Applied from the project with git apply and patch -p1 (the same files);
// -Wall -Werror; the same output; compare-runs: the rebuilt program's bytes
// per tier per site are `tierwise run`'s.
// RUN: mkdir %t/g && cp %t/k.c %t/g/ && cd %t/g && env GIT_CEILING_DIRECTORIES=%t git apply %t/a.patch
// RUN: cd %t && patch -s -p1 < %t/a.patch && cmp %t/k.c %t/g/k.c
// RUN: cd %t && gcc -std=c11 -g -O2 -Wall -Werror -DPUSH -o pr-push-new k.c $(%tierwise config --cflags --libs)
// RUN: cd %t && env TIERWISE_PMEM_DIR=%t/pmem TIERWISE_REPORT=%t/b.json TIERWISE_UNMATCHED_MIN=1 ./pr-push-new > new.out
// RUN: %tierwise profile --backend alloc -o %t/prof -- %t/pr-push > /dev/null
// RUN: %python -c "import csv, json, sys; rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['bytes_allocated'] and int(r['bytes_allocated']) >= 16384 and 'k.c:' in r['location']]; json.dump({'format': 'tierwise-placement', 'version': 1, 'default_tier': 'dram', 'sites': [{'stack': r['stack'], 'location': r['location'], 'tier': 'pmem'} for r in rows]}, sys.stdout)" %t/prof/sites.csv > %t/run.json
// RUN: %tierwise run --placement %t/run.json --pmem-dir %t/pmem --report %t/a.json -- %t/pr-push > /dev/null
// RUN: %tierwise compare-runs %t/a.json %t/b.json --binary-a %t/pr-push --binary-b %t/pr-push-new --patch %t/a.patch > %t/cmp.txt
// RUN: FileCheck --check-prefix=CMP %s < %t/cmp.txt
// CMP: main k.c:{{[0-9]+}} 32768 32768 same
// CMP: main k.c:{{[0-9]+}} 32768 32768 same
// CMP: 2 of 2 placed locations have the same bytes per tier in both runs
// RUN: FileCheck --check-prefix=OUT %s < %t/new.out
// RUN: grep -v tiers %t/new.out | cmp - %t/push.out
// OUT: tiers 1 1
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
// CHECK: +#include <tierwise.h>

#ifdef PUSH
static _Atomic int sent;
// A combiner per message kind, as generated frameworks have them.
#define COMBINER(k)                                                          \
  void combine_##k(double *box, double msg) {                                \
    double old = *box;                                                       \
    while (msg < old && !atomic_compare_exchange_strong(box, &old, msg))     \
      ;                                                                      \
    atomic_fetch_add(&sent, 1);                                              \
  }
COMBINER(0) COMBINER(1) COMBINER(2) COMBINER(3) COMBINER(4) COMBINER(5)
COMBINER(6) COMBINER(7) COMBINER(8) COMBINER(9) COMBINER(10) COMBINER(11)
COMBINER(12) COMBINER(13) COMBINER(14) COMBINER(15) COMBINER(16)
COMBINER(17) COMBINER(18) COMBINER(19) COMBINER(20) COMBINER(21)
COMBINER(22) COMBINER(23)
#endif

int tw_tier_of(const void *ptr) __attribute__((weak));

int main(void) {
  int n = 4096;
  double *vals = malloc((size_t)n * sizeof(double)); // @vals
  // CHECK: +  double *vals = tw_malloc(TW_TIER_PMEM, (size_t)n * sizeof(double)); // @vals
  for (int i = 0; i < n; i++)
    vals[i] = (double)(n - i);
#ifdef PUSH
  double *outbox = malloc((size_t)n * sizeof(double)); // @outbox
  // CHECK: +  double *outbox = tw_malloc(TW_TIER_PMEM, (size_t)n * sizeof(double)); // @outbox
  for (int i = 0; i < n; i++) {
    outbox[i] = vals[i];
    combine_0(&outbox[i], vals[(i * 7) % n]);
    combine_1(&outbox[i], vals[(i * 13) % n]);
    combine_2(&outbox[i], 1.0 + i % 5);
    combine_3(&outbox[i], 2.0); combine_4(&outbox[i], 3.0);
    combine_5(&outbox[i], 4.0); combine_6(&outbox[i], 5.0);
    combine_7(&outbox[i], 6.0); combine_8(&outbox[i], 7.0);
    combine_9(&outbox[i], 8.0); combine_10(&outbox[i], 9.0);
    combine_11(&outbox[i], 10.0);
  }
  double s = 0;
  for (int i = 0; i < n; i++)
    s += outbox[i];
  printf("push %.1f sent %d\n", s, atomic_load(&sent));
  if (tw_tier_of)
    printf("tiers %d %d\n", tw_tier_of(vals), tw_tier_of(outbox));
  free(outbox);
#else
  double *inbox = calloc((size_t)n, sizeof(double)); // @inbox
  for (int i = 0; i < n; i++)
    inbox[i] = vals[(i * 7) % n] < vals[i] ? vals[(i * 7) % n] : vals[i];
  double s = 0;
  for (int i = 0; i < n; i++)
    s += inbox[i];
  printf("pull %.1f\n", s);
  free(inbox);
#endif
  free(vals);
  return 0;
}
