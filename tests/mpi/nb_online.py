#!/usr/bin/python3
"""Nonblocking and neighborhood collectives, online equals one epoch
(issue 14): runs nb_late.c with ONLINEWS_EPOCH_SECONDS=0 (a cut at every
opportunity: each of its MPI_Barrier calls, which phase D's instances
cross) and ONLINEWS_TEST_REFERENCE, so that the same execution is also
analyzed as one epoch.  Checks that both analyses find the waits
nb_late.c states (derivation there), and that per rank every wait at a
nonblocking or neighborhood collective, its delay costs and the critical
path agree within 1 % (or 15 ms: two clock corrections of one execution).
(Instances whose starts a requested cut separates are checked by the unit
tests, test_nb_collectives.cpp: here the ranks do not request one in
phase E, see docs/analyses.md.)
Timed by sleeps: up to 3 attempts (run_scenario.until_passed)."""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import fresh_workdir, launch, mpi_env, near, script_args, until_passed, verdict  # noqa: E402

WAITS = ["mpi_wait_nxn_nb", "mpi_latebroadcast_nb", "mpi_wait_neighbor"]
# nb_late.c's waits per rank (0.02 s per sleep of tolerance).
EXPECTED = {"mpi_wait_nxn_nb": [1.5, 1.2, 0.9, 0.9], "mpi_latebroadcast_nb": [0.75, 0, 0.75, 0.75],
            "mpi_wait_neighbor": [0, 0.9, 0.9, 0]}
ROOT_CAUSES = ["delay_n2n", "delay_n2n_longterm", "delay_12n", "delay_12n_longterm", "delay_neighbor",
               "delay_neighbor_longterm", "critical_path"]


def main():
    ap = script_args()
    args = ap.parse_args()
    work = fresh_workdir(args)

    def attempt(_k):
        out, ref = work / "online.h5", work / "reference.h5"
        out.unlink(missing_ok=True)
        ref.unlink(missing_ok=True)
        env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS="0", ONLINEWS_TEST_REFERENCE=str(ref))
        cmd = launch(args.mpiexec, 4) + [args.exe]
        print("$ ONLINEWS_EPOCH_SECONDS=0 ONLINEWS_TEST_REFERENCE=... " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=300)
        sys.stdout.write(p.stderr)
        if p.returncode != 0:
            return [f"exit code {p.returncode}"]
        online, post = onlinews_h5.Result(str(out)), onlinews_h5.Result(str(ref))
        failures = []
        epochs = int(online.attrs["epochs"])
        print(f"epochs: online {epochs}, post-mortem {int(post.attrs['epochs'])}")
        # 3 rounds x 1 barrier, then MPI_Finalize.
        if epochs < 4 or int(post.attrs["epochs"]) != 1:
            failures.append(f"expected >= 4 online epochs and 1 post-mortem epoch, got {epochs}, {post.attrs['epochs']}")
        for m, want in EXPECTED.items():
            for rank in range(4):
                for label, r in (("online", online), ("post-mortem", post)):
                    near(failures, f"{label} {m} rank {rank}", r.value(m, rank=rank), want[rank], 0.06)
        for m in WAITS + ROOT_CAUSES:
            for rank in range(4):
                a, b = online.value(m, rank=rank, app=True), post.value(m, rank=rank, app=True)
                ok = abs(a - b) <= max(0.01 * max(a, b), 0.015)
                print(f"  {'ok  ' if ok else 'FAIL'} {m:24s} rank {rank}: online {a:8.4f} s, post-mortem {b:8.4f} s")
                if not ok:
                    failures.append(f"{m} rank {rank}: online {a:.4f} s, post-mortem {b:.4f} s")
        return failures

    return verdict(until_passed(3, attempt), "PASS: nonblocking collectives online equal one epoch")


if __name__ == "__main__":
    sys.exit(main())
