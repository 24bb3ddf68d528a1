#!/bin/bash
# Interrupts behind one client run (issue 36 item 6): calls/s, the daemon's CPU per call, rescheduling
# (RES) and function-call (CAL) IPIs per call on CPUs 0 and 1, and each CPU's idle share.
#   DAEMON_PID=… benches/compare/ipi.sh LABEL CMD…   (CMD runs 30,000 calls and prints "calls/s: N")
label=$1; shift
irq() { awk '/RES:|CAL:/ {print $1, $2, $3}' /proc/interrupts | tr '\n' ' '; }
idle() { awk '/^cpu0 |^cpu1 / {printf "%s %s ", $5+$6, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
i0=($(irq)); s0=($(idle)); d0=$(awk '{print $14+$15}' /proc/$DAEMON_PID/stat)
out=$("$@" | grep calls/s | awk '{print $2}')
i1=($(irq)); s1=($(idle)); d1=$(awk '{print $14+$15}' /proc/$DAEMON_PID/stat)
N=30000
python3 - "$label" "$out" "$d0" "$d1" "${i0[*]}" "${i1[*]}" "${s0[*]}" "${s1[*]}" <<'PY'
import sys
l,rate,d0,d1,i0,i1,s0,s1=sys.argv[1:]
N=30000
i0=i0.split(); i1=i1.split(); s0=list(map(int,s0.split())); s1=list(map(int,s1.split()))
res=[(int(i1[k])-int(i0[k]))/N for k in (1,2)]; cal=[(int(i1[k])-int(i0[k]))/N for k in (4,5)]
idle=[(s1[0]-s0[0])/(s1[1]-s0[1]), (s1[2]-s0[2])/(s1[3]-s0[3])]
print(f"{l:5} {float(rate):8.0f} calls/s daemon {(int(d1)-int(d0))*1e4/N:5.1f} us/call  RES/call cpu0 {res[0]:.2f} cpu1 {res[1]:.2f}  CAL/call {cal[0]:.2f} {cal[1]:.2f}  idle cpu0 {idle[0]:.2f} cpu1 {idle[1]:.2f}")
PY
