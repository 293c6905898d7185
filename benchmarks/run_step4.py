#!/usr/bin/python3
"""Step 4 benchmarks (issue 7), each a ratio or difference within one run,
plain and onlinews builds alternating, medians of --reps repetitions:

  ring      the 2-rank 8-byte MPI_Irecv/MPI_Isend/MPI_Waitall ring (default
            settings): loop time with / without onlinews (target <= 2.0x);
  epochs    N x (1 ms sleep + MPI_Allreduce) with ONLINEWS_EPOCH_SECONDS=0,
            a cut at every allreduce, at 2, 4 and 8 ranks: the application
            time an epoch costs, (loop with - loop without) / N, median and
            worst over the repetitions (target <= 1 ms at 8 ranks);
  start-up  MPI_Init's duration (largest rank), with - without.

Usage: run_step4.py [BUILD_DIR] [--reps 5] [--ring-iters 500000]
       [--epoch-iters 200] [--nps 2,4,8] [--mpiexec mpirun]
Standard library only; run with /usr/bin/python3 on a quiet machine (2 cores:
ranks beyond 2 are oversubscribed)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(args, exe, mode, n, np_, env_extra, outdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONLINEWS_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", ONLINEWS_VERBOSE="0")
    env.update(env_extra)
    out = Path(outdir) / f"r{run.count}.h5"
    run.count += 1
    env["ONLINEWS_OUTPUT"] = str(out)
    p = subprocess.run([args.mpiexec, "-np", str(np_), str(exe), mode, str(n)], env=env, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"{exe} {mode} failed:\n{p.stdout}{p.stderr}")
    words = p.stdout.split()
    if out.exists():
        out.unlink()
    return float(words[words.index("loop") + 1]), float(words[words.index("init") + 1])


run.count = 0


def pairs(args, build, mode, n, np_, env_extra, outdir):
    plain, withlib = build / "benchmarks" / "ring_plain", build / "benchmarks" / "ring_onlinews"
    res = {"plain": [], "onlinews": []}
    for rep in range(args.reps):
        order = [("plain", plain), ("onlinews", withlib)]
        if rep % 2:
            order.reverse()
        for name, exe in order:
            res[name].append(run(args, exe, mode, n, np_, env_extra if name == "onlinews" else {}, outdir))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", nargs="?", default=str(HERE.parent / "build"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ring-iters", type=int, default=500000)
    ap.add_argument("--epoch-iters", type=int, default=200)
    ap.add_argument("--nps", default="2,4,8")
    ap.add_argument("--mpiexec", default="mpirun")
    args = ap.parse_args()
    build = Path(args.build_dir).resolve()
    med = statistics.median
    with tempfile.TemporaryDirectory() as outdir:
        r = pairs(args, build, "ring", args.ring_iters, 2, {}, outdir)
        lp, lo = [x[0] for x in r["plain"]], [x[0] for x in r["onlinews"]]
        ratios = [o / p for o, p in zip(lo, lp)]
        print(f"ring, 2 ranks, {args.ring_iters} iterations: plain {med(lp):.3f} s, onlinews {med(lo):.3f} s; "
              f"ratio of medians {med(lo) / med(lp):.2f}x, median of paired ratios {med(ratios):.2f}x "
              f"(range {min(ratios):.2f}-{max(ratios):.2f})")
        inits = {"plain": [x[1] for x in r["plain"]], "onlinews": [x[1] for x in r["onlinews"]]}
        for np_ in [int(x) for x in args.nps.split(",")]:
            e = pairs(args, build, "epochs", args.epoch_iters, np_, {"ONLINEWS_EPOCH_SECONDS": "0"}, outdir)
            per = [1e3 * (o[0] - p[0]) / args.epoch_iters for o, p in zip(e["onlinews"], e["plain"])]
            print(f"epochs, {np_} ranks, {args.epoch_iters} cuts: plain loop {med(x[0] for x in e['plain']):.3f} s, "
                  f"onlinews {med(x[0] for x in e['onlinews']):.3f} s; per epoch {med(per):.3f} ms median, "
                  f"{max(per):.3f} ms worst")
            inits["plain"] += [x[1] for x in e["plain"]]
            inits["onlinews"] += [x[1] for x in e["onlinews"]]
        ip, io = med(inits["plain"]), med(inits["onlinews"])
        print(f"start-up (MPI_Init, largest rank, all runs): plain {1e3 * ip:.1f} ms, onlinews {1e3 * io:.1f} ms, "
              f"added {1e3 * (io - ip):.1f} ms")


if __name__ == "__main__":
    main()
