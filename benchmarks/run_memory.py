#!/usr/bin/python3
"""Memory per rank (issue 11, target 5): peak RSS of every rank of the
2-rank 8-byte ring (ring.c) with and without onlinews, for a run and for one
10x longer; plus the output file's size.  The library's share is the
difference with/without; it must stay within ONLINEWS_BUFFER x threads x 2 +
16 MiB and the same (+-10 %) when the run is 10x longer (post-mortem
tracing grows with the run; onlinews must not).

Peak RSS comes from GNU time (%M, KiB) wrapped around each rank.  A last
pair of runs samples every rank's /proc/<pid>/smaps and splits the largest
sample into libraries' pages (file-backed: libhdf5's dependency chain,
libstdc++, libonlinews) and anonymous memory (heap, buffers, stacks).

Usage: run_memory.py [BUILD_DIR] [--iters 500000] [--np 2] [--mpiexec mpirun]
Standard library only; needs /usr/bin/time (Debian's package `time`)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(args, exe, n, outdir, tag):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONLINEWS_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", ONLINEWS_VERBOSE="0")
    out = Path(outdir) / f"{tag}.h5"
    env["ONLINEWS_OUTPUT"] = str(out)
    wrapper = Path(outdir) / "rss.sh"
    wrapper.write_text('#!/bin/sh\nexec /usr/bin/time -f %M -o "$RSS_DIR/rss.$RSS_TAG.${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" "$@"\n')
    wrapper.chmod(0o755)
    env.update(RSS_DIR=str(outdir), RSS_TAG=tag)
    p = subprocess.run([args.mpiexec, "-x", "RSS_DIR", "-x", "RSS_TAG", "-np", str(args.np), str(wrapper), str(exe),
                        "ring", str(n)], env=env, capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        sys.exit(f"{exe} failed:\n{p.stdout}{p.stderr}")
    rss = [int((Path(outdir) / f"rss.{tag}.{r}").read_text().split()[-1]) / 1024 for r in range(args.np)]
    size = out.stat().st_size / 2**20 if out.exists() else 0.0
    for f in (out, out.with_suffix(".xdmf"), out.with_suffix(".live")):
        if f.exists():
            f.unlink()
    return rss, size


def smaps_split(pid):
    """(file-backed, anonymous) resident KiB of a process: libraries' pages
    against heap, mmaps and stacks."""
    files = anon = 0
    path = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if line.startswith("Rss:"):
                if path is not None and path.startswith("/"):
                    files += int(line.split()[1])
                else:
                    anon += int(line.split()[1])
            elif not line[0].isupper():  # a mapping's header line: address range, ..., path
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) > 5 else ""
    return files, anon


def breakdown(args, exe, n, outdir):
    """Runs `exe` and samples every rank's smaps while it runs; per rank the
    sample with the largest total, as (file-backed, anonymous) MiB."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONLINEWS_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", ONLINEWS_VERBOSE="0",
               ONLINEWS_OUTPUT=str(Path(outdir) / "split.h5"))
    p = subprocess.Popen([args.mpiexec, "-np", str(args.np), str(exe), "ring", str(n)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best = {}
    while p.poll() is None:
        pids = subprocess.run(["pgrep", "-f", "^" + str(exe)], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                fb, an = smaps_split(pid)
            except OSError:
                continue
            if fb + an > sum(best.get(pid, (0, 0))):
                best[pid] = (fb, an)
        time.sleep(0.05)
    for f in Path(outdir).glob("split.*"):
        f.unlink()
    return [(fb / 1024, an / 1024) for _, (fb, an) in sorted(best.items(), key=lambda kv: int(kv[0]))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", nargs="?", default=str(HERE.parent / "build"))
    ap.add_argument("--iters", type=int, default=500000)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mpiexec", default="mpirun")
    args = ap.parse_args()
    build = Path(args.build_dir).resolve()
    plain, withlib = build / "benchmarks" / "ring_plain", build / "benchmarks" / "ring_onlinews"
    with tempfile.TemporaryDirectory() as outdir:
        rows = []
        for n in (args.iters, 10 * args.iters):
            p, _ = run(args, plain, n, outdir, f"plain{n}")
            o, size = run(args, withlib, n, outdir, f"onlinews{n}")
            rows.append((n, p, o, size))
        budget = 16 * 2 + 16  # default ONLINEWS_BUFFER 16 MiB, 1 thread
        print(f"peak RSS per rank (MiB), {args.np}-rank ring; budget for onlinews' share: {budget} MiB")
        print(f"{'iterations':>11} {'rank':>4} {'plain':>7} {'onlinews':>9} {'share':>7}   file (MiB)")
        for n, p, o, size in rows:
            for r in range(args.np):
                print(f"{n:>11} {r:>4} {p[r]:7.1f} {o[r]:9.1f} {o[r] - p[r]:7.1f}   {size:.1f}" if r == 0 else
                      f"{n:>11} {r:>4} {p[r]:7.1f} {o[r]:9.1f} {o[r] - p[r]:7.1f}")
        growth = [rows[1][2][r] / rows[0][2][r] - 1 for r in range(args.np)]
        print("10x longer: onlinews' RSS " + ", ".join(f"rank {r} {100 * g:+.1f} %" for r, g in enumerate(growth)) +
              f" (target within +-10 %); median share {statistics.median(o - p for o, p in zip(rows[0][2], rows[0][1])):.1f} MiB")
        # Where the share goes: libraries' pages (file-backed) against the
        # heap, mmaps and stacks, from /proc/<pid>/smaps sampled every 50 ms.
        sp, so = breakdown(args, plain, 10 * args.iters, outdir), breakdown(args, withlib, 10 * args.iters, outdir)
        if len(sp) == len(so) == args.np:
            print("at the largest sample (MiB): file-backed (libraries) plain / onlinews / added; "
                  "anonymous (heap, buffers) plain / onlinews / added")
            for r in range(args.np):
                print(f"  rank {r}: libraries {sp[r][0]:.1f} / {so[r][0]:.1f} / {so[r][0] - sp[r][0]:+.1f}; "
                      f"anonymous {sp[r][1]:.1f} / {so[r][1]:.1f} / {so[r][1] - sp[r][1]:+.1f}")


if __name__ == "__main__":
    main()
