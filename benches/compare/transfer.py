#!/usr/bin/python3
"""Volume upload/download through the C library (python3-libvirt), the way virsh does it.

Usage:
    /usr/bin/python3 transfer.py upload   URI POOL VOL FILE
    /usr/bin/python3 transfer.py download URI POOL VOL FILE [--event-loop]
    /usr/bin/python3 transfer.py noop     URI POOL VOL

`upload` is `vol.upload` + `stream.sendAll` reading FILE with os.read; `download` is
`vol.download` + `stream.recvAll` writing FILE with os.write. Both helpers move
`virStorageVol.streamBufSize` (262,120 bytes) per call, the same chunk virsh's
virStreamSendAll/virStreamRecvAll use. Nothing is sparse. The file is opened like virsh
opens it (O_WRONLY|O_CREAT|O_TRUNC for downloads), so FILE may be a FIFO.

`--event-loop` registers libvirt's default event loop and runs it in a thread, as virsh and
most long-running applications do: the library then also reads the socket while the
application is busy in its sink, so incoming stream data queues in the client (unbounded).
Without it nobody reads the socket while the sink blocks, and TCP-style backpressure reaches
the daemon.

`noop` connects and looks the volume up, then exits: the fixed cost (interpreter start,
import, connect) that the harness subtracts.

Prints `secs: <wall seconds from vol.upload/vol.download to stream.finish>` and
`bytes: <payload bytes>`.
"""

import os
import sys
import threading
import time

import libvirt


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    event_loop = "--event-loop" in sys.argv[1:]
    if len(args) < 4 or args[0] not in ("upload", "download", "noop"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, uri, pool_name, vol_name = args[:4]
    if mode != "noop" and len(args) != 5:
        print(__doc__, file=sys.stderr)
        return 2

    if event_loop:
        libvirt.virEventRegisterDefaultImpl()

        def loop() -> None:
            while True:
                libvirt.virEventRunDefaultImpl()

        threading.Thread(target=loop, daemon=True).start()

    conn = libvirt.open(uri)
    pool = conn.storagePoolLookupByName(pool_name)
    vol = pool.storageVolLookupByName(vol_name)
    if mode == "noop":
        conn.close()
        return 0
    path = args[4]
    moved = 0

    if mode == "upload":
        fd = os.open(path, os.O_RDONLY)

        def source(_stream, nbytes, _opaque):
            nonlocal moved
            data = os.read(fd, nbytes)
            moved += len(data)
            return data

        t0 = time.perf_counter()
        st = conn.newStream(0)
        vol.upload(st, 0, 0, 0)
        st.sendAll(source, None)
        st.finish()
        secs = time.perf_counter() - t0
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

        def sink(_stream, buf, _opaque):
            nonlocal moved
            view = memoryview(buf)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            moved += len(buf)
            return len(buf)

        t0 = time.perf_counter()
        st = conn.newStream(0)
        vol.download(st, 0, 0, 0)
        st.recvAll(sink, None)
        st.finish()
        secs = time.perf_counter() - t0
    os.close(fd)
    conn.close()
    print(f"secs: {secs:.6f}")
    print(f"bytes: {moved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
