/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): a NUMA node's real room and moving pages between
 * nodes, for the policy's use of the DRAM that is really there (tw_room.c).
 * The room of a node is its free memory (MemFree of its /sys meminfo) less,
 * per zone (/proc/zoneinfo), the free pages under its low watermark plus
 * its lowmem_reserve for a program's pages: below that the page allocator
 * takes first-touch pages from the zone after it, then the next node
 * (zone_reclaim_mode 0), and wakes kswapd, so free memory under it is not
 * room for a new block, and down to it first touch still gets local pages
 * (the high watermark, tried first, left room unused that first touch
 * took). The reserve keeps most of a small DMA zone (and, on a large
 * machine, ~1/256 of the Normal zone's size in DMA32) from a program; on
 * a 1 GiB node it leaves 12 of the DMA zone's 16 MiB to it. Pages move
 * with move_pages(2) (resident pages only, no change of policy) or, for a
 * range whose future faults must go to the new node too, mbind(2)
 * MPOL_PREFERRED(_MANY) on the range first - never MPOL_BIND (a full node
 * must not kill the program). Decides nothing: which pages move where is
 * the policy's.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TW_PAGE 4096u
#define TW_HUGE ((uintptr_t)2 << 20) /* a PMD-sized huge page */
#define TW_MOVE_CHUNK 512                  /* pages of one TW_HUGE */

/* What /proc/zoneinfo says of the zone being read: a zone of node
 * \p node (of the file's `Node N, zone NAME` line), its free pages, its low
 * watermark, and its largest lowmem_reserve (`protection: (...)`: what it
 * keeps from allocations that could use a higher zone - a program's pages
 * can use ZONE_MOVABLE, the last but one entry, as large as the last). */
typedef struct tw_zone {
  unsigned node;
  int mine;
  uint64_t free, low, protect;
  uint64_t not_room; /* pages, the node's zones read so far */
  int cpu;           /* the `cpu: N` pageset being read, -1 */
  uint64_t *pcp;     /* NULL, or pages in each CPU's lists (TW_CPUS_MAX) */
} tw_zone;

static uint64_t tw_num(const char **p) {
  uint64_t v = 0;
  while (**p == ' ' || **p == '\t' || **p == '(' || **p == ',')
    (*p)++;
  while (**p >= '0' && **p <= '9')
    v = v * 10 + (uint64_t)(*(*p)++ - '0');
  return v;
}

/* A zone of the node read to its end: of its free pages, those under its
 * low watermark plus its reserve are no room (all of them, when it has no
 * more: the DMA zone's 16 MiB on most machines). */
static void tw_zone_done(tw_zone *z) {
  if (z->mine) {
    uint64_t keep = z->low + z->protect;
    z->not_room += z->free < keep ? z->free : keep;
  }
  z->mine = 0;
  z->free = z->low = z->protect = 0;
}

static void tw_zone_line(const char *s, tw_zone *z) {
  while (*s == ' ' || *s == '\t')
    s++;
  if (!strncmp(s, "Node ", 5)) {
    tw_zone_done(z);
    s += 5;
    z->mine = tw_num(&s) == z->node;
    z->cpu = -1;
  } else if (!z->mine)
    return;
  else if (!strncmp(s, "cpu:", 4)) {
    s += 4;
    uint64_t c = tw_num(&s);
    z->cpu = c < TW_CPUS_MAX ? (int)c : -1;
  } else if (!strncmp(s, "count:", 6) && z->pcp && z->cpu >= 0) {
    s += 6;
    z->pcp[z->cpu] += tw_num(&s);
  } else if (!strncmp(s, "pages free", 10)) {
    s += 10;
    z->free = tw_num(&s);
  } else if (!strncmp(s, "low", 3) && (s[3] == ' ' || s[3] == '\t')) {
    s += 3;
    z->low = tw_num(&s);
  } else if (!strncmp(s, "protection:", 11)) {
    s += 11;
    while (*s && *s != ')') {
      uint64_t v = tw_num(&s);
      z->protect = v > z->protect ? v : z->protect;
      if (*s != ',' && *s != ' ')
        break;
    }
  }
}

/* What of node \p node's free memory is no room, in bytes: per zone, the
 * free pages under its low watermark plus lowmem_reserve, from /proc/zoneinfo
 * (TIERWISE_SYSFS_NODE: DIR/zoneinfo); read in pieces (the file grows with
 * the CPUs). */
static uint64_t tw_zone_read(unsigned node, uint64_t *pcp) {
  char buf[4096];
  int fd = tw_sys_open_kernel("/proc", "zoneinfo");
  if (fd < 0)
    return 0;
  tw_zone z = {.node = node, .cpu = -1, .pcp = pcp};
  size_t have = 0;
  for (int eof = 0; !eof;) {
    ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
    have += got > 0 ? (size_t)got : 0;
    eof = got <= 0;
    size_t start = 0;
    while (start < have) {
      char *nl = memchr(buf + start, '\n', have - start);
      if (!nl && !eof && (start || have < sizeof(buf) - 1))
        break; /* a partial line: read more (one too long is cut) */
      char *end = nl ? nl : buf + have;
      *end = 0;
      tw_zone_line(buf + start, &z);
      start = (size_t)(end - buf) + 1;
    }
    start = start < have ? start : have;
    memmove(buf, buf + start, have - start);
    have -= start;
  }
  tw_fd_close(fd);
  tw_zone_done(&z);
  return z.not_room * TW_PAGE;
}

static uint64_t tw_zone_not_room(unsigned node) {
  return tw_zone_read(node, NULL);
}

void tw_node_pcp(unsigned node, uint64_t pcp[TW_CPUS_MAX]) {
  memset(pcp, 0, TW_CPUS_MAX * sizeof(uint64_t));
  tw_zone_read(node, pcp);
  for (int c = 0; c < TW_CPUS_MAX; c++)
    pcp[c] *= TW_PAGE;
}

int tw_kernel_demotes(void) {
  char buf[16];
  ssize_t got = tw_sys_read_kernel("/sys/kernel/mm/numa", "demotion_enabled",
                                   buf, sizeof(buf));
  /* (a sysfs bool: "true"; older spellings "Y", "1") */
  return got > 0 && (buf[0] == 't' || buf[0] == 'Y' || buf[0] == '1');
}

uint64_t tw_node_room(unsigned node, uint64_t *free_out, uint64_t *wmark_out) {
  uint64_t free = tw_node_meminfo(node, "MemFree");
  uint64_t wmark = tw_zone_not_room(node);
  if (free_out)
    *free_out = free;
  if (wmark_out)
    *wmark_out = wmark;
  return free > wmark ? free - wmark : 0;
}

int tw_cpu_node(void) {
  unsigned cpu, node;
  if (getcpu(&cpu, &node) || node >= TW_NODES_MAX)
    return -1;
  return (int)node;
}

/* One chunk of move_pages: the nodes of \p n pages into status (nodes
 * NULL) or their move (to *nodes). 0, or -1. */
static int tw_move_chunk(void **pages, unsigned long n, const int *nodes,
                         int *status) {
  return syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE)
             < 0
             ? -1
             : 0;
}

/* Pages of \p status (\p n) on node \p node. */
static unsigned long tw_on_node(const int *status, unsigned long n, int node) {
  unsigned long k = 0;
  for (unsigned long i = 0; i < n; i++)
    k += status[i] == node;
  return k;
}

/* Of [lo, hi)'s pages: bytes not yet resident, and resident on another
 * node than \p node (-1: none counted). */
static size_t tw_pages_count(uintptr_t lo, uintptr_t hi, int node,
                             size_t *elsewhere) {
  void *pages[TW_MOVE_CHUNK];
  int status[TW_MOVE_CHUNK];
  lo = (lo + TW_PAGE - 1) & ~(uintptr_t)(TW_PAGE - 1);
  hi &= ~(uintptr_t)(TW_PAGE - 1);
  size_t absent = 0;
  *elsewhere = 0;
  while (lo < hi) {
    unsigned long n = 0;
    for (; n < TW_MOVE_CHUNK && lo < hi; n++, lo += TW_PAGE)
      pages[n] = (void *)lo;
    if (tw_move_chunk(pages, n, NULL, status))
      return absent; /* (no move_pages: nothing known) */
    /* (never touched: -EFAULT, follow_page's FOLL_DUMP answer for a hole
     * in anonymous memory; -ENOENT for a page table without the page) */
    for (unsigned long i = 0; i < n; i++) {
      absent += status[i] < 0 ? TW_PAGE : 0;
      *elsewhere +=
          node >= 0 && status[i] >= 0 && status[i] != node ? TW_PAGE : 0;
    }
  }
  return absent;
}

size_t tw_pages_absent(uintptr_t lo, uintptr_t hi) {
  size_t elsewhere;
  return tw_pages_count(lo, hi, -1, &elsewhere);
}

size_t tw_pages_elsewhere(uintptr_t lo, uintptr_t hi, int node) {
  size_t elsewhere;
  tw_pages_count(lo, hi, node, &elsewhere);
  return elsewhere;
}

/* tw_pages_move_cost's figures (relaxed atomics: the watcher moves, and
 * without one the program's threads). Under TCG a call into the DRAM node
 * took from 18 us to 50 ms a page (issue 39's slow kernel phases): its cost
 * is shown, not assumed. */
static tw_move_cost tw_moves;

static void tw_move_cost_add(unsigned long pages, uint64_t ns) {
  __atomic_fetch_add(&tw_moves.calls, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&tw_moves.pages, pages, __ATOMIC_RELAXED);
  __atomic_fetch_add(&tw_moves.cpu_ns, ns, __ATOMIC_RELAXED);
  uint64_t per = pages ? ns / pages : 0;
  uint64_t w = __atomic_load_n(&tw_moves.worst_ns_per_page, __ATOMIC_RELAXED);
  while (per > w && !__atomic_compare_exchange_n(&tw_moves.worst_ns_per_page,
                                                 &w, per, 0, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
    ;
}

void tw_pages_move_cost(tw_move_cost *out) {
  out->calls = __atomic_load_n(&tw_moves.calls, __ATOMIC_RELAXED);
  out->pages = __atomic_load_n(&tw_moves.pages, __ATOMIC_RELAXED);
  out->cpu_ns = __atomic_load_n(&tw_moves.cpu_ns, __ATOMIC_RELAXED);
  out->worst_ns_per_page =
      __atomic_load_n(&tw_moves.worst_ns_per_page, __ATOMIC_RELAXED);
}

size_t tw_pages_move(uintptr_t lo, uintptr_t hi, int from, int to, size_t want,
                     int backward, uintptr_t *stop) {
  void *pages[TW_MOVE_CHUNK], *sel[TW_MOVE_CHUNK];
  int status[TW_MOVE_CHUNK], nodes[TW_MOVE_CHUNK];
  lo = (lo + TW_PAGE - 1) & ~(uintptr_t)(TW_PAGE - 1);
  hi &= ~(uintptr_t)(TW_PAGE - 1);
  size_t moved = 0;
  uintptr_t at = backward ? hi : lo; /* how far it has looked */
  while (moved < want && (backward ? at > lo : at < hi)) {
    /* one 2 MiB-aligned piece: a transparent huge page moves whole when
     * one of its subpages does, so it must lie in one chunk to be counted
     * once */
    uintptr_t first, last;
    if (backward) {
      first = (at - 1) & ~(uintptr_t)(TW_HUGE - 1);
      first = first > lo ? first : lo;
      last = at;
    } else {
      first = at;
      last = (at & ~(uintptr_t)(TW_HUGE - 1)) + TW_HUGE;
      last = last < hi ? last : hi;
    }
    unsigned long n = (unsigned long)((last - first) / TW_PAGE);
    for (unsigned long i = 0; i < n; i++)
      pages[i] = (void *)(first + i * TW_PAGE);
    at = backward ? first : last;
    if (tw_move_chunk(pages, n, NULL, status))
      break;
    unsigned long before = tw_on_node(status, n, to), k = 0;
    /* the pages on `from` (any other node than `to` when from < 0), nearest
     * the end it walks from, until `want` */
    for (unsigned long j = 0; j < n && moved + k * TW_PAGE < want; j++) {
      unsigned long i = backward ? n - 1 - j : j;
      int st = status[i];
      if (st < 0 || st == to || (from >= 0 && st != from))
        continue;
      sel[k] = pages[i];
      nodes[k++] = to;
    }
    if (!k)
      continue;
    /* moved: the chunk's pages on `to` now less before (the move's own
     * status says -EBUSY for a huge page's other subpages); the target
     * full (-ENOMEM): stop */
    uint64_t t0 = tw_thread_cpu_ns();
    int failed = tw_move_chunk(sel, k, nodes, status) < 0;
    tw_move_cost_add(k, tw_thread_cpu_ns() - t0);
    if (failed)
      break;
    int full = 0;
    for (unsigned long i = 0; i < k; i++)
      full |= status[i] == -ENOMEM;
    if (tw_move_chunk(pages, n, NULL, status))
      break;
    unsigned long after = tw_on_node(status, n, to);
    moved += after > before ? (after - before) * TW_PAGE : 0;
    if (full)
      break;
  }
  if (stop)
    *stop = at;
  return moved;
}

/* The policy modes tw_range_prefer tries, best first; the first one the
 * kernel refuses (EINVAL) is not tried again. MPOL_PREFERRED_MANY with the
 * one node, not MPOL_PREFERRED: a fault under MPOL_PREFERRED (or the default
 * policy) takes the node's pages only while its free memory is above the
 * low watermark, then goes to the next node at once - while the free pages
 * in the CPU's per-CPU lists, which the watermark check does not count, stay
 * unused (6-16 MiB of the yardstick guest's 1 GiB node 0 on 6.12). Under
 * MPOL_PREFERRED_MANY (5.15) a first attempt on the node alone, without
 * reclaim, may go down to the min watermark and takes those lists' pages;
 * only then other nodes. With MPOL_F_NUMA_BALANCING (accepted with it from
 * 6.10) the NUMA-balancing scanner still samples the range (it skips a range
 * with another mbind policy) and promotes its pages that spilled. */
static const int tw_prefer_modes[] = {
    MPOL_PREFERRED_MANY | MPOL_F_NUMA_BALANCING, MPOL_PREFERRED_MANY,
    MPOL_PREFERRED};
static int tw_prefer_mode; /* index of the first mode not refused */

int tw_range_prefer_many(void) {
  return __atomic_load_n(&tw_prefer_mode, __ATOMIC_RELAXED) < 2;
}

int tw_range_prefer(uintptr_t lo, uintptr_t hi, int node) {
  lo = (lo + TW_PAGE - 1) & ~(uintptr_t)(TW_PAGE - 1);
  hi &= ~(uintptr_t)(TW_PAGE - 1);
  if (hi <= lo)
    return 0;
  if (node < 0)
    return (int)tw_sys_mbind((void *)lo, hi - lo, MPOL_DEFAULT, NULL, 0, 0);
  tw_nodeset one = {{0}};
  tw_set_add(&one, (unsigned)node);
  int saved = errno; /* (a refused mode is not the program's error) */
  for (int m = __atomic_load_n(&tw_prefer_mode, __ATOMIC_RELAXED);; m++) {
    long r = tw_sys_mbind((void *)lo, hi - lo, tw_prefer_modes[m], one.bits,
                          TW_NODES_MAX + 1, 0);
    if (!r)
      errno = saved;
    if (!r || errno != EINVAL || m == 2)
      return (int)r;
    __atomic_store_n(&tw_prefer_mode, m + 1, __ATOMIC_RELAXED);
  }
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

int tw_range_fault_default(uintptr_t lo, uintptr_t hi) {
  lo = (lo + TW_PAGE - 1) & ~(uintptr_t)(TW_PAGE - 1);
  hi &= ~(uintptr_t)(TW_PAGE - 1);
  if (hi <= lo)
    return 0;
  /* fault every page in under the range's policy now: fresh anonymous
   * memory, not yet handed to the program (before 5.14: a write of the zero
   * each fresh page reads as) */
  if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE))
    for (uintptr_t a = lo; a < hi; a += TW_PAGE)
      *(volatile char *)a = 0;
  /* the pages stay where they are; the range's policy is the default one
   * again, which the NUMA-balancing scanner samples */
  return tw_range_prefer(lo, hi, -1);
}
