// SPDX-License-Identifier: MIT
// A macro use shared by a template's instantiations (issue 35 item 5): a
// framework's column<T> allocates through FW_ALLOC in its constructor, one
// spelling for column<int16_t>, column<double> and column<int64_t>, and
// FW_ALLOC has another use (scratch) that the advisor gives a DRAM head.
// The placement comes from the pipeline (sim profile with a fixed cache,
// advise at 2.5M): flags in DRAM, ranks and edges in pmem, scratch split.
// Its macro's uses need different placements, so each use is placed on its
// own; the constructor's use is one edit, and since column<int16_t> shares
// it and stays in DRAM, the constructor takes the tier as a parameter that
// only ranks and edges pass. Before, that use was expanded with pmem for
// every instantiation when the placement did not list the DRAM site (flags
// went to pmem in the rebuilt program, and the patch differed from the one
// for the same placement with its DRAM sites listed). Checked: the patch is
// the same for both, edits each spelling once, applies with git apply and
// patch -p1, builds with -Wall -Werror, and the rebuilt program prints what
// the original prints under `tierwise run` (each array's tier).
// RUN: rm -rf %t && mkdir -p %t/src %t/git %t/p1 %t/pmem
// RUN: cp %s %t/src/column.cpp
// RUN: c++ -std=c++17 -g -O0 -Wall -Werror -o %t/orig %t/src/column.cpp
// RUN: %tierwise profile --backend sim --llc-size 256K --llc-ways 16 --line-size 64 --l1-size 32K --l1-ways 8 -o %t/prof -- %t/orig > /dev/null 2>&1
// RUN: %tierwise advise %t/prof --dram-budget 2.5M -o %t/all.json | FileCheck --check-prefix=ADV %s
// ADV-DAG: main column.cpp:[[#FLAGS:]] (via column.cpp:[[#USE:]]){{.*}} dram {{.*}}ms
// ADV-DAG: main column.cpp:[[#FLAGS+2]] (via column.cpp:[[#USE]]){{.*}} pmem {{.*}}ms
// ADV-DAG: main column.cpp:[[#FLAGS+3]] (via column.cpp:[[#USE]]){{.*}} pmem {{.*}}ms
// ADV-DAG: scratch column.cpp:{{[0-9]+}} {{.*}} dram+pmem
// The same placement without its DRAM sites (default_tier dram covers them).
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); d['sites'] = [s for s in d['sites'] if s['tier'] != 'dram']; json.dump(d, open(sys.argv[2], 'w'))" %t/all.json %t/placed.json
// RUN: %tierwise run --placement %t/placed.json --pmem-dir %t/pmem -- %t/orig > %t/run.out 2> /dev/null
// RUN: FileCheck --check-prefix=OUT %s < %t/run.out
// RUN: %tierwise rewrite --placement %t/placed.json --binary %t/orig --root %t/src -o %t/placed.patch %t/src/column.cpp -- -std=c++17 2> %t/err
// RUN: FileCheck --check-prefix=ERR %s < %t/err
// RUN: %tierwise rewrite --placement %t/all.json --binary %t/orig --root %t/src -o %t/all.patch %t/src/column.cpp -- -std=c++17 2> /dev/null
// RUN: cmp %t/all.patch %t/placed.patch
// RUN: FileCheck %s < %t/placed.patch
// RUN: grep -c '^+.*/\* FW_ALLOC \*/' %t/placed.patch | FileCheck --check-prefix=TWO %s
// TWO: {{^2$}}
// RUN: cp %t/src/column.cpp %t/git/ && cd %t/git && git init -q && git apply %t/placed.patch
// RUN: cp %t/src/column.cpp %t/p1/ && cd %t/p1 && patch -s -p1 < %t/placed.patch
// RUN: cmp %t/git/column.cpp %t/p1/column.cpp
// RUN: c++ -std=c++17 -O0 -Wall -Werror -o %t/rebuilt %t/git/column.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t/pmem %t/rebuilt > %t/rebuilt.out
// RUN: diff %t/run.out %t/rebuilt.out
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
// CHECK: +#include <tierwise.h>

// libtierwise's: preloaded by `tierwise run`, linked into the rebuilt one.
extern "C" int tw_tier_of(const void *ptr) __attribute__((weak));

#define FW_ALLOC(T, n) static_cast<T *>(std::malloc(sizeof(T) * (n)))
// CHECK-NOT: {{^[-+]}}#define FW_ALLOC

namespace fw {
template <class T> struct column {
  T *data;
  long n;
  explicit column(long len) : n(len) {
    data = FW_ALLOC(T, len);
    // CHECK: +  explicit column(long len, tw_tier tier = TW_TIER_DRAM) : n(len) {
    // CHECK-NEXT: +    data = /* FW_ALLOC */ static_cast<T *>(tw_malloc(tier, sizeof(T) * (len)));
    for (long i = 0; i < n; i++)
      data[i] = T(i % 7);
  }
  ~column() { std::free(data); }
  double sum() const {
    double s = 0;
    for (long i = 0; i < n; i++)
      s += double(data[i]);
    return s;
  }
};
} // namespace fw

static char *scratch(long n) {
  char *s = FW_ALLOC(char, n);
  // CHECK: +  char *s = /* FW_ALLOC */ static_cast<char *>(tw_malloc_head(TW_TIER_PMEM, 2097152, sizeof(char) * (n)));
  // ERR-DAG: note: expanded FW_ALLOC at column.cpp:[[#@LINE-2]] (its uses need different tiers): pmem with dram_bytes 2097152
  std::memset(s, 1, n);
  return s;
}

static int tier(const void *p) { return tw_tier_of ? tw_tier_of(p) : -1; }

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0); // no stdio buffer site
  fw::column<int16_t> flags(1 << 18);
  // CHECK-NOT: {{^[-+]}}  fw::column<int16_t> flags
  fw::column<double> ranks(1 << 20);
  fw::column<int64_t> edges(2 << 20);
  // CHECK: +  fw::column<double> ranks(1 << 20, TW_TIER_PMEM);
  // CHECK-NEXT: +  fw::column<int64_t> edges(2 << 20, TW_TIER_PMEM);
  // ERR-DAG: note: wrapper fw::column::column (column.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: column.cpp:[[#@LINE-4]] (pmem), column.cpp:[[#@LINE-3]] (pmem)
  long len = 4 << 20;
  char *buf = scratch(len);
  double s = ranks.sum() + edges.sum();
  for (int round = 0; round < 10; round++) { // flags and scratch are hot
    s += flags.sum();
    for (long i = 0; i < len && round < 6; i++)
      s += buf[i];
  }
  // OUT: flags 0 ranks 1 edges 1 scratch 0/1
  std::printf("flags %d ranks %d edges %d scratch %d/%d\n", tier(flags.data),
              tier(ranks.data), tier(edges.data), tier(buf),
              tier(buf + len - 1));
  std::printf("checksum: %.0f\n", s);
  std::free(buf);
  return 0;
}
// ERR: 3 of 3 placed sites rewritten in 1 files
