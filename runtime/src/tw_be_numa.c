/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the NUMA node backend, for tiers that are nodes of
 * this machine: `numa:N`, and `kmem` where memkind finds no KMEM-DAX node
 * (then the nodes with memory and no CPUs, read from /sys: what a CXL
 * expander or PMem in KMEM-DAX mode looks like).
 *
 * Objects come from memkind: a fixed kind (memkind_create_fixed, whose
 * documented use this is) over a reserved region of address space whose
 * policy is set with mbind(2) before any page is touched - so small and
 * large objects, and jemalloc's own metadata for them, get their pages from
 * the node when they are first touched. Split objects (a DRAM head) bind
 * their tail range the same way (tw_split.c, split_tail).
 *
 * Capacity (runtime/README.md "When the slow node is full"): the policy is
 * MPOL_PREFERRED (MPOL_PREFERRED_MANY for several nodes), never MPOL_BIND,
 * which makes a full node kill the program at fault time (OOM killer, or
 * SIGBUS) instead of failing an allocation. An allocation of 1 MiB or more
 * is refused (the caller falls back to DRAM and counts it) when the node's
 * free memory (its /sys meminfo) is below its size; pages faulted after the
 * node filled come from the next node the kernel prefers - the run report
 * states, per site, on which nodes the pages really are (tw_numa_pages).
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TW_NUMA_CHECK_MIN ((size_t)1 << 20)

typedef struct tw_numa_tier {
  tw_nodeset nodes;
  int nnodes;
  void *region;
  size_t region_len;
} tw_numa_tier;
static tw_numa_tier tw_nt[TW_TIER_COUNT];


/* A small file of /sys/devices/system/node (TIERWISE_SYSFS_NODE: another
 * directory, for tests) into \p buf (NUL-terminated); its length or -1. */
static ssize_t tw_read_small(const char *name, char *buf, size_t cap) {
  char path[4096];
  const char *dir = tw_cfg.sysfs_node ? tw_cfg.sysfs_node
                                      : "/sys/devices/system/node";
  size_t n = strlen(dir), m = strlen(name);
  if (n + m + 2 > sizeof(path))
    return -1;
  memcpy(path, dir, n);
  path[n] = '/';
  memcpy(path + n + 1, name, m + 1);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t got = read(fd, buf, cap - 1);
  close(fd);
  buf[got > 0 ? got : 0] = 0;
  return got;
}

/* A node list ("0-1,3") of /sys into a set; 0, or -1 (unreadable). */
static int tw_read_nodelist(const char *path, tw_nodeset *out) {
  char buf[1024];
  memset(out, 0, sizeof(*out));
  if (tw_read_small(path, buf, sizeof(buf)) < 0)
    return -1;
  for (char *s = buf; *s >= '0' && *s <= '9';) {
    unsigned a = 0, b;
    while (*s >= '0' && *s <= '9')
      a = a * 10 + (unsigned)(*s++ - '0');
    b = a;
    if (*s == '-') {
      b = 0;
      for (s++; *s >= '0' && *s <= '9';)
        b = b * 10 + (unsigned)(*s++ - '0');
    }
    for (unsigned n = a; n <= b && n < TW_NODES_MAX; n++)
      tw_set_add(out, n);
    if (*s == ',')
      s++;
  }
  return 0;
}

int tw_numa_memory_only(tw_nodeset *out) {
  tw_nodeset mem, cpu;
  int n = 0;
  memset(out, 0, sizeof(*out));
  if (tw_read_nodelist("has_memory", &mem) ||
      tw_read_nodelist("has_cpu", &cpu))
    return 0;
  for (unsigned i = 0; i < TW_NODES_MAX; i++)
    if (tw_set_has(&mem, i) && !tw_set_has(&cpu, i)) {
      tw_set_add(out, i);
      n++;
    }
  return n;
}

/* "Node N <field>: <v> kB" of node N's meminfo, in bytes (0: unknown). */
uint64_t tw_node_meminfo(unsigned node, const char *field) {
  char path[96] = "node", buf[2048];
  size_t n = strlen(path);
  n += tw_fmt_u64(path + n, node);
  memcpy(path + n, "/meminfo", 9);
  if (tw_read_small(path, buf, sizeof(buf)) < 0)
    return 0;
  char *at = strstr(buf, field);
  if (!at)
    return 0;
  at += strlen(field);
  while (*at == ' ' || *at == ':')
    at++;
  uint64_t v = 0;
  while (*at >= '0' && *at <= '9')
    v = v * 10 + (uint64_t)(*at++ - '0');
  return v << 10;
}

static uint64_t tw_nodes_sum(const tw_numa_tier *t, const char *field) {
  uint64_t sum = 0;
  for (unsigned i = 0; i < TW_NODES_MAX; i++)
    if (tw_set_has(&t->nodes, i))
      sum += tw_node_meminfo(i, field);
  return sum;
}

/* The tier's policy on [p, p+len): preferred, never bound (header). */
static int tw_numa_bind(const tw_numa_tier *t, void *p, size_t len) {
  int first = -1;
  for (unsigned i = 0; i < TW_NODES_MAX && first < 0; i++)
    if (tw_set_has(&t->nodes, i))
      first = (int)i;
  if (t->nnodes > 1 &&
      !tw_sys_mbind(p, len, MPOL_PREFERRED_MANY, t->nodes.bits,
                    TW_NODES_MAX + 1, 0))
    return 0;
  tw_nodeset one = {{0}};
  tw_set_add(&one, (unsigned)first);
  return (int)tw_sys_mbind(p, len, MPOL_PREFERRED, one.bits, TW_NODES_MAX + 1,
                           0);
}

static int tw_numa_open(int tier) {
  tw_numa_tier *t = &tw_nt[tier];
  if (tier == TW_TIER_KMEM) {
    t->nnodes = tw_numa_memory_only(&t->nodes);
    if (!t->nnodes) {
      tw_warn("tier kmem is not available on this machine (memkind finds no "
              "KMEM-DAX node and no NUMA node has memory without CPUs); ",
              "its sites fall back to dram", "");
      return -1;
    }
  } else {
    tw_nodeset mem;
    unsigned node = (unsigned)(tier - TW_TIER_NUMA0);
    if (tw_read_nodelist("has_memory", &mem) ||
        !tw_set_has(&mem, node)) {
      tw_warn("tier ", tw_tier_str(tier),
              ": this machine has no such NUMA node with memory; its sites "
              "fall back to dram");
      return -1;
    }
    memset(&t->nodes, 0, sizeof(t->nodes));
    tw_set_add(&t->nodes, node);
    t->nnodes = 1;
  }
  /* Address space for the node's arena: twice the nodes' memory (objects
   * are freed and reused; jemalloc fragments), at least 1 GiB. Reserved,
   * not committed (MAP_NORESERVE): only touched pages take memory. */
  uint64_t total = tw_nodes_sum(t, "MemTotal");
  size_t len = (size_t)(2 * total + ((size_t)1 << 30) - 1) &
               ~(((size_t)1 << 30) - 1);
  if (len < ((size_t)1 << 30))
    len = (size_t)1 << 30;
  void *r = tw_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) {
    tw_warn("tier ", tw_tier_str(tier),
            ": cannot reserve address space for its arena; its sites fall "
            "back to dram");
    return -1;
  }
  if (tw_numa_bind(t, r, len)) {
    tw_warn("tier ", tw_tier_str(tier),
            ": mbind failed; its sites fall back to dram");
    tw_sys_munmap(r, len);
    return -1;
  }
  tw_pmap_mark((uintptr_t)r, len, tier);
  if (tw_memkind_create_fixed(tier, r, len)) {
    tw_pmap_mark((uintptr_t)r, len, 0);
    tw_sys_munmap(r, len);
    return -1;
  }
  t->region = r;
  t->region_len = len;
  return 0;
}

/* Room on the tier's nodes for \p size more bytes (large objects only:
 * reading meminfo costs a few microseconds). */
static int tw_numa_room(int tier, size_t size) {
  return size < TW_NUMA_CHECK_MIN || tw_nodes_sum(&tw_nt[tier], "MemFree") >= size;
}

static void *tw_numa_malloc(int tier, size_t size) {
  return tw_numa_room(tier, size) ? tw_mk_malloc(tier, size) : NULL;
}
static void *tw_numa_calloc(int tier, size_t size) {
  return tw_numa_room(tier, size) ? tw_mk_calloc(tier, size) : NULL;
}
static void *tw_numa_aligned(int tier, size_t align, size_t size) {
  return tw_numa_room(tier, size) ? tw_mk_aligned(tier, align, size) : NULL;
}
static void *tw_numa_realloc(int tier, void *p, size_t size) {
  return tw_numa_room(tier, size) ? tw_mk_realloc(tier, p, size) : NULL;
}

static int tw_numa_split_tail(int tier, void *p, size_t len) {
  if (!tw_numa_room(tier, len))
    return -1;
  return tw_numa_bind(&tw_nt[tier], p, len);
}

const tw_tier_ops tw_numa_ops = {
    .name = "NUMA node (memkind fixed kind, mbind)",
    .open = tw_numa_open,
    .malloc = tw_numa_malloc,
    .calloc = tw_numa_calloc,
    .aligned = tw_numa_aligned,
    .realloc = tw_numa_realloc,
    .free = tw_mk_free,
    .usable = tw_mk_usable,
    .split_tail = tw_numa_split_tail,
};

size_t tw_numa_pages(const void *p, size_t len, uint64_t *per_node,
                     unsigned nnodes, size_t max) {
  enum { CHUNK = 256 };
  void *pages[CHUNK];
  int status[CHUNK];
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
  size_t n = ((uintptr_t)p + len - a + 4095) / 4096;
  size_t m = n < max ? n : max, looked = 0; /* page k * n / m, k < m */
  for (size_t k = 0; k < m;) {
    int j = 0;
    for (; j < CHUNK && k < m; j++, k++)
      pages[j] = (void *)(a + (k * n / m) * 4096);
    unsigned long cnt = (unsigned long)j;
    /* status: the node of a resident page, -ENOENT for one never touched */
    if (syscall(SYS_move_pages, 0, cnt, pages, NULL, status, 0))
      return looked;
    for (j = 0; j < (int)cnt; j++)
      if (status[j] >= 0 && (unsigned)status[j] < nnodes)
        per_node[status[j]]++;
    looked += cnt;
  }
  return looked;
}
