"""python -m engine {run, validate, list, report, schema, claims, privacy, audit}. The only module that talks to the terminal.

Exit codes: 0 at least one check was decided and none failed; 1 a check failed; 2 invalid spec or command line;
3 no check was decided (every one inapplicable or inconclusive: nothing was verified); 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from algorithms.registry import PluginError
from engine import allocator, threads
from engine import specbase as spec_mod
from engine.store import DEFAULT_PATH as DEFAULT_STORE

EPILOG = ("exit codes: 0 = at least one check decided and none failed, 1 = a check failed, 2 = invalid spec or "
          "command line, 3 = no check decided (all inapplicable or inconclusive), 130 = interrupted")


class ArgParser(argparse.ArgumentParser):
    describe: Callable[[], str] | None = None   # a description computed when the help is printed (see `privacy`)

    def format_help(self) -> str:
        if self.describe is not None:
            self.description = self.describe()
        return super().format_help()

    def error(self, message: str):  # one line, exit 2, no traceback
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _whole(low: int, too_small: str, high: int | None = None, too_large: str = ""):
    """An argparse type: a whole number in [low, high], else one line saying why."""
    def parse(v: str) -> int:
        try:
            x = int(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{v!r} is not a whole number") from None
        if x < low:
            raise argparse.ArgumentTypeError(too_small.format(x=x))
        if high is not None and x > high:
            raise argparse.ArgumentTypeError(too_large.format(x=x))
        return x
    return parse


_trials = _whole(2, "{x} is too small (at least 2 trials)", 1_000_000, "{x} trials: at most 1000000, as in a spec")
_seed = _whole(0, "a seed is >= 0")


def build_parser() -> argparse.ArgumentParser:
    p = ArgParser(prog="python -m engine", description="privbench: verify DP optimisation theorems from YAML specs.",
                  epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"privbench {_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=ArgParser)
    r = sub.add_parser("run", help="run a spec (or several) and write DIR/<name>.json and DIR/<name>.md",
                       epilog=EPILOG)
    r.add_argument("spec", nargs="+",
                   help="a spec YAML file; several, or folders whose *.yaml are all run one after another (then the "
                        "exit code is 0 when every spec's verdicts are the ones its expect records, else 1, and a "
                        "table of the specs ends the run: `run specs --out reports` regenerates the committed reports)")
    r.add_argument("--trials", type=_trials, help="trials per sweep point (default: the spec's)")
    r.add_argument("--seed", type=_seed, help="root seed (default: the spec's)")
    r.add_argument("--out", default="results", help="output directory (default: results/, which git ignores; the "
                                                    "committed reports/ are regenerated with --out reports)")
    r.add_argument("--quick", action="store_true", help="fewer trials (the spec's quick.trials); every check still runs")
    r.add_argument("--quiet", action="store_true", help="no progress bar (also off when stderr is not a terminal)")
    r.add_argument("--store", default=str(DEFAULT_STORE),
                   help=f"SQLite result store; finished trials are kept and reused (default: {DEFAULT_STORE})")
    r.add_argument("--no-cache", action="store_true", help="recompute every trial (the store is neither read nor written)")
    r.add_argument("--executor", choices=("processes", "sequential", "dask"), default="processes",
                   help="where units of trials (a mechanism spec: its sweep points) run: local worker processes "
                        "(default), this process, or Dask (a mechanism spec: this process)")
    r.add_argument("--jobs", type=_whole(1, "at least 1 job"), default=1,
                   help="several specs: run this many at once, each in its own process with --workers divided among "
                        "them, the longest first by the seconds of the results already in --out (default 1: one "
                        "after another, each on every worker); a spec estimated above 1/N of --memory-limit runs "
                        "alone. Results do not depend on it")
    r.add_argument("--workers", type=_whole(1, "at least 1 worker"),
                   help="worker processes (default: one per core); with --executor dask and no --scheduler, "
                        "the LocalCluster's workers")
    r.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786 (default: an in-process "
                                       "LocalCluster)")
    r.add_argument("--csv", metavar="DIR", help="also write DIR/<name>_checks.csv (one row per check) and, for a "
                                                "learning run, DIR/<name>_trials.csv (one row per point and trial)")
    r.add_argument("--parquet", metavar="DIR", help="the same two tables as Parquet files (needs pyarrow: pip install "
                                                    "'privbench[parquet]')")
    r.add_argument("--junit", metavar="FILE", help="also write the checks as JUnit XML (a failed check a failure, an "
                                                   "inconclusive or inapplicable one skipped) for CI systems")
    r.add_argument("--time-limit", type=_positive("--time-limit"), metavar="HOURS",
                   help="refuse a run estimated (before computing: each point's parameters resolved, at the fastest "
                        "measured cost per gradient coordinate) to take longer than this many hours at least "
                        "(default: 24; also PRIVBENCH_TIME_LIMIT)")
    v = sub.add_parser("validate", help="check specs without running them (fields, rules, memory estimate)")
    v.add_argument("specs", nargs="+", help="spec files, or folders whose *.yaml files are all checked")
    v.add_argument("--work", action="store_true",
                   help="also estimate each run's work (this resolves every sweep point's parameters: seconds for "
                        "some specs) and refuse one estimated above --time-limit")
    v.add_argument("--time-limit", type=_positive("--time-limit"), metavar="HOURS",
                   help="with --work: the limit in hours (default 24; also PRIVBENCH_TIME_LIMIT)")
    for sp in (r, v):
        sp.add_argument("--memory-limit", type=_positive("--memory-limit"), metavar="GIB",
                        help="refuse a run whose estimated peak memory exceeds this many GiB (default: half of this "
                             "machine's memory; also PRIVBENCH_MEMORY_LIMIT)")
    sub.add_parser("list", help="threat models, data sets, losses, algorithms, theorems and check kinds")
    rep = sub.add_parser("report", help="re-render the markdown report from stored JSON results")
    rep.add_argument("results", help="a results JSON written by `run`")
    sch = sub.add_parser("schema", help="print the JSON Schema of a spec kind (default: learning specs)")
    which = sch.add_mutually_exclusive_group()
    which.add_argument("--kind", choices=_Names(_kind_names), metavar="KIND",
                       help="the spec kind (the value of its kind: key): %(choices)s")
    which.add_argument("--curve", action="store_const", const="privacy_curve", dest="kind",
                       help="the schema of privacy-curve specs (kind: privacy_curve)")
    which.add_argument("--mechanism", "--protocol", action="store_const", const="mechanism", dest="kind",
                       help="the schema of mechanism specs (kind: mechanism; --protocol: its name before results "
                            "schema 2)")
    which.add_argument("--comparison", action="store_const", const="comparison", dest="kind",
                       help="the schema of threat-model comparison specs (kind: comparison)")
    cl = sub.add_parser("claims", help="the claims ledger: every claim of the five papers, the checks citing it and "
                                       "their verdicts in a reports folder",
                        description="The claims ledger (engine/ledger.py): for each claim of verifiers/claims.py, the "
                                    "shipped specs' checks that cite it and their verdicts in the results JSON of "
                                    "--reports. Prints the counts (and with --paper / --priority / --status the "
                                    "claims); --markdown writes the whole ledger.", epilog=EPILOG)
    cl.add_argument("--reports", default="reports", help="folder of results JSON (default: reports/)")
    cl.add_argument("--specs", default="specs", help="folder of the specs whose results count (default: specs/)")
    cl.add_argument("--paper", choices=("000", "001", "002", "003", "004"), help="only this paper's claims")
    cl.add_argument("--priority", choices=("A", "B", "C"), help="only claims of this priority (A: headline)")
    cl.add_argument("--status", choices=("decided", "stand-in", "undecidable", "undecided", "not-encoded"),
                    help="only claims with this status")
    cl.add_argument("--list", action="store_true", help="print the registry's claim ids and summaries, nothing else")
    cl.add_argument("--markdown", metavar="FILE", help="write the whole ledger as markdown to FILE")
    cl.add_argument("--json", action="store_true", help="print the ledger as JSON")
    au = sub.add_parser("audit", help="an epsilon lower bound from canary scores produced anywhere (a CSV file)",
                        description="Empirical privacy audit of scores produced outside privbench: SCORES is a CSV "
                                    "file with a header and two columns, the scores of runs with the canary included "
                                    "(IN) and with it left out (OUT); larger scores must say 'in' (or give "
                                    "--lower-is-in). Each column is shuffled (--seed), half of it chooses the "
                                    "threshold, the other half is counted, and the false-positive and false-negative rates are replaced by their "
                                    "Clopper-Pearson upper limits (the method of the built-in audits, "
                                    "verifiers/audit.py). Columns may have different lengths (empty cells end one).",
                        epilog="exit codes: 0 = no claim given, or the lower bound does not exceed it; 1 = the lower "
                               "bound exceeds --claim (the claim is refuted at the stated confidence); 2 = invalid "
                               "file or command line")
    au.add_argument("scores", metavar="SCORES", help="CSV file: a header, then the two score columns")
    au.add_argument("--delta", type=_unit_open("delta"), required=True, help="the delta of the claim, in (0, 1)")
    au.add_argument("--claim", type=_positive("claim"), help="a claimed epsilon to compare with (exit 1 if refuted)")
    au.add_argument("--confidence", type=_bounded_open("confidence", 0.5, 1.0), default=0.95,
                    help="confidence of the lower bound (default 0.95)")
    au.add_argument("--columns", metavar="IN,OUT", help="the two columns' header names (default: the first two)")
    au.add_argument("--lower-is-in", action="store_true", help="smaller scores say the canary was included")
    au.add_argument("--seed", type=_seed, default=0, help="seed of the shuffle that splits each column in halves "
                                                          "(default 0)")
    au.add_argument("--json", action="store_true", help="print JSON")
    pv = sub.add_parser("privacy", help="epsilon at a delta (or delta at an epsilon) for a mechanism", epilog=EPILOG)
    pv.describe = lambda: "Privacy calculator. Mechanisms: " + "; ".join(f"{k}: {v}" for k, v in _mechanisms().items())
    pv.add_argument("mechanism", choices=_Names(lambda: list(_mechanisms())), metavar="MECHANISM",
                    help="one of the mechanisms above")
    target = pv.add_mutually_exclusive_group(required=True)
    target.add_argument("--delta", type=_unit_open("delta"), help="report epsilon at this delta")
    target.add_argument("--epsilon", type=_positive("epsilon"), help="report delta at this epsilon")
    pv.add_argument("--T", type=_whole(1, "at least 1 round"), default=1, help="rounds (compositions), default 1")
    pv.add_argument("--sigma", type=_positive("sigma"), help="Gaussian noise standard deviation")
    pv.add_argument("--sensitivity", type=_positive("sensitivity"), default=1.0, help="L2 sensitivity (default 1)")
    pv.add_argument("--k", type=_whole(1, "k >= 1"), help="sampled per round")
    pv.add_argument("--n", type=_whole(1, "n >= 1"), help="population size")
    pv.add_argument("--q", type=_unit_open("q"), help="Poisson sampling rate (subsampled-gaussian, instead of k, n)")
    pv.add_argument("--eps-ldp", "--eps0", dest="eps_ldp", type=_bounded("eps_ldp", 20.0),
                    help="the local randomizer's LDP epsilon (subsampled-shuffle; seed 001's eps0)")
    pv.add_argument("--accountant", choices=("default", "all"), default="default",
                    help="all: every accountant that applies, side by side (RDP, PLD with its discretisation range, "
                         "exact forms, the seed's bounds), with how each treats neighbours and sampling")
    pv.add_argument("--json", action="store_true", help="print JSON")
    return p


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("privbench")
    except metadata.PackageNotFoundError:       # run from a source tree that was never installed
        return "(not installed)"


def _kind_names() -> list[str]:
    from engine.kinds import SPEC_KINDS

    return SPEC_KINDS.names()


class _Names(Sequence[str]):
    """Names as argparse ``choices``, listed only when an argument is checked against them or its help printed:
    the spec kinds (importing every kind) and the calculator's mechanisms (importing every accountant) made
    `--help`, `--version` and every argument error wait about 2 CPU-s."""

    def __init__(self, names: Callable[[], list[str]]):
        self.names = names

    def __getitem__(self, i):   # type: ignore[override]
        return self.names()[i]

    def __len__(self) -> int:
        return len(self.names())

    def __iter__(self):
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self.names()


def _mechanisms() -> dict[str, str]:
    from verifiers.accountants.calculator import MECHANISMS

    return MECHANISMS


def _positive(name: str):
    def parse(v: str) -> float:
        try:
            x = float(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {v!r} is not a number") from None
        if not (x > 0 and x < float("inf")):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0 (got {v})")
        return x
    return parse


def _bounded(name: str, top: float):
    def parse(v: str) -> float:
        x = _positive(name)(v)
        if x > top:
            raise argparse.ArgumentTypeError(f"{name} must be in (0, {top:g}] (got {v})")
        return x
    return parse


def _bounded_open(name: str, low: float, high: float):
    def parse(v: str) -> float:
        x = _positive(name)(v)
        if not low < x < high:
            raise argparse.ArgumentTypeError(f"{name} must be in ({low:g}, {high:g}) (got {v})")
        return x
    return parse


def _unit_open(name: str):
    def parse(v: str) -> float:
        x = _positive(name)(v)
        if not x < 1:
            raise argparse.ArgumentTypeError(f"{name} must be in (0, 1) (got {v})")
        return x
    return parse


def main(argv: list[str] | None = None) -> int:
    args = None
    allocator.keep_freed_memory()                  # numpy's per-round temporaries without page faults (issue 17)
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "memory_limit", None):       # read by the run's memory guard, here and in worker processes
            os.environ["PRIVBENCH_MEMORY_LIMIT"] = str(args.memory_limit)
        if getattr(args, "time_limit", None):         # read by the run's work guard
            os.environ["PRIVBENCH_TIME_LIMIT"] = str(args.time_limit)
        if args.command == "run":
            _check_out(Path(args.out))                # before any compute: a run must be able to write its report
            if args.csv:
                _check_out(Path(args.csv), "--csv")
            if args.parquet:
                _check_out(Path(args.parquet), "--parquet")
                from engine import exports

                exports.parquet_engine()          # before any compute: say now that pyarrow is missing
            if args.junit:
                _check_out(Path(args.junit).parent, "--junit")
        return {"run": cmd_run, "validate": cmd_validate, "list": cmd_list, "report": cmd_report,
                "schema": cmd_schema, "privacy": cmd_privacy, "claims": cmd_claims,
                "audit": cmd_audit}[args.command](args)
    except spec_mod.SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except PluginError as e:                      # a user's plugin (catalog/plugins.py) that cannot be used
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ArithmeticError as e:                  # overflow in float64: a spec value far outside any sane range
        print(f"error: {_named(args)}: a number overflowed while running ({e}); a value "
              f"in the spec (data, loss or algorithm.overrides) is too large for float64", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"error: {_named(args)}: out of memory; lower the spec's sizes or trials, or "
              f"set --memory-limit so the run is refused before it starts", file=sys.stderr)
        return 2
    except BrokenPipeError:                       # `... | head`: the reader left; say nothing more
        _silence_stdout()
        return 141
    except KeyboardInterrupt as e:                # 130; a run stopped by SIGTERM: 143
        print("interrupted", file=sys.stderr)
        return getattr(e, "code", 130)


def _named(args) -> str:
    """The spec (or specs) a failed command was about, for its one-line error."""
    spec = getattr(args, "spec", None)
    return "command line" if not spec else spec if isinstance(spec, str) else ", ".join(spec)


def run_main(argv: list[str] | None = None) -> int:
    """``python -m engine``: main(), then stdout flushed here, where a reader that left early (``| head``) is a quiet
    exit 141 rather than the interpreter's 'Exception ignored ... BrokenPipeError' at its final flush."""
    code = main(argv)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 141
    return code


def _check_out(out: Path, option: str = "--out") -> None:
    """The option's folder must be one this process can write in, or one it can create (nothing is created here)."""
    if out.exists() and not out.is_dir():
        raise spec_mod.SpecError("command line", option, f"{out} is a file, not a folder")
    base = out.absolute()
    while not base.exists():
        base = base.parent
    if not base.is_dir():
        raise spec_mod.SpecError("command line", option, f"{out} cannot be created: {base} is a file")
    if not os.access(base, os.W_OK | os.X_OK):
        raise spec_mod.SpecError("command line", option, f"{out} cannot be written ({base} is read-only)")


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def _progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    def make(points: int, trials: int, what: str = "trials"):
        """A bar over points x trials units of one phase ("trials" of the run, "audit points", ...)."""
        bar = tqdm(total=points * trials, unit=what.split()[-1].rstrip("s"), desc=what, file=sys.stderr)

        def tick(k: int) -> None:
            bar.update(k)
            if bar.n >= bar.total:
                bar.close()
        return tick
    return make


def _no_such_file(path: str | Path) -> spec_mod.SpecError | None:
    """The loader's one-line error for a path that does not exist, found without importing the spec kinds (lexists:
    a symlink loop is left to the loader's own message), else None."""
    return None if os.path.lexists(path) else spec_mod.SpecError(str(Path(path)), "", "no such file")


def spec_paths(given: list[str]) -> list[Path]:
    """Spec files, with each folder replaced by its *.yaml files in name order; an empty folder is refused, and so is a
    path that does not exist (before anything heavy is imported: the one-line error comes at once)."""
    paths: list[Path] = []
    for p in given:
        missing = _no_such_file(p)
        if missing is not None:
            raise missing
        if Path(p).is_dir():
            found = sorted(Path(p).glob("*.yaml"))
            if not found:
                raise spec_mod.SpecError("command line", "spec", f"{p}: a folder with no *.yaml spec files")
            paths += found
        else:
            paths.append(Path(p))
    return paths


def cmd_run(args) -> int:
    """One spec: its exit code by its verdicts. Several: each in turn, then a table; 0 iff every one's verdicts are
    what its expect records (a shipped spec that fails a published claim is expected to fail)."""
    import argparse
    import time

    paths = spec_paths(args.spec)
    from engine import kinds

    _last_verdicts.clear()
    if len(paths) == 1 and not Path(args.spec[0]).is_dir():
        return run_one(argparse.Namespace(**{**vars(args), "spec": str(paths[0])}))
    if args.junit:
        raise spec_mod.SpecError("command line", "--junit", "one JUnit file per run: give one spec with --junit")
    specs = [kinds.load(p) for p in paths]          # every spec valid before the first runs
    if args.jobs > 1:
        return _run_at_once(paths, specs, args)
    rows: list[tuple] = []
    for path, spec in zip(paths, specs):
        t0 = time.perf_counter()
        _last_verdicts.pop(spec.name, None)        # a run that ends before its results leaves no stale verdicts
        code = run_one(argparse.Namespace(**{**vars(args), "spec": str(path)}))
        if code >= 128:                             # interrupted: what finished is kept; stop here
            return code
        rows.append((spec, _last_verdicts.get(spec.name, {}), time.perf_counter() - t0))
    return _verdict_table(rows, args.quick, f"{sum(r[2] for r in rows) / 60:.1f} min")


def _verdict_table(rows: list[tuple], quick: bool, took: str) -> int:
    """The table that ends a run of several specs, one row per (spec, its verdicts, seconds): each spec's verdicts
    against its expect (expect_quick first in --quick mode); 0 when every one is as recorded, else 1."""
    print(f"\n{'spec':<40} {'verdicts':<40} {'as expected':<12} seconds")
    differ = 0
    for spec, got, secs in rows:
        want = {cid: (spec.expect_quick.get(cid, spec.expect.get(cid)) if quick else spec.expect.get(cid))
                for cid in got}
        same = "yes" if got and got == want else "NO"
        differ += same == "NO"
        counts = ", ".join(f"{v} {k}" for k, v in _counts(got).items())
        print(f"{spec.name:<40} {counts:<40} {same:<12} {secs:.1f}")
    print(f"{len(rows)} specs in {took}; "
          + ("every one as its expect records" if not differ else f"{differ} differ from their expect"))
    return 1 if differ else 0


_last_verdicts: dict[str, dict[str, str]] = {}      # each spec's verdicts as run_one finished it (for cmd_run's table)


def _previous_seconds(spec, out: Path) -> float:
    """The seconds of the spec's results already in ``out`` (its last run), or infinity when there are none: a spec
    never run is started first, as it may be the longest."""
    try:
        return float(json.loads((out / f"{spec.name}.json").read_text(encoding="utf-8"))["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf")


def _run_at_once(paths: list[Path], specs: list, args) -> int:
    """``--jobs N``: the specs N at a time, each in a child process forked from this one (so the modules this
    process has imported are not imported again) with 1/N of the workers, the longest first (by the results already
    in --out), so that a spec whose points cannot fill both cores (one point, a serial accounting or report phase)
    leaves the other core to the next spec. A child with one worker runs its trials in its own process (the
    sequential executor: the same results). Each child has the whole memory limit, as a sequential run has; a
    learning spec whose estimate exceeds 1/N of it runs alone, so the specs running at once stay within the limit.
    Each child's output is printed when it ends, in its stream. A stop signal is passed on to the children, which
    keep what they finished in the store as a single run does; the children die with this process. A spec error in
    a child (exit 2) starts no further spec and ends the run with 2, as in a sequential run. The table at the end is
    the sequential run's, plus the wall time."""
    import functools
    import multiprocessing
    import signal
    import time

    from engine import executors, render  # noqa: F401  (imported here, once, for every child)
    from engine.kinds.learning import runner
    from engine.kinds.learning.spec import Spec as LearningSpec

    if args.executor == "dask" or args.scheduler:
        raise spec_mod.SpecError("command line", "--jobs", "runs specs in local processes: not with --executor dask")
    names = [s.name for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise spec_mod.SpecError("command line", "--jobs", f"specs named {', '.join(twice)} more than once would write "
                                                          f"the same results at once; give each once")
    if not args.no_cache:                              # a bad or locked store: one line now, not once per child
        _open_store(args.store).close()
    jobs = min(args.jobs, len(paths))
    workers = max(1, (args.workers or os.cpu_count() or 1) // jobs)
    child_args = {**vars(args), "workers": workers, "quiet": True,
                  "executor": "sequential" if workers == 1 and args.executor == "processes" else args.executor}
    share = runner.memory_limit() / jobs

    @functools.lru_cache(maxsize=None)
    def alone(i: int) -> bool:
        """Whether spec i must run alone: its estimated peak is above its share of the memory limit."""
        spec = specs[i]
        if not isinstance(spec, LearningSpec):
            return False
        trials = runner.effective_trials(spec, args.trials, args.quick)
        return runner.memory_estimate(spec, trials, workers)[0] > share

    context = multiprocessing.get_context("fork")
    executors.warm_kernels()                       # loaded once here, inherited by every child
    order = sorted(range(len(paths)), key=lambda i: -_previous_seconds(specs[i], Path(args.out)))
    waiting = list(order)
    running: dict[int, _Child] = {}
    done: dict[int, tuple[int | None, float, dict]] = {}
    stopped: int | None = None                     # the exit code that ends the run early (2, or a child's >= 128)
    t_all = time.perf_counter()
    try:
        with executors.stoppable() as stop:
            try:
                while (waiting and stopped is None) or running:
                    while waiting and stopped is None and len(running) < jobs:
                        if running and (alone(waiting[0]) or any(c.alone for c in running.values())):
                            break
                        i = waiting.pop(0)
                        # no stop signal between the fork and the child's registration: blocked here, delivered
                        # (and handled below, the child among those to stop) when unblocked
                        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
                        try:
                            running[i] = _Child.start(context, paths[i], child_args, alone(i))
                        finally:
                            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                    for i, child in list(running.items()):
                        if child.process.is_alive():
                            continue
                        del running[i]
                        got, out, err = child.collect()
                        code = child.process.exitcode
                        done[i] = (code, child.seconds(), got)
                        _echo(out, sys.stdout)
                        _echo(err, sys.stderr)
                        if code == 2 or (code is not None and code >= 128):
                            stopped = code if stopped is None else stopped
                    time.sleep(0.1)
            except KeyboardInterrupt as e:
                stop.handled()
                code = getattr(e, "code", 130)
                for child in running.values():      # each child keeps its finished units, as one run would
                    child.signal(signal.SIGTERM if code == 128 + signal.SIGTERM else signal.SIGINT)
                for i, child in list(running.items()):
                    del running[i]
                    _, out, err = child.collect()
                    _echo(out, sys.stdout)
                    _echo(err, sys.stderr)
                kept = ("nothing was kept (--no-cache)" if args.no_cache else
                        f"the others' finished units are in {args.store}; run the same command again to resume")
                print(f"interrupted: {len(done)} of {len(paths)} specs finished; {kept}", file=sys.stderr)
                return code
    finally:                                       # any other way out (a closed stdout, a bug): no child left behind
        for child in running.values():
            child.signal(signal.SIGTERM)
        for child in running.values():
            child.collect()
    if stopped is not None:
        print(f"stopped: {len(done)} of {len(paths)} specs ran", file=sys.stderr)
        return stopped
    rows = [(spec, done[i][2], done[i][1]) for i, spec in enumerate(specs)]
    wall = time.perf_counter() - t_all
    return _verdict_table(rows, args.quick, f"{wall / 60:.1f} min ({jobs} at a time, {workers} worker(s) each; "
                                            f"{sum(r[2] for r in rows) / 60:.1f} min summed)")


def _echo(text: str, stream) -> None:
    if text:
        print(text, end="" if text.endswith("\n") else "\n", file=stream, flush=True)


class _Child:
    """One spec of ``--jobs`` in a forked process: its stdout and stderr in files of their own (never a pipe that
    could fill), its verdicts through a pipe."""

    def __init__(self, process, outputs, receive, alone: bool, started: float):
        self.process, self.outputs, self.receive, self.alone, self.started = process, outputs, receive, alone, started

    @classmethod
    def start(cls, context, path: Path, child_args: dict, alone: bool) -> _Child:
        import tempfile
        import time

        outputs = tuple(tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") for _ in range(2))
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_child_run, args=(str(path), child_args, outputs[0].fileno(),
                                                           outputs[1].fileno(), send, os.getpid()))
        process.start()
        send.close()
        return cls(process, outputs, receive, alone, time.perf_counter())

    def seconds(self) -> float:
        import time

        return time.perf_counter() - self.started

    def signal(self, signum: int) -> None:
        if self.process.is_alive() and self.process.pid is not None:
            try:
                os.kill(self.process.pid, signum)
            except ProcessLookupError:
                pass

    def collect(self) -> tuple[dict, str, str]:
        """Wait for the process; (its verdicts, or {} when it sent none; its stdout; its stderr). Once."""
        self.process.join()
        got = self.receive.recv() if self.receive.poll() else {}    # sent before it exited: still in the pipe
        self.receive.close()
        texts = []
        for f in self.outputs:
            f.seek(0)
            texts.append(f.read())
            f.close()
        return got, texts[0], texts[1]


def _child_run(path: str, child_args: dict, out_fd: int, err_fd: int, send, parent: int) -> None:
    """One spec of ``--jobs``, in a forked child: its output to ``out_fd`` / ``err_fd`` (the parent prints them when
    the child ends), its own session (a terminal's Ctrl-C reaches the parent, which passes it on), dead with the
    parent (SIGTERM: the stop path that keeps finished units), its verdicts to ``send``, its exit code run_one's."""
    import signal

    from engine import executors

    os.setsid()
    for s in (signal.SIGINT, signal.SIGTERM):       # the parent's handlers, inherited by fork; run_one sets its own
        signal.signal(s, signal.SIG_DFL)
    executors.die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:                      # the parent died before the death signal was armed
        os._exit(143)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})   # blocked by the parent's fork
    threads.one_blas_thread()                       # --jobs' children share the cores: no BLAS threads on top
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    code = 2
    _last_verdicts.clear()
    try:
        try:
            code = run_one(argparse.Namespace(**{**child_args, "spec": path}))
        except spec_mod.SpecError as e:
            print(f"error: {e}", file=sys.stderr)
        except KeyboardInterrupt as e:
            code = getattr(e, "code", 130)
        except (ArithmeticError, MemoryError) as e:  # as main() says them, in one line
            print(f"error: {path}: {type(e).__name__} while running ({e}); see `python -m engine run {path}`",
                  file=sys.stderr)
        except Exception:                            # a bug: its traceback, not a silent exit code
            import traceback

            traceback.print_exc()
            code = 1
        send.send(next(iter(_last_verdicts.values()), {}))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _counts(verdicts: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in verdicts.values():
        out[v] = out.get(v, 0) + 1
    return out


def _open_store(path: str):
    """The result store at ``path``; one line naming --store when it is not ours, damaged, locked or cannot be
    opened (the file untouched)."""
    import sqlite3

    from engine.store import Store, StoreError

    try:
        return Store(path)
    except StoreError as e:
        raise spec_mod.SpecError("command line", "--store", str(e)) from None
    except (OSError, sqlite3.Error) as e:
        raise spec_mod.SpecError("command line", "--store", f"{path}: cannot be opened ({e})") from None


def run_one(args) -> int:
    import signal

    from engine import executors, kinds
    from engine.kinds.learning import runner
    from engine.store import SCHEMA, StoreError

    with executors.stoppable() as stop:           # SIGTERM stops a run as Ctrl-C does (issue 19)
        spec = kinds.load(args.spec)
        kind = kinds.kind_for(spec)
        log = None if args.quiet else (lambda m: print(m, file=sys.stderr))
        if not kind.uses_store:
            # a mechanism spec's sweep points run on the worker processes (--workers), one point per unit; the
            # other executors (sequential, dask) keep them in this process, one after another
            pool = executors.make("processes", workers=args.workers) if args.executor == "processes" else None
            try:
                results = kind.run(spec, kinds.RunOptions(trials=args.trials, seed=args.seed, quick=args.quick,
                                                          progress=_progress(args.quiet), log=log, executor=pool))
            finally:
                if pool is not None:
                    pool.close()
            return _finish(spec, kind, results, args)
        if args.scheduler and args.executor != "dask":
            raise spec_mod.SpecError("command line", "--scheduler", "needs --executor dask")
        store = None if args.no_cache else _open_store(args.store)
        if store is not None and store.migrated_from is not None:
            print(f"{args.store}: migrated from result-store schema {store.migrated_from} to {SCHEMA}",
                  file=sys.stderr)
        if store is not None and store.read_only:
            print(f"{args.store}: read-only; stored results are reused, new ones will not be saved", file=sys.stderr)
        try:
            pool = executors.make(args.executor, workers=args.workers, scheduler=args.scheduler)
        except (executors.ExecutorError, OSError, ValueError, TypeError) as e:   # e.g. a malformed --scheduler
            if store is not None:
                store.close()
            raise spec_mod.SpecError("command line", "--scheduler" if args.scheduler else "--executor",
                                     str(e)) from None
        options = kinds.RunOptions(trials=args.trials, seed=args.seed, quick=args.quick,
                                   progress=_progress(args.quiet), store=store, executor=pool, log=log)
        stopped: KeyboardInterrupt | None = None
        try:
            results = kind.run(spec, options)
        except KeyboardInterrupt as e:            # Ctrl-C or SIGTERM: pool.close() below kills the workers
            stop.handled()                        # further signals no longer interrupt: the cleanup is on
            stopped = e
        except spec_mod.SpecError as e:
            raise spec_mod.SpecError(args.spec, *e.parts[1:]) from None
        except runner.NumericalError as e:
            print(f"error: {args.spec}: {e}", file=sys.stderr)
            return 1
        except executors.ExecutorError as e:
            print(f"error: {args.spec}: {e}", file=sys.stderr)
            return 1
        except StoreError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        finally:
            pool.close()
            if store is not None:
                store.close()
        if stopped is not None:                   # every result the run took from the executor is in the store
            code = getattr(stopped, "code", 128 + signal.SIGINT)
            by = " (SIGTERM)" if code == 128 + signal.SIGTERM else ""
            if store is None:
                kept = "nothing was kept (--no-cache); run the command again to start over"
            elif store.read_only:
                kept = f"nothing new was kept ({args.store} is read-only); run the command again to start over"
            else:
                kept = f"{pool.finished} finished unit(s) kept in {args.store}; run the same command again to resume"
            bar = "\n" if _progress(args.quiet) is not None else ""       # end the progress bar's line
            print(f"{bar}interrupted{by}: {kept}", file=sys.stderr)
            return code
        if store is not None and store.skipped_units:
            print(f"{store.skipped_units} finished unit(s) were not saved: {args.store} is read-only",
                  file=sys.stderr)
        return _finish(spec, kind, results, args)


def _finish(spec, kind, results: dict, args) -> int:
    """Write the results and the report, print the verdicts; the exit code."""
    from engine import render

    json_path, md_path = render.write(results, Path(args.out))
    if getattr(args, "csv", None) or getattr(args, "parquet", None) or getattr(args, "junit", None):
        from engine import exports

        if args.csv:
            exports.write_csv(results, Path(args.csv))
        if args.parquet:
            exports.write_parquet(results, Path(args.parquet))
        if args.junit:
            Path(args.junit).parent.mkdir(parents=True, exist_ok=True)
            Path(args.junit).write_text(exports.junit_xml(results), encoding="utf-8")
    _last_verdicts[results["name"]] = {c["id"]: c["verdict"] for c in results["checks"]}
    head = kind.headline(spec, results)
    if results.get("reused_trials"):
        head += f", {results['reused_trials']} reused from {args.store}"
    _print_verdicts(spec, results, args.quick, md_path, json_path, head)
    return exit_code(results["verdict_counts"])


def exit_code(counts: dict) -> int:
    """1 when a check failed; 3 when none was decided (nothing verified must not look green); else 0."""
    if counts["fail"]:
        return 1
    return 0 if counts["pass"] else 3


def cmd_validate(args) -> int:
    bad = 0
    paths: list = []
    for p in args.specs:
        if Path(p).is_dir():
            found = sorted(Path(p).glob("*.yaml"))
            if not found:
                print(f"error: {p}: a folder with no *.yaml spec files", file=sys.stderr)
                bad += 1
            paths += found
        else:
            paths.append(p)
    for path in paths:
        missing = _no_such_file(path)               # said at once: the spec kinds are imported for a file only
        if missing is not None:
            print(f"error: {missing}", file=sys.stderr)
            bad += 1
            continue
        from engine import kinds

        try:
            s = kinds.load(path)
            kinds.kind_for(s).fits_memory(s, str(path))
            more = kinds.kind_for(s).extra_checks(s)
            extra = f" and {len(more)} run checks" if more else ""
            if args.work:
                seconds = kinds.kind_for(s).work(s, str(path))
                extra += f"; at least {seconds:.3g} s of computing" if seconds else ""
            print(f"ok: {path} ({s.name}: {len(s.checks)} checks{extra})")
        except spec_mod.SpecError as e:
            print(f"error: {e}", file=sys.stderr)
            bad += 1
    return 2 if bad else 0


def cmd_list(args) -> int:
    from algorithms.ldp import RANDOMIZERS
    from algorithms.losses import LOSSES
    from catalog import ALGORITHMS, MECHANISMS
    from engine.kinds import SPEC_KINDS
    from engine.kinds.learning import spec as learning
    from verifiers.accountants.shuffle_baselines import BASELINES, CONVENTIONS
    from verifiers.checks import CHECKS
    from verifiers.checks.curves import CURVE_CHECKS
    from verifiers.theorems import THEOREMS
    from verifiers.threat_models import THREAT_MODELS

    print("spec kinds (the kind: key):")
    for name, k in SPEC_KINDS.items():
        print(f"  {name:<14} {k.summary}")
    print("threat models:")
    for name, tm in THREAT_MODELS.items():
        rel = f"; neighbours: {tm.neighbouring.unit}/{tm.neighbouring.change}" if tm.neighbouring else ""
        print(f"  {name:<8} {tm.description}{rel}")
    print("data sets:")
    for name, dk in learning.DATA_KINDS.items():
        print(f"  {name:<16} {dk.description}; losses: {', '.join(dk.losses)}")
    print("losses:")
    for name, cls in LOSSES.items():
        print(f"  {name:<9} {(cls.__doc__ or '').strip().splitlines()[0]}")
    print("algorithms:")
    for name, a in ALGORITHMS.items():
        smooth = f"non-smooth losses: {a.smoothing}" if a.smoothing else "smooth losses only"
        print(f"  {name:<22} [{a.threat_model}] {a.description}; {a.citation}; overrides: {', '.join(a.overrides)}; "
              f"{smooth}" + (f"; variants: {', '.join(a.variants)}" if len(a.variants) > 1 or a.threat_model != "isrl"
                             else ""))
    print("local randomizers (variants of shuffle algorithms):")
    for name, r in RANDOMIZERS.items():
        print(f"  {name:<8} {r.source}")
    print("theorems:")
    for name, t in THEOREMS.items():
        print(f"  {name:<32} [{t.kind}, {t.measures}] {t.citation}")
    print("check kinds (default confidence; privacy: judges the algorithm's privacy theorem unless one is named):")
    for name, ck in CHECKS.items():
        print(f"  {name:<20} {ck.confidence:g}" + ("  privacy" if ck.privacy else ""))
    print("privacy-curve check kinds:\n  " + "\n  ".join(CURVE_CHECKS.names()))
    print("mechanisms (kind: mechanism):")
    for name, m in MECHANISMS.items():
        print(f"  {name:<6} [{m.threat_model}] {m.description}; {m.citation}; sweepable: {', '.join(m.sweepable)}; "
              f"check kinds: {', '.join(m.checks.names())}")
    print("privacy-curve baselines (seed 001, Figure 2):")
    for name, text in BASELINES.items():
        print(f"  {name:<12} {text}; conventions: {', '.join(CONVENTIONS)}")
    print("comparison specs (kind: comparison): runs under several threat models, each with its own checks, and:")
    print("  ordering     the worse run's measured excess risk above the better run's where their cited rates "
          "differ by >= margin x")
    return 0


def cmd_report(args) -> int:
    from engine import render

    path = Path(args.results)
    if not path.is_file():
        raise spec_mod.SpecError(str(path), "", "no such results file")
    try:
        md = render.render(path)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:   # JSON, UTF-8 and shape errors
        raise spec_mod.SpecError(str(path), "", f"not a results file written by `run` ({e})") from None
    print(f"report: {md}")
    return 0


STATUS_ARG = {"decided": "decided", "stand-in": "decided on a stand-in", "undecidable": "undecidable on one machine",
              "undecided": "undecided", "not-encoded": "not encoded"}


def cmd_claims(args) -> int:
    from engine import ledger
    from engine.kinds import load
    from verifiers.claims import CLAIMS

    if args.list:
        for c in CLAIMS.values():
            print(f"{c.id}  [{c.priority}, {c.type}] {c.summary}")
        return 0
    specs_dir, reports = Path(args.specs), Path(args.reports)
    for folder, what in ((specs_dir, "--specs"), (reports, "--reports")):
        if not folder.is_dir():
            raise spec_mod.SpecError("command line", what, f"{folder} is not a folder")
    names = [load(path).name for path in sorted(specs_dir.glob("*.yaml"))]   # a bad spec: one line, exit 2
    try:
        entries, missing, uncited = ledger.collect(names, reports)
    except (KeyError, ValueError, TypeError, AttributeError, OSError) as err:   # JSON, UTF-8, shape, unreadable
        raise spec_mod.SpecError(str(reports), "", f"a results file cannot be read for the ledger ({err})") from None
    if args.markdown:
        out = Path(args.markdown)
        if out.is_dir():
            raise spec_mod.SpecError("command line", "--markdown", f"{out} is a folder, not a file")
        _check_out(out.parent, "--markdown")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(ledger.markdown(entries, missing, uncited, args.reports), encoding="utf-8")
        except OSError as err:
            raise spec_mod.SpecError("command line", "--markdown", f"{out} cannot be written ({err})") from None
    chosen = [e for e in entries.values() if (args.paper is None or e.claim.paper == args.paper)
              and (args.priority is None or e.claim.priority == args.priority)
              and (args.status is None or e.status == STATUS_ARG[args.status])]
    if args.json:
        print(json.dumps(ledger.as_json({e.claim.id: e for e in chosen}, missing, uncited), indent=1))
        return 0
    tally = ledger.counts({e.claim.id: e for e in chosen})
    print(f"{'paper':<6}{'prio':<6}{'claims':>7}  " + "  ".join(f"{s:>{len(s)}}" for s in ledger.STATUSES))
    for (paper, prio), tc in sorted(tally.items(), key=lambda kv: (kv[0][0] == "*", kv[0][0], kv[0][1] == "*",
                                                                  kv[0][1])):
        print(f"{'all' if paper == '*' else paper:<6}{'all' if prio == '*' else prio:<6}{sum(tc.values()):>7}  "
              + "  ".join(f"{tc.get(s, 0):>{len(s)}}" for s in ledger.STATUSES))
    if args.paper or args.priority or args.status:
        for e in chosen:
            verdicts = ", ".join(f"{ev.spec}/{ev.check}: {ev.verdict}" for ev in e.evidence) or "no check"
            print(f"\n{e.claim.id} [{e.claim.priority}] {e.status}{f' ({e.verdict})' if e.verdict else ''}\n"
                  f"  {e.claim.summary}\n  checks: {verdicts}" + (f"\n  why: {e.reason()}" if e.reason() else ""))
    if missing:
        print(f"no results in {reports} for: {', '.join(missing)}", file=sys.stderr)
    if args.markdown:
        print(f"ledger: {args.markdown}")
    return 0


def cmd_schema(args) -> int:
    from engine.kinds import SPEC_KINDS

    print(json.dumps(SPEC_KINDS.get(args.kind or "learning").model.model_json_schema(), indent=1))
    return 0


def _print_verdicts(spec, results: dict, quick: bool, md_path, json_path, head: str) -> None:
    print(f"{spec.name}: {head} in {results['seconds']:.1f} s")
    width = max(len(c["id"]) for c in results["checks"])
    kw = max(18, *(len(c["kind"]) + 1 for c in results["checks"]))
    for c in results["checks"]:
        expected = (spec.expect_quick.get(c["id"]) if quick else None) or spec.expect.get(c["id"])
        note = "" if expected in (None, c["verdict"]) else f"   (spec expects {expected})"
        m, b = c.get("measured"), c.get("bound")
        figures = (f"measured {m:.4g}" if isinstance(m, (int, float)) else "") + (
            f"{' against' if isinstance(m, (int, float)) else 'bound'} {b:.4g}" if isinstance(b, (int, float)) else "")
        print(f"  {c['id']:<{width}}  {c['kind']:<{kw}} {c['verdict'].upper():<13}{figures}{note}".rstrip())
    counts = results["verdict_counts"]
    undecided = [c["id"] for c in results["checks"] if c["verdict"] == "inconclusive"]
    print(f"verdicts: {counts['pass']} pass, {counts['fail']} fail, {counts['inconclusive']} inconclusive"
          + (f" ({', '.join(undecided)})" if undecided else "") + f", {counts['inapplicable']} inapplicable"
          + ("; nothing was decided (exit 3)" if not counts["pass"] and not counts["fail"] else ""))
    print(f"report: {md_path}  (results: {json_path})")


MIN_AUDIT_SCORES = 20        # per column: below, half of them cannot choose a threshold and count its errors


def _read_scores(path: str, columns: str | None) -> tuple[str, str, list[float], list[float]]:
    """The two score columns of a CSV file; a SpecError (one line, exit 2) naming the file, the row and the column
    for anything else."""
    import csv
    import math

    file = Path(path)
    if not file.is_file():
        raise spec_mod.SpecError(path, "", "no such file")
    try:
        with file.open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise spec_mod.SpecError(path, "", f"cannot read it as CSV ({e})") from None
    if len(rows) < 2:
        raise spec_mod.SpecError(path, "", "needs a header row and at least one row of scores")
    header = [h.strip() for h in rows[0]]
    if columns:
        names = [c.strip() for c in columns.split(",")]
        if len(names) != 2:
            raise spec_mod.SpecError("command line", "--columns", f"{columns!r}: give two names, IN,OUT")
        for n in names:
            if n not in header:
                raise spec_mod.SpecError(path, n, f"no such column; the header has {', '.join(header)}")
        idx = [header.index(n) for n in names]
    else:
        if len(header) < 2:
            raise spec_mod.SpecError(path, "", f"needs two columns (in, out); the header has {len(header)}")
        idx = [0, 1]
    cols: list[list[float]] = [[], []]
    for r, row in enumerate(rows[1:], start=2):
        for k, i in enumerate(idx):
            cell = row[i].strip() if i < len(row) else ""
            if cell == "":
                continue
            try:
                x = float(cell)
            except ValueError:
                raise spec_mod.SpecError(path, header[i], f"row {r}: {cell!r} is not a number") from None
            if not math.isfinite(x):
                raise spec_mod.SpecError(path, header[i], f"row {r}: {cell} is not a finite number")
            cols[k].append(x)
    for k, i in enumerate(idx):
        if len(cols[k]) < MIN_AUDIT_SCORES:
            raise spec_mod.SpecError(path, header[i], f"{len(cols[k])} scores; at least {MIN_AUDIT_SCORES} per column")
    return header[idx[0]], header[idx[1]], cols[0], cols[1]


def cmd_audit(args) -> int:
    import numpy as np

    from verifiers.audit import largest_lower_bound, lower_bound

    name_in, name_out, s_in, s_out = _read_scores(args.scores, args.columns)
    sign = -1.0 if args.lower_is_in else 1.0
    # the threshold is chosen on one half and counted on the other: each column is shuffled first (a generator
    # from a SeedSequence of --seed), so a sorted or time-ordered file still splits at random; the longer column is
    # cut to the shorter's length (the method pairs the two halves)
    rng = np.random.default_rng(np.random.SeedSequence(args.seed))
    used = min(len(s_in), len(s_out))
    a_in = rng.permutation(np.asarray(s_in))[:used]
    a_out = rng.permutation(np.asarray(s_out))[:used]
    if len(s_in) != len(s_out):
        print(f"note: the columns have {len(s_in)} and {len(s_out)} scores; {used} of each are used", file=sys.stderr)
    b = lower_bound(sign * a_in, sign * a_out, delta=args.delta, confidence=args.confidence)
    ceiling = largest_lower_bound(b.trials_per_side, delta=args.delta, confidence=args.confidence)
    refuted = args.claim is not None and b.epsilon_lower > args.claim
    out = {"scores": args.scores, "in": {"column": name_in, "count": len(s_in)},
           "out": {"column": name_out, "count": len(s_out)}, "used_per_column": used, "seed": args.seed,
           "delta": args.delta, "confidence": args.confidence,
           "epsilon_lower": b.epsilon_lower, "largest_possible": ceiling, "threshold": sign * b.threshold,
           "evaluation_scores_per_side": b.trials_per_side, "false_positives": b.false_positives,
           "false_negatives": b.false_negatives, "fpr_upper": b.fpr_upper, "fnr_upper": b.fnr_upper,
           "claim": args.claim, "refuted": refuted if args.claim is not None else None}
    if args.json:
        print(json.dumps(out, indent=1))
        return 1 if refuted else 0
    print(f"audit of {args.scores}: {len(s_in)} scores with the canary ({name_in}), {len(s_out)} without ({name_out})")
    print(f"  epsilon >= {b.epsilon_lower:.4g} at delta = {args.delta:g}, confidence {args.confidence:g} "
          f"(threshold {sign * b.threshold:.6g}; on the {b.trials_per_side} evaluation scores per side: "
          f"{b.false_positives} false positives, {b.false_negatives} false negatives)")
    print(f"  the largest lower bound {b.trials_per_side} evaluation scores per side could ever give: {ceiling:.4g}"
          + (" (a claim above it cannot be refuted with this many scores)" if args.claim and args.claim >= ceiling
             else ""))
    if args.claim is not None:
        print(f"  claim epsilon = {args.claim:g}: " + ("REFUTED (the lower bound exceeds it)" if refuted else
                                                        "not refuted (an audit can refute a claim, never confirm it)"))
    return 1 if refuted else 0


def _print_all_accountants(args, common: dict) -> int:
    from verifiers.accountants import calculator

    try:
        rows = calculator.all_accountants(args.mechanism, sigma=args.sigma, sensitivity=args.sensitivity, k=args.k,
                                          n=args.n, q=args.q, eps0=args.eps_ldp, **common)
    except ValueError as e:
        raise spec_mod.SpecError("command line", "--sigma" if "noise multiplier" in str(e) else "", str(e)) from None
    if args.json:
        print(json.dumps({"mechanism": args.mechanism, "T": args.T, "accountants": rows}, indent=1))
        return 0
    what = "epsilon" if args.delta is not None else "delta"
    given = f"delta = {args.delta:g}" if args.delta is not None else f"epsilon = {args.epsilon:g}"
    print(f"{args.mechanism}, T = {args.T}: {what} at {given}")
    for r in rows:
        if "unavailable" in r:
            value = f"n/a ({r['unavailable']})"
        else:
            value = f"{r[what]:.6g}" + (f" (range {r['range'][0]:.6g} .. {r['range'][1]:.6g})" if "range" in r else "")
        print(f"  {what} = {value}\n      {r['accountant']}; neighbours: {r['neighbours']}; sampling: {r['sampling']}")
    return 0


def cmd_privacy(args) -> int:
    from verifiers.accountants import calculator

    need = {"gaussian": ("sigma",), "subsampled-gaussian": ("sigma",), "subsampled-shuffle": ("k", "n", "eps_ldp")}
    for name in need[args.mechanism]:
        if getattr(args, name) is None:
            flag = "--" + name.replace("_", "-")
            raise spec_mod.SpecError("command line", flag, f"{args.mechanism} needs {flag}")
    common = {"T": args.T, "delta": args.delta, "eps": args.epsilon}
    if args.mechanism == "subsampled-gaussian" and (args.q is None) == (args.k is None or args.n is None):
        raise spec_mod.SpecError("command line", "--q", "give either --q (Poisson) or --k and --n (k-of-n)")
    if args.k is not None and args.n is not None and args.k > args.n:
        raise spec_mod.SpecError("command line", "--k", f"k = {args.k} exceeds n = {args.n}")
    if args.accountant == "all":
        return _print_all_accountants(args, common)
    if args.mechanism == "gaussian":
        try:
            out = calculator.gaussian(sigma=args.sigma, sensitivity=args.sensitivity, **common)
        except ValueError as e:
            raise spec_mod.SpecError("command line", "--sigma", str(e)) from None
    elif args.mechanism == "subsampled-gaussian":
        if (args.q is None) == (args.k is None or args.n is None):
            raise spec_mod.SpecError("command line", "--q", "give either --q (Poisson) or --k and --n (k-of-n)")
        if args.k is not None and args.n is not None and args.k > args.n:
            raise spec_mod.SpecError("command line", "--k", f"k = {args.k} exceeds n = {args.n}")
        out = calculator.subsampled_gaussian(sigma=args.sigma, sensitivity=args.sensitivity, k=args.k, n=args.n,
                                             q=args.q, **common)
    else:
        if args.k > args.n:
            raise spec_mod.SpecError("command line", "--k", f"k = {args.k} exceeds n = {args.n}")
        out = calculator.subsampled_shuffle(k=args.k, n=args.n, eps0=args.eps_ldp, **common)
    out["T"] = args.T
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{out['mechanism']}, T = {args.T}: {out['accountant']}")
    rows = [(b, out[b]) for b in ("upper", "lower") if b in out] or [("", out)]
    for label, r in rows:
        head = f"  {label + ' bound: ' if label else ''}"
        order = f" (Renyi order {r['order']:g})" if "order" in r else ""
        print(f"{head}epsilon = {r['epsilon']:.6g} at delta = {r['delta']:.6g}{order}")
    return 0
