#!/usr/bin/python3
"""Bulk domain statistics through the C library (python3-libvirt): virConnectGetAllDomainStats.

Usage: /usr/bin/python3 stats.py URI CALLS STATS

One connection; one warm-up call, then CALLS calls of conn.getAllDomainStats(STATS) one after
the other (STATS: the virDomainStatsTypes bits, 0 for every group). Prints, like
`lv bench-stats`:

    calls/s: <calls per second>
    domains: <records in one reply>
    params: <typed parameters in one reply>
    secs: <wall seconds of the calls>
    cpu_s: <CPU seconds (user+sys) of this process during the calls>

Used by `benches/src/scale/`; runs only with Debian's /usr/bin/python3, which has the
libvirt binding.
"""

import sys
import time

import libvirt


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    uri, calls, stats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    conn = libvirt.open(uri)
    domains = len(conn.getAllDomainStats(stats))
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    params = 0
    for _ in range(calls):
        recs = conn.getAllDomainStats(stats)
        params += sum(len(p) for _, p in recs)
    secs = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    conn.close()
    print(f"calls/s: {calls / secs:.3f}")
    print(f"domains: {domains}")
    print(f"params: {params // max(calls, 1)}")
    print(f"secs: {secs:.6f}")
    print(f"cpu_s: {cpu:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
