/* SPDX-License-Identifier: MIT */
/* tierwise-pmu-probe: what the pmu backend and `tierwise doctor` ask of the
 * machine.
 *   tierwise-pmu-probe encode [PERIOD]  default events as JSON lines
 *   tierwise-pmu-probe open [PERIOD]    opens each default event on this
 *       thread; prints "ok" or one line with the exact failure (errno text
 *       and perf_event_paranoid) and exits 1.
 * TW_PMU_SYSFS overrides /sys (tests). */
#include "tw_pmu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int paranoid(void) {
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  int v = -99;
  if (f) {
    if (fscanf(f, "%d", &v) != 1)
      v = -99;
    fclose(f);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "encode") && strcmp(argv[1], "open"))) {
    fprintf(stderr, "usage: tierwise-pmu-probe encode|open [PERIOD]\n");
    return 2;
  }
  uint64_t period = argc > 2 ? strtoull(argv[2], NULL, 0) : 20011;
  tw_pmu_event ev[TW_PMU_MAX_EVENTS];
  char why[512] = "";
  int n = tw_pmu_default_events(ev, TW_PMU_MAX_EVENTS, period,
                                getenv("TW_PMU_SYSFS"), why, sizeof why);
  if (n < 0) {
    if (strcmp(argv[1], "open") == 0) {
      /* Say also whether any hardware event opens at all. */
      struct perf_event_attr cyc = {.type = PERF_TYPE_HARDWARE,
                                    .size = sizeof cyc,
                                    .config = PERF_COUNT_HW_CPU_CYCLES,
                                    .exclude_kernel = 1};
      int fd = (int)syscall(SYS_perf_event_open, &cyc, 0, -1, -1, 0);
      int e = errno;
      if (fd >= 0)
        close(fd);
      printf("error: %s; hardware cycles event: %s (errno %d); "
             "perf_event_paranoid=%d\n",
             why, fd >= 0 ? "opens" : strerror(e), fd >= 0 ? 0 : e, paranoid());
    } else {
      printf("error: %s\n", why);
    }
    return 1;
  }
  if (strcmp(argv[1], "encode") == 0) {
    for (int i = 0; i < n; i++)
      printf("{\"name\": \"%s\", \"kind\": %d, \"type\": %u, \"config\": %llu, "
             "\"config1\": %llu, \"precise_ip\": %u, \"sample_period\": %llu, "
             "\"sample_type\": %llu, \"exclude_kernel\": %u}\n",
             ev[i].name, (int)ev[i].kind, ev[i].attr.type,
             (unsigned long long)ev[i].attr.config,
             (unsigned long long)ev[i].attr.config1, ev[i].attr.precise_ip,
             (unsigned long long)ev[i].attr.sample_period,
             (unsigned long long)ev[i].attr.sample_type,
             ev[i].attr.exclude_kernel);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    int fd = (int)syscall(SYS_perf_event_open, &ev[i].attr, 0, -1, -1, 0);
    if (fd < 0) {
      int e = errno;
      printf("error: %s: perf_event_open: %s (errno %d); "
             "perf_event_paranoid=%d\n",
             ev[i].name, strerror(e), e, paranoid());
      return 1;
    }
    close(fd);
  }
  printf("ok: %d events open\n", n);
  return 0;
}
