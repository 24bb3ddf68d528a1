#!/usr/bin/python3
"""The C library's side of `fanin` (benches/src/bin/fanin.rs): many connections in one process.

Usage: /usr/bin/python3 fanin.py [--subscribe] [--log FILE] [--hold-ms N] PER URI...

libvirt's default event loop (virEventRegisterDefaultImpl) runs in a thread, as virsh runs
it; PER connections are opened to each URI and, with --subscribe, each registers a lifecycle
callback for every domain (domainEventRegisterAny). Prints `ready: <seconds>`, then waits for
stdin to close (or N ms); events are stamped with CLOCK_MONOTONIC on arrival in the callback.
At the end: the events to FILE as `uri_index conn_index t_ns event name` lines, and

    events: N
    cpu_s: <user+sys seconds of this process after `ready`>
    hwm_kib: <peak RSS>

Runs only with Debian's /usr/bin/python3, which has the libvirt binding.
"""

import sys
import threading
import time

import libvirt


def hwm_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main() -> int:
    args = sys.argv[1:]
    subscribe, log, hold = False, None, None
    rest = []
    while args:
        a = args.pop(0)
        if a == "--subscribe":
            subscribe = True
        elif a == "--log":
            log = args.pop(0)
        elif a == "--hold-ms":
            hold = int(args.pop(0)) / 1000.0
        else:
            rest.append(a)
    if len(rest) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    per, uris = int(rest[0]), rest[1:]

    libvirt.virEventRegisterDefaultImpl()

    def loop() -> None:
        while True:
            libvirt.virEventRunDefaultImpl()

    threading.Thread(target=loop, daemon=True).start()

    events = []

    def on_event(conn, dom, event, detail, opaque) -> None:
        events.append((opaque[0], opaque[1], time.monotonic_ns(), event, dom.name()))

    t0 = time.perf_counter()
    conns = []
    for ui, uri in enumerate(uris):
        for ci in range(per):
            c = libvirt.open(uri)
            c.getLibVersion()
            if subscribe:
                c.domainEventRegisterAny(
                    None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, on_event, (ui, ci)
                )
            conns.append(c)
    print(f"ready: {time.perf_counter() - t0:.6f}", flush=True)
    cpu0 = time.process_time()
    if hold is not None:
        time.sleep(hold)
    else:
        sys.stdin.buffer.read()
    cpu = time.process_time() - cpu0
    got = list(events)
    if log:
        with open(log, "w") as f:
            for ui, ci, at, ev, name in got:
                f.write(f"{ui} {ci} {at} {ev} {name}\n")
    print(f"events: {len(got)}")
    print(f"cpu_s: {cpu:.6f}")
    print(f"hwm_kib: {hwm_kib()}", flush=True)
    return 0


if __name__ == "__main__":
    # The event loop thread never returns: leave without joining it.
    code = main()
    sys.stdout.flush()
    import os

    os._exit(code)
