#!/usr/bin/python3
"""Kill safety (issue 12): SIGKILL of the whole job at random moments.

Each trial (--trials, 20) runs random_program (seed = trial, 120 steps,
about 2-3 s on 4 ranks) with ONLINEWS_EPOCH_SECONDS=0 and a 64K buffer, so
that epochs finish all the time, waits until the result file exists, then
sleeps a random 0-3 s (seeded: the trials are the same every time) and
kills every process of the job at once with SIGKILL (mpiexec's process
group, then any rank left).  Some kills land in an epoch's analysis, some
in the append of its rows, some in MPI_Finalize's last epoch or profile
write, some after the job ended.  What must hold every time:
  * h5py opens the file;
  * /epochs/table holds every epoch whose line was in the live log
    (<file>.live, one line per epoch appended and flushed) just before the
    kill, its rows in order, and every /epochs/<metric> has one row per
    epoch, or one more (a kill during an append: the table row is written
    last, docs/output.md);
  * a file marked complete (complete = 1: the kill came while the processes
    exited) has its profile.
Not required: that the epochs finished after the kill are there, nor the
profile of a job killed before MPI_Finalize wrote it."""
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import Checks, fresh_workdir, launch, mpi_env, script_arguments  # noqa: E402


def ranks_of(exe, marker):
    """Processes running `exe` (by /proc/<pid>/exe: a command line that only
    names it, like this script's, does not count) whose environment holds
    `marker` (this trial's ONLINEWS_OUTPUT=...: mpi.fuzz_programs runs the
    same program, and ctest -j may run it meanwhile)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.readlink(d / "exe") == exe and marker in (d / "environ").read_bytes().split(b"\0"):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def kill_job(p, exe, out):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for pid in ranks_of(exe, f"ONLINEWS_OUTPUT={out}".encode()):  # (a rank outside mpiexec's process group)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait(timeout=60)


def holds(f, lines=0):
    """What a killed job's open file `f` must hold (the module's docstring),
    with at least `lines` epochs: (ok, a description)."""
    complete = int(f.attrs.get("complete", -1))
    table = f["epochs/table"][:] if "epochs/table" in f else []
    n = len(table)
    short = [m for m in f.get("epochs", {}) if m != "table" and f["epochs/" + m].shape[0] not in (n, n + 1)]
    in_order = list(table["index"]) == list(range(n)) if n else True
    # (A job killed while its processes exit may have written everything.)
    whole = complete == 0 or "profile" in f
    ok = n >= lines and in_order and not short and whole
    return ok, (f"{n} epochs in the file, {lines} in the live log before the kill, rows in order {in_order}, "
                f"metrics with neither that many rows nor one more {short}, complete {complete}")


def trial(args, work, k, check):
    """One kill; returns how many epochs the live log listed before it."""
    out = work / f"kill{k}.h5"
    live = work / f"kill{k}.live"
    cmd = launch(args.mpiexec, 4) + [args.exe, str(k), "120"]
    env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS="0", ONLINEWS_BUFFER="64K")
    delay = random.Random(k).uniform(0.0, 3.0)
    with open(work / f"kill{k}.log", "w") as log:
        p = subprocess.Popen(cmd, env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while not out.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(delay)
        ended = p.poll() is not None
        # Epoch lines (not the header, nor the line that ends a complete run).
        lines = sum(line.startswith('{"epoch":') for line in live.read_text().splitlines(keepends=True)
                    if line.endswith("\n")) if live.exists() else 0
        kill_job(p, args.exe, out)
    # A killed rank releases its lock on the file only at the very end of its
    # exit, after it has left the process list's command lines: a reader
    # right after the kill may find the lock held for a moment.
    f, error, deadline = None, None, time.monotonic() + 10
    while f is None and time.monotonic() < deadline:
        try:
            f = h5py.File(out, "r")
        except OSError as e:
            error = e
            if "unable to lock file" not in str(e):
                break
            time.sleep(0.1)
    if f is None:
        check(False, f"trial {k} (kill {delay:.2f} s after the file appeared): h5py cannot open it: {error}")
        return lines
    with f:
        ok, what = holds(f, lines)
    check(ok, f"trial {k}: killed {delay:.2f} s after the file appeared ({'after the job ended' if ended else 'while it ran'}): "
          + what)
    return lines


def main():
    ap = script_arguments("random_program built with onlinews")
    ap.add_argument("--trials", type=int, default=20)
    args = ap.parse_args()
    work = fresh_workdir(args)
    check = Checks()
    listed = sum(trial(args, work, k, check) for k in range(1, args.trials + 1))
    # (Else "every epoch listed is in the file" held for want of epochs: an
    # epoch every few ms, 10-60 listed per kill while the program runs.)
    check(listed >= args.trials, f"{listed} epochs listed in the live logs before the kills, at least {args.trials}")
    if check.failures:
        print(f"FAIL: {len(check.failures)} check(s)")
        return 1
    print(f"PASS: {args.trials} kills")
    return 0


if __name__ == "__main__":
    sys.exit(main())
