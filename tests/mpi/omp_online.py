#!/usr/bin/python3
"""OpenMP online equals one epoch: openmp.c hybrid (2 ranks x 4 threads, 10
iterations of a parallel region where thread t works 0.01 (t + 1) s before
an explicit barrier, then MPI_Allreduce and 0.02 s of serial code on the
master) runs with ONLINEWS_EPOCH_SECONDS=0, a cut at every MPI_Allreduce,
and ONLINEWS_TEST_REFERENCE, which analyzes the same execution again as one
epoch at MPI_Finalize.  Every OpenMP metric of the two analyses agrees
within 1 % (or 1 ms).  And the values are the program's: thread t waits
(0.03 - 0.01 t) s at each barrier, 0.06 s per rank and iteration, 0.6 s in
10; the 3 workers are idle while the master runs serial code after the
first region, at its call paths: 3 x 10 x 0.02 s = 0.6 s of "serial" per
rank, plus the MPI_Allreduce in each (waiting for the other rank's analysis
at each cut) and the final MPI_Barrier: at every call path 3 x the master's
time there.  Their delay costs (delay_ompidle on the master's serial code, and long-term on
the cause of a master's wait in MPI_Allreduce) add up to that idleness.

Then openmp.c funneled (20 iterations of a parallel region whose master
exchanges one message while its workers wait at a barrier; no collective)
runs with ONLINEWS_EPOCH_SECONDS=0.05: its epochs end at requested cuts,
which fall inside open parallel regions (the master's MPI calls are
there).  Its OpenMP metrics, delay costs and critical path equal the
one-epoch analysis of the same execution within 1 % (or 1 ms).  Values:
per iteration and rank, the first barrier's waits are 0.005 (3 + 2 + 1) =
0.03 s, and at the second the 3 workers wait for the master's 0.01 s
("produce" on rank 0; on rank 1 the Late Sender of its receive): 1.2 s of
omp_ebarrier_wait per rank in 20 iterations, 0.2 s of Late Sender on rank
1, each longer by what rank 0's analysis at its sends delays them."""
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import Checks, launch, mpi_env, script_args, until_passed  # noqa: E402

METRICS = ["omp_time", "omp_management", "omp_synchronization", "omp_ebarrier", "omp_ebarrier_wait",
           "omp_ibarrier", "omp_ibarrier_wait", "omp_critical", "omp_lock_api", "omp_idle_threads",
           "omp_limited_parallelism", "delay_ompidle", "delay_ompidle_longterm", "delay_ompbarrier",
           "delay_ompbarrier_longterm", "comp"]


def main():
    args = script_args().parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    def run(mode, epoch_seconds):
        out, ref = work / f"{mode}_online.h5", work / f"{mode}_reference.h5"
        out.unlink(missing_ok=True)
        ref.unlink(missing_ok=True)
        env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS=epoch_seconds,
                      ONLINEWS_TEST_REFERENCE=str(ref), OMP_NUM_THREADS="4", OMP_WAIT_POLICY="passive")
        cmd = launch(args.mpiexec, 2) + [args.exe, mode]
        print(f"$ ONLINEWS_EPOCH_SECONDS={epoch_seconds} " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=300)
        sys.stdout.write(p.stderr)
        if p.returncode != 0:
            sys.exit(f"FAIL: exit code {p.returncode}")
        return onlinews_h5.Result(str(out)), onlinews_h5.Result(str(ref))

    def attempt(_k):
        online, post = run("hybrid", "0")
        check = Checks(args.untimed)
        check(int(online.attrs["epochs"]) >= 11 and int(post.attrs["epochs"]) == 1,
              f"epochs: online {online.attrs['epochs']} (>= 11), one-epoch {post.attrs['epochs']}")
        check(len(online.loc_rank) == 8, f"{len(online.loc_rank)} locations (2 ranks x 4 threads)")
        for m in METRICS:
            a, b = online.value(m, app=True), post.value(m, app=True)
            check(abs(a - b) <= max(0.01 * max(a, b), 1e-3), f"{m:22s} online {a:8.4f} s  one epoch {b:8.4f} s")
        for r in (0, 1):
            w = online.value("omp_ebarrier_wait", rank=r)
            check(abs(w - 0.6) <= 0.03, f"omp_ebarrier_wait rank {r}: {w:.4f} s (want 0.6 +- 0.03)", timed=True)
            s = online.value("omp_idle_threads", rank=r, region="serial")
            check(abs(s - 0.6) <= 0.03, f"omp_idle_threads rank {r} in serial: {s:.4f} s (want 0.6 +- 0.03)", timed=True)
            # The workers are idle wherever the master is outside parallel
            # regions once the first one has started them: 3 x its time
            # there, at each of its call paths (those between the regions;
            # not the root, which also holds the time before the first
            # region, nor the final barrier, at whose end the workers' time
            # ends before the master's).
            for name in ("serial", "MPI_Allreduce", "onlinews_analysis"):
                idle = online.value("omp_idle_threads", rank=r, region=name)
                master = online.value("time", rank=r, thread=0, region=name)
                check(abs(idle - 3 * master) <= max(0.01 * idle, 1e-3),
                      f"omp_idle_threads rank {r} in {name}: {idle:.4f} s (want 3 x the master's {master:.4f} s)")
            # Besides serial, the master waits in MPI_Allreduce for the other
            # rank (both run the same code: 10 x 1 ms of slack) and for its
            # analysis at each cut, which a slower machine makes longer (a
            # bound of 0.6 + 0.08 s on the whole once stood here: rank 1's
            # 0.070 s in MPI_Allreduce behind rank 0's 0.022 s of analysis
            # broke it in every attempt of a CI run on a slower VM).
            other = 1 - r
            tool = sum(online.value("time", rank=other, thread=0, region=n)
                       for n in ("onlinews_analysis", "onlinews_cut_decision"))
            ar = online.value("omp_idle_threads", rank=r, region="MPI_Allreduce")
            check(ar <= 3 * (tool + 0.01) + 0.005,
                  f"omp_idle_threads rank {r} in MPI_Allreduce: {ar:.4f} s (want <= 3 x (rank {other}'s analysis "
                  f"{tool:.4f} s + 10 ms))", timed=True)
        idle = online.value("omp_idle_threads")
        cost = online.value("delay_ompidle") + online.value("delay_ompidle_longterm")
        check(abs(cost - idle) <= 0.01 * idle, f"idle-thread delay costs {cost:.4f} s (want all of {idle:.4f} s)")
        # Requested cuts inside open parallel regions.
        online, post = run("funneled", "0.05")
        check(int(online.attrs["requested_cuts"]) >= 2 and int(post.attrs["epochs"]) == 1,
              f"funneled: {online.attrs['requested_cuts']} requested cuts (>= 2), one-epoch {post.attrs['epochs']}")
        for m in METRICS + ["critical_path", "mpi_latesender", "delay_latesender"]:
            a, b = online.value(m, app=True), post.value(m, app=True)
            check(abs(a - b) <= max(0.01 * max(a, b), 1e-3), f"funneled {m:22s} online {a:8.4f} s  one epoch {b:8.4f} s")
        # Rank 0's master makes no MPI call in the loop but its sends: the
        # analysis slices of its epochs run there and delay them, so rank
        # 1's receives wait that much longer, and on both ranks the 3
        # workers wait for their master that much longer at the barrier
        # after the message (34 ms of rank 0's analysis on a slow VM, with
        # ONLINEWS_TEST_REFERENCE keeping every event: Late Sender 0.246 s).
        tool0 = sum(online.value("time", rank=0, thread=0, region=n)
                    for n in ("onlinews_analysis", "onlinews_cut_decision"))
        for r in (0, 1):
            w = online.value("omp_ebarrier_wait", rank=r)
            check(1.17 <= w <= 1.35 + 3 * tool0, f"funneled omp_ebarrier_wait rank {r}: {w:.4f} s (want 1.2, -0.03 "
                  f"+0.15, + 3 x rank 0's analysis {tool0:.4f} s)", timed=True)
        ls = online.value("mpi_latesender", rank=1)
        check(0.16 <= ls <= 0.24 + tool0, f"funneled mpi_latesender rank 1: {ls:.4f} s (want 0.2 +- 0.04, + rank 0's "
              f"analysis {tool0:.4f} s)", timed=True)
        return check.failures

    failures = until_passed(3, attempt)
    print("PASS" if not failures else "FAIL: " + ", ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
