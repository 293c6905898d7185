#!/usr/bin/python3
"""onlinews-report --follow against a running job: tests/mpi/iterations.c on
4 ranks (20 iterations of about 0.3 s) with ONLINEWS_EPOCH_SECONDS=0, a cut
at every MPI_Allreduce, so an epoch ends about every 0.3 s.  The follower
starts with the job and must

  print epoch lines while the job runs (at least 3 before it exits),
  print every epoch once, numbered 0, 1, 2, ... as many as the file's
      epochs attribute, then "complete: N epochs" and exit 0;
and the live log it reads must hold, per epoch, the same totals as the
result file's /epochs datasets (Late Sender, Wait at N x N, computation:
within 1e-6 relative).  The reader's rule (complete lines only) is checked
on a log written in pieces.  Not timed by sleeps: one attempt."""
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "mpi"))
sys.path.insert(0, str(ROOT / "tools" / "python"))
from run_scenario import fresh_workdir, launch, mpi_env, script_arguments, verdict  # noqa: E402
import onlinews_h5  # noqa: E402
from onlinews_report import follow  # noqa: E402

REPORT = ROOT / "tools" / "onlinews-report"


def check_partial_lines(work, failures):
    path = work / "pieces.live"
    reader = follow.Lines(str(path))
    with open(path, "wb") as f:
        f.write(b'{"a": 1}\n{"b": ')
        f.flush()
        got = reader.new()
        f.write(b'2}\n')
        f.flush()
        got2 = reader.new()
    if got != ['{"a": 1}'] or got2 != ['{"b": 2}']:
        failures.append(f"complete lines only: {got}, then {got2}")


def main():
    ap = script_arguments("iterations (linked with onlinews)")
    args = ap.parse_args()
    work = fresh_workdir(args)
    failures = []
    check_partial_lines(work, failures)

    out = work / "live.h5"
    job = subprocess.Popen(launch(args.mpiexec, 4) + [args.exe],
                           env=mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS="0", ONLINEWS_VERBOSE="0"),
                           cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    fol = subprocess.Popen([sys.executable, str(REPORT), "--follow", str(out), "--interval", "0.1",
                            "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []  # (monotonic time, text)

    def read():
        for text in fol.stdout:
            lines.append((time.monotonic(), text.rstrip("\n")))
    reader = threading.Thread(target=read)
    reader.start()
    job_err = job.communicate(timeout=300)[1]
    job_end = time.monotonic()
    fol.wait(timeout=180)
    reader.join()
    for _, text in lines:
        print(text)
    if job.returncode != 0:
        print(f"FAILED: the job exited with {job.returncode}\n{job_err[-2000:]}")
        return 1
    if fol.returncode != 0:
        failures.append(f"--follow exited with {fol.returncode}: {fol.stderr.read()[-1000:]}")
    epochs = [(t, text) for t, text in lines if text.startswith("epoch ")]
    early = sum(1 for t, _ in epochs if t < job_end)
    if early < 3:
        failures.append(f"only {early} epoch line(s) before the job ended")
    with onlinews_h5.Result(str(out)) as r:
        n = int(r.attrs["epochs"])
        numbers = [int(text.split()[1]) for _, text in epochs]
        if numbers != list(range(n)):
            failures.append(f"epoch lines numbered {numbers}, expected 0..{n - 1}")
        if not lines or not lines[-1][1].startswith(f"complete: {n} epochs"):
            failures.append(f"last line {lines[-1:]}, expected 'complete: {n} epochs ...'")
        live = [json.loads(x) for x in (work / "live.live").read_text().splitlines()]
        recs = [x for x in live if "epoch" in x]
        for metric in ("mpi_latesender", "mpi_wait_nxn", "comp"):
            want = r.epoch_totals(metric)
            got = [x["totals"].get(metric, 0.0) for x in recs]
            if len(got) != len(want) or any(abs(a - b) > 1e-6 * max(1.0, abs(b)) for a, b in zip(got, want)):
                failures.append(f"{metric} per epoch: live log {got[:5]}..., file {list(want[:5])}...")
        if r.value("mpi_latesender") < 1.0:
            failures.append(f"Late Sender {r.value('mpi_latesender'):.3f} s: the program waits seconds")
    return verdict(failures, f"follow: passed ({early} of {len(epochs)} epochs printed before the job ended)")


if __name__ == "__main__":
    sys.exit(main())
