#!/usr/bin/python3
"""RMA across many epochs (issue 8): the red-black SOR solver of
rma_solver.c on 8 ranks in its three variants (fences; post/start/complete/
wait; lock_all with flushes and counters, no collective in the loop), each
run in test mode (ONLINEWS_EPOCH_SECONDS=0: its loop has no collective that
can be a synchronizing cut, so after 1 s the ranks agree on requested cuts
as often as the analysis keeps up, 10 to 45 in a 2 s run) and with
ONLINEWS_TEST_REFERENCE, so that the same execution is also analyzed as one
epoch (runtime/reference.cpp).
Each RMA wait state agrees with the one-epoch analysis within 1 % or
15 ms, delay costs and the critical path within 2 % or 15 ms, the operation
counts exactly, the pairwise synchronization counts
up to those of fence instances a requested cut split (not analyzed,
split_collectives); no event is dropped and the solver's answer is right
(the program checks it).  The
epochs' share of the run (the summary's "epochs and cut decisions") is
printed: seed 001 reports 1.2-5.8 % for its post-mortem analysis.  The
waits themselves follow from the program: every half-sweep rank r works
(1 + r mod 3) ms, and its neighbours wait for the slower one."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import launch, mpi_env, script_args, until_passed, validate  # noqa: E402

WAITS = ["mpi_rma_wait_at_fence", "mpi_rma_early_fence", "mpi_rma_sync_late_post", "mpi_rma_comm_late_post",
         "mpi_rma_early_wait", "mpi_rma_late_complete", "mpi_rma_sync_lock_competition",
         "mpi_rma_comm_lock_competition", "mpi_rma_wait_for_progress"]
# Root causes through the RMA synchronizations (short- and long-term,
# inclusive): within 2 % or 15 ms of the one-epoch analysis.
DELAYS = ["delay_rma_fence_aggregate", "delay_rma_earlyfence_aggregate", "delay_rma_latepost_aggregate", "delay_rma_earlywait_aggregate",
          "delay_rma_latecomplete_aggregate", "delay_rma_lockcompetition_aggregate", "delay", "critical_path"]
COUNTS = ["mpi_rma_pairsync_count", "mpi_rma_pairsync_unneeded_count", "comms_rma_puts", "comms_rma_atomics"]
# Known difference, printed and not checked (docs/analyses.md, RMA): in the
# lock_all variant, Wait for Progress in MPI_Win_flush_all differs between
# the epochs and the one-epoch analysis by up to 0.05 s of a 2.4 s run on 8
# ranks, either larger.
NOT_COMPARED = {"passive": {"mpi_rma_wait_for_progress"}}
# A fence instance a requested cut splits (split_collectives, per member)
# is not analyzed: its waits are missing from the epochs' totals.  Each
# may fall short by twice the one-epoch analysis' wait per MPI_Win_fence
# visit.  Against MPICH, whose fences take ~12 ms on 8 busily polling
# ranks, 112 split instances (of 4816) held 1.34 s of 57.5 s of Wait at
# Fence; against Open MPI the fences take microseconds.
# An RMA wait whose cause lies in another epoch's window is found, not
# traced: its delay costs are missing, and the file says how much waiting
# that is (unexplained_rma_wait_seconds).  Against MPICH (8 ranks, pscw) 72
# such waits lacked 0.74 s of 28.6 s of Late Post costs.
UNEXPLAINED_FED = {"delay_rma_latepost_aggregate", "delay_rma_earlywait_aggregate", "delay_rma_latecomplete_aggregate",
                   "delay_rma_lockcompetition_aggregate", "delay"}
# So is a split MPI_Win_create or MPI_Win_free (a collective too): its
# wait is missing from the epochs' wait and delay totals (against MPICH, 8
# ranks, passive: 0.23 s of Wait at Window Free, one instance).
WINDOW_WAITS = ["mpi_rma_wait_at_create", "mpi_rma_wait_at_free"]
FENCE_FED = {"mpi_rma_wait_at_fence", "mpi_rma_early_fence", "delay_rma_fence_aggregate",
             "delay_rma_earlyfence_aggregate", "delay"}
# What each variant must show at all (its main wait state, seconds summed over ranks).
MAIN = {"fence": ("mpi_rma_wait_at_fence", 2.0), "pscw": ("mpi_rma_sync_late_post", 1.5), "passive": (None, 0)}


def main():
    ap = script_args()
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--attempts", type=int, default=3)
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    def attempt(k):
        failures = []
        for mode in ("fence", "pscw", "passive"):
            out, ref = work / f"{mode}_{k}.h5", work / f"{mode}_{k}_reference.h5"
            env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_TEST_REFERENCE=str(ref), ONLINEWS_EPOCH_SECONDS="0")
            cmd = launch(args.mpiexec, args.np) + [args.exe, mode, str(args.iterations)]
            print("$ ONLINEWS_EPOCH_SECONDS=0", " ".join(cmd), flush=True)
            p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=300)
            sys.stdout.write(p.stdout)
            if p.returncode != 0:
                sys.stdout.write(p.stderr)
                failures.append(f"{mode}: exit code {p.returncode}")
                continue
            share = re.search(r"epochs and cut decisions ([0-9.]+) %", p.stderr)
            online, post = onlinews_h5.Result(str(out)), onlinews_h5.Result(str(ref))
            failures += [f"{mode}: {x}" for x in validate(online)]
            epochs, dropped = int(online.attrs["epochs"]), int(online.attrs["dropped_events"])
            print(f"  {mode}: {epochs} epochs ({online.attrs['requested_cuts']} requested cuts), {dropped} dropped "
                  f"events, epochs' share of the run {share.group(1) if share else '?'} %, "
                  f"{online.attrs.get('unexplained_rma_waits', 0)} RMA waits not traced across cuts "
                  f"({float(online.attrs.get('unexplained_rma_wait_seconds', 0.0)):.3f} s)")
            if epochs < 5 or dropped != 0:
                failures.append(f"{mode}: {epochs} epochs (want >= 5), {dropped} dropped events (want 0)")
            split = int(online.attrs.get("split_collectives", 0))
            fence_visits = post.value("visits", region="MPI_Win_fence")
            unexplained = float(online.attrs.get("unexplained_rma_wait_seconds", 0.0))
            for m in WAITS + DELAYS:
                a, b = online.value(m), post.value(m)
                tolerance = max((0.02 if m in DELAYS else 0.01) * max(a, b), 0.015)
                ok = abs(a - b) <= tolerance
                if not ok and a < b:  # what the file says is missing
                    missing = unexplained if m in UNEXPLAINED_FED else 0.0
                    if mode == "fence" and m in FENCE_FED and fence_visits > 0:
                        missing += 2 * split * b / fence_visits  # (the split instances' share)
                    if m == "delay" and split > 0:
                        missing += sum(max(0.0, post.value(w) - online.value(w)) for w in WINDOW_WAITS)
                    ok = b - a <= tolerance + missing
                known = m in NOT_COMPARED.get(mode, ())
                if a or b:
                    print(f"    {'note' if known else 'ok  ' if ok else 'FAIL'} {m:32s} epochs {a:8.4f} s  "
                          f"one epoch {b:8.4f} s")
                if not ok and not known:
                    failures.append(f"{mode}: {m}")
            # A fence instance a requested cut splits is not analyzed (on each
            # member, split_collectives): its 8 pairwise synchronizations
            # there are missing, nothing else.
            for m in COUNTS:
                a, b = online.value(m), post.value(m)
                slack = 8 * split if m.startswith("mpi_rma_pairsync") else 0
                ok = b - slack <= a <= b
                print(f"    {'ok  ' if ok else 'FAIL'} {m:32s} epochs {a:8.0f}    one epoch {b:8.0f}"
                      + (f"  ({split} split instances)" if slack else ""))
                if not ok:
                    failures.append(f"{mode}: {m}")
            main_metric, least = MAIN[mode]
            least *= args.np / 8 * args.iterations / 300  # (stated for 8 ranks and 300 iterations)
            if main_metric and post.value(main_metric) < least:
                failures.append(f"{mode}: {main_metric} {post.value(main_metric):.3f} s, the program waits at least "
                                f"{least} s there")
        return failures

    failures = until_passed(args.attempts, attempt)
    print("PASS" if not failures else "FAIL: " + ", ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
