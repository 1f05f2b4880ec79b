/* SPDX-License-Identifier: MIT */
/* Sites and objects of the pmu LD_PRELOAD profiler (tw_pmu_sites.c). */
#ifndef TW_PMU_SITES_H
#define TW_PMU_SITES_H
#include "tw_pmu.h"

void tw_pmu_sites_init(const char *outdir);
/* Site of the current allocation of n bytes (unwinds the caller). */
int tw_pmu_site_of_caller(size_t n);
/* Object p of n bytes from site s is live. */
void tw_pmu_sites_alloc(void *p, int s, size_t n);
/* Object p was freed (objects.csv timeline, peak bytes). */
void tw_pmu_sites_freed(void *p);
void tw_pmu_sites_write(const tw_pmu_attr *a, const tw_pmu_event *ev, int n_ev,
                        int n_rings, const tw_pmu_ring_stats *st);
#endif
