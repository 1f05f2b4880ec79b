/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy). The placement cache: the tables tw_placement.c builds
 * from a large placement.json (tw_ptable.h), kept in a file so that the
 * next process that loads the same placement reads them instead of the
 * JSON - every rank of an MPI job, every process of a pipeline.
 * advisor/FORMATS.md "placement cache" is the format; runtime/README.md
 * and docs/placement-loading.md say when it is used and what it saves
 * (an Open MPI start-up with an 11,909-site placement: 28M extra
 * instructions, 25M of them reading 4.5 MB of JSON).
 *
 * A derived file, never trusted: it is used only when it was made by this
 * very runtime (build-id) from this very file (device, inode, size,
 * modification and change times) with the same TIERWISE_TRACK_DEFAULT_MAX,
 * when its checksum holds and every index and offset in it is in bounds;
 * anything else and the JSON is read (and the cache written anew). It is
 * written to a temporary name and renamed, so a reader sees a whole file
 * or none, by one process at a time (tw_pc_save).
 */
#define _GNU_SOURCE
#include "tw_policy.h"
#include "tw_ptable.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TW_PC_MAGIC "twplcach"
#define TW_PC_VERSION 1

typedef struct tw_pc_head {
  char magic[8]; /* TW_PC_MAGIC */
  uint32_t version, head_bytes;
  char runtime[48]; /* the runtime's build-id, hex, NUL-padded */
  uint64_t dev, ino, size; /* the placement file's, and its times */
  int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
  uint64_t track_default_max; /* the setting tw_quiet_mark ran with */
  uint64_t total;             /* bytes of the whole cache file */
  uint64_t sum;               /* tw_pc_sum of the bytes after the head */
  uint64_t nstr;              /* bytes of the string pool (the last NUL) */
  int32_t nsites, nplans, nmods, nlive, nquiet, default_tier, depth, lead;
  uint32_t mask, tiers; /* tiers: TW_TIER_COUNT */
  uint64_t tier_mod[TW_TIER_COUNT][TW_PTIER_MODS];
  int32_t tier_nmod[TW_TIER_COUNT];
} tw_pc_head;

/* What the run report says of it: "read", "written", "not written",
 * "off" (no cache directory, or TIERWISE_PLACEMENT_CACHE_MIN 0), "small"
 * (fewer sites than that), "" (no placement file). */
static const char *tw_pc_state = "";
static char tw_pc_path[4096];

const char *tw_pcache_state(const char **path) {
  *path = tw_pc_path;
  return tw_pc_state;
}

/* A checksum of \p n bytes (a multiple of 8) against damage (a file cut
 * short or changed on disk), not against an adversary: four running sums
 * of 8-byte words, ~0.3 instructions a byte. */
static uint64_t tw_pc_sum(const char *p, size_t n) {
  uint64_t s[4] = {1, 2, 3, 4};
  size_t w = n / 8, k = 0;
  for (; k + 4 <= w; k += 4)
    for (int j = 0; j < 4; j++) {
      uint64_t v;
      memcpy(&v, p + 8 * (k + j), 8);
      s[j] += v ^ (s[j] >> 29);
    }
  for (; k < w; k++) {
    uint64_t v;
    memcpy(&v, p + 8 * k, 8);
    s[0] += v ^ (s[0] >> 29);
  }
  return s[0] * 0x9e3779b97f4a7c15ull ^ s[1] * 0xc2b2ae3d27d4eb4full ^
         s[2] * 0x165667b19e3779f9ull ^ s[3];
}

/* The cache file's path for the placement at \p path, in tw_pc_path: the
 * directory TIERWISE_CACHE_DIR, else $XDG_CACHE_HOME/tierwise, else
 * $HOME/.cache/tierwise; named by the hash of the placement's path, so that
 * a placement rewritten in place (advise -o again) replaces its entry. 0:
 * no directory (off). */
static int tw_pc_name(const char *path) {
  char dir[4096];
  const char *d = tw_cfg.cache_dir, *x;
  if (d && *d)
    snprintf(dir, sizeof(dir), "%s", d);
  else if ((x = secure_getenv("XDG_CACHE_HOME")) && *x == '/')
    snprintf(dir, sizeof(dir), "%s/tierwise", x);
  else if ((x = secure_getenv("HOME")) && *x == '/')
    snprintf(dir, sizeof(dir), "%s/.cache/tierwise", x);
  else
    return 0;
  int n = snprintf(tw_pc_path, sizeof(tw_pc_path), "%s/placement-%016llx.twpc",
                   dir, (unsigned long long)tw_hash_span(path, strlen(path)));
  return n > 0 && (size_t)n < sizeof(tw_pc_path) - 32;
}

static void tw_pc_key(tw_pc_head *h, const struct stat *st) {
  memset(h, 0, sizeof(*h));
  memcpy(h->magic, TW_PC_MAGIC, 8);
  h->version = TW_PC_VERSION;
  h->head_bytes = sizeof(*h);
  tw_own_build_id(h->runtime);
  h->dev = st->st_dev;
  h->ino = st->st_ino;
  h->size = (uint64_t)st->st_size;
  h->mtime_s = st->st_mtim.tv_sec;
  h->mtime_ns = st->st_mtim.tv_nsec;
  h->ctime_s = st->st_ctim.tv_sec;
  h->ctime_ns = st->st_ctim.tv_nsec;
  h->track_default_max = tw_cfg.track_default_max;
  h->tiers = TW_TIER_COUNT;
}

/* The head's fields up to `total` equal (the key), and a build-id. */
static int tw_pc_same(const tw_pc_head *a, const tw_pc_head *b) {
  return a->runtime[0] &&
         !memcmp(a, b, offsetof(tw_pc_head, total));
}

static size_t tw_pc_up8(size_t n) { return (n + 7) & ~(size_t)7; }

/* The sections after the head, in file order, for \p h's counts: their
 * offsets into \p off and the file's size. */
enum { TW_PC_SITES, TW_PC_PLANS, TW_PC_LIVE, TW_PC_PHASH, TW_PC_LEAD,
       TW_PC_LEADF, TW_PC_MODS, TW_PC_STR, TW_PC_END };
static int tw_pc_layout(const tw_pc_head *h, size_t off[TW_PC_END + 1]) {
  if (h->nsites < 0 || h->nplans < 0 || h->nplans > h->nsites ||
      h->nmods < 0 || h->nlive < 0 || h->nlive > 64 || h->mask > (1u << 30) ||
      (h->mask & (h->mask + 1)) || h->nstr > ((uint64_t)1 << 40))
    return 0;
  size_t slots = (size_t)h->mask + 1, n[TW_PC_END] = {
      (size_t)h->nsites * sizeof(tw_psite), (size_t)h->nplans * sizeof(tw_pplan),
      (size_t)h->nplans * (size_t)h->nlive * 8, slots * 4,
      h->lead ? slots * 8 : 0, h->lead ? slots * 8 : 0,
      (size_t)h->nmods * sizeof(tw_pmodule), (size_t)h->nstr};
  off[0] = sizeof(tw_pc_head);
  for (int i = 0; i < TW_PC_END; i++)
    off[i + 1] = off[i] + tw_pc_up8(n[i]);
  return 1;
}

/* A string offset of the pool as a pointer into it, or NULL when out of
 * bounds. The pool ends with a NUL, so every string in it ends. */
static const char *tw_pc_str(uintptr_t o, const char *pool, uint64_t nstr) {
  return o < nstr ? pool + o : NULL;
}

/* A buffer of \p len bytes for the rest of the run (the tables point into
 * it), in 2 MiB pages where the kernel gives them; NULL: none. */
static char *tw_pc_buffer(size_t len) {
  char *m = tw_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  if (len >= ((size_t)1 << 20))
    madvise(m, len, MADV_HUGEPAGE); /* a hint */
  return m;
}

/* Point \p t into the cache file read into \p buf (head \p h, sections at
 * \p off): offsets back to pointers, each checked. 0: one out of bounds. */
static int tw_pc_unpack(char *buf, const tw_pc_head *h, const size_t *off,
                        tw_ptable *t) {
  const char *pool = buf + off[TW_PC_STR];
  if (!h->nstr || pool[h->nstr - 1] || h->default_tier < 0 ||
      h->default_tier >= TW_TIER_COUNT)
    return 0;
  tw_psite *s = (tw_psite *)(buf + off[TW_PC_SITES]);
  tw_pplan *pl = (tw_pplan *)(buf + off[TW_PC_PLANS]);
  const uint64_t *live = (const uint64_t *)(buf + off[TW_PC_LIVE]);
  for (int i = 0; i < h->nplans; i++)
    pl[i].live = pl[i].live ? live + (size_t)i * (size_t)h->nlive : NULL;
  for (int i = 0; i < h->nsites; i++) {
    uintptr_t p = (uintptr_t)s[i].plan;
    s[i].stack = tw_pc_str((uintptr_t)s[i].stack, pool, h->nstr);
    s[i].location = tw_pc_str((uintptr_t)s[i].location, pool, h->nstr);
    if (!s[i].stack || !s[i].location || s[i].tier < 0 ||
        s[i].tier >= TW_TIER_COUNT || p > (uintptr_t)h->nplans ||
        (uint64_t)(s[i].stack - pool) + s[i].len >= h->nstr ||
        s[i].stack[s[i].len])
      return 0;
    s[i].plan = p ? &pl[p - 1] : NULL;
  }
  /* (the look-ups stop at an empty slot: each table must have one) */
  int32_t *ph = (int32_t *)(buf + off[TW_PC_PHASH]);
  uint32_t empty = 0;
  for (uint32_t k = 0; k <= h->mask; k++) {
    if (ph[k] < -1 || ph[k] >= h->nsites)
      return 0;
    empty += ph[k] < 0;
  }
  for (int t = TW_PC_LEAD; h->lead && t <= TW_PC_LEADF; t++) {
    const uint64_t *set = (const uint64_t *)(buf + off[t]);
    uint32_t k = 0;
    while (k <= h->mask && set[k])
      k++;
    empty = k <= h->mask ? empty : 0;
  }
  if (!empty)
    return 0;
  tw_pmodule *m = (tw_pmodule *)(buf + off[TW_PC_MODS]);
  for (int i = 0; i < h->nmods; i++) {
    m[i].module = tw_pc_str((uintptr_t)m[i].module, pool, h->nstr);
    m[i].build_id = tw_pc_str((uintptr_t)m[i].build_id, pool, h->nstr);
    if (!m[i].module || !m[i].build_id)
      return 0;
  }
  for (int k = 0; k < TW_TIER_COUNT; k++)
    if (h->tier_nmod[k] < -1 || h->tier_nmod[k] > TW_PTIER_MODS)
      return 0;
  t->sites = s;
  t->nsites = h->nsites;
  t->default_tier = h->default_tier;
  t->depth = h->depth;
  t->nlive = h->nlive;
  t->nquiet = h->nquiet;
  t->phash = ph;
  t->mask = h->mask;
  t->lead = h->lead ? (uint64_t *)(buf + off[TW_PC_LEAD]) : NULL;
  t->lead_frame = h->lead ? (uint64_t *)(buf + off[TW_PC_LEADF]) : NULL;
  memcpy(t->tier_mod, h->tier_mod, sizeof(h->tier_mod));
  memcpy(t->tier_nmod, h->tier_nmod, sizeof(h->tier_nmod));
  t->mods = m;
  t->nmods = h->nmods;
  return 1;
}

int tw_pcache_read(const char *path, const struct stat *st, tw_ptable *t) {
  tw_pc_state = "off";
  if (!tw_cfg.placement_cache_min || !tw_pc_name(path))
    return 0;
  tw_pc_state = "not written"; /* until read, or written */
  int fd = open(tw_pc_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return 0;
  tw_pc_head want, h;
  struct stat cs;
  tw_pc_key(&want, st);
  char *buf = NULL;
  size_t off[TW_PC_END + 1], got = 0, len = 0;
  if (!fstat(fd, &cs) && pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
      tw_pc_same(&h, &want) && tw_pc_layout(&h, off) &&
      h.total == off[TW_PC_END] && (uint64_t)cs.st_size == h.total &&
      (buf = tw_pc_buffer((len = h.total)))) {
    ssize_t r = 1;
    while (got < len && (r = read(fd, buf + got, len - got)) > 0)
      got += (size_t)r;
  }
  tw_fd_close(fd);
  if (!buf)
    return 0;
  if (got != len || tw_pc_sum(buf + sizeof(h), len - sizeof(h)) != h.sum ||
      memcmp(buf, &h, sizeof(h)) || !tw_pc_unpack(buf, &h, off, t)) {
    tw_sys_munmap(buf, len);
    return 0;
  }
  tw_pc_state = "read";
  return 1;
}

/* The string pool being written (p NULL: only counted): \p s goes at its
 * end; its offset. */
typedef struct tw_pc_pool {
  char *p;
  uint64_t n;
} tw_pc_pool;
static uintptr_t tw_pc_put(tw_pc_pool *pool, const char *s) {
  size_t n = strlen(s) + 1;
  if (pool->p)
    memcpy(pool->p + pool->n, s, n);
  pool->n += n;
  return (uintptr_t)(pool->n - n);
}

/* Lay tw_pt out as the file's sections after head \p h into \p buf (NULL:
 * count only, into h's nstr and nplans). */
static void tw_pc_fill(const tw_ptable *t, tw_pc_head *h, char *buf,
                       const size_t *off) {
  tw_pc_pool pool = {buf ? buf + off[TW_PC_STR] : NULL, 0};
  tw_psite *s = buf ? (tw_psite *)(buf + off[TW_PC_SITES]) : NULL;
  tw_pplan *pl = buf ? (tw_pplan *)(buf + off[TW_PC_PLANS]) : NULL;
  uint64_t *live = buf ? (uint64_t *)(buf + off[TW_PC_LIVE]) : NULL;
  int np = 0;
  for (int i = 0; i < t->nsites; i++) {
    const tw_psite *q = &t->sites[i];
    uintptr_t st = tw_pc_put(&pool, q->stack);
    uintptr_t lo = tw_pc_put(&pool, q->location);
    if (s) { /* field by field: the mapping's zeroes stay in the padding */
      s[i].stack = (const char *)st;
      s[i].location = (const char *)lo;
      s[i].hash = q->hash;
      s[i].len = q->len;
      s[i].tier = q->tier;
      s[i].quiet = q->quiet;
      s[i].plan = (const tw_pplan *)(uintptr_t)(q->plan ? np + 1 : 0);
    }
    if (!q->plan)
      continue;
    if (pl) {
      pl[np].dram_bytes = q->plan->dram_bytes;
      pl[np].dram_fraction = q->plan->dram_fraction;
      pl[np].rank = q->plan->rank;
      pl[np].planned = q->plan->planned;
      pl[np].live = (const uint64_t *)(uintptr_t)(q->plan->live != NULL);
      if (q->plan->live)
        memcpy(live + (size_t)np * (size_t)t->nlive, q->plan->live,
               (size_t)t->nlive * 8);
    }
    np++;
  }
  tw_pmodule *m = buf ? (tw_pmodule *)(buf + off[TW_PC_MODS]) : NULL;
  for (int i = 0; i < t->nmods; i++) {
    uintptr_t a = tw_pc_put(&pool, t->mods[i].module);
    uintptr_t b = tw_pc_put(&pool, t->mods[i].build_id);
    if (m) {
      m[i].module = (const char *)a;
      m[i].build_id = (const char *)b;
    }
  }
  h->nstr = pool.n;
  h->nplans = np;
}

/* Cache files not written for this long are removed when another is
 * written (a placement deleted or moved leaves its entry behind). */
#define TW_PC_KEEP_S (30 * 86400)
/* A temporary file older than this was left by a writer that died. */
#define TW_PC_STALE_S 60

/* Remove the entries of the cache directory \p dir not written for
 * TW_PC_KEEP_S. */
static void tw_pc_evict(const char *dir) {
  /* (getdents64, not opendir: no malloc of the runtime's own at start-up) */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  char ents[4096];
  long n;
  while ((n = syscall(SYS_getdents64, dfd, ents, sizeof(ents))) > 0)
    for (long at = 0; at < n;) {
      struct {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
      } *e = (void *)(ents + at);
      at += e->reclen;
      struct stat st;
      size_t len = strlen(e->name);
      if (strncmp(e->name, "placement-", 10) || len < 5 ||
          strcmp(e->name + len - 5, ".twpc") ||
          fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) ||
          now.tv_sec - st.st_mtim.tv_sec < TW_PC_KEEP_S)
        continue;
      unlinkat(dfd, e->name, 0);
    }
  tw_fd_close(dfd);
}

/* Write \p len bytes at \p buf as tw_pc_path: to PATH.tmp, then renamed.
 * One writer at a time: the processes of a job that start together find
 * the temporary file there (O_EXCL) and leave the writing to its owner -
 * a thousand ranks on a shared home directory write it once, not a
 * thousand times. */
static int tw_pc_save(const char *buf, size_t len) {
  char dir[4096], tmp[4096 + 8];
  snprintf(dir, sizeof(dir), "%s", tw_pc_path);
  *strrchr(dir, '/') = 0;
  snprintf(tmp, sizeof(tmp), "%s.tmp", tw_pc_path);
  if (tw_mkdirs(dir))
    return 0;
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 2; tries++) {
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (fd < 0 && (errno != EEXIST || lstat(tmp, &st) ||
                   now.tv_sec - st.st_mtim.tv_sec < TW_PC_STALE_S))
      return 0; /* (another process is writing it) */
    if (fd < 0)
      unlink(tmp); /* left by a writer that died: once more */
  }
  if (fd < 0)
    return 0;
  fd = tw_fd_keep(fd);
  if (fd < 0) {
    unlink(tmp);
    return 0;
  }
  size_t at = 0;
  while (at < len) {
    ssize_t w = write(fd, buf + at, len - at);
    if (w <= 0)
      break;
    at += (size_t)w;
  }
  tw_fd_forget(fd);
  if (tw_fd_close(fd) || at != len || rename(tmp, tw_pc_path)) {
    unlink(tmp);
    return 0;
  }
  tw_pc_evict(dir);
  return 1;
}

void tw_pcache_write(const char *path, const struct stat *st,
                     const tw_ptable *t) {
  if (!tw_cfg.placement_cache_min || !tw_pc_name(path)) {
    tw_pc_state = "off";
    return;
  }
  if ((uint64_t)t->nsites < tw_cfg.placement_cache_min) {
    tw_pc_state = "small";
    return;
  }
  tw_pc_state = "not written";
  if (!t->phash)
    return;
  tw_pc_head h, now;
  struct stat again; /* (not when the file changed while it was read) */
  tw_pc_key(&h, st);
  if (stat(path, &again))
    return;
  tw_pc_key(&now, &again);
  if (!tw_pc_same(&h, &now))
    return; /* (nor by a runtime built without a build-id: no key) */
  h.nsites = t->nsites;
  h.nmods = t->nmods;
  h.nlive = t->nlive;
  h.nquiet = t->nquiet;
  h.default_tier = t->default_tier;
  h.depth = t->depth;
  h.lead = t->lead && t->lead_frame;
  h.mask = t->mask;
  memcpy(h.tier_mod, t->tier_mod, sizeof(h.tier_mod));
  memcpy(h.tier_nmod, t->tier_nmod, sizeof(h.tier_nmod));
  size_t off[TW_PC_END + 1];
  tw_pc_fill(t, &h, NULL, NULL); /* counts */
  if (!tw_pc_layout(&h, off))
    return;
  h.total = off[TW_PC_END];
  /* an anonymous mapping of its own, given back after the write */
  char *buf = tw_sys_mmap(NULL, h.total, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED)
    return;
  tw_pc_fill(t, &h, buf, off);
  size_t slots = (size_t)h.mask + 1;
  memcpy(buf + off[TW_PC_PHASH], t->phash, slots * 4);
  if (h.lead) {
    memcpy(buf + off[TW_PC_LEAD], t->lead, slots * 8);
    memcpy(buf + off[TW_PC_LEADF], t->lead_frame, slots * 8);
  }
  h.sum = tw_pc_sum(buf + sizeof(h), h.total - sizeof(h));
  memcpy(buf, &h, sizeof(h));
  if (tw_pc_save(buf, h.total))
    tw_pc_state = "written";
  tw_sys_munmap(buf, h.total);
}
