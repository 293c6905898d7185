#!/usr/bin/python3
"""Replay fuzzing (issue 12): random valid MPI programs (random_program.c:
blocking and nonblocking point-to-point with wildcards, probes, collectives
on sub-communicators, bursts, random sleeps), one per seed, on 3-6 ranks
(3 + seed % 4).  Each seed runs three times:

  plain      the program built without onlinews: its output (errors found
             in the payloads, a checksum of the collectives' results);
  epochs=0   ONLINEWS_EPOCH_SECONDS=0: a cut at every opportunity (every
             world collective, requested cuts in between);
  buffer     ONLINEWS_BUFFER=256K (--buffer): requested cuts whenever a
             buffer passes a quarter full (the bursts fill it), none by time.
             (At the minimum, 64K, bursts on 6 ranks sharing 2 cores fill
             both buffers before the previous epoch's replay lets the next
             cut through: events are dropped, counted, and those epochs
             analyzed for time only.)

Both analyzed runs also keep every event and analyze them again as one
epoch at MPI_Finalize (ONLINEWS_TEST_REFERENCE: the post-mortem analysis,
ONLINEWS_EPOCH_SECONDS=inf, of the same execution), so the comparison is
exact, free of timing: every wait-state total (each metric summed over call
paths and locations) of the many-epoch analysis equals the reference's
within 1 us per location, and the counts (visits, messages, bytes, wait
instances) are equal, except where the online analysis counts what it
leaves out (docs/design.md, "What is exact"): collective instances that a
requested cut splits (split_collectives; the collective wait states may
then only be lower than the reference's, never higher), and synchronous
sends whose wait was analyzed in a window before the receiver's reply
(crossing_sync_sends; Late Receiver may then be lower, by at most that
many instances).  Also: every run ends within its time limit
(never deadlocks), with exit code 0, the plain run's output, and a file
that passes run_scenario.validate, with no dropped events.  Delay costs
and the critical path are printed, not checked (long-term costs that
would flow back further than the window before a requested cut, or more
than 3 hops there, are lost: docs/design.md)."""
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import fresh_workdir, launch, mpi_env, onlinews_h5, script_arguments, validate, verdict  # noqa: E402

# Compared: the MPI wait states and every count and byte metric, from the
# file's own metric tree.  Collective ones may be lower where a requested
# cut split a collective instance; Late Receiver where a synchronous send
# crossed a cut (what the online analysis counts, see compare()).
def metric_sets(r):
    waits = set(r.descendants("mpi_point2point")) | set(r.descendants("mpi_collective")) | \
        set(r.descendants("mpi_sync_collective")) | {"mpi_finalize_wait"}
    counts = {m for m in r.metrics if r.metric_unit[m] != "sec"}
    collective = set(r.descendants("mpi_collective")) | set(r.descendants("mpi_sync_collective")) | \
        set(r.descendants("syncs_coll")) | set(r.descendants("comms_coll")) | set(r.descendants("bytes_coll")) | \
        {"visits"}
    late_receiver = set(r.descendants("mpi_latereceiver")) | {"mpi_slr_count", "mpi_clr_count"}
    return sorted(waits), sorted(counts), collective, late_receiver


ROOT_CAUSES = ["delay", "critical_path"]


def run(args, work, seed, label, env):
    np_ = 3 + seed % 4
    cmd = launch(args.mpiexec, np_) + [args.plain if label == "plain" else args.exe, str(seed), str(args.steps)]
    out, ref = work / f"s{seed}_{label}.h5", work / f"s{seed}_{label}_reference.h5"
    if label != "plain":
        env = dict(env, ONLINEWS_OUTPUT=str(out), ONLINEWS_TEST_REFERENCE=str(ref))
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=mpi_env(**env), cwd=work, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, None, f"seed {seed} {label}: no end within {args.timeout} s (deadlock?)"
    took = time.monotonic() - t0
    if p.returncode != 0:
        sys.stdout.write(p.stdout + p.stderr[-3000:])
        return None, None, f"seed {seed} {label}: exit code {p.returncode}"
    if label == "plain":
        return p.stdout, took, None
    return (p.stdout, onlinews_h5.Result(str(out)), onlinews_h5.Result(str(ref))), took, None


def compare(seed, label, online, ref, failures):
    """The many-epoch analysis against the one-epoch reference of the same run."""
    a = online.attrs
    nloc = len(online.loc_rank)
    tol = 1e-6 * nloc
    split = int(a.get("split_collectives", 0))
    for problem in validate(online) + validate(ref):
        failures.append(f"seed {seed} {label}: {problem}")
    if int(a["dropped_events"]) != 0:
        failures.append(f"seed {seed} {label}: {a['dropped_events']} dropped events")
    worst = 0.0
    crossing = int(a.get("crossing_sync_sends", 0))
    waits, counts, collective, late_receiver = metric_sets(ref)

    def lower_ok(m, x, y, slack):
        # Counted approximations (docs/design.md): a collective instance a
        # requested cut splits is left out; a synchronous send whose wait
        # was analyzed in a window before the receiver's reply loses it (by
        # count: at most `crossing` instances).
        return y - slack <= x <= y and ((split > 0 and m in collective) or (crossing > 0 and m in late_receiver))

    for m in waits:
        x, y = online.value(m), ref.value(m)
        worst = max(worst, abs(x - y))
        if abs(x - y) > tol and not lower_ok(m, x, y + tol, float("inf")):
            failures.append(f"seed {seed} {label}: {m} online {x:.6f} s, reference {y:.6f} s")
    for m in counts:  # (the application's call paths: the online run's epochs are onlinews regions)
        x, y = online.value(m, app=True), ref.value(m, app=True)
        if x != y and not lower_ok(m, x, y, crossing if split == 0 else float("inf")):
            failures.append(f"seed {seed} {label}: {m} online {x:.0f}, reference {y:.0f}")
    causes = "  ".join(f"{m} {online.value(m, app=True):.3f}/{ref.value(m, app=True):.3f}" for m in ROOT_CAUSES)
    return (f"epochs {int(a['epochs'])} (sync {int(a.get('sync_cuts', 0))}, requested "
            f"{int(a.get('requested_cuts', 0))}), split collectives {split}, crossing sync sends {crossing}, truncated "
            f"intervals {int(a.get('truncated_intervals', 0))}; waiting {ref.value('mpi'):.3f} s, largest wait-state "
            f"difference {worst * 1e6:.2f} us; {causes} (online/reference), long-term delay costs not charged "
            f"{float(a.get('unattributed_longterm_seconds', 0)):.3f}, approximate path "
            f"{float(a.get('approximate_path_seconds', 0)):.3f}")


def main():
    ap = script_arguments("random_program built with onlinews")
    ap.add_argument("--plain", required=True, help="random_program built without onlinews")
    ap.add_argument("--seeds", default="1-50", help="FIRST-LAST")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--buffer", default="256K", help="ONLINEWS_BUFFER of the requested-cut runs")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="one more environment variable of both runs with onlinews (e.g. a test knob)")
    args = ap.parse_args()
    if any("=" not in e for e in args.env):
        ap.error("--env takes K=V")
    args.plain = str(Path(args.plain).resolve())
    work = fresh_workdir(args)
    first, last = (int(x) for x in args.seeds.split("-"))
    failures, requested = [], 0
    for seed in range(first, last + 1):
        plain, took, err = run(args, work, seed, "plain", {})
        if err:
            failures.append(err)
            continue
        print(f"seed {seed}: {3 + seed % 4} ranks, {plain.splitlines()[0]} ({took:.1f} s without onlinews)",
              flush=True)
        for label, env in (("epochs=0", {"ONLINEWS_EPOCH_SECONDS": "0"}), ("buffer", {"ONLINEWS_BUFFER": args.buffer})):
            env.update(dict(e.split("=", 1) for e in args.env))
            got, took, err = run(args, work, seed, label, env)
            if err:
                failures.append(err)
                continue
            stdout, online, ref = got
            if stdout != plain:
                failures.append(f"seed {seed} {label}: output differs from the plain run's:\n{stdout}")
            before = len(failures)
            summary = compare(seed, label, online, ref, failures)
            requested += label == "buffer" and int(online.attrs.get("requested_cuts", 0)) > 0
            print(f"  {'ok  ' if len(failures) == before else 'FAIL'} {label:8s} {took:4.1f} s: {summary}", flush=True)
            for f in failures[before:]:
                print("       " + f)
            online.close()
            ref.close()
            for p in work.glob(f"s{seed}_{label}*"):  # (kept when a check failed)
                if len(failures) == before:
                    p.unlink()
    seeds = last - first + 1
    print(f"{seeds} seeds; {requested} of them had requested cuts with ONLINEWS_BUFFER={args.buffer}")
    if requested < seeds // 2:
        failures.append(f"only {requested} of {seeds} seeds had requested cuts with ONLINEWS_BUFFER={args.buffer}")
    return verdict(failures, f"PASS: {seeds} random programs")


if __name__ == "__main__":
    sys.exit(main())
