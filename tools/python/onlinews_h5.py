"""Reading onlinews result files (format version 1) with h5py.

Needs Debian's h5py (run with /usr/bin/python3).  The file stores *exclusive*
values along both the metric tree and the call tree; the helpers here give
the natural quantities: a metric including its sub-metrics, summed over call
paths, per rank.

    import onlinews_h5 as ow
    r = ow.Result("run.h5")
    r.value("mpi_latesender", rank=1, region="MPI_Recv")   # seconds
    r.per_rank("mpi_latesender")                            # numpy array [ranks]
"""
import os

import h5py
import numpy as np


def _s(x):
    return x.decode() if isinstance(x, (bytes, np.bytes_)) else str(x)


class Result:
    def __init__(self, path):
        self.path = path
        self.f = h5py.File(path, "r")
        try:
            self._load(self.f)
        except Exception:  # (a partial file: do not keep it open, and so locked)
            self.f.close()
            raise

    def _load(self, f):
        self.attrs = {k: (_s(v) if isinstance(v, (bytes, np.bytes_, str)) else v) for k, v in f.attrs.items()}
        m = f["definitions/metrics"][:]
        self.metrics = [_s(x) for x in m["name"]]
        self.metric_parent = [int(x) for x in m["parent"]]
        self.metric_unit = {self.metrics[i]: _s(u) for i, u in enumerate(m["unit"])}
        self.metric_display = {self.metrics[i]: _s(d) for i, d in enumerate(m["display"])}
        # The wait-state metrics, each waiting second in one of them (as the
        # summary lists them).
        self.wait_states = [w for w in str(self.attrs.get("wait_states", "")).split(",") if w in self.metric_unit]
        reg = f["definitions/regions"][:]
        self.region_names = [_s(x) for x in reg["name"]]
        self.region_kinds = [_s(x) for x in reg["kind"]]
        cp = f["definitions/callpaths"][:]
        self.cp_parent = [int(x) for x in cp["parent"]]
        self.cp_region = [int(x) for x in cp["region"]]
        # An MPI call's call site (docs/output.md; -1: none).
        self.cp_site = [int(x) for x in cp["callsite"]] if "callsite" in cp.dtype.names else [-1] * len(cp)
        sites = f["definitions/callsites"][:] if "definitions/callsites" in f else []
        self.sites = [(_s(x["function"]), _s(x["file"]), int(x["line"])) for x in sites]
        loc = f["definitions/locations"][:]
        self.loc_rank = np.array([int(x) for x in loc["rank"]])
        self.loc_thread = np.array([int(x) for x in loc["thread"]])
        self.ranks = int(self.attrs.get("ranks", self.loc_rank.max() + 1 if len(self.loc_rank) else 0))
        self._inclusive, self._exclusive = {}, {}

    def close(self):
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- metric tree -----------------------------------------------------
    def descendants(self, metric):
        i = self.metrics.index(metric)
        out, todo = [], [i]
        while todo:
            j = todo.pop()
            out.append(j)
            todo += [k for k, p in enumerate(self.metric_parent) if p == j]
        return [self.metrics[k] for k in out]

    def exclusive(self, metric):
        """[callpaths, locations] as stored (read once and kept: do not
        modify it)."""
        if metric not in self._exclusive:
            self._exclusive[metric] = self.f["profile/" + metric][:]
        return self._exclusive[metric]

    def children(self, metric):
        """The metric's direct sub-metrics, in tree order."""
        i = self.metrics.index(metric)
        return [m for m, p in zip(self.metrics, self.metric_parent) if p == i]

    def inclusive(self, metric):
        """[callpaths, locations]: the metric including all its sub-metrics
        (read once per metric and kept)."""
        if metric not in self._inclusive:
            self._inclusive[metric] = sum(self.exclusive(m) for m in self.descendants(metric))
        return self._inclusive[metric].copy()  # callers may modify theirs

    # --- call paths ------------------------------------------------------
    def site_name(self, site):
        """"function (file.c:line)", or the function alone without debug
        information."""
        function, file, line = self.sites[site]
        return f"{function} ({os.path.basename(file)}:{line})" if file else function

    def callpath_name(self, cp):
        names = []
        while cp >= 0:
            name = self.region_names[self.cp_region[cp]]
            if self.cp_site[cp] >= 0:
                name += " @ " + self.site_name(self.cp_site[cp])
            names.append(name)
            cp = self.cp_parent[cp]
        return " > ".join(reversed(names))

    def callpaths_at(self, function=None, line=None):
        """Call paths of MPI calls made at a call site in `function` (and on
        `line`, if given)."""
        return [cp for cp, st in enumerate(self.cp_site) if st >= 0 and
                (function is None or self.sites[st][0] == function) and (line is None or self.sites[st][2] == line)]

    def callpaths_of_region(self, region):
        return [cp for cp, r in enumerate(self.cp_region) if self.region_names[r] == region]

    def callpaths_under(self, region):
        """Call paths that have `region` on their path (itself included)."""
        out = []
        for cp in range(len(self.cp_region)):
            c = cp
            while c >= 0:
                if self.region_names[self.cp_region[c]] == region:
                    out.append(cp)
                    break
                c = self.cp_parent[c]
        return out

    # --- values ----------------------------------------------------------
    def value(self, metric, rank=None, region=None, exclusive=False, under=None, app=False, thread=None,
              site=None):
        """Sum of a metric over call paths (those whose last region is
        `region` and that lie below region `under`, if given; with `app`,
        only the application's: no tool region such as onlinews_analysis on
        the path) and over the locations of `rank` (all, if None), only its
        thread `thread` if given; `site`: (function, line) or a function
        name, only MPI calls made there."""
        a = self.exclusive(metric) if exclusive else self.inclusive(metric)
        cps = set(range(a.shape[0]))
        if region is not None:
            cps &= set(self.callpaths_of_region(region))
        if under is not None:
            cps &= set(self.callpaths_under(under))
        if site is not None:
            cps &= set(self.callpaths_at(*site) if isinstance(site, tuple) else self.callpaths_at(site))
        if app:
            for name in {n for n, k in zip(self.region_names, self.region_kinds) if k == "tool"}:
                cps -= set(self.callpaths_under(name))
        a = a[sorted(cps), :]
        cols = np.ones(len(self.loc_rank), dtype=bool)
        if rank is not None:
            cols &= self.loc_rank == rank
        if thread is not None:
            cols &= self.loc_thread == thread
        return float(a[:, cols].sum())

    def per_rank(self, metric, region=None, exclusive=False):
        """numpy array over ranks of value(metric, rank, region)."""
        a = self.exclusive(metric) if exclusive else self.inclusive(metric)
        if region is not None:
            a = a[sorted(self.callpaths_of_region(region)), :]
        return self.rank_sums(a)

    def rank_sums(self, a):
        """numpy array over ranks: a [call paths, locations] array (or one
        row of it) summed over each rank's locations."""
        by_location = a.sum(axis=0) if a.ndim == 2 else a
        return np.array([float(by_location[self.loc_rank == r].sum()) for r in range(self.ranks)])

    def epoch_totals(self, metric):
        """[epochs] sum over locations of the metric including sub-metrics.
        (The table's rows are the finished epochs: in the file of a job
        killed during an append, a metric may hold one row more.)"""
        n = len(self.f["epochs/table"]) if "epochs/table" in self.f else 0
        return sum(self.f["epochs/" + m][:n] for m in self.descendants(metric)).sum(axis=1)
