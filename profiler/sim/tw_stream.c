/* SPDX-License-Identifier: MIT */
/* Sequential-miss detection of the tierwise Valgrind tool: which LLC misses
 * continue a run of consecutive lines of the same counter slot (site x
 * tier), i.e. the misses a hardware stream prefetcher would have covered.
 * The simulated caches have no prefetcher, so a sweep over an array misses
 * on every line, like a random walk over it; the advisor's cost model
 * discounts the latency of these sequential misses (llc_stream_misses in
 * sites.csv) and charges the others in full.
 *
 * Like a prefetcher's stream table: each slot has TW_STREAMS trackers, each
 * the last line of one run; a miss within TW_STREAM_REACH lines after (or
 * before: descending sweeps) a tracker's line continues that run and moves
 * the tracker; any other miss starts a new run in the least recently
 * started tracker. The first miss of a run is not sequential. Several
 * interleaved sweeps of one site (threads sweeping their chunks, Valgrind
 * switching between them) each keep a tracker. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

#include "tw_sim.h"

#define TW_STREAMS 4
#define TW_STREAM_REACH 2

typedef struct {
  Addr last[TW_STREAMS];
  UInt next; /* tracker a new run replaces */
} TwStreams;

static TwStreams *streams;
static UInt cap;

Bool tw_stream_miss(UInt slot, Addr line) {
  if (UNLIKELY(slot >= cap)) {
    UInt n = slot < 64 ? 128 : slot * 2;
    streams = VG_(realloc)("tw.streams", streams, n * sizeof *streams);
    VG_(memset)(streams + cap, 0, (n - cap) * sizeof *streams);
    cap = n;
  }
  TwStreams *s = &streams[slot];
  for (UInt i = 0; i < TW_STREAMS; i++) {
    Addr last = s->last[i];
    if (last && line != last &&
        (line - last <= TW_STREAM_REACH || last - line <= TW_STREAM_REACH)) {
      s->last[i] = line;
      tw_slots[slot].n.llc_stream_misses++;
      return True;
    }
  }
  s->last[s->next] = line;
  s->next = (s->next + 1) % TW_STREAMS;
  return False;
}
