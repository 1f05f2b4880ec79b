# SPDX-License-Identifier: MIT
"""Checks the interval model's columns and the modelled penalties of the
three sites of mlp_kinds.c (sweep, gather, chase: the 64 MiB sites in
allocation order) for sim-mlp.test.

and the 16 MiB site of its atomic adds.

usage: mlp_check.py PROFILE_DIR MSHR STEPS
Prints one line per check; exits 1 on any failure."""

import sys

from tierwise import cost, reader, tiers


def main(path, mshr, steps):
    p = reader.read_profile(path)
    s = p.sites[p.sites["bytes_allocated"] == 64 << 20].sort_index()
    if len(s) != 3:
        print(f"FAIL: {len(s)} sites of 64 MiB in {path}")
        return 1
    c = cost.counts_of(s)
    miss = c["llc_load_misses"] + c["llc_store_misses"]
    over = c[cost.OVERLAPPED] / miss
    dep = c[cost.DEPENDENT] / miss
    inflight = c[cost.INFLIGHT] / miss
    m = tiers.load("optane-appdirect")
    costs = cost.site_costs(s, m)
    per_miss = costs["benefit"] / miss
    # the same profile without the interval columns: the constant MLP
    flat = cost.site_costs(s.drop(columns=cost.INTERVAL), m)["benefit"] / miss
    sweep, gather, chase = s.index
    ok = True

    def check(what, good):
        nonlocal ok
        ok &= bool(good)
        print(f"{'ok' if good else 'FAIL'}: {what}")

    for name, i in (("sweep", sweep), ("gather", gather), ("chase", chase)):
        print(
            f"{name}: misses {int(miss[i])} overlapped {over[i]:.3f} dependent {dep[i]:.3f} "
            f"in flight {inflight[i]:.2f} mlp {costs.at[i, 'mlp']:.1f} "
            f"penalty {per_miss[i] * 1e9:.1f} ns/miss (constant mlp: {flat[i] * 1e9:.1f})"
        )
    check("sweep misses on >= 99% of its 1 Mi lines", miss[sweep] >= 0.99 * (1 << 20))
    check("gather and chase miss on >= 95% of the same number of steps", miss[gather] >= 0.95 * miss[chase])
    # ranking of the overlap columns: sweep > gather > chase
    check("overlapped share: sweep > gather > chase", over[sweep] > over[gather] > over[chase])
    check("in flight: sweep > gather > chase", inflight[sweep] > inflight[gather] > inflight[chase])
    check("sweep: >= 99% overlapped (prefetched)", over[sweep] >= 0.99)
    # a gather's independent misses fill the fill buffers: 1 - 1/mshr overlap
    want = 1 - 1 / mshr
    check(f"gather: overlapped within 0.03 of {want:.3f}", abs(over[gather] - want) <= 0.03)
    check("gather: <= 1% dependent", dep[gather] <= 0.01)
    check(
        f"gather: mean in flight within 15% of {(mshr + 1) / 2:.1f}",
        abs(inflight[gather] - (mshr + 1) / 2) <= 0.15 * (mshr + 1) / 2,
    )
    check("chase: >= 99% dependent, <= 1% overlapped", dep[chase] >= 0.99 and over[chase] <= 0.01)
    check("chase: mean in flight <= 1.05", inflight[chase] <= 1.05)
    # modelled slow-tier penalties differ accordingly
    r = per_miss[chase] / per_miss[gather]
    check(f"penalty per miss chase / gather = {r:.2f} within 20% of mlp {mshr}", abs(r - mshr) <= 0.2 * mshr)
    r = per_miss[gather] / per_miss[sweep]
    check(f"penalty per miss gather / sweep = {r:.1f} >= 5", r >= 5)
    check(
        "with the constant mlp, gather and chase cost the same per miss (within 5%)",
        abs(flat[gather] / flat[chase] - 1) <= 0.05,
    )
    # atomic adds: every one counted for its site, their misses fences
    a = p.sites[p.sites["bytes_allocated"] == 16 << 20].iloc[0]
    check(f"atomics: {int(a['atomics'])} = {steps // 4}", int(a["atomics"]) == steps // 4)
    am = int(a["llc_load_misses"]) + int(a["llc_store_misses"])
    check(
        f"atomics: {am} misses, <= 1% overlapped", am > 0 and int(a["llc_overlapped_misses"]) <= 0.01 * am
    )
    base = cost.baseline_seconds(p.sites, m) - cost.baseline_seconds(p.sites.drop(columns="atomics"), m)
    check(
        f"atomics add {base * 1e9:.0f} ns = {steps // 4} x atomic_ns to the compute baseline",
        abs(base * 1e9 - steps // 4 * m.atomic_ns) < 1,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
