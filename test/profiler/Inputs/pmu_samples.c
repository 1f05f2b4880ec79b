// SPDX-License-Identifier: MIT
// Test input for the pmu profiler where no PMU is (pmu-glue-stacks.test):
// allocates three arrays as soname_main does (1 MiB by calloc and 2 MiB by
// anonymous mmap inside libtwsoname.so.1, 512 KiB by its own anonymous
// mmap), then writes FILE (argv[1]) as a perf mmap ring holding synthetic
// PERF_RECORD_SAMPLEs (IP|TID|TIME|ADDR|DATA_SRC): 3 in the calloc'ed array,
// 5 in the library's mapping, 7 in its own mapping, 2 on its stack. The
// profiler, given TIERWISE_PMU_TEST_RING=FILE, drains it at exit; the arrays
// stay live until then.
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

double *twso_vector(size_t n);
double *twso_mapped(size_t n);

enum { DATA = 1 << 16 }; /* data area: a power of two */
static unsigned char *data;
static struct perf_event_mmap_page *meta;

static void sample(const void *addr) {
  struct {
    struct perf_event_header h;
    uint64_t ip, pidtid, time, addr, data_src;
  } r = {{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof r},
         (uint64_t)(uintptr_t)&sample,
         (uint64_t)getpid() << 32 | (uint64_t)getpid(),
         1,
         (uint64_t)(uintptr_t)addr,
         0};
  memcpy(data + meta->data_head, &r, sizeof r);
  meta->data_head += sizeof r;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *v = (char *)twso_vector((1u << 20) / 8);
  char *m = (char *)twso_mapped((2u << 20) / 8);
  char *h = mmap(NULL, 512u << 10, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!v || !m || h == MAP_FAILED)
    return 1;
  unsigned char *ring = calloc(1, page + DATA);
  meta = (struct perf_event_mmap_page *)ring;
  data = ring + page;
  volatile char local = 0;
  for (int i = 0; i < 3; i++)
    sample(v + i * 4096 + 8);
  for (int i = 0; i < 5; i++)
    sample(m + i * 65536);
  for (int i = 0; i < 7; i++)
    sample(h + (512u << 10) - 1 - i);
  for (int i = 0; i < 2; i++)
    sample((const void *)&local);
  FILE *f = fopen(argv[1], "wb");
  if (!f || fwrite(ring, 1, page + DATA, f) != page + DATA || fclose(f))
    return 1;
  printf("samples 17\n");
  return 0; /* v, m, h live until exit */
}
