#!/usr/bin/env bash
# The docs test: fails when the documentation and the program disagree.
#   1. every relative link (and #anchor into a markdown file) in the tree's markdown resolves;
#   2. docs/reference/cli.md is what scripts/gen-cli-reference.sh writes from the binary;
#   3. every command the README and the guide mark runnable runs and exits 0, and every output
#      excerpt they show appears in that command's real output.
#
# Markers (in README.md and docs/guide/*.md):
#   <!-- test -->            the next ```sh block runs as shown (line continuations allowed);
#   <!-- test: COMMAND -->   COMMAND runs instead (a short variant of a long command);
#   <!-- test: skip: WHY --> the next block does not run, and WHY says why (printed);
#   <!-- output -->          the next ```text block is an excerpt of the last command's output:
#                            each line must appear, in order; numbers may differ, and so may
#                            the spaces that align them.
# Commands run from the repository root with target/debug/weir first on PATH as `weir`, and
# $DOCS_TMP a scratch directory under target/ (on the repository's filesystem, removed after).
#
# Usage: scripts/check-docs.sh [--links-only | PAGE.md...]   (pages: run only their commands)
# Environment: CARGO_FEATURES, features to build weir with (scripts/test-all.sh passes the ones
#   its test step built with, so the binary is reused instead of rebuilt).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

links_only=
[[ ${1:-} == --links-only ]] && links_only=1 && shift
pages=("$@")

if [[ -z $links_only ]]; then
    cargo build --locked -q -p weir ${CARGO_FEATURES:+--features "$CARGO_FEATURES"}
    tmp=$(mktemp -d "$root/target/docs-tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/bin"
    ln -s "$root/target/debug/weir" "$tmp/bin/weir"
    scripts/gen-cli-reference.sh target/debug/weir "$tmp/cli.md" >/dev/null
    if ! diff -u docs/reference/cli.md "$tmp/cli.md"; then
        echo "check-docs: docs/reference/cli.md is out of date: run scripts/gen-cli-reference.sh" >&2
        exit 1
    fi
    echo "check-docs: docs/reference/cli.md matches the binary's --help"
    export DOCS_TMP=$tmp/scratch PATH="$tmp/bin:$PATH"
    mkdir -p "$DOCS_TMP"
fi

LINKS_ONLY=$links_only PAGES="${pages[*]:-}" python3 - <<'PY'
import os, re, subprocess, sys, time

root = os.getcwd()
links_only = bool(os.environ.get("LINKS_ONLY"))
skip_dirs = {"target", "node_modules", ".git"}
md_files = []
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x not in skip_dirs and not x.startswith("target")]
    md_files += [os.path.join(d, f) for f in files if f.endswith(".md")]
md_files.sort()

def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")

anchors = {}
def anchors_of(path):
    if path not in anchors:
        seen, out = {}, set()
        in_code = False
        for line in open(path, encoding="utf-8"):
            if line.startswith("```"):
                in_code = not in_code
            m = re.match(r"^#{1,6} (.*)", line)
            if m and not in_code:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                out.add(s if n == 0 else f"{s}-{n}")
                seen[s] = n + 1
        anchors[path] = out
    return anchors[path]

bad = []
link_re = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
for f in md_files:
    in_code = False
    for no, line in enumerate(open(f, encoding="utf-8"), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in link_re.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, root)
            if not os.path.exists(full):
                bad.append(f"{rel}:{no}: link to {target}: {os.path.relpath(full, root)} does not exist")
            elif anchor and full.endswith(".md") and anchor not in anchors_of(full):
                bad.append(f"{rel}:{no}: link to {target}: no heading with anchor #{anchor}")
for b in bad:
    print(b)
if bad:
    sys.exit(f"check-docs: {len(bad)} broken link(s)")
print(f"check-docs: every relative link in {len(md_files)} markdown files resolves")
if links_only:
    sys.exit(0)

NUMBER = r"\d+(?:[.,]\d+)*(?: ?[KMGT](?![A-Za-z]))?"  # 64.5 K, 784, 1,543, 2248

def excerpt_regex(line):
    out = []
    for tok in re.split(r"(\s+|" + NUMBER + ")", line.rstrip()):
        if not tok:
            continue
        if tok.isspace():
            out.append(r"\s*")
        elif re.fullmatch(NUMBER, tok):
            out.append(r"\s*" + NUMBER)
        else:
            out.append(re.escape(tok))
    return re.compile("".join(out))

pages = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs/guide", f) for f in os.listdir(os.path.join(root, "docs/guide"))
    if f.endswith(".md"))
if os.environ.get("PAGES"):
    wanted = {os.path.abspath(p) for p in os.environ["PAGES"].split()}
    pages = [p for p in pages if p in wanted]
ran = skipped = checked = 0
failures = []
done = {}  # command text -> (where it first ran, its output, its exit status)
for page in pages:
    rel = os.path.relpath(page, root)
    lines = open(page, encoding="utf-8").read().split("\n")
    last_output, last_cmd = None, None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^<!-- (test|output)(?:: (.*?))? -->$", line.strip())
        if not m:
            i += 1
            continue
        kind, arg = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = j + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        block = "\n".join(lines[j + 1:k])
        where = f"{rel}:{i + 1}"
        if kind == "test":
            if arg and arg.startswith("skip:"):
                skipped += 1
                print(f"SKIP {where}: {arg[5:].strip()}")
                i = k + 1
                continue
            cmd = arg if arg else block
            ran += 1
            if cmd in done:
                # The same command in the same environment (a tune shown on two pages): its
                # first run's output stands for both.
                first, last_output, code = done[cmd]
                print(f"SAME {where} (as {first}): {cmd.splitlines()[0]}", flush=True)
            else:
                started = time.monotonic()
                p = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=root,
                                   capture_output=True, text=True, timeout=300)
                print(f"RUN  {where} ({time.monotonic() - started:.1f} s): {cmd.splitlines()[0]}",
                      flush=True)
                last_output, code = p.stdout + p.stderr, p.returncode
                done[cmd] = (where, last_output, code)
            last_cmd = cmd
            if code != 0:
                failures.append(f"{where}: `{cmd}` exited {code}:\n{last_output[-2000:]}")
        else:
            if last_output is None:
                failures.append(f"{where}: an output excerpt with no command before it")
            else:
                checked += 1
                pos = 0
                out_lines = last_output.split("\n")
                for want in [l for l in block.split("\n") if l.strip()]:
                    rx = excerpt_regex(want)
                    hit = next((n for n in range(pos, len(out_lines)) if rx.search(out_lines[n])), None)
                    if hit is None:
                        failures.append(f"{where}: `{last_cmd}` did not print (in this order):\n  {want}")
                        break
                    pos = hit + 1
        i = k + 1
for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(f"check-docs: {len(failures)} documented command(s) or output(s) disagree with the program")
print(f"check-docs: {ran} documented commands ran, {checked} output excerpts matched, {skipped} skipped")
PY
