#!/usr/bin/python3
"""All of issue 11's measurements in one run, one table of ratios and
absolute numbers against their targets (benchmarks/README.md keeps the
latest with its date and machine).  Runs, in this order, on a build with
benchmarks (ONLINEWS_BUILD_BENCHMARKS=ON, the default):

  bench_record   recording cost per event (timestamp + push), inlined and
                 through a shared library like the real one's (no MPI);
  callcost       the real library's cost per intercepted call (MPI_Iprobe,
                 2 events), with minus without, 2 ranks (default settings:
                 the first pass over the buffer, its page faults included);
  bench_replay   the analysis per event and rank (2 and 4 virtual ranks, no MPI):
                 all analyses, and the wait states only (the forward part;
                 the backward replay is the difference);
  ring analysis  the same measured in a real run: the 2-rank ring with
                 ONLINEWS_VERBOSE=2, every epoch's analysis (forward,
                 backward) and append, over its events per rank;
  run_step4.py   the 2-rank 8-byte ring (ratio with/without), the
                 application time an epoch costs at 2/4/8 ranks, start-up;
  run_memory.py  peak RSS per rank with/without, a run 10x longer, file size;
  run_proxies.py the in-house proxies (heat2d, jacobi3d, sweep) on 4 and 8
                 ranks: whole runs with/without, and their loops.

Every ratio comes from runs alternating with and without onlinews in one
session, medians of --reps (5).  Timing-sensitive: run it on a quiet machine.

Usage: benchmarks/run.py [BUILD_DIR] [--reps 5] [--mpiexec mpirun] [--quick]
(--quick: fewer repetitions and shorter runs, for a smoke test)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sh(cmd, extra_env=None, **kw):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env = {k: v for k, v in env.items() if not k.startswith("ONLINEWS_")}
    env.update(extra_env or {})
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=3600, **kw)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p.stdout


def gbench(build, name, args, pattern):
    """Runs the Google Benchmark binary `name` and returns {group 1: float(group 2)}
    for the lines of its output that match `pattern`."""
    out = sh([build / "benchmarks" / name] + args)
    matches = (re.match(pattern, line) for line in out.splitlines())
    return {m.group(1): float(m.group(2)) for m in matches if m}


def bench_record(build, reps):
    return gbench(build, "bench_record", [f"--benchmark_repetitions={reps}"],
                  r"\s+(BM_\S+)(?: \[[^\]]*\])?\s+([\d.]+) ns")


def callcost(build, reps, mpiexec):
    res = {"plain": [], "onlinews": []}
    with tempfile.TemporaryDirectory() as out_dir:
        for rep in range(reps):
            order = ["plain", "onlinews"] if rep % 2 == 0 else ["onlinews", "plain"]
            for v in order:
                # (Default settings: no epoch during the blocks, the first pass over the
                # buffer, page faults included.  With ONLINEWS_EPOCH_SECONDS=0 every
                # block would also hold the previous epoch's analysis slices.)
                env = {"ONLINEWS_OUTPUT": f"{out_dir}/c{rep}{v}.h5", "ONLINEWS_VERBOSE": "0"}
                out = sh([mpiexec, "-np", "2", build / "benchmarks" / f"callcost_{v}"], extra_env=env, cwd=out_dir)
                res[v].append(float(re.search(r"ns_per_call=([\d.]+)", out).group(1)))
    return statistics.median(res["plain"]), statistics.median(res["onlinews"])


def bench_replay(build, reps):
    return gbench(build, "bench_replay", [f"--benchmark_repetitions={reps}", "--benchmark_report_aggregates_only=true"],
                  r"(BM_\S+?)(?:/real_time)?_median\s.*ns_per_event_and_rank=([\d.]+)")


def ring_analysis(build, mpiexec, iters):
    """The analysis' cost per event and rank in a real run: the 2-rank ring,
    every epoch's analysis (the slowest rank's; forward and backward) and its
    append to the file, over the epoch's events per rank."""
    with tempfile.TemporaryDirectory() as out_dir:
        env = {"ONLINEWS_OUTPUT": f"{out_dir}/ring.h5", "ONLINEWS_VERBOSE": "2"}
        p = subprocess.run([mpiexec, "-np", "2", str(build / "benchmarks" / "ring_onlinews"), "ring", str(iters)],
                           capture_output=True, text=True, timeout=3600, cwd=out_dir,
                           env={**{k: v for k, v in os.environ.items() if not k.startswith("ONLINEWS_")},
                                "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", **env})
    sums = [0.0] * 5  # events, analysis, forward, backward, append
    for m in re.finditer(r"(\d+) events, analysis ([\d.]+) s \(forward ([\d.]+), backward ([\d.]+)\), "
                         r"written in ([\d.]+) s", p.stderr + p.stdout):
        for i in range(5):
            sums[i] += float(m.group(i + 1))
    per_rank = sums[0] / 2
    if per_rank == 0:
        sys.exit("ring_analysis: no epoch lines (ONLINEWS_VERBOSE=2) in the ring's output")
    return {k: sums[i] * 1e9 / per_rank for i, k in enumerate(["", "analysis", "forward", "backward", "append"]) if k}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", nargs="?", default=str(HERE.parent / "build"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    build = Path(args.build_dir).resolve()
    reps = 2 if args.quick else args.reps
    py = "/usr/bin/python3"
    rows = []  # (what, value, target, met)

    print("== bench_record", flush=True)
    rec = bench_record(build, reps)
    for key, what in [("BM_RecordInline/tsc:1", "record one event (timestamp + push), TSC"),
                      ("BM_ProbePlainCall/tsc:1", "a wrapper's 2 events through a shared library, TSC")]:
        if key in rec:
            rows.append((what, f"{rec[key]:.1f} ns/event", "<= 10 ns", rec[key] <= 10))

    print("== callcost", flush=True)
    plain, withlib = callcost(build, reps, args.mpiexec)
    per_event = (withlib - plain) / 2
    rows.append(("real library, MPI_Iprobe (2 events): added per event", f"{per_event:.1f} ns/event "
                 f"({plain:.1f} -> {withlib:.1f} ns/call)", "<= 10 ns", per_event <= 10))

    print("== bench_replay", flush=True)
    rep = bench_replay(build, reps)
    for key, what in [("BM_ReplayEpoch/1000", "analysis, all, cache-sized window (bench_replay)"),
                      ("BM_ReplayEpoch/20000", "analysis, all, 20 000 iterations (bench_replay)"),
                      ("BM_ReplayEpochWaitStatesOnly/20000", "  of which forward (wait states only)")]:
        if key in rep:
            rows.append((what, f"{rep[key]:.0f} ns/event and rank", "<= 40 ns", rep[key] <= 40))
    if "BM_ReplayEpoch/20000" in rep and "BM_ReplayEpochWaitStatesOnly/20000" in rep:
        bwd = rep["BM_ReplayEpoch/20000"] - rep["BM_ReplayEpochWaitStatesOnly/20000"]
        rows.append(("  and backward (delay costs, critical path)", f"{bwd:.0f} ns/event and rank", "", True))
    if "BM_ReplayWavefront/2048" in rep and "BM_ReplayWavefrontWaitStatesOnly/2048" in rep:
        wf, wfs = rep["BM_ReplayWavefront/2048"], rep["BM_ReplayWavefrontWaitStatesOnly/2048"]
        rows.append(("analysis, all, a wavefront of 4 ranks (a traced wait per 9 events)",
                     f"{wf:.0f} ns/event and rank (forward {wfs:.0f}, backward {wf - wfs:.0f})", "<= 40 ns", wf <= 40))

    print("== ring analysis", flush=True)
    ra = ring_analysis(build, args.mpiexec, 200000 if args.quick else 2000000)
    rows.append(("analysis in a real run (2-rank ring), end to end", f"{ra['analysis'] + ra['append']:.0f} ns/event "
                 f"and rank (forward {ra['forward']:.0f}, backward {ra['backward']:.0f}, append "
                 f"{ra['append']:.0f})", "<= 40 ns", ra['analysis'] + ra['append'] <= 40))

    print("== run_step4.py", flush=True)
    step4 = sh([py, HERE / "run_step4.py", build, "--reps", str(reps), "--mpiexec", args.mpiexec] +
               (["--ring-iters", "100000", "--epoch-iters", "50", "--nps", "2,8"] if args.quick else []))
    print(step4, end="")
    m = re.search(r"median of paired ratios ([\d.]+)x", step4)
    if m:
        rows.append(("2-rank 8-byte ring, with/without", f"{float(m.group(1)):.2f}x", "<= 1.5x",
                     float(m.group(1)) <= 1.5))
    for np_, per, worst in re.findall(r"epochs, (\d+) ranks.*per epoch ([\d.]+) ms median, ([\d.]+) ms worst", step4):
        rows.append((f"application time per epoch, {np_} ranks", f"{per} ms (worst {worst})", "<= 1 ms",
                     float(worst) <= 1.0))
    m = re.search(r"added ([-\d.]+) ms", step4)
    if m:
        rows.append(("start-up added (MPI_Init, largest rank)", f"{m.group(1)} ms", "<= 20 ms",
                     float(m.group(1)) <= 20))

    print("== run_memory.py", flush=True)
    mem = sh([py, HERE / "run_memory.py", build, "--mpiexec", args.mpiexec] +
             (["--iters", "100000"] if args.quick else []))
    print(mem, end="")
    m = re.search(r"median share ([\d.]+) MiB", mem)
    b = re.search(r"budget for onlinews' share: (\d+) MiB", mem)
    if m and b:
        rows.append(("peak RSS per rank, with - without", f"{m.group(1)} MiB", f"<= {b.group(1)} MiB",
                     float(m.group(1)) <= float(b.group(1))))
    g = [float(x) for x in re.findall(r"rank \d+ ([-+\d.]+) %", mem)]
    if g:
        rows.append(("RSS of a run 10x longer", ", ".join(f"{x:+.1f} %" for x in g), "within +-10 %",
                     all(abs(x) <= 10 for x in g)))

    print("== run_proxies.py", flush=True)
    prox = sh([py, HERE / "run_proxies.py", build, "--mpiexec", args.mpiexec] +
              (["--reps", "1", "--nps", "4"] if args.quick else ["--reps", str(reps)]))
    print(prox, end="")
    for m in re.finditer(r"^(\w+)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+x\s+([\d.]+)x\s+\(\S+\)\s+(\S+)\s+(.*)$",
                         prox, re.M):
        name, np_, paired, loop, same = m.groups()
        rows.append((f"proxy {name}, {np_} ranks, whole run with/without", f"{paired}x (loop {loop}; same result: "
                     f"{same})", "<= 1.03x", float(paired) <= 1.03 and same == "yes"))

    width = max(len(r[0]) for r in rows)
    print("\n" + "what".ljust(width) + "  value".ljust(62) + "  target")
    for what, value, target, met in rows:
        verdict = "" if not target else "met" if met else "NOT MET"
        print(f"{what.ljust(width)}  {value.ljust(60)}  {target.ljust(18)} {verdict}")


if __name__ == "__main__":
    main()
