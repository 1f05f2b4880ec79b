/* SPDX-License-Identifier: MIT */
/* Default sampling events of the pmu backend, per CPU model: on Intel the
 * precise (PEBS) events MEM_LOAD_RETIRED:L3_MISS and
 * MEM_INST_RETIRED:ALL_STORES encoded by libpfm4 (older names as
 * fallbacks); on AMD an IBS op sampler on the kernel's ibs_op PMU, whose
 * dynamic type and cnt_ctl bit come from sysfs. All sample IP, TID, TIME,
 * ADDR and DATA_SRC in user space. */
#include "tw_pmu.h"

#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const intel_loads[] = {
    "MEM_LOAD_RETIRED:L3_MISS", "MEM_LOAD_UOPS_RETIRED:L3_MISS",
    "MEM_LOAD_UOPS_RETIRED:LLC_MISS", NULL};
static const char *const intel_stores[] = {"MEM_INST_RETIRED:ALL_STORES",
                                           "MEM_UOPS_RETIRED:ALL_STORES", NULL};

static int core_pmu(pfm_pmu_info_t *info) {
  int i;
  pfm_for_all_pmus(i) {
    memset(info, 0, sizeof *info);
    info->size = sizeof *info;
    if (pfm_get_pmu_info(i, info) == PFM_SUCCESS && info->is_present &&
        info->type == PFM_PMU_TYPE_CORE)
      return 0;
  }
  return -1;
}

static void common_attr(struct perf_event_attr *attr, uint64_t period) {
  attr->size = sizeof *attr;
  attr->sample_period = period;
  attr->sample_type = TW_PMU_SAMPLE_TYPE;
  attr->exclude_kernel = 1;
  attr->exclude_hv = 1;
  attr->disabled = 1;
}

static int encode_intel(const char *pmu, const char *const *names, int precise,
                        uint64_t period, tw_pmu_event *ev) {
  for (; *names; names++) {
    char spec[160];
    snprintf(spec, sizeof spec, "%s::%s:precise=%d", pmu, *names, precise);
    memset(ev, 0, sizeof *ev);
    pfm_perf_encode_arg_t arg;
    memset(&arg, 0, sizeof arg);
    arg.size = sizeof arg;
    arg.attr = &ev->attr;
    if (pfm_get_os_event_encoding(spec, PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
                                  &arg) != PFM_SUCCESS)
      continue;
    snprintf(ev->name, sizeof ev->name, "%s::%s", pmu, *names);
    common_attr(&ev->attr, period);
    ev->attr.precise_ip = precise;
    return 0;
  }
  return -1;
}

static int read_sysfs(const char *root, const char *rel, char *buf, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/bus/event_source/devices/ibs_op/%s",
           root ? root : "/sys", rel);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  int ok = fgets(buf, (int)n, f) != NULL;
  fclose(f);
  return ok ? 0 : -1;
}

static int encode_ibs(const char *root, uint64_t period, tw_pmu_event *ev,
                      char *why, size_t why_len) {
  char buf[64];
  if (read_sysfs(root, "type", buf, sizeof buf) != 0) {
    snprintf(why, why_len,
             "%s/bus/event_source/devices/ibs_op/type: no ibs_op "
             "PMU (AMD IBS not exposed by this kernel or machine)",
             root ? root : "/sys");
    return -1;
  }
  memset(ev, 0, sizeof *ev);
  ev->attr.type = (uint32_t)strtoul(buf, NULL, 10);
  /* cnt_ctl: count dispatched ops rather than cycles (format "config:19") */
  int bit = 19;
  if (read_sysfs(root, "format/cnt_ctl", buf, sizeof buf) == 0 &&
      strncmp(buf, "config:", 7) == 0)
    bit = atoi(buf + 7);
  ev->attr.config = 1ull << bit;
  common_attr(&ev->attr, period & ~(uint64_t)15); /* IBS: multiple of 16 */
  ev->kind = TW_PMU_IBS_OP;
  snprintf(ev->name, sizeof ev->name, "ibs_op:cnt_ctl=1");
  return 0;
}

int tw_pmu_default_events(tw_pmu_event *events, int max, uint64_t period,
                          const char *sysfs_root, char *why, size_t why_len) {
  int r = pfm_initialize();
  if (r != PFM_SUCCESS) {
    snprintf(why, why_len, "libpfm4: %s", pfm_strerror(r));
    return -1;
  }
  pfm_pmu_info_t info;
  if (core_pmu(&info) != 0) {
    snprintf(why, why_len,
             "libpfm4 knows no core PMU for this CPU "
             "(LIBPFM_FORCE_PMU selects one)");
    return -1;
  }
  if (strncmp(info.name, "amd64", 5) == 0) {
    if (max < 1)
      return -1;
    return encode_ibs(sysfs_root, period, &events[0], why, why_len) == 0 ? 1
                                                                         : -1;
  }
  if (max < 2)
    return -1;
  if (encode_intel(info.name, intel_loads, 2, period, &events[0]) != 0 ||
      encode_intel(info.name, intel_stores, 2, period, &events[1]) != 0) {
    snprintf(why, why_len,
             "%s: no precise L3-miss load / store event known "
             "to libpfm4 for this PMU",
             info.name);
    return -1;
  }
  events[0].kind = TW_PMU_LLC_LOAD_MISS;
  events[1].kind = TW_PMU_STORE;
  return 2;
}
