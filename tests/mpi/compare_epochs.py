#!/usr/bin/python3
"""Online equals post-mortem: runs one program with ONLINEWS_EPOCH_SECONDS=0
(a cut at every eligible collective) and with inf (one epoch at
MPI_Finalize) and checks that the total waiting time agrees within 0.5 %,
each wait-state metric within 0.5 % or 15 ms, and counts exactly.

The two runs are two executions: their waits differ by sleep and scheduling
jitter.  On an oversubscribed 2-core machine a rank can leave a barrier a few
milliseconds after the others (it waits for a core), so a small metric such
as the wait at MPI_Finalize after the last epoch differs by up to ~10 ms; the
absolute floor covers that, the total stays within 0.5 %.  While other jobs
keep the cores busy one of the two executions can come out tens of
milliseconds longer; a pair that disagrees is run again, up to --attempts
pairs (3): an analysis error shows in every pair (run_scenario.until_passed)."""
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import mpi_env, script_args, until_passed  # noqa: E402

WAIT_STATES = ["mpi_latesender", "mpi_latesender_wo", "mpi_latereceiver", "mpi_barrier_wait",
               "mpi_wait_nxn", "mpi_latebroadcast", "mpi_earlyreduce", "mpi_earlyscan", "mpi_finalize_wait"]
COUNTS = ["visits", "comms_send", "comms_recv", "bytes", "mpi_cls_count"]
# Root causes: delay costs and the critical-path profile agree within 1 %.
ROOT_CAUSES = ["delay", "delay_latesender", "delay_latesender_longterm", "delay_n2n", "delay_12n",
               "critical_path", "critical_path_imbalance", "mpi_wait_indirect", "mpi_wait_propagating"]


def run(args, work, epoch_seconds):
    out = work / f"epochs_{epoch_seconds}.h5"
    out.unlink(missing_ok=True)  # (an earlier attempt's; the library never overwrites)
    env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS=epoch_seconds)
    cmd = [args.mpiexec, "--oversubscribe", "-np", str(args.np), args.exe]
    print("$ ONLINEWS_EPOCH_SECONDS=%s %s" % (epoch_seconds, " ".join(cmd)), flush=True)
    p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stderr)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit code {p.returncode}")
    return onlinews_h5.Result(str(out))


def main():
    ap = script_args()
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--rel", type=float, default=0.005)
    ap.add_argument("--abs", type=float, default=0.015)
    ap.add_argument("--attempts", type=int, default=3, help="pairs of runs before the comparison fails")
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    def attempt(_k):
        online = run(args, work, "0")
        post = run(args, work, "inf")
        failures = []
        e_on, e_post = int(online.attrs["epochs"]), int(post.attrs["epochs"])
        print(f"epochs: online {e_on}, post-mortem {e_post}")
        # 20 MPI_Allreduce on WORLD, each a cut with ONLINEWS_EPOCH_SECONDS=0, plus MPI_Finalize.
        if e_on < 21 or e_post != 1:
            failures.append(f"expected >= 21 online epochs and 1 post-mortem epoch, got {e_on} and {e_post}")
        for label, r in (("online", online), ("post-mortem", post)):  # one host, one clock
            if int(r.attrs["clock_violations"]) != 0:
                failures.append(f"{label}: {r.attrs['clock_violations']} receives before their sends on one host")
        for m in WAIT_STATES:
            a, b = online.value(m), post.value(m)
            ok = abs(a - b) <= max(args.rel * max(a, b), args.abs)
            print(f"  {'ok  ' if ok else 'FAIL'} {m:22s} online {a:9.4f} s  post-mortem {b:9.4f} s")
            if not ok:
                failures.append(m)
        # Root causes on the application's call paths: the online run's own
        # epochs are delays too (onlinews_analysis, the cut decisions), and
        # while other jobs share the cores they take several times longer
        # (delay_n2n online 0.70 s vs 0.53 s, of which 0.19 s on onlinews_*
        # regions; the application's 0.503 vs 0.502 s).
        for m in ROOT_CAUSES:
            a, b = online.value(m, app=True), post.value(m, app=True)
            ok = abs(a - b) <= max(0.01 * max(a, b), args.abs)
            print(f"  {'ok  ' if ok else 'FAIL'} {m:26s} online {a:9.4f} s  post-mortem {b:9.4f} s")
            if not ok:
                failures.append(m)
        # The critical-path profile, call path by call path (onlinews' own call
        # paths differ between the runs: the online run has its epochs).  The
        # path's time in MPI_Init is how much later the slowest rank of each
        # execution finished starting up (start-up skew: 0.28 s in one run,
        # 0.31 s in the other on a loaded machine), not something the analysis
        # decides; the total above includes it.
        def profile(r, metric):
            a = r.inclusive(metric).sum(axis=1)
            out = {}
            for cp in range(len(a)):
                name = r.callpath_name(cp)
                if "onlinews_" not in name and "MPI_Init" not in name:
                    out[name] = out.get(name, 0.0) + float(a[cp])
            return out
        pa, pb = profile(online, "critical_path"), profile(post, "critical_path")
        worst = 0.0
        for name in sorted(set(pa) | set(pb)):
            a, b = pa.get(name, 0.0), pb.get(name, 0.0)
            worst = max(worst, abs(a - b))
            if abs(a - b) > max(0.01 * max(a, b), args.abs):
                print(f"  FAIL critical_path at {name}: online {a:.4f} s, post-mortem {b:.4f} s")
                failures.append("critical path at " + name)
        print(f"  {'ok  ' if worst <= args.abs else 'note'} critical-path profile: {len(pa | pb)} call paths, "
              f"largest difference {worst * 1e3:.2f} ms")
        ta, tb = sum(online.value(m) for m in WAIT_STATES), sum(post.value(m) for m in WAIT_STATES)
        ok = abs(ta - tb) <= args.rel * max(ta, tb)
        print(f"  {'ok  ' if ok else 'FAIL'} {'total waiting time':22s} online {ta:9.4f} s  post-mortem {tb:9.4f} s "
              f"({100 * abs(ta - tb) / max(ta, tb):.3f} %)")
        if not ok:
            failures.append("total waiting time")
        for m in COUNTS:  # exact: independent of timing
            # visits differ by the epochs' own tool regions; compare MPI and user call paths only
            a = sum(online.value(m, region=r) for r in set(online.region_names) if not r.startswith("onlinews_"))
            b = sum(post.value(m, region=r) for r in set(post.region_names) if not r.startswith("onlinews_"))
            ok = a == b
            print(f"  {'ok  ' if ok else 'FAIL'} {m:22s} online {a:9.0f}    post-mortem {b:9.0f}")
            if not ok:
                failures.append(m)
        # What iterations.c exercises (the other wait states are 0 by construction
        # and only compared): Late Sender ~9.7 s, N x N ~5.4 s, Late Broadcast ~0.7 s.
        for m, least in (("mpi_latesender", 8.0), ("mpi_wait_nxn", 4.0), ("mpi_latebroadcast", 0.5)):
            if post.value(m) < least:
                failures.append(f"{m}: the program should wait at least {least} s there, waited {post.value(m):.2f} s")
        return failures

    failures = until_passed(args.attempts, attempt)
    print("PASS" if not failures else "FAIL: " + ", ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
