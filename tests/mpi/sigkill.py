#!/usr/bin/python3
"""A job killed with SIGKILL between epochs leaves a valid file (issue 7):
robust.c kill 30 runs 40 iterations of (sleep 20 ms, rank 1 50 ms; barrier)
on 2 ranks with ONLINEWS_EPOCH_SECONDS=0 (a cut at every barrier), and rank
0 kills itself after 30 of them.  --mode abort: rank 1 calls MPI_Abort
instead; --mode segv: rank 1 dies of SIGSEGV (issue 12: the other rank,
in a barrier or an epoch's replay, is not left hanging: the job ends
within the time limit).  Expected: mpiexec fails; h5py opens the
file; it is marked incomplete (complete == 0); /epochs/table holds the
epochs finished before the kill (their metric rows, and at most one row
more of an epoch whose append the kill interrupted): at least 2 of the 30 cut (the analysis
advances at the application's MPI calls, here one every 20-50 ms, and an
epoch's replay needs several rounds between the ranks, so it finishes
several iterations after its cut), in order, each with every
/epochs/<metric> row; and their waiting is the program's: rank 0 waits
30 ms per barrier, so mpi_barrier_wait over the written epochs after the
first (the first also holds the start-up skew) is 30 ms per epoch, +- 6 ms
(20 %).  A missing or doubled barrier, or another epoch's row, is off by
30 ms or more.  The two sleep-timed checks (the barrier waits, at least 2
epochs) are printed, not checked, with --untimed (sanitized builds, where
the analysis runs several times slower), and a run that fails only them is
tried again, up to --attempts runs (3): a loaded machine moves them (rank 0
leaving a barrier late starts its next sleep late, and its tool slices
shorten its waits: 7.5 ms in CI over 2 epochs of a 10 ms wait), while a
wrong file fails every run and fails at once."""
import subprocess
import sys
import time
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import Checks, launch, mpi_env, script_args, until_passed  # noqa: E402


def attempt(args, work, k):
    """One run of the job, checked; returns (the file's form failures, the
    sleep-timed failures)."""
    out = work / "sigkill.h5"
    for f in work.glob("sigkill*"):
        f.unlink()
    cmd = launch(args.mpiexec, 2) + [str(Path(args.exe).resolve()), args.mode, "30"]
    print(f"$ ONLINEWS_EPOCH_SECONDS=0 {' '.join(cmd)}   (attempt {k})", flush=True)
    p = subprocess.run(cmd, env=mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS="0"), cwd=work,
                       capture_output=True, text=True, timeout=120)
    check, timed = Checks(args.untimed), Checks(args.untimed)

    check(p.returncode != 0, f"mpiexec reports the killed rank (exit code {p.returncode})")
    # mpiexec may return before the killed job's last rank is gone (seen
    # with MPICH's MPI_Abort: HDF5's lock on the file was still held), so a
    # locked file is tried again for a while.
    deadline = time.monotonic() + 10.0
    while True:
        try:
            f = h5py.File(out, "r")
            break
        except OSError as e:
            if "lock" in str(e) and time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            sys.exit(f"FAIL: h5py cannot open {out}: {e}")
    with f:
        check(int(f.attrs.get("complete", -1)) == 0, f"marked incomplete (complete = {f.attrs.get('complete')})")
        table = f["epochs/table"][:]
        n = len(table)
        # How many epochs the analysis finished before the kill depends on
        # how fast it advanced (under a sanitizer, not checked: --untimed).
        check(n <= 31, f"{n} epochs written (at most the 31 cut)")
        timed(n >= 2, f"{n} epochs written (at least 2)", timed=True)
        check(list(table["index"]) == list(range(n)), "epoch rows in order")
        check(all(table["t_begin"][i] < table["t_begin"][i + 1] for i in range(n - 1)),
              "epochs follow each other in time")
        # The table's row goes last (docs/output.md): a rank killed while it
        # appended an epoch (rank 0, killed by mpiexec when rank 1 aborts or
        # dies, may be inside an append) leaves metric datasets one row
        # longer, never shorter.  Readers take the table's rows.
        short = [k for k in f["epochs"] if k != "table" and f["epochs/" + k].shape[0] not in (n, n + 1)]
        check(not short, f"every /epochs/<metric> has {n} rows, or {n + 1} if the kill came during an append"
              + (f" (not: {short})" if short else ""))
        if "epochs/mpi_barrier_wait" in f:
            if n >= 2:
                # Epoch 0 also holds the start-up skew (no aligning barrier first).
                wait0 = float(f["epochs/mpi_barrier_wait"][1:n, 0].sum())
                timed(abs(wait0 - 0.030 * (n - 1)) <= 0.006 * (n - 1), f"rank 0 waited {wait0:.4f} s in the "
                      f"barriers of epochs 1-{n - 1}, expected {0.030 * (n - 1):.3f} s (30 ms each)", timed=True)
        else:
            check(False, "/epochs/mpi_barrier_wait exists")
    if check.failures or timed.failures:
        sys.stdout.write(p.stdout + p.stderr)
    return check.failures, timed.failures


def main():
    ap = script_args()
    ap.add_argument("--mode", choices=["kill", "abort", "segv"], default="kill")
    ap.add_argument("--attempts", type=int, default=3,
                    help="runs before a sleep-timed check fails (load shows in some runs, not all)")
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    # A failure of the file's form fails at once; one of the sleep-timed
    # values (the barrier waits, how many epochs were done) is tried again.
    def one(k):
        form, timed = attempt(args, work, k)
        if form:
            sys.exit(f"FAIL: {len(form + timed)} failure(s): " + "; ".join(form + timed))
        return timed

    failures = until_passed(args.attempts, one)
    if failures:
        sys.exit(f"FAIL: {len(failures)} failure(s): " + "; ".join(failures))
    print("all checks passed")


if __name__ == "__main__":
    main()
