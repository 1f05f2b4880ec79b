# SPDX-License-Identifier: MIT
# Guest side: node 0's room as the runtime's room policy counts it (sourced
# by test/numa/guest_runtime.sh and test/bench/numa_tiering_guest.sh).
#
#   zone_not_room_kib
#       prints what of node 0's free memory (KiB) is no room, as the
#       runtime counts it (runtime/src/tw_pages.c): per zone, its free pages
#       under its low watermark plus its largest lowmem_reserve
#       (`protection`; most of a small DMA zone)
zone_not_room_kib() {
  awk 'function done() { if (on) s += (f < l + p ? f : l + p); on = 0; f = l = p = 0 }
       /^Node/ { done(); on = ($2 == "0,") }
       on && $1 == "pages" && $2 == "free" { f = $3 }
       on && $1 == "low" { l = $2 }
       on && $1 == "protection:" { gsub(/[(),]/, " "); for (i = 2; i <= NF; i++) if ($i + 0 > p) p = $i + 0 }
       END { done(); print s * 4 }' /proc/zoneinfo
}
