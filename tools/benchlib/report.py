"""Reports: the scripts' argument parser, the machine line and the markdown writers."""
import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def parser(doc):
    """An ArgumentParser whose --help shows the script's whole docstring as written: what it
    measures, against which peer, and how to run it."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def rule(header):
    """The markdown separator row under a table header row."""
    return "|" + "---|" * (header.count(" | ") + 1)


def geometric_mean(values):
    return float(np.exp(np.mean(np.log(values))))


def write_text(path, text):
    """text to path, its folder made first."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)


def write_report(lines, out):
    """The report (markdown lines) printed, and written to ``out`` when given."""
    report = "\n".join(lines) + "\n"
    print(report)
    if out:
        write_text(out, report)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line(load_before):
    """The opening of a report's header line: date, machine, load average before / after the
    runs, libsvm-official's version."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        libsvm_version = version("libsvm-official")
    except PackageNotFoundError:
        libsvm_version = "?"
    return (f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}: {cpu_model()}, "
            f"{os.cpu_count()} cores, load average {load_before:.2f} before / "
            f"{os.getloadavg()[0]:.2f} after; libsvm-official {libsvm_version}")


def run_and_report(title, ap, args, datasets, bench_one, row_of, header, rule, header_line_of):
    """Bench every dataset named in args.datasets, printing each table row as it comes; then the
    whole report (title, machine line, table, test sets), written to args.out if given."""
    names = [n for n in args.datasets.split(",") if n]
    unknown = [n for n in names if n not in datasets]
    if unknown:
        ap.error(f"unknown dataset(s): {', '.join(unknown)}")

    load_before = os.getloadavg()[0]
    rows = []
    print(header + "\n" + rule, flush=True)
    with tempfile.TemporaryDirectory() as tmpdir:
        for name in names:
            rows.append(bench_one(name, args, tmpdir))
            print(row_of(rows[-1]), flush=True)
    report = "\n".join([title, "", header_line_of(args, load_before), "", header, rule]
                       + [row_of(r) for r in rows]
                       + ["", "Test sets: " + "; ".join(f"{r['name']}: {r['how']}" for r in rows) + ".", ""])
    if args.out:
        write_text(args.out, report)
        print(f"written to {args.out}", file=sys.stderr)
    return 0
