/* SPDX-License-Identifier: MIT */
/* Test program: a job ended by a signal. Allocates a 4 MiB array from one
 * site (`keep`), prints "ready" and waits (up to 30 s). Usage: tw_signal
 * default | own | part | ifdefault | once. once: no waiting (for the
 * profile). ifdefault: as own, but each handler is installed only where the
 * disposition is the default (as Python does for SIGINT): sigaction for
 * SIGTERM, signal() for SIGINT, what was seen printed.
 * default: the signals keep their default action (the job is killed);
 * own: the program's own SIGTERM/SIGINT handler sets a flag, the program
 * then prints "handler ran" and returns from main; part: as own, with only
 * the array's first 64 KiB written (most of its pages never resident). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_signal(int sig) { got = sig; }

__attribute__((noinline)) static char *keep(size_t n) { return malloc(n); }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int part = !strcmp(mode, "part");
  int own = part || !strcmp(mode, "own");
  if (!strcmp(mode, "ifdefault")) {
    struct sigaction old, sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    int term = !sigaction(SIGTERM, NULL, &old) && old.sa_handler == SIG_DFL;
    if (term)
      sigaction(SIGTERM, &sa, NULL);
    void (*was)(int) = signal(SIGINT, SIG_DFL); /* (a query, as Python's) */
    int intr = was == SIG_DFL;
    if (intr)
      signal(SIGINT, on_signal);
    printf("SIGTERM %s, SIGINT %s\n", term ? "default: handled" : "not default",
           intr ? "default: handled" : "not default");
  }
  size_t written = part ? 64u << 10 : 4u << 20;
  if (own) {
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
  }
  char *a = keep(4u << 20);
  memset(a, 1, written);
  printf("ready\n");
  fflush(stdout);
  int wait = strcmp(mode, "once") ? 3000 : 0;
  for (int i = 0; i < wait && !got; i++)
    usleep(10000);
  printf("%s (signal %d, sum %d)\n", got ? "handler ran" : "timed out", got,
         a[12345]);
  free(a);
  return 0;
}
