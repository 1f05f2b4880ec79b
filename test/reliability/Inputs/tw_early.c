/* SPDX-License-Identifier: MIT */
/* Library of the reliability tests, linked into tw_faults: it allocates in
 * its constructor (before the runtime's constructor has run: it is
 * initialized first) and in its destructor (after the runtime's destructor:
 * finalized last), and frees a block from before the runtime's start. */
#include <stdlib.h>
#include <string.h>

static char *early;
unsigned long tw_early_sum;
void *volatile tw_early_sink; /* keeps the compiler from removing blocks */

__attribute__((constructor(101))) static void tw_early_ctor(void) {
  early = malloc(1000);
  memset(early, 7, 1000);
  char *q = calloc(10, 10);
  tw_early_sum = (unsigned long)early[999] + (unsigned long)q[50];
  tw_early_sink = q;
  free(q);
}

/* The block allocated before the runtime's constructor, for main to use. */
char *tw_early_block(void) { return early; }

__attribute__((destructor(101))) static void tw_early_dtor(void) {
  char *p = malloc(5000); /* after the runtime's destructor */
  memset(p, 1, 5000);
  p = realloc(p, 10000);
  tw_early_sink = p;
  free(p);
}
