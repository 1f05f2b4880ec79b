/* SPDX-License-Identifier: MIT */
/* Test program of run-signals.test: a job that a scheduler or a supervisor
 * ends with a signal sent to `tierwise run`. Allocates and writes 4 MiB
 * from one site, prints "ready PID PPID" and waits (up to 60 s) for
 * SIGTERM, SIGINT or SIGHUP. Usage: tw_run_target own | default.
 * own: its handler sets a flag; it then prints "handler ran (signal N)"
 * and returns 0 from main (the runtime's destructor writes the report).
 * default: the signals keep their default action (the runtime writes the
 * report from its own handler, then the signal kills the program). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_signal(int sig) { got = sig; }

__attribute__((noinline)) static char *keep(size_t n) { return malloc(n); }

int main(int argc, char **argv) {
  int own = argc > 1 && !strcmp(argv[1], "own");
  if (own) {
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
  }
  char *a = keep(4u << 20);
  memset(a, 1, 4u << 20);
  printf("ready %d %d\n", (int)getpid(), (int)getppid());
  fflush(stdout);
  for (int i = 0; i < 6000 && !got; i++)
    usleep(10000); /* a signal ends the sleep at once */
  printf("%s (signal %d)\n", got ? "handler ran" : "timed out", (int)got);
  free(a);
  return got ? 0 : 3;
}
