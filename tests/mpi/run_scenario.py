#!/usr/bin/python3
"""Runs one MPI scenario program under mpirun with onlinews and checks its HDF5
output against the expectations in <name>.expect, one directive per line
(# starts a comment):

  np N | args A... | env K=V... | exit CODE | timeout S | output NAME|none | pre-create FILE
  attempts N   (timed scenarios: pass if one of N runs passes; see until_passed)
  stderr REGEX | no-stderr REGEX | stderr-count N TEXT | unchanged FILE
  same-as-plain   (the exit code and the standard output, its lines in any order,
      equal those of --plain, the program built without onlinews, run the same way)
  needs-plain     (skip the test, exit code 77, if --plain fails: this MPI library
      cannot run the program without onlinews either, e.g. MPI_Comm_spawn)
  expect METRIC [rank=R[,R]] [thread=T] [region=NAME] [under=NAME] [site=FUNCTION:LINE] [excl] [app] VALUE TOLERANCE
      (app: only the application's call paths, none of the tool's own regions;
      site: only MPI calls made on that line; METRIC processing: time minus
      the MPI wait states, as the critical-path indicators count it)
  atleast / atmost METRIC [selectors] VALUE
  ratio-atleast METRIC [selectors] / METRIC [selectors] VALUE   (numerator must be > 0)
  attr NAME ==|>=|<=|>|< VALUE
  pvar TEXT rank=R max|last ==|>=|<=|>|< VALUE   (the sampled MPI_T variable whose name
      contains TEXT, on rank R: its largest or last epoch value)
  absent REGION                                                  (no call path has it)
  relate METRIC [selectors] =|<=|>= TERM {+|- TERM} [+- TOLERANCE]   (tolerance with = only)
      TERM: [C *] METRIC [selectors] | [C *] spread METRIC [selectors] | NUMBER
      (spread: max - min over ranks).  Checks a value against others the same
      run measured, where load or start-up skew moves both: e.g. a whole-run
      indicator that counts each rank's MPI_Init, whose length depends on when
      the process started.

With --untimed (the MPICH build: tests/mpi/CMakeLists.txt says why) the
checks of time metrics are printed, not checked; counts, bytes, attributes,
exit codes and the output still are.

A region= or under= that names no call path fails the check (it would read
as 0).  Every result file also passes validate().  Needs Debian's h5py: run
with /usr/bin/python3.
"""
import argparse
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tools" / "python"))
import onlinews_h5  # noqa: E402


_OPEN_MPI = {}
_PRIORITY = []


def priority():
    """`nice -n -10` where this process may raise a priority (root, as in CI),
    else nothing.  The scenarios' waits are timed by sleeps, but their ranks
    poll inside MPI calls: on a machine whose cores other work keeps busy (a
    parallel build beside the tests) a polling rank waits for a CPU before
    it sees its message, and every wait comes out longer or shorter by
    tens of ms (measured: 0.32 s for 0.3 s, 1.39 s for 1.5 s).  A sleeping
    rank is woken within 1-4 ms even then; at nice -10 the polling ones
    get the CPU first too."""
    if not _PRIORITY:
        try:
            p = subprocess.run(["nice", "-n", "-19", "true"], capture_output=True, text=True, timeout=30)
            _PRIORITY.append(["nice", "-n", "-19"] if p.returncode == 0 and not p.stderr else [])
        except (OSError, subprocess.SubprocessError):
            _PRIORITY.append([])
    return _PRIORITY[0]


def launch(mpiexec, np_):
    """The start of an mpiexec command line for `np_` ranks, more than the
    cores allowed: Open MPI needs --oversubscribe (MPICH's Hydra
    oversubscribes by default and refuses the option).  At a raised
    priority where allowed (priority())."""
    if mpiexec not in _OPEN_MPI:
        try:
            out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30,
                                 env=mpi_env()).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        _OPEN_MPI[mpiexec] = "Open MPI" in out or "OpenRTE" in out
    return priority() + [mpiexec] + (["--oversubscribe"] if _OPEN_MPI[mpiexec] else []) + ["-np", str(np_)]


def sanitizer_runtimes(lib):
    """The sanitizer runtimes a sanitized build of `lib` links
    (-DONLINEWS_SANITIZE): preloaded into a program built without them,
    they must come first ("ASan runtime does not come first in initial
    library list")."""
    try:
        out = subprocess.run(["ldd", lib], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [m.group(1) for m in re.finditer(r"lib(?:asan|tsan|ubsan)\.so\S*\s+=>\s+(\S+)", out)]


def preload(mpiexec, lib):
    """mpiexec options that preload `lib` into every rank (after launch())."""
    libs = ":".join(sanitizer_runtimes(lib) + [lib])
    return ["-x", "LD_PRELOAD=" + libs] if _OPEN_MPI.get(mpiexec, True) else ["-genv", "LD_PRELOAD", libs]


def mpi_env(**extra):
    """Environment for a run under mpirun: root and oversubscription allowed,
    the caller's own ONLINEWS_* settings removed (a developer's
    ONLINEWS_ANALYSES must not change what a test sees), then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONLINEWS_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    env.update(extra)
    return env


def script_args():
    """The arguments every scenario script takes (CMake passes them)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--untimed", action="store_true", help=UNTIMED_HELP)
    return ap


UNTIMED_HELP = ("print the checks of the program's own sleep-timed values, do not check them "
                "(CMake passes it against MPICH and in sanitized builds: tests/mpi/CMakeLists.txt)")


class Checks:
    """Prints each check as it runs and keeps the failed ones.  A check of
    a value the program's sleeps set (timed=True) is only printed when
    `untimed` (--untimed)."""

    def __init__(self, untimed=False):
        self.failures = []
        self.untimed = untimed

    def __call__(self, ok, what, timed=False):
        if timed and self.untimed:
            print(f"  --   {what} (a time: not checked, --untimed)", flush=True)
            return
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.failures.append(what)


def script_arguments(exe_help, lib=False):
    """The command line of the test scripts that start their programs
    themselves: --exe, --lib (a libonlinews.so to preload, if `lib`),
    --workdir, --mpiexec; callers add their own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True, help=exe_help)
    if lib:
        ap.add_argument("--lib", required=True, help="libonlinews.so to preload")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--untimed", action="store_true", help=UNTIMED_HELP)
    return ap


def fresh_workdir(args):
    """Absolute --exe (and --lib) paths, and --workdir emptied: an absolute
    Path (the scripts run their programs in it and name files below it)."""
    args.exe = str(Path(args.exe).resolve())
    if getattr(args, "lib", None):
        args.lib = str(Path(args.lib).resolve())
    work = Path(args.workdir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return work


def preloaded_script(exe_help, attempt, passed, attempts=3):
    """main() of a script that runs an unmodified program under
    LD_PRELOAD=--lib: `attempt(args, work, k)` until it passes (at most
    `attempts` times); the exit code."""
    args = script_arguments(exe_help, lib=True).parse_args()
    work = fresh_workdir(args)
    return verdict(until_passed(attempts, lambda k: attempt(args, work, k)), passed)


def verdict(failures, passed):
    """Prints the failures, or `passed`; the exit code."""
    if failures:
        print("FAILED:", *failures, sep="\n  ")
        return 1
    print(passed)
    return 0


def near(failures, what, got, want, tol):
    """Appends a failure unless |got - want| <= tol (for scripts that check
    values themselves)."""
    if abs(got - want) > tol:
        failures.append(f"{what}: {got:.3f}, expected {want} ± {tol}")


def until_passed(attempts, attempt):
    """Runs `attempt(k)` (k = 1, 2, ...; returns its failures) until one
    passes, at most `attempts` times; returns the last failures.

    For checks that compare timed executions (sleeps, two runs of one
    program): a loaded machine shifts the times -- a rank descheduled after
    a sleep arrives late, so its partners wait longer and it waits less
    itself; one of two runs starts up slower -- and shows in some attempts,
    while an analysis error shows in every one.  Every failed attempt is
    printed."""
    failures = []
    for k in range(1, attempts + 1):
        failures = attempt(k)
        if not failures:
            return []
        if k < attempts:
            print(f"attempt {k} of {attempts} failed ({len(failures)} check(s)); the machine may be loaded: again",
                  flush=True)
    return failures


def parse_expect(path):
    spec = {"np": 4, "env": {}, "args": [], "exit": 0, "stderr": [], "no_stderr": [], "output": None,
            "pre_create": [], "checks": [], "timeout": 120, "stderr_count": [], "unchanged": [], "attempts": 1,
            "same_as_plain": False, "needs_plain": False}
    for no, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = shlex.split(line)
        key, rest = words[0], words[1:]
        if key == "np":
            spec["np"] = int(rest[0])
        elif key == "env":
            for kv in rest:
                k, _, v = kv.partition("=")
                spec["env"][k] = v
        elif key == "args":
            spec["args"] = rest
        elif key == "exit":
            spec["exit"] = int(rest[0])
        elif key == "timeout":
            spec["timeout"] = int(rest[0])
        elif key == "attempts":
            spec["attempts"] = int(rest[0])
        elif key == "stderr":
            spec["stderr"].append(" ".join(rest))
        elif key == "stderr-count":
            spec["stderr_count"].append((int(rest[0]), " ".join(rest[1:])))
        elif key == "unchanged":
            spec["unchanged"].append(rest[0])
        elif key == "no-stderr":
            spec["no_stderr"].append(" ".join(rest))
        elif key == "output":
            spec["output"] = rest[0]
        elif key == "pre-create":
            spec["pre_create"].append(rest[0])
        elif key in ("same-as-plain", "needs-plain"):
            spec[key.replace("-", "_")] = True
        elif key in ("expect", "atleast", "atmost", "attr", "pvar", "ratio-atleast", "absent", "relate"):
            spec["checks"].append((no, key, rest))
        else:
            sys.exit(f"{path}:{no}: unknown directive '{key}'")
    if spec["output"] == "none" and spec["checks"]:
        sys.exit(f"{path}: 'output none' leaves nothing for its expect/attr lines to check")
    return spec


def metric_query(result, rest):
    """METRIC [rank=R] [region=NAME] [site=FUNCTION:LINE] [excl] [app] -> value,
    description.  METRIC `processing`: time minus the MPI wait states, the
    processing time T of the critical-path indicators
    (postpass/critical_path.cpp: OpenMP waits count as processing there;
    T is also clamped at 0 per call path and location, which this sum is
    not).  FUNCTION: the caller's name as the file stores it (demangled,
    with its parameter types in C++; quote it if it has spaces)."""
    metric, kw, excl, app, nums = rest[0], {}, False, False, []
    for w in rest[1:]:
        if "=" in w:
            k, v = w.split("=", 1)
            kw[k] = v
        elif w == "excl":
            excl = True
        elif w == "app":
            app = True
        else:
            nums.append(float(w))
    for k in ("region", "under"):  # a renamed or lost region must not read as zero
        if k in kw and not result.callpaths_of_region(kw[k]):
            raise LookupError(f"{k}={kw[k]}: no call path has this region")
    site = None
    if "site" in kw:  # an MPI call made at FUNCTION:LINE
        m = re.fullmatch(r"(.+):(\d+)", kw["site"])
        if m is None:
            raise LookupError(f"site={kw['site']}: not FUNCTION:LINE")
        site = (m.group(1), int(m.group(2)))
        if not result.callpaths_at(*site):
            raise LookupError(f"site={kw['site']}: no MPI call was made there")
    ranks = [int(x) for x in kw["rank"].split(",")] if "rank" in kw else [None]
    thread = int(kw["thread"]) if "thread" in kw else None

    def one(name, rank):
        return result.value(name, rank=rank, region=kw.get("region"), exclusive=excl, under=kw.get("under"),
                            app=app, thread=thread, site=site)
    if metric == "processing":
        if excl:
            raise LookupError("processing excl: time minus waits of one call path alone means nothing")
        mpi_waits = [w for w in result.wait_states if not w.startswith("omp_")]
        value = sum(one("time", rank) - sum(one(w, rank) for w in mpi_waits) for rank in ranks)
    else:
        value = sum(one(metric, rank) for rank in ranks)
    rank = kw.get("rank")
    where = f"{metric}{'(excl)' if excl else ''}{'(app)' if app else ''} rank={'all' if rank is None else rank}" + \
            (f" thread={thread}" if thread is not None else "") + \
            (f" region={kw['region']}" if "region" in kw else "") + (f" under={kw['under']}" if "under" in kw else "") + \
            (f" site={kw['site']}" if "site" in kw else "")
    return value, where, nums


def expected_clock(setting=None):
    """The `clock` root attribute a run on this machine writes
    (runtime/clock_choice.cpp): the ranks run here, so /sys and /proc are
    theirs.  `setting`: the run's ONLINEWS_CLOCK (None: auto)."""
    try:
        source = Path("/sys/devices/system/clocksource/clocksource0/current_clocksource").read_text().split()[0]
    except (OSError, IndexError):
        source = "unknown"
    interpolated = ", interpolated to CLOCK_MONOTONIC at each epoch"
    if os.uname().machine not in ("x86_64", "i386", "i686"):
        return "CLOCK_MONOTONIC"
    if setting == "monotonic":
        return "CLOCK_MONOTONIC (ONLINEWS_CLOCK=monotonic)"
    if setting == "tsc":
        return "tsc" + interpolated if source == "tsc" else \
            f"tsc (ONLINEWS_CLOCK=tsc; the kernel's clocksource is {source})" + interpolated
    if source == "tsc":
        return "tsc" + interpolated
    return f"CLOCK_MONOTONIC (the kernel's clocksource is {source}, not tsc)"


def validate(result, clock_error=0.0, clock_setting=None):
    """Checks every file must pass, whatever the scenario.  `clock_error`:
    seconds by which two ranks' corrected clocks may still disagree (skewed
    test runs); every handover of the critical path between ranks may then
    add up to that much, and a handover happens only at an MPI call.
    `clock_setting`: the run's ONLINEWS_CLOCK, if any."""
    problems = []
    a = result.attrs
    if a.get("format") != "onlinews" or int(a.get("format_version", 0)) != 1:
        problems.append("root attributes format/format_version")
    if int(a.get("complete", 0)) != 1:
        problems.append("the file is not marked complete")
    for key in ("tool_version", "command", "ranks", "max_threads", "epochs", "wall_seconds", "dropped_events",
                "clock", "mpi_library", "start_time"):
        if key not in a:
            problems.append(f"missing root attribute {key}")
    want = expected_clock(clock_setting)
    if "clock" in a and str(a["clock"]) != want:
        problems.append(f"root attribute clock is {a['clock']!r}, expected {want!r}")
    ncp, nloc = len(result.cp_region), len(result.loc_rank)
    for m in result.metrics:
        d = result.f["profile/" + m]
        if d.shape != (ncp, nloc):
            problems.append(f"/profile/{m} has shape {d.shape}, expected {(ncp, nloc)}")
        if result.metric_unit[m] == "sec" and d.size and d[:].min() < -1e-6:
            problems.append(f"/profile/{m} has negative exclusive values ({d[:].min():.3g})")
        e = result.f["epochs/" + m]
        if e.shape[0] != int(a["epochs"]):
            problems.append(f"/epochs/{m} has {e.shape[0]} rows for {a['epochs']} epochs")
    if result.f["epochs/table"].shape[0] != int(a["epochs"]):
        problems.append("/epochs/table rows != epochs attribute")
    # The per-epoch rows add up to the profile.
    for m in ("time", "mpi_latesender", "mpi_barrier_wait", "visits"):
        tot = float(result.f["profile/" + m][:].sum())
        ep = float(result.f["epochs/" + m][:].sum())
        if not math.isclose(tot, ep, rel_tol=1e-6, abs_tol=1e-9):
            problems.append(f"/epochs/{m} sums to {ep}, /profile/{m} to {tot}")
    # Root-cause invariants (seed 000 / seed 003).
    waits = ["mpi_latesender", "mpi_latereceiver", "mpi_barrier_wait", "mpi_barrier_completion", "mpi_wait_nxn",
             "mpi_nxn_completion", "mpi_latebroadcast", "mpi_earlyreduce", "mpi_earlyscan", "mpi_init_completion",
             "mpi_finalize_wait", "mpi_rma_wait_at_create", "mpi_rma_wait_at_free", "mpi_rma_wait_at_fence",
             "mpi_rma_sync_late_post", "mpi_rma_early_wait", "mpi_rma_comm_late_post", "mpi_rma_sync_lock_competition",
             "mpi_rma_comm_lock_competition", "mpi_rma_wait_for_progress"]
    # Waits at nonblocking and neighborhood collectives: pairs with a start.
    nb_pairs = ["mpi_barrier_wait_nb", "mpi_wait_nxn_nb", "mpi_latebroadcast_nb", "mpi_earlyreduce_nb",
                "mpi_wait_neighbor_nb", "mpi_wait_neighbor"]
    waits += nb_pairs
    rma_pairs = ["mpi_rma_sync_late_post", "mpi_rma_comm_late_post", "mpi_rma_early_wait",
                 "mpi_rma_sync_lock_competition", "mpi_rma_comm_lock_competition"] + nb_pairs
    explainable = ["mpi_latesender", "mpi_latereceiver", "mpi_barrier_wait", "mpi_wait_nxn", "mpi_latebroadcast",
                   "mpi_earlyreduce", "mpi_rma_wait_at_create", "mpi_rma_wait_at_free",
                   "mpi_rma_wait_at_fence"] + rma_pairs
    # The path never holds time spent waiting *for another rank*; completion
    # time (a rank finishing a collective after another left it) has no
    # cause elsewhere and stays on the path (docs/analyses.md).  Wait for
    # Progress is no synchronization point of the backward replay (the
    # target did not call anything to wait for), and an RMA wait whose
    # partner call lies in another epoch's window is found but not traced
    # (unexplained_rma_waits): the path passes through those.
    gats = {"mpi_rma_wait_for_progress"}
    if int(a.get("unexplained_rma_waits", 0)) > 0:
        gats.update(rma_pairs)
    waiting = [m for m in waits if not m.endswith("_completion") and m not in gats]
    path = result.inclusive("critical_path")
    slack = 0.0
    if clock_error > 0:
        mpi = [cp for cp, r in enumerate(result.cp_region) if result.region_names[r].startswith("MPI_")]
        visits = result.inclusive("visits")[mpi, :].sum(axis=0)
        slack = clock_error * float(visits.max()) if visits.size else 0.0
    if float(path.sum()) > float(a["wall_seconds"]) * 1.001 + 1e-3 + slack:
        problems.append(f"critical path {path.sum():.4f} s is longer than the run ({a['wall_seconds']:.4f} s)")
    processing = result.inclusive("time") - sum(result.inclusive(m) for m in waiting)
    over = path - processing
    # (Waits below ONLINEWS_MIN_TRACED_WAIT are not traced: the path passes
    # through them, docs/analyses.md.)
    untraced = float(a["untraced_wait_seconds"]) if "untraced_wait_seconds" in a else 0.0
    # (Nor where a wait across a requested cut left the path to the sender
    # from its send to the cut: approximate_path_seconds, docs/design.md.)
    untraced += float(a.get("approximate_path_seconds", 0.0))
    # OpenMP barriers: OMPT reports the last thread's wait too, from its
    # arrival until the release reaches it (barrier completion, which the
    # path passes through; docs/analyses.md).  Descheduled, that takes
    # milliseconds (3.8 ms at an implicit barrier once against MPICH, whose
    # ranks poll for the 2 cores): 2 ms more per visit of such a call path.
    omp_wait = [cp for cp, r in enumerate(result.cp_region) if result.region_names[r] == "!$omp wait"]
    if omp_wait and over.size:
        over[omp_wait, :] -= 2e-3 * result.inclusive("visits")[omp_wait, :]
    if over.size and over.max() > 2e-3 + untraced:
        cp, loc = divmod(int(over.argmax()), over.shape[1])
        problems.append(f"the critical path contains waiting: {path[cp, loc]:.4f} s on the path but only "
                        f"{processing[cp, loc]:.4f} s of processing at {result.callpath_name(cp)} (location {loc})")
    delay = float(result.inclusive("delay_mpi").sum())
    waited = sum(float(result.inclusive(m).sum()) for m in explainable)
    if delay > waited + 1e-3:
        problems.append(f"delay costs ({delay:.4f} s) exceed the waiting they explain ({waited:.4f} s)")
    # Idle threads in the masters' serial code (limited parallelism has no
    # delay costs): short- plus long-term costs explain at most all of it.
    idle_cost = float(result.inclusive("delay_ompidle_aggregate").sum())
    idle = float(result.inclusive("omp_idle_threads").sum() - result.inclusive("omp_limited_parallelism").sum())
    if idle_cost > idle + 1e-3:
        problems.append(f"idle-thread delay costs ({idle_cost:.4f} s) exceed the idleness they explain ({idle:.4f} s)")
    # OpenMP barriers: at most their waiting.
    barrier_cost = float(result.inclusive("delay_ompbarrier_aggregate").sum())
    barrier_wait = float(result.inclusive("omp_ebarrier_wait").sum() + result.inclusive("omp_ibarrier_wait").sum())
    if barrier_cost > barrier_wait + 1e-3:
        problems.append(f"OpenMP barrier delay costs ({barrier_cost:.4f} s) exceed the waiting ({barrier_wait:.4f} s)")
    other = float(result.inclusive("delay").sum()) - delay - idle_cost - barrier_cost
    if abs(other) > 1e-6:
        problems.append(f"delay costs outside MPI, OpenMP barriers and idle threads: {other:.4f} s")
    # One host, one clock: no receive may appear before its send.
    if int(a.get("clock_domains", 1)) == 1 and int(a.get("clock_violations", 0)) != 0:
        problems.append(f"{a['clock_violations']} clock-condition violations on a single host")
    if not os.path.exists(str(Path(result.path).with_suffix(".xdmf"))):
        problems.append("no .xdmf file next to the HDF5 file")
    return problems


def main():
    ap = script_args()
    ap.add_argument("--name", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--preload", help="run the (unmodified) program with this libonlinews.so in LD_PRELOAD")
    ap.add_argument("--plain", help="the program built without onlinews (same-as-plain, needs-plain)")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="one more environment variable of the run (after the expect file's)")
    args = ap.parse_args()  # (--untimed: the checks of time metrics, unit sec)
    spec = parse_expect(args.expect)
    spec["env"].update(dict(e.split("=", 1) for e in args.env))
    plain = None
    if spec["same_as_plain"] or spec["needs_plain"]:
        if not args.plain:
            sys.exit(f"{args.expect}: same-as-plain/needs-plain need --plain")
        plain = run_plain(args, spec)
        if spec["needs_plain"] and plain.returncode != 0:
            print(f"SKIP: without onlinews the program fails too (exit code {plain.returncode}): this MPI "
                  "library cannot run it")
            return 77

    def attempt(_k):
        work = Path(args.workdir)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for f in spec["pre_create"]:
            (work / f).write_text("existing file that must not be overwritten\n")
        env = mpi_env(ONLINEWS_OUTPUT=str(work / f"{args.name}.h5"))
        for k, v in spec["env"].items():
            env[k] = v.replace("@WORKDIR@", str(work))
        cmd = launch(args.mpiexec, spec["np"])
        cmd += preload(args.mpiexec, str(Path(args.preload).resolve())) if args.preload else []
        cmd += [args.exe] + spec["args"]
        print("$", " ".join(cmd), flush=True)
        try:
            p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=spec["timeout"])
        except subprocess.TimeoutExpired:
            return [f"timed out after {spec['timeout']} s (hang)"]
        sys.stdout.write(p.stdout)
        sys.stdout.write(p.stderr)
        failures = []
        want_exit = plain.returncode if spec["same_as_plain"] else spec["exit"]
        if p.returncode != want_exit:
            failures.append(f"exit code {p.returncode}, expected {want_exit}")
        if spec["same_as_plain"] and sorted(p.stdout.splitlines()) != sorted(plain.stdout.splitlines()):
            failures.append("standard output differs from the run without onlinews")
        for rx in spec["stderr"]:
            if not re.search(rx, p.stderr):
                failures.append(f"stderr does not match /{rx}/")
        for n, text in spec["stderr_count"]:
            got = p.stderr.count(text)
            if got != n:
                failures.append(f"stderr contains '{text}' {got} times, expected {n}")
        for f in spec["unchanged"]:
            if (work / f).read_text() != "existing file that must not be overwritten\n":
                failures.append(f"{f} was modified")
        for rx in spec["no_stderr"]:
            if re.search(rx, p.stderr):
                failures.append(f"stderr matches /{rx}/ but must not")
        out = spec["output"] or f"{args.name}.h5"
        checks = spec["checks"]
        if out == "none":
            leftovers = list(work.glob("*.h5"))
            if leftovers:
                failures.append(f"no output expected, found {leftovers}")
        else:
            path = work / out
            if not path.exists():
                failures.append(f"output file {path} missing")
                checks = []
            else:
                try:
                    result = onlinews_h5.Result(str(path))
                except (OSError, KeyError, ValueError) as e:  # (a job that failed may leave a partial or locked file)
                    failures.append(f"output file {path} unreadable: {e}")
                    return failures
                failures += validate(result, clock_setting=spec["env"].get("ONLINEWS_CLOCK"))
                for no, key, rest in checks:
                    try:
                        ok, line = check(result, key, rest)
                    except LookupError as e:
                        ok, line = False, str(e)
                    if args.untimed and timed_check(result, key, rest):
                        print(f"  --   {line} (a time: not checked, --untimed)")
                        continue
                    print(("  ok   " if ok else "  FAIL ") + line)
                    if not ok:
                        failures.append(f"line {no}: {line}")
        return failures

    failures = until_passed(spec["attempts"], attempt)
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} failure(s)")
    return 0 if not failures else 1


def run_plain(args, spec):
    """Runs --plain (the program without onlinews) as the scenario runs its
    program: same ranks, arguments and environment."""
    work = Path(args.workdir + "_plain")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = mpi_env()
    env.update({k: v.replace("@WORKDIR@", str(work)) for k, v in spec["env"].items() if not k.startswith("ONLINEWS_")})
    cmd = launch(args.mpiexec, spec["np"]) + [args.plain] + spec["args"]
    print("$", " ".join(cmd), "(without onlinews)", flush=True)
    try:
        p = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=spec["timeout"])
    except subprocess.TimeoutExpired:
        sys.exit(f"the program without onlinews timed out after {spec['timeout']} s")
    sys.stdout.write(p.stdout)
    print(f"(without onlinews: exit code {p.returncode})", flush=True)
    return p


def timed_check(result, key, rest):
    """Whether a check line compares a time (a metric in seconds)."""
    return key in ("expect", "atleast", "atmost", "ratio-atleast", "relate") and \
        result.metric_unit.get(rest[0]) == "sec"


def compare(got, op, want):
    try:
        gotv, wantv = float(got), float(want)
    except (TypeError, ValueError):
        gotv, wantv = str(got), want
    return {"==": gotv == wantv, ">=": gotv >= wantv, "<=": gotv <= wantv, ">": gotv > wantv,
            "<": gotv < wantv}[op]


def check(result, key, rest):
    """One expect/atleast/atmost/attr/pvar/ratio-atleast line -> (ok, description)."""
    if key == "attr":
        name, op, want = rest
        got = result.attrs.get(name)
        return compare(got, op, want), f"attr {name} = {got} (want {op} {want})"
    if key == "pvar":
        text, where, which, op, want = rest
        names = str(result.attrs.get("mpi_t_pvars", "")).split(",")
        hits = [i for i, n in enumerate(names) if text in n]
        if len(hits) != 1 or "epochs/mpi_t_pvars" not in result.f:
            return False, f"pvar {text}: sampled variables {names} (want exactly one containing it)"
        values = result.f["epochs/mpi_t_pvars"][:, hits[0], int(where.split("=")[1])]
        got = float(values.max() if which == "max" else values[-1]) if len(values) else None
        return got is not None and compare(got, op, want), f"pvar {names[hits[0]]} {where} {which} = {got} " \
            f"(want {op} {want}; per epoch {list(values)})"
    if key == "absent":  # a region that must not appear in any call path
        found = result.callpaths_of_region(rest[0])
        return not found, f"region {rest[0]}: {len(found)} call paths (want none)"
    if key == "relate":
        return relate(result, rest)
    if key == "ratio-atleast":
        cut = rest.index("/")
        num, wn, _ = metric_query(result, rest[:cut])
        den, wd, nums = metric_query(result, rest[cut + 1:])
        # 0 / 0 says nothing: the numerator must be there (x / 0 is infinite).
        ratio = num / den if den > 0 else float("inf")
        ok = num > 0 and ratio >= nums[0]
        return ok, f"{wn} / {wd}: {num:.4f} / {den:.4f} = {ratio:.3f} (want >= {nums[0]})"
    value, where, nums = metric_query(result, rest)
    if key == "expect":
        want, tol = nums
        return abs(value - want) <= tol, f"{where}: {value:.4f} (want {want} +- {tol})"
    if key == "atleast":
        return value >= nums[0], f"{where}: {value:.4f} (want >= {nums[0]})"
    return value <= nums[0], f"{where}: {value:.4f} (want <= {nums[0]})"

def relate(result, rest):
    """METRIC.. OP TERM {+|- TERM} [+- TOL], OP one of = <= >=, a TERM
    [C *] METRIC [selectors], [C *] spread METRIC [selectors] (max - min over
    ranks) or a number -> (ok, description)."""
    op = next(w for w in rest if w in ("=", "<=", ">="))
    at = rest.index(op)
    end = rest.index("+-") if "+-" in rest else len(rest)
    value, where, _ = metric_query(result, rest[:at])
    want, shown, sign, term = 0.0, [], 1.0, []
    for w in rest[at + 1:end] + ["+"]:
        if w not in ("+", "-"):
            term.append(w)
            continue
        if term:
            scaled = len(term) > 2 and term[1] == "*"
            coef, query = (float(term[0]), term[2:]) if scaled else (1.0, term)
            if len(query) == 1 and re.fullmatch(r"[0-9.]+", query[0]):
                got, what = float(query[0]), "constant"
            elif query[0] == "spread":
                by_rank = [metric_query(result, query[1:] + [f"rank={k}"])[0] for k in range(result.ranks)]
                got, what = max(by_rank) - min(by_rank), "spread over ranks of " + " ".join(query[1:])
            else:
                got, what, _ = metric_query(result, query)
            want += sign * coef * got
            shown.append(f"{'-' if sign < 0 else '+'} {coef:g} x {what} ({got:.4f})")
        term, sign = [], (1.0 if w == "+" else -1.0)
    derivation = f"{want:.4f} = {' '.join(shown)}"
    if op == "=":
        tol = float(rest[end + 1])
        return abs(value - want) <= tol, f"{where}: {value:.4f} (want {derivation} +- {tol})"
    ok = value <= want if op == "<=" else value >= want
    return ok, f"{where}: {value:.4f} (want {op} {derivation})"


if __name__ == "__main__":
    sys.exit(main())
