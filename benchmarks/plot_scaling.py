"""Draw ``benchmarks/scaling.py``'s numbers: PNG plots and the docs page that shows them.

Reads the JSON file that scaling.py wrote and writes, for each section it holds, one figure
into ``--img-dir`` (``batch.png``, ``workers.png``, ``vector.png``) and the page
``--page`` (docs/performance.md), which embeds them with their tables, dated, with the
machine the numbers came from. The page is generated: edit this script, not the page.

    python benchmarks/plot_scaling.py [--data benchmarks/results/scaling.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server or in CI
import matplotlib.pyplot as plt
import matplotlib.ticker

ROOT = Path(__file__).resolve().parent.parent
LIMIT_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.5}
# One colour per contender on every figure, so a line is found again at a glance.
COLORS = {
    "one process": "tab:blue",
    "ParallelEnv": "tab:orange",
    "RayEnv": "tab:green",
    "kernels": "tab:red",
    "plangym": "tab:orange",
    "gymnasium": "tab:purple",
}


def color(name: str) -> str | None:
    return next((c for prefix, c in COLORS.items() if name.startswith(prefix)), None)


def subtitle(data: dict) -> str:
    m = data["machine"]
    text = (
        f"{data['date'][:10]}, {m['cpu']}, {m['cores']} cores, {m['python']}, "
        f"plangym {m['plangym']} ({m['git_commit'][:7]}), "
        f"medians over {data['rounds']} rotated round(s)"
    )
    return text + (" - SMOKE RUN (--quick), not a measurement" if data["quick"] else "")


def rate_label(frameskip: int) -> str:
    if frameskip == 1:
        return "transitions/s (= frames/s)"
    return f"frames/s (transitions/s x {frameskip})"


def draw_series(axis, x: list, block: dict, limit: str | None, key: str = "frames_per_s"):
    for name, values in block["series"].items():
        if name == limit:
            axis.plot(x, values[key], label=block.get("limit_label", name), **LIMIT_STYLE)
        elif len(values[key]) == 1 < len(x):  # measured at one point: a reference level
            axis.axhline(values[key][0], color=color(name), linestyle=":", label=name)
        else:
            axis.plot(x, values[key], marker="o", label=name, color=color(name))


def axes_for(axis, x: list, log: bool) -> None:
    """Log-log for sizes spanning decades, else from zero; the measured x as the ticks."""
    if log:
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
    else:
        axis.set_ylim(bottom=0)
        axis.yaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:,.0f}"))
    axis.set_xticks(x, [f"{v:,}" for v in x])
    axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def finish(figure, data: dict, path: Path, title: str) -> None:
    width = int(figure.get_figwidth() * 14)  # characters of the subtitle's font per line
    figure.suptitle(f"{title}\n{textwrap.fill(subtitle(data), width)}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_batch(data: dict, path: Path) -> None:
    blocks = data["batch"]
    figure, axes = plt.subplots(1, len(blocks), figsize=(6.5 * len(blocks), 5), squeeze=False)
    for axis, (env_id, block) in zip(axes[0], blocks.items(), strict=True):
        draw_series(axis, block["batch_sizes"], block, block["limit"])
        axes_for(axis, block["batch_sizes"], log=True)
        axis.set_xlabel("batch size (distinct states per step_batch call)")
        axis.set_ylabel(rate_label(block["frameskip"]))
        axis.set_title(env_id)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    finish(figure, data, path, "Throughput against batch size")


def plot_workers(data: dict, path: Path) -> None:
    block = data["workers"]
    figure, axis = plt.subplots(figsize=(6.5, 5))
    draw_series(axis, block["workers"], block, block["limit"])
    axes_for(axis, block["workers"], log=False)
    axis.set_xlabel("worker processes")
    axis.set_ylabel(rate_label(block["frameskip"]))
    axis.set_title(f"{block['env']}, {block['batch']} states per call")
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=8)
    finish(figure, data, path, "ParallelEnv throughput against workers")


def plot_vector(data: dict, path: Path) -> None:
    panels = [(f"AsyncVectorEnv, {k}", v) for k, v in data["vector"]["async"].items()]
    panels.append(("make_vec vector_entry_point, CartPole-v1", data["vector"]["entry_point"]))
    figure, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 5), squeeze=False)
    for axis, (title, block) in zip(axes[0], panels, strict=True):
        x = block["num_envs"]
        draw_series(axis, x, block, None, key="transitions_per_s")
        axes_for(axis, x, log=title.startswith("make_vec"))
        axis.set_xlabel("sub-envs")
        axis.set_ylabel("env steps/s (vector steps/s x sub-envs)")
        axis.set_title(title, fontsize=10)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    finish(figure, data, path, "gymnasium's vector API: plangym against gymnasium")


# The page ---------------------------------------------------------------------------------------
def ratio(block: dict, top: str, bottom: str, index: int) -> float:
    """Median over rounds of ``top``'s rate over ``bottom``'s at point ``index``."""
    tops = block["series"][top]["rounds_transitions_per_s"][index]
    bottoms = block["series"][bottom]["rounds_transitions_per_s"][index]
    return statistics.median(a / b for a, b in zip(tops, bottoms, strict=True))


def table(block: dict, x: list, head: str, key: str = "frames_per_s", versus=None) -> list[str]:
    """Rates per point, then each series over ``versus`` (the limit unless named)."""
    limit = block.get("limit")
    versus = versus or limit
    lines = [f"| {head} | " + " | ".join(f"{v:,}" for v in x) + " |"]
    lines.append("|---|" + "---:|" * len(x))
    for name, values in block["series"].items():
        label = f"{name} (dashed)" if name == limit else name
        cells = [f"{v:,.0f}" for v in values[key]]
        cells += ["-"] * (len(x) - len(cells))  # a reference measured at one point only
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for name, values in block["series"].items():
        if versus and name != versus and len(values[key]) == len(x):
            cells = [f"{ratio(block, name, versus, i):.2f}" for i in range(len(x))]
            lines.append(f"| {name} / {versus} | " + " | ".join(cells) + " |")
    return lines


def section(images: dict[str, str], key: str, title: str, text: str) -> list[str]:
    """The opening of the page's section on ``key``: heading, plot, and what it shows."""
    return ["", f"## {title}", "", f"![{key}]({images[key]})", "", text]


def page(data: dict, images: dict[str, str]) -> str:
    m = data["machine"]
    out = [
        "# Performance: how cost grows",
        "",
        "<!-- Generated by benchmarks/plot_scaling.py from benchmarks/scaling.py's JSON. -->",
        "",
        f"Measured on **{data['date'][:10]}** ({data['date']}) on {m['platform']}, "
        f"{m['cpu']}, {m['cores']} cores, {m['python']}, plangym {m['plangym']} at commit "
        f"`{m['git_commit'][:10]}`, gymnasium {m['gymnasium']}, NumPy {m['numpy']}.",
        "",
        "To reproduce, run `make bench` (or `python benchmarks/scaling.py` then "
        "`python benchmarks/plot_scaling.py`): `benchmarks/scaling.py` writes every figure, "
        "round by round, to `benchmarks/results/scaling.json`, and `benchmarks/plot_scaling.py` "
        "draws the plots and writes this page. At each point every contender runs once per "
        "round, in an order rotated from round to round, so a slow spell of the machine hits "
        f"all alike; each figure is the median over {data['rounds']} round(s), each ratio the "
        "median of the per-round ratios. On a shared VM, compare curves measured in the same "
        "run rather than absolute rates across runs.",
    ]
    if data["quick"]:
        out += [
            "",
            "!!! warning",
            "    These numbers come from a smoke run (`--quick`, tiny "
            "sizes): they only show that the pipeline works. Run `make bench` for real ones.",
        ]
    for what, why in data.get("skipped", {}).items():
        out += ["", f"*{what}: not measured ({why}).*"]
    if "batch" in data:
        out += section(
            images,
            "batch",
            "Throughput against batch size",
            "Each `step_batch` call steps a batch of distinct states (states returned, RGB "
            "observations for Atari) in one process, on a [ParallelEnv](parallel.md) of 2 "
            "worker processes and on a [RayEnv](ray.md) of 2 actors; for CartPole also with "
            "the NumPy kernels (`step_batch(records, arrays=True)`). The dashed line is the "
            "raw limit: for Ms. Pac-Man the two bare exact ALE loops of "
            "`benchmarks/parallel.py` (restore, 5 frames, clone without the ALE's "
            "generator as plangym's states, read the screen) on both cores at once; for "
            "CartPole the raw gymnasium loop of `benchmarks/classic_kernels.py` in one "
            "process. Small batches pay the fixed cost of a call (a round trip to the "
            "workers: the parallel envs are measured on their workers, "
            "`inline_small_batches=False`, where by default their cost model steps small "
            "batches in the caller when that is faster); large ones show what each path "
            "costs per transition.",
        )
        for env_id, block in data["batch"].items():
            out += ["", f"**{env_id}**, {rate_label(block['frameskip'])}:", ""]
            out += table(block, block["batch_sizes"], "batch size")
    if "workers" in data:
        block = data["workers"]
        out += section(
            images,
            "workers",
            "Throughput against workers",
            f"A [ParallelEnv](parallel.md) stepping {block['batch']} distinct {block['env']} "
            f"states x {block['frameskip']} frames with 1 and 2 worker processes, next to "
            "the raw limit with as many bare ALE loops running at once (dashed) and one "
            "process stepping the batch itself (dotted). How close the solid line stays to "
            "the dashed one is what the workers, the transfers and the assembly of the "
            "results cost.",
        )
        out += ["", *table(block, block["workers"], "workers")]
    if "vector" in data:
        out += section(
            images,
            "vector",
            "The vector API",
            "Left: `plangym.vector.AsyncVectorEnv` against `gymnasium.vector.AsyncVectorEnv` "
            "with the same env constructors (`shared_memory=True`, next-step autoreset, the "
            "same seeded actions), the protocol of `benchmarks/vector.py`. Right: "
            '`plangym.make_vec("CartPole-v1", n, "vector_entry_point")` (the kernels, '
            "exact per-env generators) against gymnasium's vector CartPole, the protocol of "
            "`benchmarks/classic_vector.py`. See [the vector API](vector.md).",
        )
        for env_id, block in data["vector"]["async"].items():
            out += ["", f"**AsyncVectorEnv, {env_id}**, env steps/s:", ""]
            out += table(block, block["num_envs"], "sub-envs", "transitions_per_s", "gymnasium")
        block = data["vector"]["entry_point"]
        out += ["", "**make_vec vector_entry_point, CartPole-v1**, env steps/s:", ""]
        out += table(
            block, block["num_envs"], "sub-envs", "transitions_per_s", "gymnasium make_vec"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks/results/scaling.json")
    parser.add_argument("--img-dir", type=Path, default=ROOT / "docs/img/scaling")
    parser.add_argument("--page", type=Path, default=ROOT / "docs/performance.md")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    args.img_dir.mkdir(parents=True, exist_ok=True)
    drawers = {"batch": plot_batch, "workers": plot_workers, "vector": plot_vector}
    images = {}
    for section, draw in drawers.items():
        if section in data:
            path = args.img_dir / f"{section}.png"
            draw(data, path)
            images[section] = Path(os.path.relpath(path, args.page.parent)).as_posix()
            print(f"wrote {path}")
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(page(data, images))
    print(f"wrote {args.page}")


if __name__ == "__main__":
    main()
