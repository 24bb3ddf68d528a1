#!/usr/bin/env python3
"""Build the seed corpus of `frame_decode` and `xdr_decode` from captured libvirtd 9.0
packets (shared/reference/captures/*.decoded.txt) plus a few synthesized packets where the
captures only show a prefix (long errors, big lists, typed parameters).

The captures print every packet's header and up to ~100 bytes of hex. Packets printed whole
become seeds as they are; empty-payload packets are rebuilt from their header line; packets
cut short are kept only as `frame_decode` partial-input seeds.

Usage: python3 fuzz/scripts/captures_to_corpus.py CAPTURES_DIR [FUZZ_DIR]
Writes fuzz/corpus/{frame_decode,xdr_decode}/cap-* and syn-* (names are content hashes, so
rerunning is idempotent; `cargo fuzz cmin` may prune them later).
"""

import hashlib
import pathlib
import re
import struct
import sys

PROGRAMS = {"REMOTE": 0x20008086, "KEEPALIVE": 0x6B656570, "QEMU": 0x20008087, "LXC": 0x00068000}
TYPES = {"CALL": 0, "REPLY": 1, "MESSAGE": 2, "STREAM": 3, "CALL_WITH_FDS": 4, "REPLY_WITH_FDS": 5, "STREAM_HOLE": 6}
STATUS = {"OK": 0, "ERROR": 1, "CONTINUE": 2}
HEAD = re.compile(
    r"#\d+ len=(\d+) prog=(\w+) vers=(\d+) proc=(-?\d+)\(\w*\) type=(\w+) serial=(\d+) status=(\w+) payload=(\d+)B"
)
REMOTE = PROGRAMS["REMOTE"]


# ---- XDR writers -------------------------------------------------------------------------

def u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def i32(v):
    return struct.pack(">i", v)


def u64(v):
    return struct.pack(">Q", v)


def opaque(b):
    return u32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def string(s):
    return opaque(s.encode())


def opt(b):
    return u32(0) if b is None else u32(1) + b


def domain(name, uuid, ident):
    return string(name) + uuid + i32(ident)


def packet(program, procedure, kind, serial, status, payload):
    return u32(28 + len(payload)) + u32(program) + u32(1) + i32(procedure) + u32(kind) + u32(serial) + u32(status) + payload


def wire_error(code, dom, message, level=2, d=None):
    return (
        i32(code) + i32(dom) + opt(string(message)) + i32(level) + opt(d)
        + opt(string("%s")) + opt(string(message)) + opt(None) + i32(-1) + i32(-1) + opt(None)
    )


def typed_param(field, kind, value):
    return string(field) + i32(kind) + value


# ---- captures ----------------------------------------------------------------------------

def parse(path):
    """Yield (direction, bytes, complete) for every packet of one capture."""
    lines = path.read_text().splitlines()
    direction = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("====="):
            direction = "c2s" if "client->server" in line else "s2c"
        m = HEAD.match(line.strip())
        if m:
            length, prog, vers, proc, kind, serial, status, plen = m.groups()
            length, plen = int(length), int(plen)
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if nxt.startswith("hdr+payload hex:"):
                text = nxt.split(":", 1)[1].strip()
                raw = bytes.fromhex(text[: len(text) // 2 * 2])
                yield direction, raw, len(raw) == length
                i += 2
                continue
            if plen == 0:
                head = packet(PROGRAMS[prog], int(proc), TYPES[kind], int(serial), STATUS[status], b"")
                head = head[:8] + u32(int(vers)) + head[12:]
                yield direction, head, True
        i += 1


def name(prefix, data):
    return f"{prefix}-{hashlib.sha1(data).hexdigest()[:16]}"


def dedupe_key(data):
    # Same packet but for the serial: one seed is enough.
    return data[:20] + data[24:] if len(data) >= 28 else data


def synthesized():
    """Whole packets the captures only show a prefix of, and the shared-type seeds."""
    uuid = bytes.fromhex("9a923c0137804669a69aeb8c3eff533f")
    pool_uuid = bytes.fromhex("60d30d547014447f868e9524694aae63")
    dom = domain("rpc-rpcprobe", uuid, -1)
    out = []
    # Error replies as libvirtd sends them (captures cut them at ~100 bytes).
    out.append(packet(REMOTE, 23, 1, 66, 1, wire_error(42, 10, "Domain not found: no domain with matching name 'nonexistent-dom'")))
    out.append(packet(REMOTE, 265, 1, 20, 1, wire_error(80, 20, "metadata not found: Requested metadata element is not present", d=dom)))
    out.append(packet(REMOTE, 353, 1, 31, 1, wire_error(74, 10, "argument unsupported: QEMU guest agent is not configured")))
    out.append(packet(REMOTE, 208, 3, 10, 1, wire_error(38, 18, "cannot write: No space left on device")))
    # connect_list_all_domains with 100 domains.
    doms = b"".join(domain(f"vm-{i:03}", bytes([i]) * 16, i if i % 2 else -1) for i in range(100))
    out.append(packet(REMOTE, 273, 1, 10, 0, u32(100) + doms + u32(100)))
    # domain_interface_addresses: two interfaces, three addresses.
    addr = lambda t, a, p: i32(t) + string(a) + u32(p)
    iface = lambda n, mac, addrs: string(n) + opt(string(mac) if mac else None) + u32(len(addrs)) + b"".join(addrs)
    ifaces = [iface("vnet0", "52:54:00:aa:bb:cc", [addr(0, "192.168.122.10", 24), addr(1, "fe80::5054:ff:feaa:bbcc", 64)]),
              iface("lo", None, [addr(0, "127.0.0.1", 8)])]
    out.append(packet(REMOTE, 353, 1, 27, 0, u32(2) + b"".join(ifaces)))
    # domain_get_memory_parameters: typed parameters of every type.
    params = [typed_param("hard_limit", 4, u64(1 << 40)), typed_param("i", 1, i32(-3)), typed_param("u", 2, u32(7)),
              typed_param("ll", 3, u64(2**63 + 5)), typed_param("d", 5, struct.pack(">d", 1.5)),
              typed_param("b", 6, i32(1)), typed_param("s", 7, string("text"))]
    out.append(packet(REMOTE, 198, 1, 5, 0, u32(len(params)) + b"".join(params) + i32(len(params))))
    # Events.
    out.append(packet(REMOTE, 319, 2, 1, 0, i32(3) + dom))
    out.append(packet(REMOTE, 362, 2, 1, 0, i32(1)))
    # Shared types (type word 7+, procedure word = index into the harness's `standalone` list).
    shared = {
        0: wire_error(1, 7, "internal error: wrong nlmsg len", d=dom),
        1: typed_param("cpu_shares", 4, u64(1024)),
        2: u32(2) + typed_param("a", 6, i32(1)) + typed_param("b", 7, string("x")),
        3: dom,
        5: string("probe") + pool_uuid,
        6: string("probe") + string("rpc-rpcprobe2.raw") + string("/srv/pool/rpc-rpcprobe2.raw"),
        13: string("qemu:///system"),
        14: opt(string("x")),
        15: opt(dom),
        16: u32(3) + string("a") + string("bb") + string("ccc") + opt(string("d")),
        20: u64(2 << 20) + u32(0),
        24: struct.pack(">d", float("nan")),
        25: b"abcde\0\0\0",
    }
    for idx, payload in shared.items():
        out.append(packet(REMOTE, idx, 7, 0, 0, payload))
    return out


def main():
    captures = pathlib.Path(sys.argv[1])
    fuzz = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else pathlib.Path(__file__).resolve().parents[1])
    frame_dir, xdr_dir = fuzz / "corpus/frame_decode", fuzz / "corpus/xdr_decode"
    frame_dir.mkdir(parents=True, exist_ok=True)
    xdr_dir.mkdir(parents=True, exist_ok=True)
    seen = set()
    whole, partial = [], []
    for path in sorted(captures.glob("*.decoded.txt")):
        streams = {"c2s": b"", "s2c": b""}
        for direction, data, complete in parse(path):
            if complete:
                if len(streams[direction]) < 16384:
                    streams[direction] += data
                key = dedupe_key(data)
                if key not in seen:
                    seen.add(key)
                    whole.append(data)
            elif len(partial) < 24:
                partial.append(data)
        for data in streams.values():
            if data:
                (frame_dir / name("cap-stream", data)).write_bytes(data)
    syn = synthesized()
    for data in whole:
        (frame_dir / name("cap", data)).write_bytes(data)
        (xdr_dir / name("cap", data)).write_bytes(data)
    for data in partial:
        (frame_dir / name("cap-partial", data)).write_bytes(data)
    for data in syn:
        (xdr_dir / name("syn", data)).write_bytes(data)
        (frame_dir / name("syn", data)).write_bytes(data)
    # Framing edge cases.
    edges = [u32(27), u32(0x02000005), u32(0x02000004), packet(REMOTE, 1, 9, 0, 0, b""), packet(REMOTE, 1, 1, 0, 7, b""), b"\0\0"]
    for data in edges:
        (frame_dir / name("edge", data)).write_bytes(data)
    print(f"{len(whole)} whole, {len(partial)} partial, {len(syn)} synthesized packets")


if __name__ == "__main__":
    main()
