/* SPDX-License-Identifier: MIT */
/*
 * Fault-matrix test program: one mode per situation the runtime must
 * survive, each printing lines that do not depend on tierwise (compared with
 * the run without it) and `checksum: HEX`. Linked with libtw_early.so, whose
 * constructor and destructor allocate around the runtime's own.
 *
 *   tw_faults zero|huge|fork|exec|dlopen LIB|kill|tls|fds|work
 *
 * fds: with a 1 MiB block live, for each open file descriptor of a deleted
 * regular file (memkind's pmem backing file), prints its mode, link count
 * and the mode of its directory.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern unsigned long tw_early_sum;
char *tw_early_block(void);
static unsigned long sum;
/* Reads of blocks that are freed right away go here: without a use, the
 * compiler removes a malloc/free pair altogether (the pointer escapes). */
void *volatile tw_sink;

/* A placeable site: 1 MiB blocks, filled and summed. */
__attribute__((noinline)) static unsigned char *work_block(int fill) {
  unsigned char *p = malloc(1 << 20);
  memset(p, fill, 1 << 20);
  return p;
}

static void work(int rounds) {
  for (int i = 0; i < rounds; i++) {
    unsigned char *p = work_block(i + 1);
    sum = sum * 31 + p[i * 4097 % (1 << 20)];
    free(p);
  }
}

static void at_exit_alloc(void) {
  char *p = malloc(300);
  memset(p, 3, 300);
  tw_sink = p;
  free(p);
}

static pthread_key_t key;
static void tls_dtor(void *v) {
  char *p = malloc(4000); /* allocation in a thread-local destructor */
  memset(p, 5, 4000);
  tw_sink = p;
  free(p);
  free(v);
}
static void *tls_thread(void *arg) {
  (void)arg;
  pthread_setspecific(key, work_block(9));
  work(3);
  return NULL;
}

static void show_huge(const char *what, size_t n) {
  errno = 0;
  unsigned char *p = malloc(n);
  printf("%s: %s%s\n", what, p ? "ok" : "null",
         !p && errno == ENOMEM ? " ENOMEM" : "");
  if (p) { /* touch the first and the last page */
    p[0] = 1;
    p[n - 1] = 2;
    sum += p[0] + p[n - 1];
    free(p);
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "work";
  char *early = tw_early_block();
  sum = tw_early_sum + (unsigned char)early[10];
  free(early); /* a block from before the runtime's constructor */
  atexit(at_exit_alloc);
  if (!strcmp(mode, "zero")) {
    void *a = malloc(0), *b = calloc(0, 8), *c = realloc(NULL, 0);
    void *d = aligned_alloc(64, 0);
    printf("malloc(0) %s calloc(0) %s realloc(NULL,0) %s aligned(0) %s\n",
           a ? "ptr" : "null", b ? "ptr" : "null", c ? "ptr" : "null",
           d ? "ptr" : "null");
    void *e = realloc(a, 0); /* frees a */
    printf("realloc(p,0) %s\n", e ? "ptr" : "null");
    free(b), free(c), free(d), free(e);
  } else if (!strcmp(mode, "huge")) {
    show_huge("5 GiB", (size_t)5 << 30);
    show_huge("64 TiB", (size_t)64 << 40);
    show_huge("SIZE_MAX/2", SIZE_MAX / 2);
    void *q = NULL;
    printf("posix_memalign 2^62: %d\n",
           posix_memalign(&q, 4096, (size_t)1 << 62) == ENOMEM);
  } else if (!strcmp(mode, "fork")) {
    work(2);
    pid_t pid = fork(); /* no exec: the child runs on and exits normally */
    if (pid == 0) {
      work(5);
      exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    work(3);
    printf("child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  } else if (!strcmp(mode, "exec")) {
    work(2);
    fflush(stdout);
    execl(argv[0], argv[0], "work", (char *)NULL);
    perror("execl");
    return 1;
  } else if (!strcmp(mode, "dlopen") && argc > 2) {
    void *kept[4];
    for (int round = 0; round < 2; round++) {
      void *h = dlopen(argv[2], RTLD_NOW);
      if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
      }
      void *(*fn)(size_t, int) =
          (void *(*)(size_t, int))dlsym(h, "tw_sitelib_alloc");
      kept[2 * round] = fn(1 << 20, 4);
      kept[2 * round + 1] = fn(1000, 6);
      dlclose(h); /* the blocks outlive the library that allocated them */
    }
    for (int i = 0; i < 4; i++) {
      sum = sum * 31 + ((unsigned char *)kept[i])[999];
      free(kept[i]);
    }
  } else if (!strcmp(mode, "kill")) {
    work(4);
    fflush(stdout);
    kill(getpid(), SIGKILL); /* midway: the rest never runs */
  } else if (!strcmp(mode, "fds")) {
    unsigned char *p = work_block(1);
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
      char link[64], target[4096];
      snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
      ssize_t n = readlink(link, target, sizeof(target) - 1);
      if (n <= 0)
        continue;
      target[n] = 0;
      struct stat st, ds;
      if (target[0] != '/' || stat(link, &st) || !S_ISREG(st.st_mode) ||
          !strstr(target, " (deleted)"))
        continue;
      char *slash = strrchr(target, '/');
      *slash = 0;
      int dir_ok = !stat(target[0] ? target : "/", &ds);
      printf("deleted file open: mode %03o links %lu, directory mode %03o\n",
             st.st_mode & 0777, (unsigned long)st.st_nlink,
             dir_ok ? ds.st_mode & 0777 : 0);
    }
    if (d)
      closedir(d);
    sum += p[5];
    free(p);
  } else if (!strcmp(mode, "tls")) {
    pthread_t t;
    pthread_key_create(&key, tls_dtor);
    pthread_create(&t, NULL, tls_thread, NULL);
    pthread_join(t, NULL);
  }
  work(4);
  printf("checksum: %lx\n", sum);
  return 0;
}
