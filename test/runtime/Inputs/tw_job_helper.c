/* SPDX-License-Identifier: MIT */
/* The helper process of tw_job_parent: allocates at start (its own sites),
 * waits until its parent has exited (stdin, the parent's pipe, reaches end
 * of file), then allocates and works on a little longer, so that it ends
 * after the parent - as a job's daemon does. Prints nothing. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  char *early = malloc(3u << 20);
  if (!early)
    return 1;
  memset(early, 1, 3u << 20);
  char buf[64];
  while (read(0, buf, sizeof buf) > 0)
    ;
  char *late = malloc(5u << 20);
  if (!late)
    return 1;
  memset(late, 2, 5u << 20);
  usleep(200000);
  int sum = early[7] + late[11];
  free(early);
  free(late);
  return sum == 3 ? 0 : 1;
}
