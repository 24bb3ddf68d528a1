#!/usr/bin/env python3
"""A/B of two `lv` builds on one private daemon (`compare --serve`): per round, before, after and
before again (the A/A control) in rotating order, sequential and 8 in flight; calls/s and the
client's CPU per call (user + system of the child, start-up included: ~3.5 ms per process).

    LV_BEFORE=/tmp/lv-before LV_AFTER=/tmp/lv-after COMPARE=target/release/compare \
        SCHED=unpinned ROUNDS=20 CALLS=10000 python3 benches/compare/ab_lv.py

SCHED=unpinned re-pins every daemon thread to CPUs 0-1 (a production daemon is not pinned);
SCHED=pinned leaves the testbed's pinning to CPU 0. Prints one markdown table."""
import os, subprocess, sys, time, resource, statistics, re
ROUNDS = int(os.environ.get("ROUNDS", "12"))
CALLS = int(os.environ.get("CALLS", "10000"))
srv = subprocess.Popen([os.environ.get("COMPARE", "target/release/compare"), "--lv", os.environ["LV_AFTER"], "--serve", "--skip-transfers", "--mib", "1"],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
uri = None; out = []
while uri is None:
    line = srv.stdout.readline()
    if not line: sys.exit("serve ended: " + "".join(out))
    out.append(line)
    if line.startswith("URI="): uri = line[4:].strip()
    if line.startswith("DAEMON_PID="): pid = line.split("=")[1].strip()
while not any(l.startswith("DAEMON_PID=") for l in out):
    l = srv.stdout.readline(); out.append(l)
    if l.startswith("DAEMON_PID="): pid = l.split("=")[1].strip()
SCHED = os.environ.get("SCHED", "pinned")
if SCHED == "unpinned":
    subprocess.run(["taskset", "-a", "-p", "-c", "0-1", pid], check=True, stdout=subprocess.DEVNULL)
print("uri:", uri, file=sys.stderr)
def run(lv, conc):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([lv, "-c", uri, "bench-calls", "--calls", str(CALLS), "--concurrency", str(conc)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return CALLS / wall, cpu / CALLS * 1e6
B, A = os.environ["LV_BEFORE"], os.environ["LV_AFTER"]
variants = [("before", B), ("after", A), ("before2", B)]
res = {(v, c): [] for v, _ in variants for c in (1, 8)}
load0 = open("/proc/loadavg").read().split()[:3]
t0 = time.strftime("%H:%M:%S", time.gmtime())
for r in range(ROUNDS):
    order = variants[r % 3:] + variants[:r % 3]
    for c in (1, 8):
        for name, lv in order:
            res[(name, c)].append(run(lv, c))
load1 = open("/proc/loadavg").read().split()[:3]
srv.stdin.close(); srv.wait()
def q(xs):
    xs = sorted(xs); n = len(xs)
    return f"{statistics.median(xs):.3f} ({xs[max(0, n // 10)]:.3f}–{xs[min(n - 1, n - 1 - n // 10)]:.3f})"
print(f"{SCHED} daemon, {t0}–{time.strftime('%H:%M:%S', time.gmtime())} UTC, load {' '.join(load0)} → {' '.join(load1)}, {ROUNDS} rounds × {CALLS} calls")
print("| mode | before calls/s | after calls/s | after ÷ before per round | before ÷ before (A/A) per round | client CPU µs/call before / after / A/A |")
print("|---|---|---|---|---|---|")
for c in (1, 8):
    b = res[("before", c)]; a = res[("after", c)]; b2 = res[("before2", c)]
    ab = [x[0] / y[0] for x, y in zip(a, b)]; aa = [x[0] / y[0] for x, y in zip(b2, b)]
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    mode = "sequential" if c == 1 else "8 in flight"
    print(f"| {mode} | {med(b,0):,.0f} | {med(a,0):,.0f} | {q(ab)} | {q(aa)} | {med(b,1):.1f} / {med(a,1):.1f} / {med(b2,1):.1f} |")
