#!/usr/bin/env python3
"""Python's C-accelerated ElementTree on libvirt's test corpus: parse + serialize every file,
single-threaded, files preloaded into memory. Prints one line per round:
`etree ROUND SECONDS BYTES` (the floor for "read the tree, write it back" without types).

usage: xml_etree.py LIST_FILE BASE_DIR ROUNDS
"""
import sys
import time
import xml.etree.ElementTree as ET

# The C accelerator is what ElementTree uses when it is importable (CPython: always).
assert ET.XMLParser.__module__ in ("_elementtree", "xml.etree.ElementTree")
import _elementtree  # noqa: F401  (fails loudly if the accelerator is missing)

list_file, base, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(list_file) as f:
    paths = [l.strip() for l in f if l.strip()]
docs = []
for p in paths:
    with open(p if p.startswith("/") else f"{base}/{p}", "rb") as f:
        docs.append(f.read())
total = sum(len(d) for d in docs)
for r in range(rounds):
    t0 = time.perf_counter()
    for d in docs:
        ET.tostring(ET.fromstring(d))
    dt = time.perf_counter() - t0
    print(f"etree {r} {dt:.6f} {total}", flush=True)
