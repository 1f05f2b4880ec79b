/* SPDX-License-Identifier: MIT */
/* Test program for the sample backend (profiler-sample.test): what its
 * page-touch sampling must not change, and what it must tell apart.
 * - hot: 8 MiB read at random by two threads, over and over, one of them
 *   with every signal blocked;
 *   cold: 8 MiB read once at the start and once at the end;
 * - its own SIGSEGV handler (SA_SIGINFO) over a page it protects itself:
 *   each fault is the program's, handled by the program, counted;
 * - write(), read() and fread() of an 8 MiB buffer, again and again while
 *   the sampler arms its pages (a sampled page would fail them: EFAULT);
 * - fork while the other thread reads: the child sums an array and exits.
 * Prints checksums and counts that do not depend on timing. argv[1]: the
 * rounds (default 40); argv[2]: a scratch file for the reads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#define N (1u << 20) /* doubles: 8 MiB */

static double *hot, *cold, *buf;
static volatile sig_atomic_t own_faults;
static char *own_page;

static void own_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)uc;
  if ((char *)si->si_addr >= own_page && (char *)si->si_addr < own_page + 4096) {
    own_faults++;
    mprotect(own_page, 4096, PROT_READ | PROT_WRITE);
    return;
  }
  _exit(99); /* not the program's own fault: the sampler's leaked */
}

static __attribute__((noinline)) double *alloc_hot(void) {
  return malloc(N * sizeof(double));
}
static __attribute__((noinline)) double *alloc_cold(void) {
  return malloc(N * sizeof(double));
}
static __attribute__((noinline)) double *alloc_buf(void) {
  return malloc(N * sizeof(double));
}

static double sweep_random(unsigned rounds, uint64_t seed) {
  double s = 0;
  uint64_t x = seed;
  for (unsigned r = 0; r < rounds; r++)
    for (unsigned i = 0; i < N; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      s += hot[x & (N - 1)];
    }
  return s;
}

static unsigned rounds;
static void *reader(void *arg) {
  sigset_t all; /* a worker that blocks every signal (SIGSEGV too) */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  static double s;
  s = sweep_random(rounds, (uint64_t)(uintptr_t)arg);
  return &s;
}

static double sum(const double *a) {
  double s = 0;
  for (unsigned i = 0; i < N; i++)
    s += a[i];
  return s;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 40;
  const char *scratch = argc > 2 ? argv[2] : "touch_check.bin";
  hot = alloc_hot();
  cold = alloc_cold();
  buf = alloc_buf();
  for (unsigned i = 0; i < N; i++)
    hot[i] = i & 1023, cold[i] = 1, buf[i] = i & 7;

  struct sigaction a = {.sa_sigaction = own_handler, .sa_flags = SA_SIGINFO};
  sigemptyset(&a.sa_mask);
  sigaction(SIGSEGV, &a, NULL);
  struct sigaction back;
  sigaction(SIGSEGV, NULL, &back);
  printf("own handler installed: %s\n",
         back.sa_sigaction == own_handler ? "yes" : "no");
  own_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  pthread_t t;
  pthread_create(&t, NULL, reader, (void *)(uintptr_t)88172645463325252ull);
  double mine = 0;
  size_t io_ok = 0;
  for (unsigned r = 0; r < rounds; r++) {
    mine += sweep_random(1, 1234567 + r);
    own_page[r % 4096] = 1; /* the program's own fault, each round */
    mprotect(own_page, 4096, PROT_READ);
    int fd = open(scratch, O_RDWR | O_CREAT | O_TRUNC, 0600);
    io_ok += write(fd, buf, N * sizeof(double)) == (ssize_t)(N * sizeof(double));
    lseek(fd, 0, SEEK_SET);
    memset(buf, 0xff, N * sizeof(double) / 2);
    io_ok += read(fd, buf, N * sizeof(double)) == (ssize_t)(N * sizeof(double));
    close(fd);
    FILE *f = fopen(scratch, "rb");
    memset(buf + N / 2, 0xff, N * sizeof(double) / 2);
    io_ok += fread(buf + N / 2, sizeof(double), N / 2, f) == N / 2;
    fclose(f);
    if (r == rounds / 2) {
      pid_t c = fork();
      if (c == 0)
        _exit(sum(cold) == (double)N ? 0 : 1);
      int st;
      waitpid(c, &st, 0);
      printf("child: %s\n", WIFEXITED(st) && !WEXITSTATUS(st) ? "ok" : "bad");
    }
  }
  double *theirs;
  pthread_join(t, (void **)&theirs);
  unlink(scratch);
  printf("own faults: %d of %u\n", (int)own_faults, rounds);
  printf("io: %zu of %u\n", io_ok, 3 * rounds);
  printf("sums: %.0f %.0f %.0f %.0f %.0f\n", sum(hot), sum(cold), sum(buf), mine,
         *theirs);
  free(hot);
  free(cold);
  free(buf);
  return 0;
}
