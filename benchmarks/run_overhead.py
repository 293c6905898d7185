#!/usr/bin/python3
"""Application overhead of onlinews: the same MPI programs with and without
the library, run alternately in one session, several repetitions, medians
(the machine is shared and noisy: only ratios measured side by side mean
anything).

Usage: run_overhead.py [BUILD_DIR] [--reps N] [--np P] [--config ITERS:WORK] ...
BUILD_DIR defaults to <repository>/build; the programs are
BUILD_DIR/benchmarks/{pingpong,callcost}_{plain,onlinews}.

Measured:
  pingpong   (benchmarks/pingpong.c, communication-heavy proxy), for each
             --config (default: communication only, and with computation), in three
             variants: plain, onlinews (default settings) and onlinews with
             ONLINEWS_EPOCH_SECONDS=0.5 (frequent epochs: the cost of the
             epoch analysis).  Reported: loop time (MPI_Wtime on rank 0) and
             wall time of the whole mpirun (start-up, MPI_Init, MPI_Finalize
             and onlinews' result file included); ratios with/without.
  callcost   (benchmarks/callcost.c) ns per MPI_Iprobe with and without the
             library: the real cost of one intercepted call (2 events), on
             the first pass over the event buffer (default settings: fresh
             pages) and in the steady state (ONLINEWS_EPOCH_SECONDS=0: the
             buffer is drained at every block).

Standard library only; run with /usr/bin/python3 (or any Python >= 3.8).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SLOWDOWN_BUDGET = 0.05
EVENT_BUDGET_NS = 25.0


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", nargs="?", default=str(HERE.parent / "build"),
                    help="CMake build directory (default: %(default)s)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of every variant (default 5)")
    ap.add_argument("--np", type=int, default=4, help="ranks of pingpong (default 4)")
    ap.add_argument("--config", action="append", metavar="ITERS:WORK",
                    help="pingpong configuration: iterations and floating-point steps of computation per "
                         "iteration (about 2.5 ns each); repeatable.  Default: 20000:0 (communication only, "
                         "the worst case) and 40000:5000 (about 12 us of computation per iteration)")
    ap.add_argument("--allreduce-every", type=int, default=100,
                    help="pingpong: one MPI_Allreduce every N iterations (default 100)")
    ap.add_argument("--epoch-seconds", default="0.5",
                    help="ONLINEWS_EPOCH_SECONDS of the frequent-epochs variant (default 0.5)")
    ap.add_argument("--callcost-np", type=int, default=2, help="ranks of callcost (default 2)")
    ap.add_argument("--callcost-blocks", type=int, default=20,
                    help="callcost blocks (default 20; keep BLOCKS * BLOCK * 2 below the buffer's 524288 events)")
    ap.add_argument("--callcost-block", type=int, default=10000, help="calls per callcost block (default 10000)")
    ap.add_argument("--skip-callcost", action="store_true", help="only run pingpong")
    ap.add_argument("--mpiexec", default="mpirun", help="MPI launcher (default mpirun)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, no .h5)")
    args = ap.parse_args()
    configs = []
    for c in args.config or ["20000:0", "40000:5000"]:
        try:
            it, _, wk = c.partition(":")
            configs.append((int(it), int(wk or 0)))
        except ValueError:
            ap.error(f"--config {c}: expected ITERS:WORK")
    args.configs = configs
    return args


def find_exe(build, name):
    p = Path(build) / "benchmarks" / name
    if not p.is_file():
        sys.exit(f"run_overhead: {p} not found; build first: cmake --build {build} --target {name}")
    return p


def base_env(outdir):
    env = dict(os.environ)
    # Settings of the caller must not leak into the comparison.
    for k in list(env):
        if k.startswith("ONLINEWS_"):
            del env[k]
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1",
                "ONLINEWS_OUTPUT": str(outdir / "result.h5")})
    return env


def clean(outdir):
    """The library never overwrites a result file: remove everything it wrote
    (result.h5 and its .xdmf companion) between runs."""
    for p in outdir.iterdir():
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


class Variant:
    def __init__(self, name, exe, env_extra=None, expects_output=False):
        self.name, self.exe, self.env_extra, self.expects_output = name, exe, env_extra or {}, expects_output
        self.values = {}  # key -> list of floats

    def add(self, key, v):
        self.values.setdefault(key, []).append(v)

    def med(self, key):
        return statistics.median(self.values[key])


def run_once(args, variant, np_, prog_args, outdir, logdir, tag, rx):
    clean(outdir)
    env = base_env(outdir)
    env.update(variant.env_extra)
    cmd = [args.mpiexec, "--oversubscribe", "-np", str(np_), str(variant.exe)] + [str(a) for a in prog_args]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, cwd=outdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"run_overhead: timeout after {args.timeout}s: {' '.join(cmd)}")
    wall = time.perf_counter() - t0
    (logdir / f"{tag}.out").write_text(p.stdout)
    (logdir / f"{tag}.err").write_text(p.stderr)
    if p.returncode != 0:
        sys.exit(f"run_overhead: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    m = rx.search(p.stdout)
    if not m:
        sys.exit(f"run_overhead: unexpected output of {' '.join(cmd)}:\n{p.stdout}\n{p.stderr}")
    produced = sorted(outdir.glob("*.h5"))
    if variant.expects_output and not produced:
        sys.exit(f"run_overhead: {variant.name} wrote no result file: is onlinews active?\n{p.stderr}")
    if not variant.expects_output and produced:
        sys.exit(f"run_overhead: {variant.name} wrote {produced[0].name}: the plain build links onlinews?")
    # From onlinews' end-of-run summary (ONLINEWS_VERBOSE=1, the default).
    info = {}
    e = re.search(r"(\d+)\s+epochs?\b", p.stderr)
    if e:
        info["epochs"] = int(e.group(1))
    t = re.search(r"onlinews\s+([0-9.]+)\s*%", p.stderr)  # the library's own share of the run time
    if t:
        info["tool_share"] = float(t.group(1))
    d = re.search(r"(\d+) events were dropped", p.stderr)
    if variant.expects_output:
        info["dropped"] = int(d.group(1)) if d else 0
    clean(outdir)
    return m, wall, info


def fmt_ratio(r):
    return f"{r:6.3f}  ({(r - 1) * 100:+6.1f} %)"


def pingpong(args, build, outdir, logdir, iters, work):
    plain = find_exe(build, "pingpong_plain")
    withlib = find_exe(build, "pingpong_onlinews")
    variants = [
        Variant("plain", plain),
        Variant("onlinews", withlib, expects_output=True),
        Variant(f"onlinews, epochs {args.epoch_seconds}s", withlib,
                {"ONLINEWS_EPOCH_SECONDS": args.epoch_seconds}, expects_output=True),
    ]
    rx = re.compile(r"elapsed_s=([0-9.eE+-]+)")
    prog_args = [iters, args.allreduce_every, work]
    print(f"pingpong: {args.np} ranks, {iters} iterations (ring + ping-pong of 8 bytes, "
          f"MPI_Allreduce every {args.allreduce_every}, work {work}), {args.reps} repetitions, "
          f"variants alternating")
    # Warm-up (page cache, first-run effects), not counted.
    for v in variants:
        run_once(args, v, args.np, [max(1, iters // 10), args.allreduce_every, work], outdir, logdir,
                 f"pingpong_{iters}_{work}_warmup_{variants.index(v)}", rx)
    for rep in range(args.reps):
        order = variants[rep % len(variants):] + variants[:rep % len(variants)]
        line = []
        for v in order:
            m, wall, info = run_once(args, v, args.np, prog_args, outdir, logdir,
                                     f"pingpong_{iters}_{work}_{rep}_{variants.index(v)}", rx)
            v.add("loop", float(m.group(1)))
            v.add("wall", wall)
            for k, x in info.items():
                v.add(k, x)
            line.append(f"{v.name}={float(m.group(1)):.3f}s")
        print(f"  rep {rep + 1}: " + "  ".join(line), flush=True)

    base = variants[0]
    print()
    print(f"  {'variant':<26} {'loop s (median)':>16} {'min':>8} {'max':>8} {'wall s (median)':>16} "
          f"{'epochs':>7} {'dropped (max)':>15} {'onlinews share':>15}")
    for v in variants:
        ep = f"{statistics.median(v.values['epochs']):.0f}" if "epochs" in v.values else "-"
        dr = f"{max(v.values['dropped']):.0f}" if "dropped" in v.values else "-"
        ts = f"{statistics.median(v.values['tool_share']):.1f} %" if "tool_share" in v.values else "-"
        print(f"  {v.name:<26} {v.med('loop'):16.3f} {min(v.values['loop']):8.3f} {max(v.values['loop']):8.3f} "
              f"{v.med('wall'):16.3f} {ep:>7} {dr:>15} {ts:>15}")
    if any(x > 0 for v in variants for x in v.values.get("dropped", [])):
        print("  note: events were dropped (full buffers): those runs recorded less than the program did, so "
              "their overhead is underestimated")
    print("  (onlinews share: the library's own accounting of its time, from its end-of-run summary)")
    print()
    print(f"  ratio with/without       {'loop: ratio of medians':>28} {'median of paired ratios':>26} {'wall: ratio of medians':>28}")
    results = {}
    for v in variants[1:]:
        rom = v.med("loop") / base.med("loop")
        paired = statistics.median(a / b for a, b in zip(v.values["loop"], base.values["loop"]))
        wall = v.med("wall") / base.med("wall")
        results[v.name] = rom
        print(f"  {v.name:<24} {fmt_ratio(rom):>28} {fmt_ratio(paired):>26} {fmt_ratio(wall):>28}")
    per_iter = (variants[1].med("loop") - base.med("loop")) / iters * 1e9
    print(f"\n  plain: {base.med('loop') / iters * 1e6:.2f} us per iteration; onlinews adds {per_iter / 1000:.2f} us "
          f"per iteration (5 intercepted calls, ~17 events per rank; epochs included)")
    return results


def callcost(args, build, outdir, logdir):
    withlib = find_exe(build, "callcost_onlinews")
    variants = [Variant("plain", find_exe(build, "callcost_plain")),
                Variant("onlinews, first pass", withlib, expects_output=True),
                Variant("onlinews, steady state", withlib, {"ONLINEWS_EPOCH_SECONDS": "0"}, expects_output=True)]
    rx = re.compile(r"ns_per_call=([0-9.eE+-]+)")
    prog_args = [args.callcost_blocks, args.callcost_block]
    print(f"callcost: {args.callcost_np} ranks, MPI_Iprobe (plain hook: Enter + Leave), "
          f"{args.callcost_blocks} x {args.callcost_block} calls, median block; {args.reps} repetitions")
    for rep in range(args.reps):
        order = variants[rep % len(variants):] + variants[:rep % len(variants)]
        line = []
        for v in order:
            m, _, info = run_once(args, v, args.callcost_np, prog_args, outdir, logdir,
                                  f"callcost_{rep}_{variants.index(v)}", rx)
            v.add("ns", float(m.group(1)))
            for k, x in info.items():
                v.add(k, x)
            line.append(f"{v.name}={float(m.group(1)):.1f}ns")
        print(f"  rep {rep + 1}: " + "  ".join(line), flush=True)
    base = variants[0]
    print(f"\n  {'variant':<26} {'ns/call (median)':>17} {'added ns/call':>14} {'paired':>8} {'ns/event':>9} "
          f"{'dropped (max)':>14}")
    print(f"  {base.name:<26} {base.med('ns'):17.1f}")
    per_event = {}
    for v in variants[1:]:
        added = v.med("ns") - base.med("ns")
        paired = statistics.median(x - y for x, y in zip(v.values["ns"], base.values["ns"]))
        per_event[v.name] = added / 2
        dr = f"{max(v.values['dropped']):.0f}" if "dropped" in v.values else "-"
        print(f"  {v.name:<26} {v.med('ns'):17.1f} {added:14.1f} {paired:8.1f} {added / 2:9.1f} {dr:>14}")
    return per_event


def main():
    args = parse_args()
    build = Path(args.build_dir).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="onlinews_overhead_"))
    outdir, logdir = tmp / "run", tmp / "logs"
    outdir.mkdir()
    logdir.mkdir()
    try:
        ratios = {}
        for n, (iters, work) in enumerate(args.configs):
            if n:
                print()
            for name, r in pingpong(args, build, outdir, logdir, iters, work).items():
                ratios[f"work={work} {name}"] = r
        per_event = None
        if not args.skip_callcost:
            print()
            per_event = callcost(args, build, outdir, logdir)
        print("\nsummary (budgets: slowdown <= 5 % on communication-heavy proxies, <= 25 ns per event)")
        for name, r in ratios.items():
            verdict = "within budget" if r - 1 <= SLOWDOWN_BUDGET else "OVER BUDGET"
            print(f"  pingpong {name:<36} slowdown {(r - 1) * 100:+7.1f} %   {verdict}")
        for name, ns in (per_event or {}).items():
            verdict = "within budget" if ns <= EVENT_BUDGET_NS else "OVER BUDGET"
            print(f"  callcost {name:<36} {ns:7.1f} ns per recorded event   {verdict}")
    finally:
        if args.keep:
            print(f"\nlogs kept in {logdir}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
