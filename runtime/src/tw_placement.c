/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy). placement.json (advisor/FORMATS.md, format
 * tierwise-placement v1): read once at start, off the hot path, and matched
 * against each new stack (exact, or as a prefix when the placement has fewer
 * frames; the longest match wins). A bad file is reported in one line
 * naming the file, field and value, and the program runs unplaced.
 *
 * Start-up does only what matching needs (a 20,000-site placement is a
 * 6 MB file, and every process of a job loads it): the file is read once
 * into a buffer kept for the run; the JSON reader (simdjson On-Demand,
 * tw_placement_json.cc) hands each string on as its span in that buffer, so
 * a site is two pointers, its tier, and the hash of its stack (8 bytes at a
 * time, tw_sitekey.c); numbers are parsed only in the fields the runtime
 * reads. Matching is a hash look-up per frame-wise prefix of the new stack
 * (one pass over it finishes every prefix's hash), so its cost does not grow
 * with the placement.
 */
#define _GNU_SOURCE
#include "tw_policy.h"
#include "tw_pjson.h"
#include "tw_ptable.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const tw_pplan tw_noplan;
static tw_ptable tw_pt;
static const char *tw_ppath;

int tw_placement_default_tier(void) { return tw_pt.default_tier; }
int tw_placement_depth(void) { return tw_pt.depth; }
int tw_placement_nsites(void) { return tw_pt.nsites; }
int tw_placement_tier(int i) { return tw_pt.sites[i].tier; }
int tw_placement_quiet(int i) { return tw_pt.sites[i].quiet; }
int tw_placement_nquiet(void) { return tw_pt.nquiet; }
static const tw_pplan *tw_plan(int i) {
  return i >= 0 && i < tw_pt.nsites && tw_pt.sites[i].plan ? tw_pt.sites[i].plan
                                                       : &tw_noplan;
}
uint64_t tw_placement_dram_bytes(int i) { return tw_plan(i)->dram_bytes; }
double tw_placement_dram_fraction(int i) { return tw_plan(i)->dram_fraction; }
int tw_placement_rank(int i, uint64_t *planned) {
  *planned = tw_plan(i)->planned;
  return tw_plan(i)->rank;
}
int tw_placement_live(int i, const uint64_t **live) {
  *live = tw_plan(i)->live;
  return *live ? tw_pt.nlive : 0;
}
const char *tw_placement_field(int i, int which) {
  return which ? tw_pt.sites[i].location : tw_pt.sites[i].stack;
}

static int tw_bad(const char *field, const char *value, const char *why) {
  char line[600];
  size_t n = 0;
  const char *parts[] = {"placement ", tw_ppath, ": ",
                         field,        " = ",    value,
                         ": ",         why,      "; running unplaced"};
  for (unsigned i = 0; i < sizeof(parts) / sizeof(*parts); i++)
    for (const char *s = parts[i]; s && *s && n < sizeof(line) - 1; s++)
      line[n++] = *s;
  line[n] = 0;
  tw_warn(line, "", "");
  tw_pt.nsites = 0;
  tw_pt.default_tier = TW_TIER_DRAM;
  tw_pt.depth = 0;
  return 0;
}

/* A string field as a C string: the reader's span, terminated in place (the
 * byte after it is its closing quote, or freed by unescaping). */
static const char *tw_cstr(const tw_pjstr *v) {
  ((char *)v->p)[v->n] = 0;
  return v->p;
}

/* A message's field name: \p name itself (i < 0), or "sites[I].NAME". */
typedef struct tw_fname {
  char s[48];
} tw_fname;
static const char *tw_field(tw_fname *buf, int i, const char *name) {
  if (i < 0)
    return name;
  memcpy(buf->s, "sites[", 6);
  size_t n = 6 + tw_fmt_u64(buf->s + 6, (uint64_t)i);
  buf->s[n++] = ']';
  buf->s[n++] = '.';
  for (; *name && n < sizeof(buf->s) - 1; name++)
    buf->s[n++] = *name;
  buf->s[n] = 0;
  return buf->s;
}

/* Tier field \p name (of site \p i, or top-level: i < 0). */
static int tw_tier_value(int i, const char *name, const tw_pjstr *v,
                         int *tier) {
  tw_fname f;
  if (v->kind != 1)
    return tw_bad(tw_field(&f, i, name), "(not a string)",
                  "must be a tier name");
  const char *s = tw_cstr(v);
  *tier = tw_tier_parse(s);
  if (*tier >= 0)
    return 1;
  /* numa:16 and numa:01 are no tier names (FORMATS.md "Tier names"): the
   * placement is refused, as the CLI refuses it before the run. A numa:N
   * this machine lacks is a tier name (a placement made on another
   * machine): tw_be_numa.c serves its sites from DRAM with a warning. */
  return tw_bad(tw_field(&f, i, name), s,
                strncmp(s, "numa:", 5)
                    ? "unknown tier (use dram, pmem, kmem, hbw or numa:N)"
                    : "unknown tier (numa:N names nodes 0 to 15, no sign or "
                      "leading zero)");
}

/* Site \p i's optional planned_live (FORMATS.md), into \p p (planned
 * bytes read): a list of integers from 0 to planned_bytes (at most
 * TW_PJSON_LIST_MAX; the advisor writes at most 32), as long on every site
 * that has it. */
static int tw_live_field(const tw_pjlist *lv, tw_pplan *p, int i) {
  tw_fname f;
  int ok = lv->kind == 1;
  for (int k = 0; ok && k < lv->n; k++)
    ok = lv->v[k] <= p->planned;
  if (!ok)
    return tw_bad(tw_field(&f, i, "planned_live"), "(not such a list)",
                  "must be a list of 1 to 64 integers from 0 to "
                  "planned_bytes");
  if (tw_pt.nlive && lv->n != tw_pt.nlive)
    return tw_bad(tw_field(&f, i, "planned_live"), "(another length)",
                  "must be as long on every site");
  uint64_t *live = tw_internal_alloc((size_t)lv->n * sizeof(uint64_t));
  if (live) /* else no timeline for this site: its planned bytes throughout */
    memcpy(live, lv->v, (size_t)lv->n * sizeof(uint64_t));
  tw_pt.nlive = lv->n;
  p->live = live;
  return 1;
}

/* Site \p i's optional dram_bytes, dram_fraction, rank, planned_bytes and
 * planned_live (FORMATS.md). */
static int tw_plan_fields(const tw_pjsite *s, tw_psite *ps, int i) {
  const tw_pjnum *db = &s->dram_bytes, *fr = &s->dram_fraction,
                 *rk = &s->rank, *pb = &s->planned_bytes;
  tw_fname f;
  ps->plan = NULL;
  if (!db->kind && !fr->kind && !rk->kind && !pb->kind &&
      !s->planned_live.kind)
    return 1;
  int dram = !strcmp(s->tier.p, "dram"); /* tier checked: a C string */
  if (db->kind && (db->kind != 1 || db->v <= 0 || db->v > 9.0e18 ||
                   db->v != (double)(uint64_t)db->v ||
                   (uint64_t)db->v % 4096))
    return tw_bad(tw_field(&f, i, "dram_bytes"),
                  "(not a positive multiple of 4096)",
                  "must be a positive multiple of 4096");
  if (db->kind && dram)
    return tw_bad(tw_field(&f, i, "dram_bytes"), "(with tier dram)",
                  "a DRAM head needs a slow tier in \"tier\"");
  if (fr->kind && (fr->kind != 1 || !(fr->v > 0) || fr->v > 1))
    return tw_bad(tw_field(&f, i, "dram_fraction"), "(not a number in (0, 1])",
                  "must be a number in (0, 1]");
  if (fr->kind && dram)
    return tw_bad(tw_field(&f, i, "dram_fraction"), "(with tier dram)",
                  "a DRAM head needs a slow tier in \"tier\"");
  if (rk->kind && (rk->kind != 1 || rk->v < 1 || rk->v > 2147483647.0 ||
                   rk->v != (double)(int)rk->v))
    return tw_bad(tw_field(&f, i, "rank"), "(not a positive integer)",
                  "must be a positive integer");
  if (pb->kind && (pb->kind != 1 || pb->v < 0 || pb->v > 9.0e18 ||
                   pb->v != (double)(uint64_t)pb->v))
    return tw_bad(tw_field(&f, i, "planned_bytes"), "(not an integer >= 0)",
                  "must be an integer >= 0");
  tw_pplan *p = tw_internal_alloc(sizeof(*p));
  if (!p)
    return tw_bad(tw_field(&f, i, "dram_bytes"), "(out of memory)",
                  "cannot be kept");
  p->dram_bytes = db->kind ? (uint64_t)db->v : 0;
  p->dram_fraction = fr->kind ? fr->v : 0;
  p->rank = rk->kind ? (int)rk->v : 0;
  p->planned = pb->kind ? (uint64_t)pb->v : 0;
  p->live = NULL;
  if (s->planned_live.kind && !tw_live_field(&s->planned_live, p, i))
    return 0;
  ps->plan = p;
  return 1;
}

/* A JSON number as an int, saturated (as cJSON's valueint was). */
static int tw_int(double v) {
  return v >= 2147483647.0 ? 2147483647 : v <= -2147483648.0 ? -2147483647 - 1 : (int)v;
}

/* The top-level fields, in this order. \p partial: called at the first
 * site, before the file's end, for the fields read by then; *\p done: the
 * fields checked (bits), each once. */
static int tw_root_fields(const tw_pjroot *r, int partial, unsigned *done) {
  const char *f;
  if ((r->format.kind || !partial) && !(*done & 1)) {
    *done |= 1;
    f = r->format.kind == 1 ? tw_cstr(&r->format) : NULL;
    if (!f || strcmp(f, "tierwise-placement"))
      return tw_bad("format",
                    f                        ? f
                    : r->format.kind == 2    ? "(not a string)"
                                             : "(missing)",
                    "expected \"tierwise-placement\"");
  }
  if ((r->version.kind || !partial) && !(*done & 2)) {
    *done |= 2;
    if (r->version.kind != 1 || r->version.v != 1.0)
      return tw_bad("version",
                    r->version.kind == 1   ? "(number)"
                    : r->version.kind == 2 ? "(not a number)"
                                           : "(missing)",
                    "this runtime reads version 1");
  }
  if ((r->default_tier.kind || !partial) && !(*done & 4)) {
    *done |= 4;
    if (!r->default_tier.kind)
      return tw_bad("default_tier", "(missing)", "required");
    if (!tw_tier_value(-1, "default_tier", &r->default_tier,
                       &tw_pt.default_tier))
      return 0;
  }
  if (r->depth.kind && (r->depth.kind != 1 || tw_int(r->depth.v) < 1 ||
                        tw_int(r->depth.v) > TW_MAX_DEPTH ||
                        r->depth.v != (double)tw_int(r->depth.v)))
    return tw_bad("depth", "(not 1..64)", "must be an integer 1..64");
  tw_pt.depth = r->depth.kind ? tw_int(r->depth.v) : 0;
  return 1;
}

typedef struct tw_pread {
  const tw_pjroot *root;
  size_t cap; /* room in tw_pt.sites */
  int n;
  unsigned done; /* top-level fields checked (tw_root_fields) */
  const char *tier_p; /* the last tier name parsed, and its tier */
  uint32_t tier_n;
  int tier;
} tw_pread;

static int tw_site_read(void *ctx, const tw_pjsite *s) {
  tw_pread *r = ctx;
  tw_fname f;
  if (!r->n && !tw_root_fields(r->root, 1, &r->done))
    return 0;
  if (s->stack.kind != 1 || !s->stack.n)
    return tw_bad(tw_field(&f, r->n, "stack"),
                  s->stack.kind == 2   ? "(not a string)"
                  : s->stack.kind == 1 ? "(empty)"
                                       : "(missing)",
                  "must be a non-empty stack string");
  const tw_pjnum *b = &s->bytes; /* informational, but checked as the CLI does */
  if (b->kind && (b->kind != 1 || b->v < 0 || b->v > 9.0e18 ||
                  b->v != (double)(uint64_t)b->v))
    return tw_bad(tw_field(&f, r->n, "bytes"), "(not an integer >= 0)",
                  "must be an integer >= 0");
  if ((size_t)r->n == r->cap)
    return tw_bad(tw_field(&f, r->n, "stack"), "(past the sites counted)",
                  "cannot be kept");
  tw_psite *p = &tw_pt.sites[r->n];
  /* most sites name the tier the one before named: no parse then */
  const tw_pjstr *t = &s->tier;
  if (t->kind == 1 && r->tier_p && r->tier_n == t->n &&
      !memcmp(r->tier_p, t->p, t->n)) {
    p->tier = r->tier;
    tw_cstr(t);
  } else if (!tw_tier_value(r->n, "tier", t, &p->tier)) {
    return 0;
  } else {
    r->tier_p = t->p;
    r->tier_n = t->n;
    r->tier = p->tier;
  }
  if (!tw_plan_fields(s, p, r->n))
    return 0;
  p->stack = tw_cstr(&s->stack);
  p->len = s->stack.n;
  p->location = s->location.kind == 1 ? tw_cstr(&s->location) : "";
  p->hash = tw_hash_span(p->stack, p->len);
  p->quiet = 0;
  r->n++;
  return 1;
}

static void tw_module_read(void *ctx, const tw_pjstr *m, const tw_pjstr *b) {
  (void)ctx;
  if (!b->n || !tw_pt.mods)
    return;
  tw_pt.mods[tw_pt.nmods].module = tw_cstr(m);
  tw_pt.mods[tw_pt.nmods++].build_id = tw_cstr(b);
}

static int tw_phash_build(void);

/* Parse the placement in \p buf (\p len bytes, TW_PJSON_PADDING more
 * writable; kept by the sites). */
static int tw_parse(char *buf, size_t len) {
  tw_pt.nsites = tw_pt.nmods = tw_pt.nlive = tw_pt.nquiet = 0;
  tw_pt.sites = NULL;
  /* room for every site and module the text can hold: a kept site takes at
   * least 13 bytes ({"stack":"x"}), a module 26; only what is used is
   * touched (the internal allocator maps large blocks NORESERVE) */
  size_t most = len / 13 + 1;
  tw_pt.sites = tw_internal_alloc(most * sizeof(tw_psite));
  tw_pt.mods = tw_internal_alloc((len / 26 + 1) * sizeof(tw_pmodule));
  if (!tw_pt.sites || !tw_pt.mods)
    return tw_bad("(file)", tw_ppath, "cannot be kept (out of memory)");
  tw_pjroot root;
  tw_pread rd = {&root, most, 0, 0, NULL, 0, 0};
  tw_pjsink sink = {&rd, tw_site_read, tw_module_read};
  const char *at;
  int ok = tw_pjson_read(buf, len, &root, &sink, &at);
  if (ok < 0)
    return 0; /* a bad site, said */
  if (!ok) {
    char near[40] = {0};
    for (int k = 0; at + k < buf + len && at[k] && k < 32; k++)
      near[k] = at[k] == '\n' ? ' ' : at[k];
    return tw_bad("(JSON)", near, "syntax error near this text");
  }
  if (!tw_root_fields(&root, 0, &rd.done))
    return 0;
  if (root.sites != 1)
    return tw_bad("sites", "(missing)", "must be a list");
  tw_pt.nsites = rd.n;
  return tw_phash_build();
}

/* Parse placement text (\p name names it in messages). Callable on a
 * buffer, any number of times (runtime/fuzz). */
int tw_placement_parse(const char *text, const char *name) {
  tw_ppath = name;
  size_t len = strlen(text);
  char *buf = tw_internal_alloc(len + TW_PJSON_PADDING + 1);
  if (!buf)
    return tw_bad("(file)", name, "cannot be kept (out of memory)");
  memcpy(buf, text, len);
  memset(buf + len, 0, TW_PJSON_PADDING + 1);
  return tw_parse(buf, len);
}

/* A buffer for \p need bytes that lasts the run. Large ones are in 2 MiB
 * pages where the kernel gives them (MADV_HUGEPAGE): reading a 6 MB file
 * into 4 KiB pages costs ~1,500 page faults, 2.3 ms here, in 2 MiB pages
 * 1.1 ms (the kernel zeroes and the read copies either way). */
static char *tw_text_buffer(size_t need) {
  const size_t huge = (size_t)2 << 20;
  if (need < huge / 2)
    return tw_internal_alloc(need);
  size_t len = (need + huge - 1) & ~(huge - 1);
  char *m = tw_sys_mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  char *buf = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
  if (buf > m)
    tw_sys_munmap(m, (size_t)(buf - m));
  if (m + huge > buf)
    tw_sys_munmap(buf + len, (size_t)(m + huge - buf));
  madvise(buf, len, MADV_HUGEPAGE); /* a hint: 4 KiB pages without it */
  return buf;
}

/* The file, read into a buffer with the reader's padding after it; the
 * sites point into it for the rest of the run (read, not mapped: a file
 * rewritten in place during the run changes nothing). */
int tw_placement_load(const char *path) {
  tw_ppath = path;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) {
    if (fd >= 0)
      tw_fd_close(fd);
    return tw_bad("(file)", path, "cannot be opened");
  }
  if (tw_pcache_read(path, &st, &tw_pt)) { /* the compiled form of this very file */
    tw_fd_close(fd);
    return 1;
  }
  size_t len = (size_t)st.st_size, got = 0;
  char *buf = tw_text_buffer(len + TW_PJSON_PADDING + 1);
  ssize_t n = 1;
  while (buf && got < len && (n = read(fd, buf + got, len - got)) > 0)
    got += (size_t)n;
  tw_fd_close(fd);
  if (!buf || got != len)
    return tw_bad("(file)", path, "cannot be read");
  memset(buf + len, 0, TW_PJSON_PADDING + 1);
  if (!tw_parse(buf, len))
    return 0;
  tw_pcache_write(path, &st, &tw_pt);
  return 1;
}

/* The length of the module of \p stack's first frame (`MODULE+0x...`). By
 * module, not frame: the calls of a module some site starts in keep their
 * full stacks (in the report's "unmatched" too); only other modules' calls
 * (a library's start-up: Open MPI's, Python's) are counted to one frame. */
static size_t tw_first_len(const char *stack) { return strcspn(stack, ";+"); }

/* The hash of \p stack's first frame. */
static uint64_t tw_first_frame(const char *stack) {
  return tw_hash_span(stack, strcspn(stack, ";"));
}

/* Put \p h in \p set (of tw_pt.mask + 1 slots). */
static void tw_plead_add(uint64_t *set, uint64_t h) {
  uint32_t k = (uint32_t)h & tw_pt.mask;
  while (set[k] && set[k] != h)
    k = (k + 1) & tw_pt.mask;
  set[k] = h;
}

static int tw_plead_has(const uint64_t *set, uint64_t h) {
  for (uint32_t k = (uint32_t)h & tw_pt.mask; set[k];
       k = (k + 1) & tw_pt.mask)
    if (set[k] == h)
      return 1;
  return 0;
}

static int tw_phash_find(uint64_t h, const char *stack, size_t len);
static int tw_prefix_find(const char *stack, size_t n, int active_only);

/* A site that places something: another tier than the default, or plan
 * fields (a rank, a head). */
static int tw_active(const tw_psite *p) {
  return p->tier != tw_pt.default_tier || p->plan;
}

/* Whether a site of a frame-wise proper prefix of \p p's stack is active:
 * then p decides the calls it matches against that shorter site. */
static int tw_prefix_active(const tw_psite *p) {
  size_t last = p->len; /* its last frame's start less one: the ';' */
  while (last > 0 && p->stack[last - 1] != ';')
    last--;
  return last > 0 && tw_prefix_find(p->stack, last - 1, 1) >= 0;
}

/* Sites in the default tier with no plan fields place nothing: a call they
 * match is served as an unmatched one is. A placement may list thousands
 * (advise writes every site of the profile: ~12,000 of an Open MPI
 * start-up), and each call path that starts one was unwound in full, named
 * and matched (4.7x the start-up's instructions). Above
 * TIERWISE_TRACK_DEFAULT_MAX of them, those no other-tier site is a prefix
 * of are not tracked: their calls take the fast path and the run report
 * lists them as a count ("untracked_default_sites"), not one by one. */
static void tw_quiet_mark(void) {
  int passive = 0;
  for (int i = 0; i < tw_pt.nsites; i++)
    passive += !tw_active(&tw_pt.sites[i]);
  if ((uint64_t)passive <= tw_cfg.track_default_max)
    return;
  /* the first frames of the active sites: a passive site whose first frame
   * is none of them has no active prefix (most; each looked up once) */
  size_t bytes = ((size_t)tw_pt.mask + 1) * sizeof(uint64_t);
  uint64_t *firsts = tw_internal_alloc(bytes);
  if (!firsts)
    return; /* (all tracked) */
  memset(firsts, 0, bytes);
  for (int i = 0; i < tw_pt.nsites; i++)
    if (tw_active(&tw_pt.sites[i]))
      tw_plead_add(firsts, tw_first_frame(tw_pt.sites[i].stack));
  /* a stack named again by an active site (the first entry is the one
   * matched: it stays tracked, as before) */
  int dups = 0;
  for (int i = 0; i < tw_pt.nsites; i++) {
    const tw_psite *p = &tw_pt.sites[i];
    int j = tw_active(p) ? tw_phash_find(p->hash, p->stack, p->len) : -1;
    if (j >= 0 && j != i)
      tw_pt.sites[j].quiet = -1, dups++;
  }
  for (int i = 0; i < tw_pt.nsites; i++) {
    tw_psite *p = &tw_pt.sites[i];
    if (tw_active(p) || p->quiet < 0)
      continue;
    int j = dups ? tw_phash_find(p->hash, p->stack, p->len) : -1;
    if (j >= 0 && tw_pt.sites[j].quiet < 0) /* (the matched entry) */
      continue;
    if (!tw_plead_has(firsts, tw_first_frame(p->stack)) ||
        !tw_prefix_active(p)) {
      p->quiet = 1;
      tw_pt.nquiet++;
    }
  }
  for (int i = 0; i < tw_pt.nsites; i++)
    if (tw_pt.sites[i].quiet < 0)
      tw_pt.sites[i].quiet = 0;
}

/* The hash table of the placement's stacks, built once after parsing (a
 * repeated stack keeps its first entry, as the linear rule did). */
/* The stack index; 0 (said) when two sites name one stack in different
 * tiers (which one would win is not the user's choice; the CLI refuses the
 * same, formats/placement.py). */
static int tw_phash_build(void) {
  uint32_t cap = 16;
  while (cap < 2u * (uint32_t)tw_pt.nsites)
    cap <<= 1;
  tw_pt.phash = tw_internal_alloc(cap * sizeof(*tw_pt.phash));
  if (!tw_pt.phash)
    return 1;
  memset(tw_pt.phash, 0xff, cap * sizeof(*tw_pt.phash));
  tw_pt.mask = cap - 1;
  for (int i = 0; i < tw_pt.nsites; i++) {
    const tw_psite *p = &tw_pt.sites[i];
    uint32_t k = (uint32_t)p->hash & tw_pt.mask;
    for (const tw_psite *q; tw_pt.phash[k] >= 0; k = (k + 1) & tw_pt.mask) {
      q = &tw_pt.sites[tw_pt.phash[k]];
      if (q->hash == p->hash && q->len == p->len &&
          !memcmp(q->stack, p->stack, p->len))
        break;
    }
    if (tw_pt.phash[k] >= 0 && tw_pt.sites[tw_pt.phash[k]].tier != p->tier) {
      tw_fname f;
      return tw_bad(tw_field(&f, i, "tier"), tw_tier_str(p->tier),
                    "an earlier site has the same stack in another tier");
    }
    if (tw_pt.phash[k] < 0)
      tw_pt.phash[k] = i;
  }
  tw_quiet_mark();
  tw_pt.lead = tw_internal_alloc(cap * sizeof(*tw_pt.lead));
  tw_pt.lead_frame = tw_internal_alloc(cap * sizeof(*tw_pt.lead_frame));
  if (!tw_pt.lead || !tw_pt.lead_frame) {
    tw_pt.lead = tw_pt.lead_frame = NULL; /* (every call may match) */
    return 1;
  }
  memset(tw_pt.lead, 0, cap * sizeof(*tw_pt.lead));
  memset(tw_pt.lead_frame, 0, cap * sizeof(*tw_pt.lead_frame));
  memset(tw_pt.tier_nmod, 0, sizeof(tw_pt.tier_nmod));
  for (int i = 0; i < tw_pt.nsites; i++) {
    if (tw_pt.sites[i].quiet)
      continue; /* (its calls need no unwind) */
    uint64_t h = tw_hash_span(tw_pt.sites[i].stack,
                              tw_first_len(tw_pt.sites[i].stack));
    tw_plead_add(tw_pt.lead, h);
    tw_plead_add(tw_pt.lead_frame, tw_first_frame(tw_pt.sites[i].stack));
    int t = tw_pt.sites[i].tier, k = 0;
    while (k < tw_pt.tier_nmod[t] && tw_pt.tier_mod[t][k] != h)
      k++;
    if (tw_pt.tier_nmod[t] < 0 || k < tw_pt.tier_nmod[t])
      continue;
    if (k == TW_PTIER_MODS)
      tw_pt.tier_nmod[t] = -1;
    else
      tw_pt.tier_mod[t][tw_pt.tier_nmod[t]++] = h;
  }
  return 1;
}

int tw_placement_tier_starts_in(int tier, const char *module) {
  if (tier == tw_pt.default_tier || tw_pt.tier_nmod[tier] < 0 ||
      (!tw_pt.lead && tw_pt.nsites))
    return 1;
  uint64_t h = tw_hash_span(module, strlen(module));
  for (int k = 0; k < tw_pt.tier_nmod[tier]; k++)
    if (tw_pt.tier_mod[tier][k] == h)
      return 1;
  return 0;
}

int tw_placement_leads(const char *stack) {
  if (!tw_pt.lead)
    return tw_pt.nsites > 0; /* no table: every call may match */
  return tw_plead_has(tw_pt.lead, tw_hash_span(stack, tw_first_len(stack)));
}

int tw_placement_leads_frame(const char *stack) {
  if (!tw_pt.lead_frame)
    return tw_pt.nsites > 0;
  return tw_plead_has(tw_pt.lead_frame, tw_first_frame(stack));
}

/* The placement site whose stack is the first \p len bytes of \p stack
 * (hash \p h), or -1. */
static int tw_phash_find(uint64_t h, const char *stack, size_t len) {
  for (uint32_t k = (uint32_t)h & tw_pt.mask; tw_pt.phash[k] >= 0;
       k = (k + 1) & tw_pt.mask) {
    const tw_psite *p = &tw_pt.sites[tw_pt.phash[k]];
    if (p->hash == h && p->len == len && !memcmp(p->stack, stack, len))
      return tw_pt.phash[k];
  }
  return -1;
}

/* The placement site of the longest frame-wise prefix of \p stack's first
 * \p n bytes (the n-byte one itself too where it ends a frame), or -1;
 * \p active_only: only active sites (tw_active). One pass over the stack
 * finishes every prefix's hash. */
static int tw_prefix_find(const char *stack, size_t n, int active_only) {
  int best = -1;
  uint64_t h = TW_HASH_SEED; /* over the words of the prefix read so far */
  size_t words = 0;
  for (size_t at = 0; at <= n; at++) {
    if (at < n && stack[at] != ';')
      continue;
    if (at == n && stack[at] && stack[at] != ';')
      break;
    h = tw_hash_words(h, stack + 8 * words, at / 8 - words);
    words = at / 8;
    int i = tw_phash_find(tw_hash_end(h, stack + 8 * words, at), stack, at);
    if (i >= 0 && (!active_only || tw_active(&tw_pt.sites[i])))
      best = i; /* a longer prefix than any before */
  }
  return best;
}

int tw_placement_match(const char *stack, int *tier) {
  if (!tw_pt.nsites || !tw_pt.phash)
    return -1;
  int best = tw_prefix_find(stack, strlen(stack), 0);
  if (best >= 0 && tw_pt.sites[best].quiet)
    best = -1; /* (no site of another tier is a prefix of it) */
  if (best >= 0)
    *tier = tw_pt.sites[best].tier;
  return best;
}

struct tw_modcheck {
  int mismatched;
};

static void tw_check_one(void *ctx, const char *path, const char *base,
                         const char *build_id) {
  (void)path;
  struct tw_modcheck *c = ctx;
  if (!strncmp(base, "linux-vdso.so", 13))
    return; /* the kernel's: another kernel (a VM, a newer host), same program */
  if (!strncmp(base, "libtierwise", 11))
    return; /* tierwise's own (the profile's runtime, rebuilt or upgraded
               since): no site has a frame in it */
  for (int i = 0; i < tw_pt.nmods; i++)
    if (!strcmp(tw_pt.mods[i].module, base) && *build_id &&
        strcmp(tw_pt.mods[i].build_id, build_id)) {
      tw_warn("the placement was made for another build of ", base,
              " (build-id differs): its sites may not match; see "
              "\"unmatched\" in the run report");
      c->mismatched++;
    }
}

void tw_placement_check_modules(void) {
  struct tw_modcheck c = {0};
  if (tw_pt.nmods)
    tw_modules_each(tw_check_one, &c);
}
