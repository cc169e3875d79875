#!/usr/bin/env python3
"""Where the wall time of a conversion goes, from its Go execution trace.

    convert images DIR OUT.mldf --workers 2 --trace run.trace
    bench/tracebusy.py run.trace

Reads `go tool trace -d=parsed` (the Go toolchain that built convert must be on PATH) and
prints, for the encoder workers (the goroutines running pipeline.(*runner).work):

  - the head: trace start (after the plan is built) to the first worker's first sample;
  - the tail: the last worker's end to the trace's end (the table writes, fsync, rename);
  - each worker's share of the run in Running (Go code), Syscall (cgo calls such as
    libjpeg-turbo, and system calls such as reads), Runnable (ready, waiting for a P: a core
    the runtime gives it), and Waiting, by the Go function it waited in (its next sample,
    the ordered writer, the page writer).

A worker inside a cgo call counts as Syscall even while the kernel has descheduled its thread
(another process took the core): the trace shows what the program waited on, per-thread CPU
time (perf, getrusage) shows what it got. Both are in docs/PERFORMANCE.md.
"""

import collections
import re
import subprocess
import sys

EVENT = re.compile(r"^M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)")
TRANSITION = re.compile(r"GoID=(\d+) (\w+)->(\w+)(?: Reason=\"([^\"]*)\")?")
WORKER = "pipeline.(*runner).work"


def events(path):
    """Yields (time ns, kind, G, line, stack frames) for each event of the trace."""
    proc = subprocess.Popen(["go", "tool", "trace", "-d=parsed", path], stdout=subprocess.PIPE, text=True)
    cur = None
    for line in proc.stdout:  # streamed: a 2000-image run dumps about 2 million lines
        line = line.rstrip("\n")
        m = EVENT.match(line)
        if m:
            if cur:
                yield cur
            cur = (int(m.group(5)), m.group(4), int(m.group(3)), line, [])
        elif cur and line.startswith("\t") and not line.startswith("\t\t") and " @ " in line:
            cur[4].append(line.strip().split(" @ ")[0])
    if cur:
        yield cur
    if proc.wait() != 0:
        sys.exit(f"go tool trace -d=parsed {path} failed (exit status {proc.returncode})")


def waitsite(frames):
    """The first frame of convert's own code: where a goroutine waited."""
    for f in frames:
        if f.startswith("github.com/mldf/convert/"):
            return f.replace("github.com/mldf/convert/", "")
    return frames[0] if frames else "?"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tracebusy.py TRACE")
    t0 = t1 = None
    state = {}  # G -> (state, since, reason, site)
    spent = collections.defaultdict(float)  # (G, state, site) -> ns
    workers = set()
    first, last = {}, {}
    for t, kind, g, line, frames in events(sys.argv[1]):
        t0 = t if t0 is None else t0
        t1 = t
        if kind != "StateTransition":
            continue
        m = TRANSITION.search(line)
        if not m:
            continue
        gid, a, b, reason = int(m.group(1)), m.group(2), m.group(3), m.group(4) or ""
        self = g == gid  # the stack is the goroutine's own only when it changes its own state
        if self and any(f.endswith(WORKER) for f in frames):
            workers.add(gid)
        if gid in state:
            s, since, why, site = state[gid]
            spent[(gid, s, why if s != "Waiting" else site)] += t - since
        state[gid] = (b, t, reason, waitsite(frames) if b == "Waiting" and self else "")
        if b in ("Running", "Syscall"):
            first.setdefault(gid, t)
        if a in ("Running", "Syscall"):
            last[gid] = t
    if not workers:
        sys.exit("no encoder worker (pipeline.(*runner).work) in the trace")
    for gid, (s, since, why, site) in state.items():
        spent[(gid, s, why if s != "Waiting" else site)] += t1 - since
    span = t1 - t0
    start = min(first[g] for g in workers)
    end = max(last[g] for g in workers)
    ms = lambda ns: ns / 1e6
    print(f"trace {ms(span):.1f} ms; {len(workers)} workers")
    print(f"head (trace start to the first worker running) {ms(start - t0):.1f} ms")
    print(f"tail (the last worker done to the trace end)     {ms(t1 - end):.1f} ms")
    print(f"workers' spread at the end (first done to last)  {ms(end - min(last[g] for g in workers)):.1f} ms")
    total = collections.defaultdict(float)
    for (gid, s, why), ns in spent.items():
        if gid in workers:
            total[(s, why)] += ns
    allns = span * len(workers)
    print(f"\nworkers' time, share of {len(workers)} x {ms(span):.1f} ms:")
    for (s, why), ns in sorted(total.items(), key=lambda kv: -kv[1]):
        if ns / allns >= 0.0005:
            label = s + (f" ({why})" if why else "")
            print(f"  {100 * ns / allns:5.1f}%  {ms(ns):8.1f} ms  {label}")
    busy = sum(ns for (s, _), ns in total.items() if s in ("Running", "Syscall"))
    print(f"\nbusy (Running + Syscall): {100 * busy / allns:.1f}% of the workers' time")


if __name__ == "__main__":
    main()
