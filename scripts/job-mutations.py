#!/usr/bin/env python3
"""Runs io_tester job files through `weir run`, unchanged and mutated, and flags every case
that does not end as a clean error or a clean run.

    scripts/job-mutations.py --dir /var/tmp/mine conf.yaml other.yaml ...

Each input (e.g. Seastar's apps/io_tester/conf.yaml, fetched, never committed) is run as is,
then with one mutation at a time applied to its text: fields dropped, misspelled, doubled,
given wrong types, zero/negative/huge sizes, size units (4kB 4KiB 4k), `shards` as all, a list,
out of range, rps with and without parallelism, tabs, duplicate names, an unknown type, an
empty file. A case is BAD when it panics, prints a Rust debug string (`Some(`, `Err(`, `{ `),
hangs past --timeout, exits with a code other than 0 or 2 (1 is allowed for runtime
failures the run itself reports, such as a full disk), or exits 2 without `weir: error:`.
Data sizes are capped by --max-data so unchanged files run quickly.
"""
import argparse
import re
import subprocess
import sys

BAD_MARKERS = ["panicked", "RUST_BACKTRACE", "Some(", "Err(", "Ok(", "None,", "{ "]


def mutations(text):
    """Yields (label, mutated text) pairs for one job file."""
    lines = text.splitlines()
    yield "unchanged", text
    yield "empty", ""
    yield "only-comment", "# nothing here\n"
    yield "tabs", text.replace("  ", "\t", 1)
    yield "not-a-list", re.sub(r"^- ", "", text, count=1, flags=re.M)
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*-?\s*)([a-z_]+):\s*(.*)$", line)
        if not m:
            continue
        indent, key, value = m.groups()

        def at(new_line, i=i):
            return "\n".join(lines[:i] + ([new_line] if new_line is not None else []) + lines[i + 1:]) + "\n"

        if not indent.strip().startswith("-"):
            yield f"drop-{key}@{i+1}", at(None)
        yield f"misspell-{key}@{i+1}", at(f"{indent}{key}x: {value}")
        yield f"double-{key}@{i+1}", at(f"{line}\n{' ' * len(indent)}{key}: {value}")
        if value and not value.startswith("["):
            yield f"{key}-as-list@{i+1}", at(f"{indent}{key}: [{value}]")
            yield f"{key}-as-map@{i+1}", at(f"{indent}{key}: {{a: 1}}")
        if key in ("reqsize", "data_size", "parallelism", "rps", "shares", "batch", "limit",
                   "files_count", "think_time", "execution_time", "iov_count", "bandwidth"):
            for v in ["0", "-1", "-4k", "99999999999999999999", "1.5", "x", "''", "4kB", "4KiB",
                      "4k", "4 k", "1e3", "0x1000", "100000TB"]:
                yield f"{key}={v}@{i+1}", at(f"{indent}{key}: {v}")
        if key == "type":
            for v in ["randrw", "RandRead", "read", "''", "cpu", "unlink", "append", "seqwrite"]:
                yield f"type={v}@{i+1}", at(f"{indent}{key}: {v}")
        if key == "shards":
            for v in ["all", "[0]", "[0, 1]", "[1]", "[64]", "[-1]", "[]", "some", "0", "[0, 0]"]:
                yield f"shards={v}@{i+1}", at(f"{indent}{key}: {v}")
        if key == "name":
            yield f"name-empty@{i+1}", at(f"{indent}{key}: ''")
            yield f"name-slash@{i+1}", at(f"{indent}{key}: a/b")
    yield "duplicate-names", text + "\n" + text
    yield "rps-no-parallelism", re.sub(r"parallelism: *\S+", "rps: 100", text)
    yield "rps-and-parallelism", re.sub(r"(\n(\s+)parallelism: *\S+)", r"\1\n\2rps: 50", text)
    yield "shard-info-missing", re.sub(r"\n\s+shard_info:(\n\s{4}.*)*", "", text)
    yield "extra-top-key", text + "\nextra: 1\n"


def cap(text, max_data):
    """Keeps unchanged files quick: data_size and files_count no larger than the caps."""
    text = re.sub(r"data_size: *\S+", f"data_size: {max_data}", text)
    return re.sub(r"files_count: *\d+", "files_count: 8", text)


def run(weir, job_path, directory, timeout, duration):
    cmd = [weir, "run", "--dir", directory, "--duration", duration, job_path]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return p.returncode, p.stderr


def verdict(code, err):
    if code is None:
        return "HANG"
    if any(m in err for m in BAD_MARKERS):
        return "DEBUG-OR-PANIC"
    if code == 0:
        return "ok"
    if code in (1, 2) and "weir: error: " in err:
        return "error"
    return f"EXIT-{code}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--dir", required=True, help="directory for weir's test files")
    ap.add_argument("--weir", default="target/release/weir")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a case is a hang")
    ap.add_argument("--max-data", default="64MB")
    ap.add_argument("--duration", default="1s", help="weir run --duration of each case")
    ap.add_argument("--only", help="run only the cases whose label contains this")
    ap.add_argument("--work", default="/tmp/weir-mutations", help="where mutated files are written")
    ap.add_argument("--verbose", action="store_true", help="print every case, not only the bad")
    a = ap.parse_args()
    import os
    os.makedirs(a.work, exist_ok=True)
    bad = total = 0
    for f in a.files:
        base = cap(open(f).read(), a.max_data)
        for label, text in mutations(base):
            if a.only and a.only not in label:
                continue
            total += 1
            path = os.path.join(a.work, f"{os.path.basename(f)}.{total}.yaml")
            with open(path, "w") as out:
                out.write(text)
            code, err = run(a.weir, path, a.dir, a.timeout, a.duration)
            v = verdict(code, err)
            first = err.strip().splitlines()[-1] if err.strip() else ""
            if v in ("ok", "error"):
                if a.verbose:
                    print(f"{v:5} {os.path.basename(f)} {label}: {first[:160]}")
            else:
                bad += 1
                print(f"BAD {v} {os.path.basename(f)} {label} ({path}):\n{err.strip()[:600]}")
    print(f"{total} cases, {bad} bad")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
