"""``python -m paperlib.study``: run, resume or re-decide the study (its design:
:mod:`paperlib.study.plan.design`), its stages in order: the plan's runs executed (run), their
results read and their curves written (results), the claims decided (decide); ``--summary``
prints the study page's report of them."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time

import torch

from paperlib import exit_status
from paperlib.atomic import WriteError
from paperlib.provenance import code_hash
from paperlib.study.plan import design
from paperlib.study.plan.design import plan, run_target
from paperlib.study.plan.scales import SCALES
from paperlib.study.report.decided import load_claims
from paperlib.study.report.findings import summary_table
from paperlib.study.report.study_paragraph import aperture_paragraph, study_paragraph
from paperlib.study.results.status import status_lines, study_code_line, study_status
from paperlib.study.results.validity import MissingRunsError
from paperlib.study.run.code_versions import record_counts, refuse_other_code
from paperlib.study.run.devices import DeviceUnavailableError
from paperlib.study.run.executors import EXECUTORS, ExecutorUnavailableError, check_reachable
from paperlib.study.run.exports import refresh_items
from paperlib.study.run.parallel import Execution, RunsFailedError, run_study
from paperlib.study.summary import record_invocation, summarise
from paperlib.untrusted import error_text


def _flag(name: str, text: str) -> tuple[tuple[str, ...], dict]:
    """An option that is on when given (``store_true``), as :data:`OPTIONS` lists it."""
    return (name,), {"action": "store_true", "help": text}


# (flags, keyword arguments) of the command's options, in --help's order
OPTIONS: tuple[tuple[tuple[str, ...], dict], ...] = (
    (("--scale",), {"choices": sorted(SCALES), "default": "smoke"}),
    (("--studies",), {"nargs": "+", "choices": ("himo", "argent"), "default": ["himo", "argent"]}),
    (("--workers",), {"type": int, "default": 2, "help": "runs at once, one thread each (default 2)"}),
    (("--threads",), {"type": int, "default": 1, "help": "torch threads of each run (fixed, so "
                      "results do not depend on the machine's core count; default 1)"}),
    (("--executor",), {"choices": sorted(EXECUTORS), "default": "local", "help": "what executes "
                       "the runs: worker processes here (local), or a Ray cluster (ray: pip "
                       'install -e ".[cluster]"; a run asks for its threads in CPUs, two for a '
                       "two-rank run)"}),
    (("--address",), {"default": None, "help": "the Ray cluster to use (HEAD:PORT or "
                      "ray://...); default: start one here"}),
    (("--device",), {"default": "cpu", "help": "cpu (the committed results), cuda or cuda:N: "
                     "where the single-process runs train (refused when torch sees no such "
                     "device)"}),
    (("--runs-per-device",), {"type": int, "default": 1, "help": "with --device cuda: runs "
                              "training on the GPU at once (default 1)"}),
    _flag("--partial", "decide the claims although planned runs are missing (marked partial)"),
    _flag("--decide-only", "re-write curves.json, claims.json and study.json from the finished "
          "runs' results files (train nothing)"),
    _flag("--summary", "print the study page's paragraph and markdown table of the decided "
          "claims (docs/study.md)"),
    _flag("--status", "print, per stage, the runs planned and finished and the core-seconds "
          "spent (train nothing)"),
    _flag("--refresh-items", "recompute finished runs' results files and per-item values from "
          "cached embeddings, then re-decide the claims"),
)  # fmt: skip
# what the command reports as "study: <message>" with exit status 2 (a bug keeps its traceback)
REPORTED = (
    MissingRunsError, RunsFailedError, DeviceUnavailableError, ExecutorUnavailableError,
    ValueError, OSError,
)  # fmt: skip


def parser() -> argparse.ArgumentParser:
    """The command's arguments (:data:`OPTIONS`)."""
    made = argparse.ArgumentParser(
        prog="python -m paperlib.study",
        description=design.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for flags, options in OPTIONS:
        made.add_argument(*flags, **options)
    return made


def refuse_runs_of_other_code(scale: str) -> None:
    """Before the claims are decided from the finished runs of ``scale``: refuse when one was
    trained by code neither the checkout's nor recorded alike (``study.run.code_versions``)."""
    records = [
        done
        for run in plan(scale, searched=False)
        if (done := run_target(run, scale) / "run.done").is_file()
    ]
    refuse_other_code(record_counts(records), f"results/{scale}", code_hash())


def _act(args: argparse.Namespace) -> None:
    """Do what the arguments ask: print the status or summary, re-decide, or run the study."""
    if args.status:
        studies = tuple(args.studies)
        lines = status_lines(*study_status(args.scale, studies), args.workers)
        code = study_code_line(args.scale, studies)
        print("\n".join(lines + ([code] if code else [])))
        return
    if args.summary:
        print_summary(args.scale)
        return
    if args.decide_only or args.refresh_items:
        refuse_runs_of_other_code(args.scale)
    if args.refresh_items:
        count = refresh_items(args.scale)
        print(f"[study {args.scale}] per-item values of {count} runs rewritten")
    if args.decide_only or args.refresh_items:
        summarise(args.scale, plan(args.scale, searched=False), args.partial)
        return
    run_and_summarise(args)


def print_summary(scale: str) -> None:
    """The study page's paragraphs and table of the decided claims (``--summary``)."""
    decided = load_claims(scale)
    counts = {v["code_hash"]: v["runs"] for v in decided.get("code_versions", [])}
    refuse_other_code(counts, f"results/{scale}/claims.json", code_hash())
    print(textwrap.fill(study_paragraph(decided), 100, break_on_hyphens=False) + "\n")
    print(textwrap.fill(aperture_paragraph(decided), 100, break_on_hyphens=False) + "\n")
    print(summary_table(decided))


def run_and_summarise(args: argparse.Namespace) -> None:
    """The stages in order: run (or finish) the study's runs, then write its curves, claims and
    ``study.json`` with how this invocation ran them."""
    if args.executor == "ray" and args.address is not None:
        check_reachable(args.address)  # before any stage, even where none has runs left
    start = time.perf_counter()
    execution = Execution(
        args.workers, args.threads, args.executor, args.address, args.device,
        args.runs_per_device,
    )  # fmt: skip
    studies = tuple(args.studies)
    runs, stages = run_study(args.scale, studies, execution)
    partial = args.partial or set(studies) != {"himo", "argent"}
    summarise(args.scale, runs, partial, stages, execution.threads)
    seconds = round(time.perf_counter() - start)
    record_invocation(args.scale, {**execution.record(), "seconds_this_invocation": seconds})


def main(argv: list[str] | None = None) -> int:
    """The command line (``--help``); exit status 2 on missing or failed runs, bad inputs,
    runs trained by other code, and a device or executor this machine lacks; 4 when a write
    failed (:mod:`paperlib.exit_status`)."""
    args = parser().parse_args(argv)
    torch.set_num_threads(1)
    try:
        _act(args)
    except WriteError as error:  # a full disk or quota, a read-only folder: the file named
        print(f"study: {error_text(error)}", file=sys.stderr)
        return exit_status.STORAGE
    except REPORTED as error:
        print(f"study: {error}", file=sys.stderr)
        return exit_status.REFUSED
    return exit_status.OK
