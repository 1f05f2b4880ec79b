/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms). The allocation census (TIERWISE_CENSUS=DIR): the timeline of objects of at
 * least TIERWISE_OBJECTS_MIN bytes is appended to DIR/objects.csv as they
 * die (buffered write(2)); at exit the objects still live, sites.csv,
 * modules.csv and backend.json are written (raw backend output,
 * advisor/FORMATS.md). The first process to claim DIR writes the plain
 * names; other processes (forked or exec'd children) write NAME.PID.csv.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TW_LIVE_SLOTS (1u << 20)

static pthread_mutex_t tw_obj_lock = PTHREAD_MUTEX_INITIALIZER;
static tw_out tw_objs;    /* DIR/objects.csv, open while the census runs */
static int tw_objs_state; /* 0 closed, 1 open, -1 failed */
static void **tw_live;    /* open addressing, linear probing */
static uint64_t tw_live_dropped;

/* DIR/NAME.csv for the claiming process, DIR/NAME.PID.csv for others. */
static void tw_census_path(char *buf, size_t cap, const char *name,
                           const char *ext, int main) {
  size_t n = strlen(tw_cfg.census_dir);
  if (n + strlen(name) + 40 > cap) {
    buf[0] = 0;
    return;
  }
  memcpy(buf, tw_cfg.census_dir, n);
  buf[n++] = '/';
  strcpy(buf + n, name);
  n += strlen(name);
  if (!main) {
    buf[n++] = '.';
    n += tw_fmt_u64(buf + n, (uint64_t)getpid());
  }
  strcpy(buf + n, ext);
}

static int tw_is_main = -1;
static char tw_objs_tmp[4096];

/* The process that creates DIR/.census-owner first owns the plain names:
 * the first to start the census, which is the program the user named (its
 * children start later). It writes its pid there: an image exec'd by the
 * owner (same pid) is the owner too, and drops the objects the image before
 * exec left unwritten. Children write NAME.PID files, which `tierwise
 * profile` moves to DIR/children/<command>.<pid>/ (advisor/FORMATS.md). */
static __attribute__((noinline)) void tw_census_claim_now(void);
void tw_census_claim(void) {
  if (tw_is_main < 0) /* (its path buffer only on the first call's stack) */
    tw_census_claim_now();
}

static void tw_census_claim_now(void) {
  char path[4096];
  char pid[24], got[24] = {0};
  size_t n = tw_fmt_u64(pid, (uint64_t)getpid());
  tw_census_path(path, sizeof(path), ".census-owner", "", 1);
  int fd =
      open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  tw_is_main = fd >= 0;
  if (fd >= 0) {
    if (write(fd, pid, n) != (ssize_t)n)
      tw_is_main = 1;
    tw_fd_close(fd);
  } else if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
    tw_is_main =
        read(fd, got, sizeof(got) - 1) == (ssize_t)n && !memcmp(got, pid, n);
    tw_fd_close(fd);
  }
}

/* (tw_obj_lock held; its buffers static: it runs inside the free of a
 * thread whose stack may be small - runtime/small-stack.test) */
static void tw_objs_open(void) {
  static char path[4096];
  tw_census_claim();
  tw_census_path(path, sizeof(path), "objects", ".csv", tw_is_main);
  if (tw_is_main && strlen(path) + 30 < sizeof(tw_objs_tmp)) {
    static char stale[4200]; /* same name tw_out_open uses */
    size_t n = strlen(path);
    memcpy(stale, path, n);
    memcpy(stale + n, ".tmp.", 5);
    tw_fmt_u64(stale + n + 5, (uint64_t)getpid());
    unlink(stale);
  }
  if (tw_out_open(&tw_objs, path, tw_objs_tmp, sizeof(tw_objs_tmp))) {
    tw_objs_state = -1;
    tw_warn("census: cannot write ", path, "");
    return;
  }
  tw_out_str(&tw_objs, "site,size,alloc_time,free_time\n");
  tw_objs_state = 1;
}

static void tw_row(uint32_t site, uint64_t size, uint64_t t0, uint64_t t1,
                   int dead) {
  if (tw_objs_state == 0)
    tw_objs_open();
  if (tw_objs_state != 1)
    return;
  tw_out_u64(&tw_objs, site);
  tw_out_str(&tw_objs, ",");
  tw_out_u64(&tw_objs, size);
  tw_out_str(&tw_objs, ",");
  tw_out_u64(&tw_objs, t0);
  tw_out_str(&tw_objs, ",");
  if (dead)
    tw_out_u64(&tw_objs, t1);
  tw_out_str(&tw_objs, "\n");
}

void tw_census_object(uint32_t site, uint64_t size, uint64_t t0, uint64_t t1) {
  int cs = tw_sys_nocancel(); /* (its file's open and write) */
  pthread_mutex_lock(&tw_obj_lock);
  tw_row(site, size, t0, t1, 1);
  pthread_mutex_unlock(&tw_obj_lock);
  tw_sys_cancel_restore(cs);
}

static uint32_t tw_slot(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 40) & (TW_LIVE_SLOTS - 1);
}

void tw_census_live(void *user) {
  pthread_mutex_lock(&tw_obj_lock);
  if (!tw_live) {
    void *m = tw_sys_mmap(NULL, TW_LIVE_SLOTS * sizeof(void *),
                          PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    tw_live = m == MAP_FAILED ? NULL : m;
  }
  uint32_t i = tw_slot(user), probes = 0;
  while (tw_live && tw_live[i] && probes++ < TW_LIVE_SLOTS / 2)
    i = (i + 1) & (TW_LIVE_SLOTS - 1);
  if (tw_live && !tw_live[i])
    tw_live[i] = user;
  else
    tw_live_dropped++;
  pthread_mutex_unlock(&tw_obj_lock);
}

void tw_census_dead(void *user) {
  pthread_mutex_lock(&tw_obj_lock);
  uint32_t i = tw_slot(user);
  while (tw_live && tw_live[i] && tw_live[i] != user)
    i = (i + 1) & (TW_LIVE_SLOTS - 1);
  if (tw_live && tw_live[i] == user) {
    /* Backward-shift deletion keeps probe chains intact, no tombstones. */
    uint32_t j = i;
    tw_live[i] = NULL;
    for (;;) {
      j = (j + 1) & (TW_LIVE_SLOTS - 1);
      if (!tw_live[j])
        break;
      uint32_t k = tw_slot(tw_live[j]);
      if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
        tw_live[i] = tw_live[j];
        tw_live[j] = NULL;
        i = j;
      }
    }
  }
  pthread_mutex_unlock(&tw_obj_lock);
}

static void tw_csv_field(tw_out *o, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    tw_out_str(o, s);
    return;
  }
  tw_out_str(o, "\"");
  for (; *s; s++) {
    char c[2] = {*s, 0};
    tw_out_str(o, *s == '"' ? "\"\"" : c);
  }
  tw_out_str(o, "\"");
}

static void tw_module_row(void *ctx, const char *path, const char *base,
                          const char *build_id) {
  tw_out *o = ctx;
  tw_csv_field(o, base);
  tw_out_str(o, ",");
  tw_csv_field(o, path);
  tw_out_str(o, ",");
  tw_out_str(o, build_id);
  tw_out_str(o, "\n");
}

/* This process's command line (/proc/self/cmdline, first 4 KiB) as a JSON
 * list: `tierwise profile` names a child's profile after its executable. */
static void tw_command_list(tw_out *o) {
  char buf[4096];
  size_t n = tw_sys_cmdline(buf, sizeof(buf));
  tw_out_str(o, "[");
  for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
    tw_out_str(o, i ? ", " : "");
    tw_out_json(o, buf + i);
  }
  tw_out_str(o, "]");
}

static tw_out tw_file; /* one at a time, at exit */

static void tw_write_file(const char *name, const char *ext, int which) {
  char path[4096], tmp[4200];
  tw_census_path(path, sizeof(path), name, ext, tw_is_main);
  if (tw_out_open(&tw_file, path, tmp, sizeof(tmp))) {
    tw_warn("census: cannot write ", path, "");
    return;
  }
  tw_out *o = &tw_file;
  if (which == 0) {
    tw_out_str(o, "site,stack,location,allocs,bytes_allocated,peak_bytes,"
                  "loads,stores,llc_load_misses,llc_store_misses,"
                  "writebacks");
    /* the sample profiler's page samples per site (its confidence) */
    tw_out_str(o, tw_sample_touching() ? ",samples\n" : "\n");
    uint32_t n = tw_site_count();
    for (uint32_t i = 0; i < n; i++) {
      tw_site *s = tw_site_get(i);
      if (!s->allocs)
        continue; /* every call failed (mmap, malloc): no allocation */
      tw_out_u64(o, i);
      tw_out_str(o, ",");
      tw_csv_field(o, s->stack);
      tw_out_str(o, ",,");
      tw_out_u64(o, s->allocs);
      tw_out_str(o, ",");
      tw_out_u64(o, s->bytes);
      tw_out_str(o, ",");
      tw_out_u64(o, s->peak);
      tw_sample_columns(o, i); /* empty unless the pmu profiler samples */
    }
    if (tw_cfg.sampling) { /* samples outside every tracked object */
      tw_out_u64(o, n);
      tw_out_str(o, ",[unknown],[unknown],,,");
      tw_sample_columns(o, TW_SITE_NONE);
    }
  } else if (which == 1) {
    tw_out_str(o, "module,path,build_id\n");
    tw_modules_each(tw_module_row, o);
  } else if (which == 3) {
    tw_sample_params(o);
  } else {
    tw_out_str(o, "{\"backend\": \"alloc\", \"unwinder\": "
                  "\"libunwind unw_backtrace\", \"clock\": \"ns\", "
                  "\"depth\": ");
    tw_out_u64(o, (uint64_t)tw_cfg.depth);
    tw_out_str(o, ", \"objects_min_bytes\": ");
    tw_out_u64(o, tw_cfg.objects_min);
    tw_out_str(o, ", \"objects_dropped\": ");
    tw_out_u64(o, tw_live_dropped);
    tw_out_str(o, ", \"pid\": ");
    tw_out_u64(o, (uint64_t)getpid());
    tw_out_str(o, ", \"main_process\": ");
    tw_out_str(o, tw_is_main ? "true" : "false");
    tw_out_str(o, ", \"command\": ");
    tw_command_list(o);
    tw_out_str(o, "}\n");
  }
  if (tw_out_close(o, tmp, path))
    tw_warn("census: cannot write ", path, "");
}

static void tw_live_row(uint32_t site, uint64_t size, uint64_t t0) {
  tw_row(site, size, t0, 0, 0);
}

void tw_census_write(void) {
  int cs = tw_sys_nocancel();
  pthread_mutex_lock(&tw_obj_lock);
  if (tw_objs_state == 0)
    tw_objs_open();
  for (uint32_t i = 0; tw_live && i < TW_LIVE_SLOTS; i++) {
    void *p = tw_live[i];
    if (!p)
      continue;
    tw_hdr *h = (tw_hdr *)p - 1;
    tw_row(h->site, h->size, ((uint64_t *)h)[-1], 0, 0);
  }
  tw_maps_live(tw_live_row);
  char path[4096];
  if (tw_objs_state == 1) {
    tw_census_path(path, sizeof(path), "objects", ".csv", tw_is_main);
    if (tw_out_close(&tw_objs, tw_objs_tmp, path))
      tw_warn("census: cannot write ", path, "");
    tw_objs_state = -1;
  }
  pthread_mutex_unlock(&tw_obj_lock);
  tw_sys_cancel_restore(cs);
  tw_write_file("sites", ".csv", 0);
  tw_write_file("modules", ".csv", 1);
  if (tw_cfg.sampling)
    tw_write_file("pmu", ".json", 3); /* the pmu profiler's parameters */
  else
    tw_write_file("backend", ".json", 2);
}

/* fork (phase 0 prepare, 1 parent, 2 child). The child's copy of the
 * parent's unwritten rows belongs to the parent: the child drops it and
 * writes its own files under per-pid names. */
void tw_census_atfork(int phase) {
  if (phase == 0) {
    pthread_mutex_lock(&tw_obj_lock);
    return;
  }
  if (phase == 2 && tw_cfg.mode == TW_MODE_CENSUS) {
    if (tw_objs_state == 1) {
      tw_fd_forget(tw_objs.fd);
      tw_fd_close(tw_objs.fd);
    }
    tw_objs.len = 0;
    tw_objs_state = 0;
    tw_is_main = 0;
  }
  pthread_mutex_unlock(&tw_obj_lock);
}
