"""The report's content, computed once from a result file: a dict of plain
values (what --json prints, what the text and the plots render).

Seconds are summed over locations (rank x thread).  "Allocation time" is the
wall time times the number of locations: what the job held, the base of
every percentage."""
import os

import numpy as np

LONGTERM = "_longterm"


def _grid(result):
    """The process grid of the file's views (the ParaView sidecar's: /views
    attributes grid_dims (z, y, x) and cell_of_rank), as dims without the
    unused leading ones and each rank's coordinates; older files: the
    Cartesian topology, or a line of ranks."""
    f = result.f
    if "views/cell_of_rank" in f:
        z, y, x = (int(d) for d in f["views"].attrs["grid_dims"])
        dims = [d for d in (z, y) if d > 1 or (d == y and z > 1)] + [x]
        coords = []
        for c in (int(v) for v in f["views/cell_of_rank"][:]):
            full = [c // (y * x), (c // x) % y, c % x]
            coords.append(full[3 - len(dims):])
        return {"dims": dims, "coords": coords, "source": str(f["views"].attrs["grid_source"])}
    if "topology/dims" in f and "topology/coords" in f:
        dims = [int(x) for x in f["topology/dims"][:]]
        coords = f["topology/coords"][:].reshape(result.ranks, len(dims)).tolist()
        return {"dims": dims, "coords": coords, "source": "MPI_Cart_create"}
    return {"dims": [result.ranks], "coords": [[r] for r in range(result.ranks)], "source": "line of ranks"}


def _top(values, n):
    """The n largest positive entries of a 1-D array: [(index, value)]."""
    order = np.argsort(-values, kind="stable")
    return [(int(i), float(values[i])) for i in order[:n] if values[i] > 0]


def build(result, top=5):
    r = result
    attrs = r.attrs
    nloc = len(r.loc_rank)
    wall = float(attrs.get("wall_seconds", 0.0))
    alloc = wall * nloc
    pct = (lambda v: 100.0 * v / alloc) if alloc > 0 else (lambda v: 0.0)
    out = {
        "file": os.path.abspath(r.path),
        "command": str(attrs.get("command", "")),
        "ranks": r.ranks,
        "max_threads": int(attrs.get("max_threads", 1)),
        "locations": nloc,
        "wall_seconds": wall,
        "allocation_seconds": alloc,
        "complete": bool(int(attrs.get("complete", 1))),
        "grid": _grid(r),
    }

    # Metric tree: every metric with a value, in tree order, with its depth.
    tree = []

    # (Totals: exclusive per metric, inclusive as the sum over its subtree.)
    excl = {name: float(r.exclusive(name).sum()) for name in r.metrics}

    def walk(name, depth):
        inc = sum(excl[m] for m in r.descendants(name))
        if inc == 0 and depth > 0:
            return
        exc = excl[name]
        unit = r.metric_unit[name]
        tree.append({"metric": name, "display": r.metric_display[name], "unit": unit, "depth": depth,
                     "exclusive": exc, "inclusive": inc,
                     "percent": pct(inc) if unit == "sec" else None})
        for c in r.children(name):
            walk(c, depth + 1)
    for i, name in enumerate(r.metrics):
        if r.metric_parent[i] < 0:
            walk(name, 0)
    out["metric_tree"] = tree

    def callpaths_of(values, n):
        return [{"callpath": r.callpath_name(cp), "seconds": v} for cp, v in _top(values, n)]

    def ranks_of(values, n):
        return [{"rank": k, "seconds": v} for k, v in _top(values, n)]

    # Wait states, largest first.
    waits = []
    for name in r.wait_states:
        a = r.inclusive(name)
        total = float(a.sum())
        if total <= 0:
            continue
        waits.append({"metric": name, "display": r.metric_display[name], "seconds": total, "percent": pct(total),
                      "top_callpaths": callpaths_of(a.sum(axis=1), top),
                      "top_ranks": ranks_of(r.rank_sums(a), top)})
    waits.sort(key=lambda w: -w["seconds"])
    out["wait_states"] = waits

    # Root causes: delay costs by call path, short- and long-term.
    longterm = [n for n in r.metrics if n.startswith("delay") and n.endswith(LONGTERM)]
    delay_at = r.inclusive("delay")
    delay = delay_at.sum(axis=1)
    late = sum((r.inclusive(n).sum(axis=1) for n in longterm), np.zeros_like(delay))
    causes = []
    for cp, v in _top(delay, top * 2):
        causes.append({"callpath": r.callpath_name(cp), "seconds": v, "short_term": float(v - late[cp]),
                       "long_term": float(late[cp]),
                       "top_ranks": ranks_of(r.rank_sums(delay_at[cp]), 3)})
    out["root_causes"] = {"seconds": float(delay.sum()), "long_term_seconds": float(late.sum()), "top": causes}

    # Critical path: its profile by call path, and the imbalance on it.
    cpath = r.inclusive("critical_path").sum(axis=1)
    imb = r.inclusive("critical_path_imbalance").sum(axis=1)
    out["critical_path"] = {
        "seconds": float(cpath.sum()), "imbalance_seconds": float(imb.sum()),
        "profile": [{"callpath": r.callpath_name(cp), "seconds": v, "imbalance": float(imb[cp])}
                    for cp, v in _top(cpath, top * 2)],
    }

    out["sampling"] = sampling(r, top)

    # Epochs and what onlinews cost.
    ep = r.f["epochs/table"][:] if "epochs/table" in r.f else []
    lengths = [float(e["t_end"] - e["t_begin"]) for e in ep]
    cuts = {"synchronizing": 0, "requested": 0, "final": 0}
    for e in ep:
        for bit, kind in ((1, "synchronizing"), (2, "requested"), (4, "final")):
            cuts[kind] += 1 if int(e["cut"]) & bit else 0
    setup_cps = [cp for cp in range(len(r.cp_region)) if r.region_names[r.cp_region[cp]] == "onlinews_setup"]
    over = r.inclusive("onlinews_overhead")
    setup = float(over[setup_cps, :].sum()) if setup_cps else 0.0
    out["epochs"] = {
        "count": len(ep), "mean_seconds": float(np.mean(lengths)) if lengths else 0.0,
        "max_seconds": max(lengths) if lengths else 0.0,
        "events": int(sum(int(e["events"]) for e in ep)),
        "analysis_seconds": float(sum(float(e["analysis_seconds"]) for e in ep)),
        "cuts": cuts,
    }
    out["overhead"] = {"seconds": float(over.sum()), "percent": pct(float(over.sum())), "setup_seconds": setup,
                       "recurring_seconds": float(over.sum()) - setup}
    out["warnings"] = warnings(attrs, out)
    return out


def sampling(r, top):
    """ONLINEWS_SAMPLING: computation, delay costs and critical path by
    sampled function (regions of kind "sampled", summed over the call paths
    they appear in), or None without sampling."""
    hz = int(r.attrs.get("sampling_hz", 0) or 0)
    if hz <= 0:
        return None
    comp = r.inclusive("comp").sum(axis=1)
    delay = r.inclusive("delay").sum(axis=1)
    cpath = r.inclusive("critical_path").sum(axis=1)
    functions = {}
    for cp, region in enumerate(r.cp_region):
        if r.region_kinds[region] != "sampled":
            continue
        f = functions.setdefault(r.region_names[region], [0.0, 0.0, 0.0])
        f[0] += float(comp[cp])
        f[1] += float(delay[cp])
        f[2] += float(cpath[cp])
    named = sum(v[0] for v in functions.values())
    rows = sorted(functions.items(), key=lambda kv: -kv[1][0])[:top * 2]
    return {
        "hz": hz, "samples": int(r.attrs.get("samples_placed", 0)),
        "samples_outside": int(r.attrs.get("samples_outside", 0)),
        "samples_lost": int(r.attrs.get("samples_lost", 0)) + int(r.attrs.get("samples_late", 0)),
        "comp_seconds": float(comp.sum()), "named_seconds": named,
        "functions": [{"function": name, "comp": v[0], "delay": v[1], "critical_path": v[2]} for name, v in rows],
    }


# (attribute, message): a warning when the attribute is > 0.
WARNINGS = [
    ("dropped_events", "{n} events were dropped (full buffers): raise ONLINEWS_BUFFER"),
    ("time_only_epochs", "{n} epoch(s) analyzed for time only (events dropped): wait states there are missing"),
    ("truncated_intervals", "{n} delay-cost interval(s) cut short at a window analyzed for time only"),
    ("unmatched_receives", "{n} receive(s) without a matching send"),
    ("other_thread_calls", "{n} collective/RMA/communicator call(s) of other threads (MPI_THREAD_MULTIPLE) "
                           "recorded as time only"),
    ("untracked_calls", "{n} call(s) on communicators onlinews does not track (intercommunicators, or made by "
                        "calls it does not see) recorded as time only"),
    ("split_collectives", "{n} collective instance(s) split by a requested cut: not analyzed"),
    ("rma_sync_errors", "{n} erroneous RMA synchronization call(s) left out"),
    ("ambiguous_messages", "{n} message(s) of overlapping threads matched but not analyzed"),
    ("omp_nested_teams", "{n} nested OpenMP team(s): time recorded, teams not analyzed"),
    ("guessed_critical_paths", "{n} window(s) whose critical path end was guessed"),
    ("unreceived_probes", "{n} probe(s) without their receive (not analyzed)"),
    ("crossing_sync_sends", "{n} synchronizing message(s) across a cut with an incomplete Late Receiver analysis"),
    ("clock_violations", "{n} receive(s)/probe(s) found before their send (clock condition)"),
    ("samples_lost", "{n} sample(s) lost in full sample rings (ONLINEWS_SAMPLING above what a drain takes)"),
    ("sampling_failed_threads", "{n} thread(s) without a sampling timer (timer_create failed)"),
]


def warnings(attrs, out):
    found = []
    if not out["complete"]:
        found.append("the file is incomplete (the job ended before MPI_Finalize wrote it): finished epochs only")
    for attr, text in WARNINGS:
        n = int(attrs.get(attr, 0) or 0)
        if n > 0:
            found.append(text.format(n=n))
    return found
