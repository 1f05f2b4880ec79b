/* SPDX-License-Identifier: MIT */
/* Allocation sites of the pmu LD_PRELOAD profiler: unwinds with libunwind,
 * formats frames per advisor/FORMATS.md (module basename + 0x(RA-1-bias),
 * leading allocator frames removed, TIERWISE_DEPTH frames), keeps per-site
 * allocation counts and the objects.csv timeline, and writes the raw
 * profile, formatting stacks with the runtime's shared site-key code
 * (runtime/common). Called with the caller's recursion guard set. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "tw_pmu_sites.h"
#include "tw_sitekey.h"

#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char *stack;
  uint64_t allocs, bytes, cur, peak;
} site_t;
typedef struct {
  void *p;
  int site;
  size_t size;
  uint64_t t;
} obj_t;

static site_t *sites;
static int n_sites, cap_sites;
static obj_t *objs; /* open addressing by pointer */
static size_t obj_mask, n_objs;
static FILE *objects_csv;
static char outdir[4096];
static int depth = 6;
static uint64_t t0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *modules[512], *paths[512];
static int n_modules;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec - t0;
}

void tw_pmu_sites_init(const char *dir) {
  snprintf(outdir, sizeof outdir, "%s", dir);
  const char *d = getenv("TIERWISE_DEPTH");
  if (d && atoi(d) > 0)
    depth = atoi(d);
  t0 = now_ns();
  obj_mask = (1u << 16) - 1;
  objs = calloc(obj_mask + 1, sizeof *objs);
  char path[4200];
  snprintf(path, sizeof path, "%s/objects.csv", outdir);
  objects_csv = fopen(path, "w");
  if (objects_csv)
    fprintf(objects_csv, "site,size,alloc_time,free_time\n");
}

static void note_module(const char *name, const char *path) {
  for (int i = 0; i < n_modules; i++)
    if (!strcmp(modules[i], name))
      return;
  if (n_modules < 512) {
    modules[n_modules] = strdup(name);
    paths[n_modules++] = strdup(path);
  }
}

static int site_for_stack(const char *stack) {
  for (int i = 0; i < n_sites; i++) /* few large-object sites: linear */
    if (!strcmp(sites[i].stack, stack))
      return i;
  if (n_sites == cap_sites) {
    cap_sites = cap_sites ? 2 * cap_sites : 64;
    sites = realloc(sites, cap_sites * sizeof *sites);
  }
  sites[n_sites] = (site_t){strdup(stack), 0, 0, 0, 0};
  return n_sites++;
}

int tw_pmu_site_of_caller(size_t n) {
  void *ips[64];
  tw_frame frames[64];
  int k = unw_backtrace(ips, 64), nf = 0;
  char stack[4096];
  pthread_mutex_lock(&lock);
  for (int i = 1; i < k; i++) {           /* 0: this library */
    uintptr_t pc = (uintptr_t)ips[i] - 1; /* return address - 1 */
    Dl_info info;
    struct link_map *lm = NULL;
    if (dladdr1((void *)pc, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
        info.dli_fname) {
      const char *path =
          info.dli_fname[0] ? info.dli_fname : program_invocation_name;
      frames[nf].module = tw_basename(path);
      frames[nf++].offset = pc - lm->l_addr;
      note_module(tw_basename(path), path);
    } else {
      frames[nf].module = NULL;
      frames[nf++].offset = pc;
    }
  }
  if (!tw_stack_format(stack, sizeof stack, frames, nf, depth)) {
    pthread_mutex_unlock(&lock); /* no user frame: not a site */
    return -1;
  }
  int s = site_for_stack(stack);
  sites[s].allocs++;
  sites[s].bytes += n;
  pthread_mutex_unlock(&lock);
  return s;
}

/* Records the object of the latest tw_pmu_site_of_caller (called by the
 * glue right after adding it to the attribution map). */
static void obj_put(obj_t o) {
  size_t h = ((uintptr_t)o.p >> 4) & obj_mask;
  while (objs[h].p)
    h = (h + 1) & obj_mask;
  objs[h] = o;
}

static void obj_grow(void) {
  obj_t *old = objs;
  size_t old_n = obj_mask + 1;
  obj_mask = 2 * old_n - 1;
  objs = calloc(obj_mask + 1, sizeof *objs);
  for (size_t i = 0; i < old_n; i++)
    if (old[i].p)
      obj_put(old[i]);
  free(old);
}

void tw_pmu_sites_alloc(void *p, int s, size_t n) {
  pthread_mutex_lock(&lock);
  if (++n_objs > obj_mask / 2)
    obj_grow();
  sites[s].cur += n;
  if (sites[s].cur > sites[s].peak)
    sites[s].peak = sites[s].cur;
  obj_put((obj_t){p, s, n, now_ns()});
  pthread_mutex_unlock(&lock);
}

void tw_pmu_sites_freed(void *p) {
  pthread_mutex_lock(&lock);
  size_t h = ((uintptr_t)p >> 4) & obj_mask;
  while (objs[h].p && objs[h].p != p)
    h = (h + 1) & obj_mask;
  if (objs[h].p == p) {
    obj_t o = objs[h];
    n_objs--;
    sites[o.site].cur -= o.size;
    if (objects_csv)
      fprintf(objects_csv, "%d,%zu,%llu,%llu\n", o.site, o.size,
              (unsigned long long)o.t, (unsigned long long)now_ns());
    /* delete with backward shift */
    objs[h].p = NULL;
    for (size_t j = (h + 1) & obj_mask; objs[j].p; j = (j + 1) & obj_mask) {
      obj_t m = objs[j];
      objs[j].p = NULL;
      obj_put(m);
    }
  }
  pthread_mutex_unlock(&lock);
}

static FILE *open_out(const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", outdir, name);
  return fopen(path, "w");
}

static void count(FILE *f, const tw_pmu_attr *a, int site, int col, int on) {
  if (on)
    fprintf(f, ",%llu", (unsigned long long)tw_pmu_attr_count(a, site, col));
  else
    fputc(',', f);
}

/* Writes sites.csv (estimated columns empty where the events do not
 * measure them; writebacks are never measured), modules.csv, pmu.json and
 * closes objects.csv with the objects still live. */
void tw_pmu_sites_write(const tw_pmu_attr *a, const tw_pmu_event *ev, int n_ev,
                        int n_rings, const tw_pmu_ring_stats *st) {
  pthread_mutex_lock(&lock);
  int has[TW_PMU_NCOLS] = {0};
  for (int e = 0; e < n_ev; e++) {
    if (ev[e].kind == TW_PMU_LLC_LOAD_MISS)
      has[TW_PMU_COL_LLC_LOAD_MISSES] = 1;
    if (ev[e].kind == TW_PMU_STORE)
      has[TW_PMU_COL_STORES] = 1;
    if (ev[e].kind == TW_PMU_IBS_OP)
      for (int c = 0; c < TW_PMU_NCOLS; c++)
        has[c] = 1;
  }
  FILE *f = open_out("sites.csv");
  if (f) {
    fprintf(f, "site,stack,location,allocs,bytes_allocated,peak_bytes,loads,"
               "stores,llc_load_misses,llc_store_misses,writebacks\n");
    for (int s = 0; s <= n_sites; s++) {
      int id = s < n_sites ? s : TW_PMU_SITE_UNKNOWN;
      if (s < n_sites)
        fprintf(f, "%d,%s,,%llu,%llu,%llu", s, sites[s].stack,
                (unsigned long long)sites[s].allocs,
                (unsigned long long)sites[s].bytes,
                (unsigned long long)sites[s].peak);
      else
        fprintf(f, "%d,[unknown],[unknown],,,", s);
      for (int c = 0; c < TW_PMU_NCOLS; c++)
        count(f, a, id, c, has[c]);
      fprintf(f, ",\n");
    }
    fclose(f);
  }
  if ((f = open_out("modules.csv"))) {
    fprintf(f, "module,path,build_id\n");
    for (int i = 0; i < n_modules; i++)
      fprintf(f, "%s,%s,\n", modules[i], paths[i]);
    fclose(f);
  }
  if (objects_csv) {
    for (size_t i = 0; i <= obj_mask; i++)
      if (objs[i].p)
        fprintf(objects_csv, "%d,%zu,%llu,\n", objs[i].site, objs[i].size,
                (unsigned long long)objs[i].t);
    fclose(objects_csv);
    objects_csv = NULL;
  }
  if ((f = open_out("pmu.json"))) {
    fprintf(f, "{\"events\": [");
    for (int e = 0; e < n_ev; e++)
      fprintf(f,
              "%s{\"name\": \"%s\", \"type\": %u, \"config\": %llu, "
              "\"precise_ip\": %u, \"sample_period\": %llu}",
              e ? ", " : "", ev[e].name, ev[e].attr.type,
              (unsigned long long)ev[e].attr.config, ev[e].attr.precise_ip,
              (unsigned long long)ev[e].attr.sample_period);
    fprintf(f,
            "], \"rings\": %d, \"samples\": %llu, \"lost_samples\": %llu, "
            "\"bad_records\": %llu, \"depth\": %d}\n",
            n_rings, (unsigned long long)st->samples,
            (unsigned long long)st->lost_samples,
            (unsigned long long)st->bad_records, depth);
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}
