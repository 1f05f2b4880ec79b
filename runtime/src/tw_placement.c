/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy). placement.json (advisor/FORMATS.md, format tierwise-placement v1): parsed
 * once at start with cJSON, off the hot path, and matched against each new
 * stack (exact, or as a prefix when the placement has fewer frames; the
 * longest match wins). Matching is a hash look-up per frame-wise prefix of
 * the new stack (FNV-1a runs on from one prefix to the next), so its cost
 * does not grow with the placement: Open MPI jobs have 12,000 sites. A bad file is reported in one line naming the file,
 * field and value, and the program runs unplaced.
 */
#define _GNU_SOURCE
#include "tw_policy.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


typedef struct tw_psite {
  const char *stack, *location;
  uint64_t hash; /* tw_hash_str(stack) */
  size_t len;
  int tier;
  uint64_t dram_bytes; /* DRAM head of each object (tw_split.c); 0: none */
  double dram_fraction; /* the head as a share of each object; 0: none */
  int rank;             /* the advisor's DRAM order (1 best); 0: none */
  uint64_t planned;     /* planned DRAM bytes (tw_dram_limit.c) */
  const uint64_t *live; /* planned_live: DRAM bytes at each plan instant */
} tw_psite;

typedef struct tw_pmodule {
  const char *module, *build_id;
} tw_pmodule;

static tw_psite *tw_psites;
static int tw_npsites, tw_default_tier, tw_pdepth;
static int tw_nlive; /* length of every site's planned_live (0: none) */
static int32_t *tw_phash; /* open addressing: index into tw_psites, -1 empty */
static void tw_phash_build(void);
static uint32_t tw_phash_mask;
static tw_pmodule *tw_pmods;
static int tw_npmods;
static const char *tw_ppath;

int tw_placement_default_tier(void) { return tw_default_tier; }
int tw_placement_depth(void) { return tw_pdepth; }
int tw_placement_nsites(void) { return tw_npsites; }
int tw_placement_tier(int i) { return tw_psites[i].tier; }
uint64_t tw_placement_dram_bytes(int i) {
  return i >= 0 && i < tw_npsites ? tw_psites[i].dram_bytes : 0;
}
double tw_placement_dram_fraction(int i) {
  return i >= 0 && i < tw_npsites ? tw_psites[i].dram_fraction : 0;
}
int tw_placement_rank(int i, uint64_t *planned) {
  *planned = i >= 0 && i < tw_npsites ? tw_psites[i].planned : 0;
  return i >= 0 && i < tw_npsites ? tw_psites[i].rank : 0;
}
int tw_placement_live(int i, const uint64_t **live) {
  *live = i >= 0 && i < tw_npsites ? tw_psites[i].live : NULL;
  return *live ? tw_nlive : 0;
}
const char *tw_placement_field(int i, int which) {
  return which ? tw_psites[i].location : tw_psites[i].stack;
}

static char *tw_dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tw_internal_alloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
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
  tw_npsites = 0;
  tw_default_tier = TW_TIER_DRAM;
  tw_pdepth = 0;
  return 0;
}

static int tw_tier_value(const char *field, const cJSON *v, int *tier) {
  if (!cJSON_IsString(v))
    return tw_bad(field, "(not a string)", "must be a tier name");
  *tier = tw_tier_parse(v->valuestring);
  if (*tier >= 0)
    return 1;
  const char *d = v->valuestring + 5;
  if (!strncmp(v->valuestring, "numa:", 5) && *d >= '0' && *d <= '9' &&
      strspn(d, "0123456789") == strlen(d)) {
    tw_warn("placement tier ", v->valuestring,
            ": this runtime serves numa:0 to numa:15 (README); using dram");
    *tier = TW_TIER_DRAM;
    return 1;
  }
  return tw_bad(field, v->valuestring,
                "unknown tier (use dram, pmem, kmem, hbw or numa:N)");
}

/* A site's optional planned_live (FORMATS.md): the same number of entries
 * on every site that has it, each an integer from 0 to planned_bytes. */
static int tw_live_field(const cJSON *s, tw_psite *ps, char *field,
                         size_t fl) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "planned_live"), *e;
  ps->live = NULL;
  if (!v)
    return 1;
  memcpy(field + fl, "].planned_live", 15);
  int n = cJSON_GetArraySize(v), k = 0;
  if (!cJSON_IsArray(v) || n < 1 || (tw_nlive && n != tw_nlive))
    return tw_bad(field, cJSON_IsArray(v) ? "(list)" : "(not a list)",
                  "must be a non-empty list of integers, as long on every "
                  "site");
  uint64_t *live = tw_internal_alloc((size_t)n * sizeof(uint64_t));
  if (!live)
    return 1; /* no timeline for this site: its planned bytes throughout */
  cJSON_ArrayForEach(e, v) {
    if (!cJSON_IsNumber(e) || e->valuedouble < 0 ||
        e->valuedouble > (double)ps->planned ||
        e->valuedouble != (double)(uint64_t)e->valuedouble)
      return tw_bad(field, "(an entry)",
                    "entries must be integers from 0 to planned_bytes");
    live[k++] = (uint64_t)e->valuedouble;
  }
  tw_nlive = n;
  ps->live = live;
  return 1;
}

/* A site's optional dram_fraction, rank and planned_bytes (FORMATS.md);
 * \p field holds "sites[N" (\p fl chars) for messages. */
static int tw_plan_fields(const cJSON *s, tw_psite *ps, char *field,
                          size_t fl) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "dram_fraction");
  ps->dram_fraction = 0;
  ps->rank = 0;
  ps->planned = 0;
  memcpy(field + fl, "].dram_fraction", 16);
  if (v && (!cJSON_IsNumber(v) || !(v->valuedouble > 0) ||
            v->valuedouble > 1))
    return tw_bad(field, "(not a number in (0, 1])",
                  "must be a number in (0, 1]");
  if (v && !strcmp(cJSON_GetObjectItemCaseSensitive(s, "tier")->valuestring,
                   "dram"))
    return tw_bad(field, "(with tier dram)",
                  "a DRAM head needs a slow tier in \"tier\"");
  if (v)
    ps->dram_fraction = v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive(s, "rank");
  memcpy(field + fl, "].rank", 7);
  if (v && (!cJSON_IsNumber(v) || v->valuedouble < 1 ||
            v->valuedouble > 2147483647.0 ||
            v->valuedouble != (double)(int)v->valuedouble))
    return tw_bad(field, "(not a positive integer)",
                  "must be a positive integer");
  if (v)
    ps->rank = (int)v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive(s, "planned_bytes");
  memcpy(field + fl, "].planned_bytes", 16);
  if (v && (!cJSON_IsNumber(v) || v->valuedouble < 0 ||
            v->valuedouble > 9.0e18 ||
            v->valuedouble != (double)(uint64_t)v->valuedouble))
    return tw_bad(field, "(not an integer >= 0)", "must be an integer >= 0");
  if (v)
    ps->planned = (uint64_t)v->valuedouble;
  return tw_live_field(s, ps, field, fl);
}

static char *tw_slurp(const char *path, const char **err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) {
    *err = "cannot be opened";
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  char *buf = __libc_malloc(st.st_size + 1);
  ssize_t got = 0, n;
  while (buf && got < st.st_size &&
         (n = read(fd, buf + got, st.st_size - got)) > 0)
    got += n;
  close(fd);
  if (!buf || got != st.st_size) {
    *err = "cannot be read";
    __libc_free(buf);
    return NULL;
  }
  buf[got] = 0;
  return buf;
}

static int tw_parse(const cJSON *root) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "format");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "tierwise-placement"))
    return tw_bad("format", cJSON_IsString(v) ? v->valuestring : "(missing)",
                  "expected \"tierwise-placement\"");
  v = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsNumber(v) || v->valueint != 1)
    return tw_bad("version", cJSON_IsNumber(v) ? "(number)" : "(missing)",
                  "this runtime reads version 1");
  v = cJSON_GetObjectItemCaseSensitive(root, "default_tier");
  if (!v)
    return tw_bad("default_tier", "(missing)", "required");
  if (!tw_tier_value("default_tier", v, &tw_default_tier))
    return 0;
  v = cJSON_GetObjectItemCaseSensitive(root, "depth");
  if (v &&
      (!cJSON_IsNumber(v) || v->valueint < 1 || v->valueint > TW_MAX_DEPTH))
    return tw_bad("depth", "(not 1..64)", "must be an integer 1..64");
  tw_pdepth = v ? v->valueint : 0;
  const cJSON *sites = cJSON_GetObjectItemCaseSensitive(root, "sites");
  if (!cJSON_IsArray(sites))
    return tw_bad("sites", "(missing)", "must be a list");
  int n = cJSON_GetArraySize(sites), i = 0;
  tw_psites = tw_internal_alloc((n ? n : 1) * sizeof(tw_psite));
  const cJSON *s;
  cJSON_ArrayForEach(s, sites) {
    char field[48] = "sites[";
    size_t fl = 6 + tw_fmt_u64(field + 6, (uint64_t)i);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "stack");
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(s, "location");
    memcpy(field + fl, "].stack", 8);
    if (!cJSON_IsString(st) || !*st->valuestring)
      return tw_bad(field, "(missing)", "must be a non-empty stack string");
    tw_psites[i].stack = tw_dup(st->valuestring);
    tw_psites[i].location = cJSON_IsString(loc) ? tw_dup(loc->valuestring) : "";
    memcpy(field + fl, "].tier", 7);
    if (!tw_tier_value(field, cJSON_GetObjectItemCaseSensitive(s, "tier"),
                       &tw_psites[i].tier))
      return 0;
    const cJSON *db = cJSON_GetObjectItemCaseSensitive(s, "dram_bytes");
    memcpy(field + fl, "].dram_bytes", 13);
    tw_psites[i].dram_bytes = 0;
    if (db && (!cJSON_IsNumber(db) || db->valuedouble <= 0 ||
               db->valuedouble > 9.0e18 ||
               db->valuedouble != (double)(uint64_t)db->valuedouble ||
               (uint64_t)db->valuedouble % 4096))
      return tw_bad(field, "(not a positive multiple of 4096)",
                    "must be a positive multiple of 4096");
    if (db &&
        !strcmp(cJSON_GetObjectItemCaseSensitive(s, "tier")->valuestring,
                "dram"))
      return tw_bad(field, "(with tier dram)",
                    "a DRAM head needs a slow tier in \"tier\"");
    if (db)
      tw_psites[i].dram_bytes = (uint64_t)db->valuedouble;
    if (!tw_plan_fields(s, &tw_psites[i], field, fl))
      return 0;
    i++;
  }
  const cJSON *mods = cJSON_GetObjectItemCaseSensitive(root, "modules");
  if (cJSON_IsArray(mods)) {
    tw_pmods =
        tw_internal_alloc((cJSON_GetArraySize(mods) + 1) * sizeof(tw_pmodule));
    cJSON_ArrayForEach(s, mods) {
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, "module");
      const cJSON *b = cJSON_GetObjectItemCaseSensitive(s, "build_id");
      if (cJSON_IsString(m) && cJSON_IsString(b) && *b->valuestring) {
        tw_pmods[tw_npmods].module = tw_dup(m->valuestring);
        tw_pmods[tw_npmods++].build_id = tw_dup(b->valuestring);
      }
    }
  }
  tw_npsites = i;
  tw_phash_build();
  return 1;
}

/* cJSON's nodes come from one arena per parse, dropped whole afterwards
 * (no malloc/free per node, no cJSON_Delete walk: a 20,000-site placement
 * makes 140,000 nodes). Past the arena: __libc_malloc, and those blocks
 * are left (the arena is sized so that a placement does not get there). */
static char *tw_arena, *tw_arena_at, *tw_arena_end;

static void *tw_arena_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (tw_arena && (size_t)(tw_arena_end - tw_arena_at) >= n) {
    void *p = tw_arena_at;
    tw_arena_at += n;
    return p;
  }
  return __libc_malloc(n);
}

static void tw_arena_free(void *p) {
  if (p && ((char *)p < tw_arena || (char *)p >= tw_arena_end))
    __libc_free(p);
}

/* Parse placement text (\p name names it in messages). Callable on a
 * buffer, any number of times (runtime/fuzz). */
int tw_placement_parse(const char *text, const char *name) {
  tw_ppath = name;
  tw_npmods = 0;
  tw_nlive = 0;
  /* nodes: ~64 bytes for every ~8 bytes of text at most, strings shorter */
  size_t cap = 12 * strlen(text) + (1 << 20);
  void *m = tw_sys_mmap(NULL, cap, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  tw_arena = m == MAP_FAILED ? NULL : m;
  tw_arena_at = tw_arena;
  tw_arena_end = tw_arena ? tw_arena + cap : NULL;
  cJSON_Hooks hooks = {tw_arena_alloc, tw_arena_free};
  cJSON_InitHooks(&hooks);
  cJSON *root = cJSON_Parse(text);
  int ok;
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    char near[40] = {0};
    for (int k = 0; at && at[k] && k < 32; k++)
      near[k] = at[k] == '\n' ? ' ' : at[k];
    ok = tw_bad("(JSON)", near, "syntax error near this text");
  } else {
    ok = tw_parse(root);
    if (!tw_arena)
      cJSON_Delete(root);
  }
  cJSON_Hooks plain = {__libc_malloc, __libc_free};
  cJSON_InitHooks(&plain);
  if (tw_arena)
    tw_sys_munmap(tw_arena, cap);
  tw_arena = tw_arena_at = tw_arena_end = NULL;
  return ok;
}

int tw_placement_load(const char *path) {
  const char *err = NULL;
  tw_ppath = path;
  char *text = tw_slurp(path, &err);
  if (!text)
    return tw_bad("(file)", path, err);
  int ok = tw_placement_parse(text, path);
  __libc_free(text);
  return ok;
}

/* The hash table of the placement's stacks, built once after parsing (a
 * repeated stack keeps its first entry, as the linear rule did). */
static void tw_phash_build(void) {
  uint32_t cap = 16;
  while (cap < 2u * (uint32_t)tw_npsites)
    cap <<= 1;
  tw_phash = tw_internal_alloc(cap * sizeof(*tw_phash));
  if (!tw_phash)
    return;
  memset(tw_phash, 0xff, cap * sizeof(*tw_phash));
  tw_phash_mask = cap - 1;
  for (int i = 0; i < tw_npsites; i++) {
    tw_psite *p = &tw_psites[i];
    p->len = strlen(p->stack);
    p->hash = tw_hash_str(p->stack);
    uint32_t k = (uint32_t)p->hash & tw_phash_mask;
    while (tw_phash[k] >= 0 && strcmp(tw_psites[tw_phash[k]].stack, p->stack))
      k = (k + 1) & tw_phash_mask;
    if (tw_phash[k] < 0)
      tw_phash[k] = i;
  }
}

/* The placement site whose stack is the first \p len bytes of \p stack
 * (hash \p h), or -1. */
static int tw_phash_find(uint64_t h, const char *stack, size_t len) {
  for (uint32_t k = (uint32_t)h & tw_phash_mask; tw_phash[k] >= 0;
       k = (k + 1) & tw_phash_mask) {
    const tw_psite *p = &tw_psites[tw_phash[k]];
    if (p->hash == h && p->len == len && !memcmp(p->stack, stack, len))
      return tw_phash[k];
  }
  return -1;
}

int tw_placement_match(const char *stack, int *tier) {
  int best = -1;
  if (!tw_npsites || !tw_phash)
    return -1;
  uint64_t h = TW_FNV_OFFSET; /* tw_hash_str of the prefix read so far */
  for (size_t at = 0;; at++) {
    if (stack[at] == ';' || !stack[at]) {
      int i = tw_phash_find(h ? h : 1, stack, at);
      if (i >= 0)
        best = i; /* a longer prefix than any before */
    }
    if (!stack[at])
      break;
    h = tw_fnv1a(h, stack + at, 1);
  }
  if (best >= 0)
    *tier = tw_psites[best].tier;
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
  for (int i = 0; i < tw_npmods; i++)
    if (!strcmp(tw_pmods[i].module, base) && *build_id &&
        strcmp(tw_pmods[i].build_id, build_id)) {
      tw_warn("the placement was made for another build of ", base,
              " (build-id differs): its sites may not match; see "
              "\"unmatched\" in the run report");
      c->mismatched++;
    }
}

void tw_placement_check_modules(void) {
  struct tw_modcheck c = {0};
  if (tw_npmods)
    tw_modules_each(tw_check_one, &c);
}
