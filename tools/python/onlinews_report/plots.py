"""--plot DIR: PNGs of a result file (matplotlib, headless)."""
import os

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _short(callpath, width=60):
    """The end of a long call path, which says the most."""
    return callpath if len(callpath) <= width else "..." + callpath[-(width - 3):]


def wait_states_over_time(result, rep, path):
    """Each wait state's seconds per epoch (over all locations), at the
    epoch's end."""
    table = result.f["epochs/table"][:]
    t_end = np.array([float(e["t_end"]) for e in table])
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for w in rep["wait_states"][:8]:
        ax.plot(t_end, result.epoch_totals(w["metric"]), marker="o", ms=3, label=w["display"])
    ax.set_xlabel("time since MPI_Init [s] (end of epoch)")
    ax.set_ylabel("waiting in the epoch [s, all locations]")
    ax.set_title("Wait states per epoch")
    if rep["wait_states"]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def heat_map(result, rep, metric, path):
    """Per-rank totals of `metric` on the process grid (2-D: the first two
    dimensions, further ones summed; 1-D: a row)."""
    values = result.per_rank(metric)
    grid = rep["grid"]
    dims, coords = grid["dims"], grid["coords"]
    if len(dims) == 1:
        img = values.reshape(1, -1)
    else:
        img = np.zeros((dims[0], dims[1]))
        for r, c in enumerate(coords):
            img[c[0], c[1]] += values[r]
    width = min(12, max(6, 2 + 0.6 * img.shape[1]))
    fig, ax = plt.subplots(figsize=(width, min(10, max(3.5, 1.6 + 0.6 * img.shape[0]))))
    im = ax.imshow(img, cmap="viridis", aspect="auto")
    fig.colorbar(im, ax=ax, label=f"{result.metric_display[metric]} [{result.metric_unit[metric]}]")
    if img.size <= 256:
        for (i, j), v in np.ndenumerate(img):
            ax.text(j, i, f"{v:.3g}", ha="center", va="center", color="w", fontsize=7)
    ax.set_title(f"{result.metric_display[metric]} per rank ({grid['source']} "
                 f"{' x '.join(map(str, dims))})", fontsize=10)
    if img.shape[1] <= 32:
        ax.set_xticks(range(img.shape[1]))
    if img.shape[0] <= 32:
        ax.set_yticks(range(img.shape[0]))
    ax.set_xlabel("rank" if len(dims) == 1 else "dimension 1")
    if len(dims) > 1:
        ax.set_ylabel("dimension 0")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bars(rows, left, right, labels, title, xlabel, path):
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.4 * max(1, len(rows))))
    y = np.arange(len(rows))[::-1]
    ax.barh(y, [r[left] for r in rows], label=labels[0])
    ax.barh(y, [r[right] for r in rows], left=[r[left] for r in rows], label=labels[1])
    ax.set_yticks(y)
    ax.set_yticklabels([_short(r["callpath"]) for r in rows], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def critical_path(rep, path):
    rows = [{"callpath": c["callpath"], "balanced": c["seconds"] - c["imbalance"], "imbalance": c["imbalance"]}
            for c in rep["critical_path"]["profile"]]
    _bars(rows, "balanced", "imbalance", ("on the path, balanced", "load imbalance"),
          f"Critical path ({rep['critical_path']['seconds']:.3f} s)", "seconds on the critical path", path)


def root_causes(rep, path):
    _bars(rep["root_causes"]["top"], "short_term", "long_term", ("short-term", "long-term"),
          f"Root causes: delay costs ({rep['root_causes']['seconds']:.3f} s)", "delay costs [s]", path)


def write_all(result, rep, out_dir, metric=None):
    os.makedirs(out_dir, exist_ok=True)
    if metric is None:
        metric = rep["wait_states"][0]["metric"] if rep["wait_states"] else "time"
    if metric not in result.metric_unit:
        raise SystemExit(f"onlinews-report: no metric {metric!r} in the file")
    paths = {name: os.path.join(out_dir, name) for name in
             ("wait_states_over_time.png", f"heatmap_{metric}.png", "critical_path.png", "root_causes.png")}
    wait_states_over_time(result, rep, paths["wait_states_over_time.png"])
    heat_map(result, rep, metric, paths[f"heatmap_{metric}.png"])
    critical_path(rep, paths["critical_path.png"])
    root_causes(rep, paths["root_causes.png"])
    return list(paths.values())
