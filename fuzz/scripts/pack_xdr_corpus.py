#!/usr/bin/env python3
"""Pack many single-packet `xdr_decode` inputs into few corpus files.

The `xdr_decode` harness reads packets back to back, each delimited by its length word, so
the thousands of small inputs a minimized corpus needs (one or more per procedure type) fit
in a few dozen files. Each input's length word is rewritten to its real length; inputs
shorter than a header are dropped.

Usage: python3 fuzz/scripts/pack_xdr_corpus.py OUT_DIR INPUT_DIR... (files <= 4096 bytes)
"""

import hashlib
import pathlib
import struct
import sys

LIMIT = 4096


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    packets = []
    for d in sys.argv[2:]:
        for f in sorted(pathlib.Path(d).iterdir()):
            data = f.read_bytes()
            if len(data) <= LIMIT:
                data = data.ljust(28, b"\0")
                packets.append(struct.pack(">I", len(data)) + data[4:])
    files, cur = [], b""
    for p in sorted(packets, key=lambda p: (p[16:20], p[12:16], len(p))):
        if len(cur) + len(p) > LIMIT:
            files.append(cur)
            cur = b""
        cur += p
    if cur:
        files.append(cur)
    for data in files:
        (out / f"packed-{hashlib.sha1(data).hexdigest()[:16]}").write_bytes(data)
    print(f"{len(packets)} packets in {len(files)} files")


if __name__ == "__main__":
    main()
