#!/usr/bin/python3
"""Calls/s of virConnectGetLibVersion through the C library (python3-libvirt).

Usage: /usr/bin/python3 calls.py URI N THREADS [empty]

One connection, shared by THREADS threads (the C library's own multithreading: the remote
driver lets concurrent calls on one virConnectPtr overlap on the wire). The GIL is released
while a thread is inside the C call. Prints, after the calls (connect and thread start are not
timed):

    calls/s: <calls per second>
    secs: <wall seconds of the calls>
    cpu_s: <CPU seconds (user+sys, all threads) of this process during the calls>

With `empty`, the same loop runs with an empty body (no call): `compare --counts`
subtracts its instructions per iteration, the interpreter's own loop, from the C library's.

Used by `benches/src/bin/compare.rs`; runs only with Debian's /usr/bin/python3, which has
the libvirt binding.
"""

import sys
import threading
import time

import libvirt


def main() -> int:
    if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["empty"]):
        print(__doc__, file=sys.stderr)
        return 2
    uri, total, threads = sys.argv[1], int(sys.argv[2]), max(1, int(sys.argv[3]))
    empty = sys.argv[4:] == ["empty"]
    conn = libvirt.open(uri)
    if conn is None:
        print(f"cannot open {uri}", file=sys.stderr)
        return 1
    # Split the calls as evenly as possible; every thread starts at the same barrier.
    shares = [total // threads + (1 if i < total % threads else 0) for i in range(threads)]
    barrier = threading.Barrier(threads + 1)
    errors = []

    def worker(n: int) -> None:
        barrier.wait()
        try:
            if empty:
                for _ in range(n):
                    pass
                return
            for _ in range(n):
                conn.getLibVersion()
        except libvirt.libvirtError as e:  # pragma: no cover - reported below
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(n,)) for n in shares]
    for t in pool:
        t.start()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    barrier.wait()
    for t in pool:
        t.join()
    secs = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    conn.close()
    if errors:
        print(f"error: {errors[0]}", file=sys.stderr)
        return 1
    rate = total / secs if secs > 0 else 0.0
    print(f"calls/s: {rate:.0f}")
    print(f"secs: {secs:.6f}")
    print(f"cpu_s: {cpu:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
