/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the NUMA node backend, for tiers that are nodes of
 * this machine: `numa:N`, and `kmem` (the nodes MEMKIND_DAX_KMEM_NODES
 * names, else the nodes with memory and no CPUs, read from /sys: what a
 * KMEM-DAX or CXL node looks like - memkind's own DAX_KMEM kind is never
 * used, so kmem gets heads, MPOL_PREFERRED and the capacity checks too).
 *
 * Two kinds of blocks (runtime/README.md "The NUMA node backend"):
 * - Large ones (TW_NUMA_OWN_MIN and more) are their own anonymous mapping,
 *   its policy set with mbind(2) before any page is touched, a 64-byte
 *   header below the block (mapping length, offset of the block); free is
 *   munmap, so the node gets the pages back at once; realloc is mremap.
 * - Small ones come from memkind: a fixed kind (memkind_create_fixed) over
 *   a reserved region of address space bound the same way, so that small
 *   objects and jemalloc's metadata for them get their pages from the node;
 *   libmemkind is loaded and the kind made at the tier's first small block.
 * Split objects (a DRAM head) bind their tail range the same way
 * (tw_split.c, split_tail).
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
#include <stdlib.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TW_NUMA_CHECK_MIN ((size_t)1 << 20)
/* Blocks of this size and more are their own mapping (docs/tiers.md: measured). */
#define TW_NUMA_OWN_MIN ((size_t)256 << 10)
#define TW_PAGE ((size_t)4096)
#define TW_GIB ((size_t)1 << 30)

typedef struct tw_numa_tier {
  tw_nodeset nodes;
  int nnodes;
  uintptr_t region; /* the small blocks' arena (memkind fixed kind) */
  size_t region_len;
} tw_numa_tier;
static tw_numa_tier tw_nt[TW_TIER_COUNT];

/* A large block's header, the 64 bytes below it: its mapping starts
 * `off` bytes below the block and is `len` bytes long. */
typedef struct tw_numa_hdr {
  uint64_t magic;
  size_t len, off;
} tw_numa_hdr;
#define TW_NUMA_MAGIC 0x74776e756d61686cull
#define TW_NUMA_HDR ((size_t)64)

/* Freed large blocks kept mapped for reuse, at most TW_NUMA_KEEP bytes of
 * them: a fresh mapping's pages fault in one by one (8 us a page on the
 * 2-core VM where this was measured: a 256 KiB block malloc'ed, written and
 * freed in a loop took 537 us from fresh mappings, 26 us reused), and a
 * program that frees a big temporary each iteration allocates the same size
 * again (8 MiB blocks: 17 ms an iteration from fresh mappings, 1.6 ms
 * reused). What the cache holds is the most that frees leave on the node. */
#define TW_NUMA_KEEP ((size_t)12 << 20)
#define TW_NUMA_KEEP_N 8
typedef struct tw_numa_kept {
  uint8_t *base[TW_NUMA_KEEP_N];
  size_t len[TW_NUMA_KEEP_N], bytes;
  int next; /* the slot to fill (or empty) next */
  pthread_mutex_t lock;
} tw_numa_kept;
static tw_numa_kept tw_kept[TW_TIER_COUNT];


/* A small file of /sys/devices/system/node (TIERWISE_SYSFS_NODE: another
 * directory, for tests) into \p buf (NUL-terminated); its length or -1. */
static ssize_t tw_read_small(const char *name, char *buf, size_t cap) {
  return tw_sys_read_kernel("/sys/devices/system/node", name, buf, cap);
}

/* A node list ("0-1,3") into a set; the number of nodes. */
static int tw_parse_nodelist(const char *s, tw_nodeset *out) {
  int count = 0;
  memset(out, 0, sizeof(*out));
  while (*s >= '0' && *s <= '9') {
    unsigned a = 0, b;
    while (*s >= '0' && *s <= '9')
      a = a * 10 + (unsigned)(*s++ - '0');
    b = a;
    if (*s == '-') {
      b = 0;
      for (s++; *s >= '0' && *s <= '9';)
        b = b * 10 + (unsigned)(*s++ - '0');
    }
    for (unsigned n = a; n <= b && n < TW_NODES_MAX; n++, count++)
      tw_set_add(out, n);
    if (*s == ',')
      s++;
  }
  return count;
}

/* A node list of /sys into a set; 0, or -1 (unreadable). */
static int tw_read_nodelist(const char *path, tw_nodeset *out) {
  char buf[1024];
  memset(out, 0, sizeof(*out));
  if (tw_read_small(path, buf, sizeof(buf)) < 0)
    return -1;
  tw_parse_nodelist(buf, out);
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

int tw_numa_cpu_nodes(tw_nodeset *out) {
  int n = 0;
  if (tw_read_nodelist("has_cpu", out))
    return 0;
  for (unsigned i = 0; i < TW_NODES_MAX; i++)
    n += tw_set_has(out, i);
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

/* The tier's first node alone (MPOL_PREFERRED's one node). */
static tw_nodeset tw_numa_first(const tw_numa_tier *t) {
  tw_nodeset one = {{0}};
  for (unsigned i = 0; i < TW_NODES_MAX; i++)
    if (tw_set_has(&t->nodes, i)) {
      tw_set_add(&one, i);
      break;
    }
  return one;
}

/* The tier's policy on [p, p+len): preferred, never bound (header). */
static int tw_numa_bind(const tw_numa_tier *t, void *p, size_t len) {
  if (t->nnodes > 1 &&
      !tw_sys_mbind(p, len, MPOL_PREFERRED_MANY, t->nodes.bits,
                    TW_NODES_MAX + 1, 0))
    return 0;
  tw_nodeset one = tw_numa_first(t);
  return (int)tw_sys_mbind(p, len, MPOL_PREFERRED, one.bits, TW_NODES_MAX + 1,
                           0);
}

/* The calling thread's policy while libmemkind loads for a NUMA tier
 * (tw_memkind_fixed_ready, at the tier's first small block): the pages
 * the load takes - the page cache that libmemkind, libdaxctl, libkmod and
 * libcrypto are read into (~8 MiB with readahead), their relocated data,
 * jemalloc's start-up - come from the tier's nodes, not from the DRAM node,
 * whose room is the placement's budget (page-cache pages follow the
 * allocating thread's policy, not a mapping's). on = 1: prefer the tier's
 * nodes, the thread's own policy saved; on = 0: that policy back. Pages
 * already in the page cache stay where they are. */
static __thread int tw_saved_mode = -1;
static __thread unsigned long tw_saved_mask[1];

static void tw_numa_prefer(int tier, int on) {
  const tw_numa_tier *t = &tw_nt[tier];
  if (on) {
    int mode;
    tw_saved_mode = -1;
    if (!t->nnodes || syscall(SYS_get_mempolicy, &mode, tw_saved_mask,
                              (unsigned long)TW_NODES_MAX + 1, NULL, 0UL))
      return; /* (more nodes than a mask holds: left as it is) */
    tw_nodeset one = tw_numa_first(t);
    if (!syscall(SYS_set_mempolicy, MPOL_PREFERRED, one.bits,
                 (unsigned long)TW_NODES_MAX + 1))
      tw_saved_mode = mode;
  } else if (tw_saved_mode >= 0) {
    syscall(SYS_set_mempolicy, tw_saved_mode, tw_saved_mask,
            (unsigned long)TW_NODES_MAX + 1);
    tw_saved_mode = -1;
  }
}

/* kmem's nodes: MEMKIND_DAX_KMEM_NODES (memkind's own variable, so a
 * machine set up for memkind needs nothing else), else the memory-only
 * nodes of /sys. */
static int tw_kmem_nodes(tw_nodeset *out) {
  const char *env = getenv("MEMKIND_DAX_KMEM_NODES");
  if (env && *env)
    return tw_parse_nodelist(env, out);
  return tw_numa_memory_only(out);
}

static int tw_numa_open(int tier) {
  tw_numa_tier *t = &tw_nt[tier];
  pthread_mutex_init(&tw_kept[tier].lock, NULL);
  if (tier == TW_TIER_KMEM) {
    t->nnodes = tw_kmem_nodes(&t->nodes);
    if (!t->nnodes) {
      tw_warn("tier kmem is not available on this machine (no NUMA node has "
              "memory without CPUs, and MEMKIND_DAX_KMEM_NODES names none); ",
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
  /* Address space for the small blocks' arena: twice the nodes' memory
   * (objects are freed and reused; jemalloc fragments), at least 1 GiB,
   * starting on a GiB boundary: the page-owner map then marks it whole
   * GiB by whole GiB, with no DRAM per GiB (tw_pmap_mark). Reserved, not
   * committed (MAP_NORESERVE): only touched pages take memory. */
  uint64_t total = tw_nodes_sum(t, "MemTotal");
  size_t len = (size_t)(2 * total + TW_GIB - 1) & ~(TW_GIB - 1);
  if (len < TW_GIB)
    len = TW_GIB;
  uint8_t *r = tw_sys_mmap(NULL, len + TW_GIB, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) {
    tw_warn("tier ", tw_tier_str(tier),
            ": cannot reserve address space for its arena; its sites fall "
            "back to dram");
    return -1;
  }
  uint8_t *g =
      (uint8_t *)(((uintptr_t)r + TW_GIB - 1) & ~(uintptr_t)(TW_GIB - 1));
  if (g > r)
    tw_sys_munmap(r, (size_t)(g - r));
  if (r + TW_GIB > g)
    tw_sys_munmap(g + len, (size_t)(r + TW_GIB - g));
  if (tw_numa_bind(t, g, len)) {
    tw_warn("tier ", tw_tier_str(tier),
            ": mbind failed; its sites fall back to dram");
    tw_sys_munmap(g, len);
    return -1;
  }
  tw_pmap_mark((uintptr_t)g, len, tier);
  /* its memkind kind is made at the tier's first small block
   * (tw_numa_small) */
  t->region = (uintptr_t)g;
  t->region_len = len;
  return 0;
}

/* Room on the tier's nodes for \p size more bytes (large objects only:
 * reading meminfo costs a few microseconds). */
static int tw_numa_room(int tier, size_t size) {
  return size < TW_NUMA_CHECK_MIN || tw_nodes_sum(&tw_nt[tier], "MemFree") >= size;
}

/* A block of the small blocks' arena (not a large block's mapping). */
static inline int tw_numa_in_arena(int tier, const void *p) {
  return (uintptr_t)p - tw_nt[tier].region < tw_nt[tier].region_len;
}

static tw_numa_hdr *tw_numa_hdr_of(const void *p) {
  return (tw_numa_hdr *)((uintptr_t)p - TW_NUMA_HDR);
}

/* A large block of \p size, aligned to \p align (a power of two), as its
 * own mapping bound to the tier's nodes (fresh pages: zeroed). */
/* A kept mapping of exactly \p len bytes (its pages still there), or NULL. */
static uint8_t *tw_numa_reuse(int tier, size_t len) {
  tw_numa_kept *k = &tw_kept[tier];
  uint8_t *b = NULL;
  if (!__atomic_load_n(&k->bytes, __ATOMIC_RELAXED))
    return NULL;
  pthread_mutex_lock(&k->lock);
  for (int i = 0; i < TW_NUMA_KEEP_N && !b; i++)
    if (k->base[i] && k->len[i] == len) {
      b = k->base[i];
      k->base[i] = NULL;
      k->bytes -= len;
    }
  pthread_mutex_unlock(&k->lock);
  return b;
}

/* Keep a freed mapping for reuse, unmapping older kept ones to make room
 * (round robin); 0, or -1: too big to keep, the caller unmaps it. */
static int tw_numa_keep(int tier, uint8_t *base, size_t len) {
  tw_numa_kept *k = &tw_kept[tier];
  uint8_t *drop[TW_NUMA_KEEP_N];
  size_t dlen[TW_NUMA_KEEP_N];
  int nd = 0;
  if (len > TW_NUMA_KEEP)
    return -1;
  pthread_mutex_lock(&k->lock);
  for (int n = 0; n < TW_NUMA_KEEP_N &&
                  (k->bytes + len > TW_NUMA_KEEP || k->base[k->next]);
       n++, k->next = (k->next + 1) % TW_NUMA_KEEP_N)
    if (k->base[k->next]) {
      drop[nd] = k->base[k->next];
      dlen[nd++] = k->len[k->next];
      k->bytes -= k->len[k->next];
      k->base[k->next] = NULL;
    }
  k->base[k->next] = base;
  k->len[k->next] = len;
  k->bytes += len;
  k->next = (k->next + 1) % TW_NUMA_KEEP_N;
  pthread_mutex_unlock(&k->lock);
  for (int i = 0; i < nd; i++) { /* unmarked before unmapped (tw_mmap.c) */
    tw_pmap_mark((uintptr_t)drop[i], dlen[i], 0);
    tw_sys_munmap(drop[i], dlen[i]);
  }
  return 0;
}

/* fork: the kept mappings' lock (a leaf); in the child also memkind's
 * lock, which another thread may have held loading libmemkind for the
 * tier's first small block */
static void tw_numa_atfork(int tier, int phase) {
  tw_mutex_atfork(&tw_kept[tier].lock, phase);
  if (phase == 2)
    tw_memkind_atfork_child();
}

static void *tw_numa_map(int tier, size_t size, size_t align, int zero) {
  if (!tw_numa_room(tier, size))
    return NULL;
  size_t off = align <= TW_NUMA_HDR ? TW_NUMA_HDR
               : align <= TW_PAGE   ? align
                                    : TW_PAGE;
  if (size > ((size_t)1 << 56))
    return NULL;
  size_t len = (off + size + TW_PAGE - 1) & ~(TW_PAGE - 1);
  size_t extra = align > TW_PAGE ? align : 0;
  if (!extra) {
    uint8_t *k = tw_numa_reuse(tier, len);
    if (k) {
      tw_numa_hdr *h = tw_numa_hdr_of(k + off);
      h->magic = TW_NUMA_MAGIC;
      h->len = len;
      h->off = off;
      if (zero)
        memset(k + off, 0, size);
      return k + off;
    }
  }
  uint8_t *r = tw_sys_mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED)
    return NULL;
  uint8_t *base = r;
  if (extra) { /* the block at an align boundary, one page into the map */
    uintptr_t at = ((uintptr_t)r + off + align - 1) & ~(uintptr_t)(align - 1);
    base = (uint8_t *)(at - off);
    if (base > r)
      tw_sys_munmap(r, (size_t)(base - r));
    if (r + len + extra > base + len)
      tw_sys_munmap(base + len, (size_t)(r + len + extra - (base + len)));
  }
  if (tw_numa_bind(&tw_nt[tier], base, len)) {
    tw_sys_munmap(base, len);
    return NULL;
  }
  tw_pmap_mark((uintptr_t)base, len, tier);
  tw_numa_hdr *h = tw_numa_hdr_of(base + off);
  h->magic = TW_NUMA_MAGIC;
  h->len = len;
  h->off = off;
  return base + off;
}

static void tw_numa_unmap(int tier, void *p) {
  tw_numa_hdr *h = tw_numa_hdr_of(p);
  uint8_t *base = (uint8_t *)p - h->off;
  size_t len = h->len;
  if (!tw_numa_keep(tier, base, len))
    return;
  /* unmarked before it is unmapped (tw_mmap.c, munmap) */
  tw_pmap_mark((uintptr_t)base, len, 0);
  tw_sys_munmap(base, len);
}

/* The small blocks' kind is ready: made at the first small block, so that
 * a run whose slow-tier blocks are all large never loads libmemkind (and
 * libdaxctl, libkmod, libcrypto behind it: ~9M instructions, and their
 * page-cache pages, 1.5-2 MiB, on the DRAM node). */
static inline int tw_numa_small(int tier) {
  const tw_numa_tier *t = &tw_nt[tier];
  return tw_memkind_fixed_ready(tier, (void *)t->region, t->region_len,
                                tw_numa_prefer);
}

static void *tw_numa_malloc(int tier, size_t size) {
  if (size >= TW_NUMA_OWN_MIN)
    return tw_numa_map(tier, size, 16, 0);
  return tw_numa_small(tier) ? tw_mk_malloc(tier, size) : NULL;
}
static void *tw_numa_calloc(int tier, size_t size) {
  if (size >= TW_NUMA_OWN_MIN)
    return tw_numa_map(tier, size, 16, 1);
  return tw_numa_small(tier) ? tw_mk_calloc(tier, size) : NULL;
}
static void *tw_numa_aligned(int tier, size_t align, size_t size) {
  if (size >= TW_NUMA_OWN_MIN)
    return tw_numa_map(tier, size, align, 0);
  return tw_numa_small(tier) ? tw_mk_aligned(tier, align, size) : NULL;
}

static size_t tw_numa_usable(int tier, void *p) {
  if (tw_numa_in_arena(tier, p))
    return tw_mk_usable(tier, p);
  tw_numa_hdr *h = tw_numa_hdr_of(p);
  return h->len - h->off;
}

static void tw_numa_free(int tier, void *p) {
  if (tw_numa_in_arena(tier, p))
    tw_mk_free(tier, p);
  else
    tw_numa_unmap(tier, p);
}

/* A large block resized with mremap: the kernel moves its pages (and the
 * mapping's policy) instead of copying them. NULL: failed, p kept. */
static void *tw_numa_remap(int tier, void *p, size_t size) {
  tw_numa_hdr *h = tw_numa_hdr_of(p);
  size_t off = h->off, len = h->len;
  if (size > ((size_t)1 << 56))
    return NULL;
  size_t nlen = (off + size + TW_PAGE - 1) & ~(TW_PAGE - 1);
  if (nlen == len)
    return p;
  if (nlen > len && !tw_numa_room(tier, nlen - len))
    return NULL;
  uint8_t *base = (uint8_t *)p - off;
  /* Unmarked first: once mremap has moved or shrunk it, the kernel may
   * hand the old range to another thread at once (tw_mmap.c, munmap). */
  tw_pmap_mark((uintptr_t)base, len, 0);
  uint8_t *q = (uint8_t *)syscall(SYS_mremap, base, len, nlen, MREMAP_MAYMOVE);
  if (q == MAP_FAILED) {
    tw_pmap_mark((uintptr_t)base, len, tier);
    return NULL;
  }
  if (nlen > len) /* the mapping's policy moves with it; the new part too */
    tw_numa_bind(&tw_nt[tier], q, nlen);
  tw_pmap_mark((uintptr_t)q, nlen, tier);
  tw_numa_hdr_of(q + off)->len = nlen;
  return q + off;
}

static void *tw_numa_realloc(int tier, void *p, size_t size) {
  if (!tw_numa_in_arena(tier, p))
    return tw_numa_remap(tier, p, size);
  if (size < TW_NUMA_OWN_MIN)
    return tw_mk_realloc(tier, p, size);
  void *q = tw_numa_map(tier, size, 16, 0); /* grows out of the arena */
  if (!q)
    return NULL;
  size_t old = tw_mk_usable(tier, p);
  memcpy(q, p, old < size ? old : size);
  tw_mk_free(tier, p);
  return q;
}

static int tw_numa_split_tail(int tier, void *p, size_t len) {
  if (!tw_numa_room(tier, len))
    return -1;
  return tw_numa_bind(&tw_nt[tier], p, len);
}

/* memkind's jemalloc mapped memory of its own while serving the tier (its
 * default hooks: 2 MiB-aligned base blocks with the radix tree of extents,
 * tcaches...): bound to the tier's nodes like the arena it serves, so that
 * the node backend holds no DRAM the run report does not show. */
static void tw_numa_mapped(int tier, void *p, size_t len, int flags) {
  if ((flags & MAP_ANONYMOUS) && !(flags & MAP_SHARED) && tw_nt[tier].nnodes)
    tw_numa_bind(&tw_nt[tier], p, len);
}

/* "numa-node 1", "numa-nodes 2,3" */
static size_t tw_numa_describe(int tier, char *buf, size_t cap) {
  const tw_numa_tier *t = &tw_nt[tier];
  size_t n = 0;
  const char *what = t->nnodes > 1 ? "numa-nodes " : "numa-node ";
  for (; what[n] && n + 1 < cap; n++)
    buf[n] = what[n];
  for (unsigned i = 0, first = 1; i < TW_NODES_MAX; i++)
    if (tw_set_has(&t->nodes, i) && n + 24 < cap) {
      if (!first)
        buf[n++] = ',';
      n += tw_fmt_u64(buf + n, i);
      first = 0;
    }
  buf[n] = 0;
  return n;
}

const tw_tier_ops tw_numa_ops = {
    .name = "NUMA node (mbind MPOL_PREFERRED: own mappings, memkind fixed "
            "kind for small blocks)",
    .open = tw_numa_open,
    .malloc = tw_numa_malloc,
    .calloc = tw_numa_calloc,
    .aligned = tw_numa_aligned,
    .realloc = tw_numa_realloc,
    .free = tw_numa_free,
    .usable = tw_numa_usable,
    .split_tail = tw_numa_split_tail,
    .mapped = tw_numa_mapped,
    .describe = tw_numa_describe,
    .atfork = tw_numa_atfork,
    .cache_max = TW_NUMA_OWN_MIN - 1, /* memkind's blocks, not own maps */
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
