#!/usr/bin/python3
"""Seed 003's synthetic benchmark (imbalance.c): the critical-path imbalance
of work() is ~25 % of the average workload in the static, dynamic and mixed
scenarios (and ~0 when balanced), while the profile's max - avg finds it only
in the static one (about 10.7 % in the mixed one).  Prints both numbers.

With --untimed (against MPICH, whose ranks poll busily: a rank waking from
its sleep waits 0-15 ms for a core, so every work() phase is longer by a
random amount) the designed shares are printed, not checked, and what
holds whatever each phase's overrun is checked instead:
  * the critical-path imbalance is at least the profile's max - avg (a
    path through each iteration's slowest rank holds at least the
    slowest rank's total), less a point and the spread of the totals of
    the ranks designed to work as long as the busiest one: the path goes
    through the rank that arrives last at each barrier, on a loaded
    machine possibly one held up outside work() whose sleeps overran less
    than the busiest rank's (a CI run under ASan: 24.8 % against 25.9 %);
  * static: both at least 15 % (ranks 0-3 sleep 20 ms longer than ranks
    4-7 in every iteration);
  * dynamic: the critical path at least 12 % and 8 points over the
    profile, the profile at most 12 % (every rank sleeps the same total;
    one rank leads by 10 ms in every iteration);
  * mixed: the critical path at least 8 %.
Measured against MPICH (4 runs, critical path / profile): balanced 15-19 /
2-8 %, static 30-35 / 27-31 %, dynamic 19-22 / 3-8 %, mixed 17-18 / 5-14 %:
the overruns add to every iteration's slowest rank (balanced 15-19 %
instead of 0) and to the average workload (1.43 s instead of 1.28 s).
Under ASan beside another test and an MPICH test run, mixed gave 10.8 /
7.8 % (the path follows the last rank to reach each barrier, which under
load can be a light rank held up in the barrier before): hence 8 %, and
the test runs alone (RUN_SERIAL) even where ctest runs two at a time."""
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import launch, mpi_env, script_args, until_passed, validate  # noqa: E402

EXPECT = {  # scenario: (critical-path imbalance %, profile max-avg %)
    "balanced": (0.0, 0.0), "static": (25.0, 25.0), "dynamic": (25.0, 0.0), "mixed": (25.0, 10.7)}
TOLERANCE = 3.0  # percentage points: sleep and scheduling jitter on 8 oversubscribed ranks


def designed_work(scenario, rank, ranks=8, iterations=32):
    """Seconds of work() imbalance.c gives `rank` in `scenario`."""
    w, heavy = 0.040, 0.050
    light = w - 0.010 / 7.0
    total = 0.0
    for it in range(iterations):
        t = w
        if scenario == "static":
            t = heavy if rank < ranks // 2 else 2 * w - heavy
        if scenario == "dynamic":
            t = heavy if rank == it % ranks else light
        if scenario == "mixed":
            t = heavy if rank == (0 if it < iterations // 2 else 1) else light
        total += t
    return total


def overrun_spread(scenario, per_rank):
    """Percent of the average: max - min of the measured totals of the
    ranks designed to work as long as the busiest one."""
    busiest = int(per_rank.argmax())
    alike = [r for r in range(len(per_rank))
             if abs(designed_work(scenario, r) - designed_work(scenario, busiest)) < 1e-9]
    return 100 * (per_rank[alike].max() - per_rank[alike].min()) / per_rank.mean()


def untimed_relations(scenario, cp, prof, spread):
    """What must hold however long each sleep overran (module docstring);
    returns the broken relations."""
    want = []
    want.append((cp >= prof - 1.0 - spread,
                 f"critical-path imbalance {cp:.1f}% below the profile's {prof:.1f}% "
                 f"(less the busiest rank's group spread, {spread:.1f}%)"))
    if scenario == "static":
        want.append((cp >= 15.0 and prof >= 15.0, f"{cp:.1f}% / {prof:.1f}%, want both >= 15%"))
    if scenario == "dynamic":
        want.append((cp >= 12.0, f"critical-path imbalance {cp:.1f}%, want >= 12%"))
        want.append((cp >= prof + 8.0, f"critical-path imbalance {cp:.1f}% not 8 points over the profile's {prof:.1f}%"))
        want.append((prof <= 12.0, f"profile max-avg {prof:.1f}%, want <= 12%"))
    if scenario == "mixed":
        want.append((cp >= 8.0, f"critical-path imbalance {cp:.1f}%, want >= 8%"))
    return [what for ok, what in want if not ok]


def main():
    ap = script_args()
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures = []
    print(f"{'scenario':10s} {'wall [s]':>9s} {'avg work [s]':>13s} {'CP imbalance':>13s} {'profile max-avg':>16s}")
    for scenario, (want_cp, want_prof) in EXPECT.items():
        # (Sleep-timed: on a loaded machine a rank descheduled after its
        # sleep overruns it -- static read 30.5 % for 25 % once beside a
        # parallel build -- which shows in some attempts, an analysis error
        # in every one: until_passed.)
        def attempt(_k, scenario=scenario, want_cp=want_cp, want_prof=want_prof):
            out = work / f"{scenario}.h5"
            out.unlink(missing_ok=True)
            env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_VERBOSE="0")
            p = subprocess.run(launch(args.mpiexec, 8) + [args.exe, scenario], env=env, cwd=work,
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                print(p.stderr)
                return [f"{scenario}: exit code {p.returncode}"]
            r = onlinews_h5.Result(str(out))
            found = [f"{scenario}: {p}" for p in validate(r)]
            per_rank = r.per_rank("time", region="work")
            avg = per_rank.mean()
            cp_imb = 100 * r.value("critical_path_imbalance", region="work") / avg
            prof = 100 * (per_rank.max() - avg) / avg
            ok = abs(cp_imb - want_cp) <= TOLERANCE and abs(prof - want_prof) <= TOLERANCE
            if args.untimed:
                broken = untimed_relations(scenario, cp_imb, prof, overrun_spread(scenario, per_rank))
                verdict = "FAIL: " + "; ".join(broken) if broken else "ok (untimed: relations only)"
                found += [f"{scenario}: {b}" for b in broken]
            else:
                verdict = "ok" if ok else "FAIL"
                if not ok:
                    found.append(scenario)
            print(f"{scenario:10s} {float(r.attrs['wall_seconds']):9.2f} {avg:13.3f} {cp_imb:12.1f}% {prof:15.1f}%"
                  f"   (expected {want_cp:.1f}% / {want_prof:.1f}%) {verdict}", flush=True)
            return found

        failures += until_passed(3, attempt)
    print("PASS" if not failures else "FAIL: " + ", ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
