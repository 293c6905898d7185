#!/usr/bin/python3
"""Scaling measurements for docs/scaling.md (issue 11, target 6), on this
machine's 2 cores (ranks beyond 2 oversubscribed: times grow with the
oversubscription too, which the table shows next to them).

  ranks    ring.c "epochs" (1 ms sleep + MPI_Allreduce per iteration,
           ONLINEWS_EPOCH_SECONDS=0: a cut at every allreduce) at 2..32
           ranks: per epoch, rank 0's analysis time (local work) and its
           append to the file, the file's growth, and the application time
           an epoch costs (loop with - loop without, per iteration);
  events   the 2-rank ring with buffers from 1 to 16 MiB (a requested cut at
           half a buffer): events per epoch against analysis time per epoch.

Usage: run_scaling.py [BUILD_DIR] [--nps 2,4,8,16,32] [--iters 100]
       [--mpiexec mpirun]
Standard library only; run with /usr/bin/python3 on a quiet machine."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(args, exe, mode, n, np_, extra, outdir, tag):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONLINEWS_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", ONLINEWS_VERBOSE="2")
    env.update(extra)
    out = Path(outdir) / f"{tag}.h5"
    env["ONLINEWS_OUTPUT"] = str(out)
    p = subprocess.run([args.mpiexec, "-np", str(np_), str(exe), mode, str(n)], env=env, capture_output=True,
                       text=True, timeout=1200)
    if p.returncode != 0:
        sys.exit(f"{exe} failed:\n{p.stdout}{p.stderr}")
    text = p.stdout + p.stderr
    loop = float(re.search(r"loop ([\d.]+)", text).group(1))
    epochs = [(int(e), float(a), float(w)) for e, a, w in
              re.findall(r"(\d+) events, analysis ([\d.]+) s \(forward [\d.]+, backward [\d.]+\), written in ([\d.]+) s",
                         text)]
    size = out.stat().st_size if out.exists() else 0
    for f in (out, out.with_suffix(".xdmf"), out.with_suffix(".live")):
        if f.exists():
            f.unlink()
    return loop, epochs, size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", nargs="?", default=str(HERE.parent / "build"))
    ap.add_argument("--nps", default="2,4,8,16,32")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--mpiexec", default="mpirun")
    args = ap.parse_args()
    build = Path(args.build_dir).resolve()
    plain, withlib = build / "benchmarks" / "ring_plain", build / "benchmarks" / "ring_onlinews"
    med = statistics.median
    with tempfile.TemporaryDirectory() as outdir:
        print("ranks: a cut at every MPI_Allreduce (1 ms sleep between), medians over the epochs")
        print(f"{'ranks':>5} {'epochs':>6} {'events/rank':>11} {'analysis ms':>11} {'append ms':>9} "
              f"{'file KiB/epoch':>14} {'app ms/epoch':>12}")
        for np_ in [int(x) for x in args.nps.split(",")]:
            lp, _, _ = run(args, plain, "epochs", args.iters, np_, {}, outdir, f"p{np_}")
            short, _, small = run(args, withlib, "epochs", args.iters // 2, np_, {"ONLINEWS_EPOCH_SECONDS": "0"},
                                  outdir, f"s{np_}")
            lo, ep, size = run(args, withlib, "epochs", args.iters, np_, {"ONLINEWS_EPOCH_SECONDS": "0"}, outdir,
                               f"o{np_}")
            steady = ep[2:] if len(ep) > 4 else ep
            growth = (size - small) / max(1, args.iters - args.iters // 2) / 1024
            print(f"{np_:>5} {len(ep):>6} {med(e for e, _, _ in steady) / np_:>11.0f} "
                  f"{1e3 * med(a for _, a, _ in steady):>11.2f} {1e3 * med(w for _, _, w in steady):>9.2f} "
                  f"{growth:>14.1f} {1e3 * (lo - lp) / args.iters:>12.3f}", flush=True)
        print("\nevents: the 2-rank ring, a requested cut at half a buffer, medians over the epochs")
        print(f"{'buffer':>6} {'epochs':>6} {'events/epoch':>12} {'analysis ms':>11} {'ns/event':>8}")
        for buf in ("1M", "2M", "4M", "8M", "16M"):
            _, ep, _ = run(args, withlib, "ring", 500000, 2, {"ONLINEWS_BUFFER": buf}, outdir, f"b{buf}")
            steady = ep[1:-1] if len(ep) > 3 else ep
            ev, an = med(e for e, _, _ in steady), med(a for _, a, _ in steady)
            print(f"{buf:>6} {len(ep):>6} {ev:>12.0f} {1e3 * an:>11.2f} {1e9 * an / ev:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
