"""How close a re-run came: every metric of the committed results beside its reproduced value,
each judged against a tolerance derived from measured variation, and every verdict.

    python -m paperlib.study.compare --scale smoke --reproduced build/reproduce/results

The rule (:mod:`~paperlib.study.report.reproduction`): a re-run reproduces the committed study
when every claim's verdict is the same, every effect whose committed adjusted interval excludes
zero keeps its sign, and every metric lies within a tolerance derived from the measured
variation of ``results/<scale>/variation.json``. The report (printed, and written as ``<report>.md``
/ ``.json``) gives per metric the committed and reproduced values, the difference, the tolerance and
where it came from, and the environment differences between the committed run and this one; its two
files are replaced together or not at all. Runs on either side trained by code neither the
checkout's nor recorded alike (``run.code_versions``) are refused: their comparison would not be
this code's. Exit status 1 when anything is out of tolerance or a verdict or sign changed; 2 on
unreadable inputs or runs of other code; 4 when the report cannot be written (a full disk,
a read-only folder), never 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from paperlib import exit_status
from paperlib.atomic import WriteError, atomic_write_set
from paperlib.provenance import code_hash
from paperlib.study.paths import REPO_ROOT
from paperlib.study.report.reproduction import (
    MARGIN,
    CompareInputError,
    check_decided,
    claim_changes,
    compare_runs,
    environments,
    read_variation,
)
from paperlib.study.run.code_versions import record_counts, refuse_other_code
from paperlib.untrusted import error_text


def markdown(rows, changes, env) -> str:
    """The report as markdown: the summary, the claim changes, the environment, every metric."""
    bad = [r for r in rows if not r["within"]]
    lines = [
        f"# Reproduction check: {len(rows) - len(bad)} of {len(rows)} metrics within "
        f"tolerance; {len(changes)} claim change(s)",
        "",
        "## Claim changes",
        "",
        *([f"- {c['claim']}: {c['change']}" for c in changes] or ["- none"]),
        "",
        "## Environment (committed → this run)",
        "",
        *([f"- {k}: {a} → {b}" for k, a, b in env] or ["- the same"]),
        "",
        "## Every metric",
        "",
        "| file | metric | committed | reproduced | difference | tolerance | from | within |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        again = "missing" if r["reproduced"] is None else f"{r['reproduced']:.6g}"
        diff = "–" if r["difference"] is None else f"{r['difference']:+.3g}"
        lines.append(
            f"| {r['file']} | {r['metric']} | {r['committed']:.6g} | {again} | {diff} | "
            f"{r['tolerance']:.3g} | {r['tolerance_from']} | {'yes' if r['within'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def refuse_outputs(report: Path, inputs: tuple[Path, ...]) -> None:
    """Refuse a report (``.md``, ``.json``) that would land among the results it compares or
    inside the committed ``results/`` folder."""
    places = [(REPO_ROOT / "results", "the committed results/ folder")]
    places += [(folder, f"the results it compares ({folder})") for folder in inputs]
    for out in (report.with_suffix(".md"), report.with_suffix(".json")):
        where = out.resolve()
        for folder, what in places:
            folder = folder.resolve()
            if where == folder or folder in where.parents:
                raise CompareInputError(
                    f"--report {report}: would write {out}, inside {what}; expected a path "
                    "outside the results (e.g. the default <reproduced>/<scale>-comparison)"
                )


def compare(committed: Path, reproduced: Path, report: Path, scale: str = "smoke") -> bool:
    """Compare, print the summary and failures, write ``report``.md/.json; True when all holds."""
    if not reproduced.is_dir():
        raise CompareInputError(f"{reproduced}: no reproduced results")
    refuse_outputs(report, (committed, reproduced))
    for folder in (committed, reproduced):
        records = sorted(folder.glob("*/*/seed*/run.done"))
        refuse_other_code(record_counts(records), str(folder), code_hash())
    mine = check_decided(committed, scale, "the committed claims")
    theirs = check_decided(reproduced, scale, "the re-run's claims")
    variation = read_variation(committed)
    rows = compare_runs(committed, reproduced, variation)
    changes, env = claim_changes(mine, theirs), environments(committed, reproduced)
    text = markdown(rows, changes, env)
    payload = {"rows": rows, "claim_changes": changes, "environment": env, "margin": MARGIN}
    atomic_write_set(
        {
            report.with_suffix(".md"): text,
            report.with_suffix(".json"): json.dumps(payload, indent=1) + "\n",
        }
    )
    print("\n".join(text.splitlines()[: text.splitlines().index("## Every metric")]))
    for r in (r for r in rows if not r["within"]):
        print(
            f"OUT OF TOLERANCE {r['file']} {r['metric']}: {r['committed']} -> {r['reproduced']}"
            f" (tolerance {r['tolerance']:.3g}: {r['tolerance_from']})"
        )
    print(f"[compare] report: {report.with_suffix('.md')}")
    return all(r["within"] for r in rows) and not changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.study.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--scale", default="smoke")
    parser.add_argument(
        "--reproduced",
        type=Path,
        required=True,
        help="the results root of the re-run (holds <scale>/)",
    )
    parser.add_argument(
        "--committed",
        type=Path,
        default=REPO_ROOT / "results",
        help="the committed results root (default: the repository's results/)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        help="report path without suffix (default: <reproduced>/<scale>-comparison)",
    )
    args = parser.parse_args(argv)
    reproduced = args.reproduced / args.scale
    report = args.report or args.reproduced / f"{args.scale}-comparison"
    try:
        ok = compare(args.committed / args.scale, reproduced, report, args.scale)
    except WriteError as error:  # the report could not be written: not a verdict
        print(f"compare: {error_text(error)}", file=sys.stderr)
        return exit_status.STORAGE
    except (CompareInputError, ValueError, OSError) as error:
        print(f"compare: {error}", file=sys.stderr)
        return exit_status.REFUSED
    return exit_status.OK if ok else exit_status.DID_NOT_REPRODUCE


if __name__ == "__main__":
    sys.exit(main())
