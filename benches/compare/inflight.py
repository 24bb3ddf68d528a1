#!/usr/bin/env python3
"""8 calls in flight on one connection (issue 36 item 6), against a daemon already running
(`compare --serve` prints its URI and DAEMON_PID):

    URI=... DAEMON_PID=... LV=target/release/lv FLOOR=target/release/floor_calls \
        python3 benches/compare/inflight.py CALLS ROUNDS LABEL

Per round, in rotating order: the C library (python3-libvirt, 8 threads), `lv bench-calls
--concurrency 8` with the default cap on calls in flight (4) and with none
(`--max-in-flight 0`), and the tokio floor (`floor_calls … 8 tokio`) with the same two caps.
The daemon's CPU per call (all its threads, /proc/PID/stat) and the client's (user + system
of the child, start-up included) per run; prints one markdown table and the rounds as JSON.
SCHED is the caller's: `taskset -a -p -c 0-1 PID` unpins the testbed's daemon."""
import os, sys, subprocess, time, resource, statistics, json
pid = os.environ['DAEMON_PID']; N = int(sys.argv[1]); R = int(sys.argv[2])
uri = os.environ['URI']; sock = uri.split('socket=')[1]
LV = os.environ.get('LV', 'target/release/lv'); FL = os.environ.get('FLOOR', 'target/release/floor_calls')
HERE = os.path.dirname(os.path.abspath(__file__))
tck = os.sysconf('SC_CLK_TCK')
def dcpu():
    f = open(f'/proc/{pid}/stat').read().rsplit(')',1)[1].split()
    return (int(f[11]) + int(f[12])) / tck
vs = [("C", f"/usr/bin/python3 {HERE}/calls.py '{uri}' {N} 8"),
      ("lv4", f"{LV} -c '{uri}' bench-calls --calls {N} --concurrency 8"),
      ("lv8", f"{LV} --max-in-flight 0 -c '{uri}' bench-calls --calls {N} --concurrency 8"),
      ("ft4", f"{FL} {sock} qemu:///session {N} 8 tokio"),
      ("ft8", f"FLOOR_MAX_IN_FLIGHT=0 {FL} {sock} qemu:///session {N} 8 tokio")]
res = {n: [] for n, _ in vs}
l0 = open('/proc/loadavg').read().split()[:3]; t0 = time.strftime('%H:%M:%S', time.gmtime())
for r in range(R):
    order = vs[r % len(vs):] + vs[:r % len(vs)]
    for name, cmd in order:
        b = resource.getrusage(resource.RUSAGE_CHILDREN); d0 = dcpu(); t = time.perf_counter()
        out = subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout
        d1 = dcpu(); a = resource.getrusage(resource.RUSAGE_CHILDREN)
        rate = float([l for l in out.splitlines() if l.startswith('calls/s:')][0].split()[1])
        res[name].append((rate, (d1 - d0) / N * 1e6, (a.ru_utime - b.ru_utime + a.ru_stime - b.ru_stime) / N * 1e6))
l1 = open('/proc/loadavg').read().split()[:3]
print(f"{sys.argv[3] if len(sys.argv) > 3 else ''} {t0}–{time.strftime('%H:%M:%S', time.gmtime())} UTC, load {' '.join(l0)} → {' '.join(l1)}, {R} rounds × {N} calls")
def mm(xs): xs = sorted(xs); return f"{statistics.median(xs):.2f} ({xs[0]:.2f}–{xs[-1]:.2f})"
print("| client | calls/s median (min–max) | ÷ C per round | daemon µs/call median (min–max) | client µs/call median | client CPU ÷ tokio floor (same cap) per round |")
print("|---|---|---|---|---|---|")
for name, _ in vs:
    xs = res[name]
    rc = [x[0] / c[0] for x, c in zip(xs, res["C"])]
    fl = res["ft8" if name.endswith("8") else "ft4"]
    cf = [x[2] / f[2] for x, f in zip(xs, fl)]
    print(f"| {name} | {statistics.median(x[0] for x in xs):,.0f} ({min(x[0] for x in xs):,.0f}–{max(x[0] for x in xs):,.0f}) | {mm(rc)} | {statistics.median(x[1] for x in xs):.1f} ({min(x[1] for x in xs):.1f}–{max(x[1] for x in xs):.1f}) | {statistics.median(x[2] for x in xs):.1f} | {mm(cf) if name != 'C' else '—'} |")
print("rounds:", json.dumps({k: [[round(a) , round(b,1), round(c,2)] for a, b, c in v] for k, v in res.items()}))
