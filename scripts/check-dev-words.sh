#!/usr/bin/env bash
# Fails when a file in the tree speaks of how the project was built instead of what it is:
# working periods ("session 12", "quiet window"), the people doing the work ("engineer",
# "the lead"), source articles by number ("seed 001"), rounds of the work, issue numbers used
# as names, dated diary entries (a day and an hour), commits named as the state of `main`,
# and "earlier we tried" stories. Prints every hit as file:line:text and exits 1 if any.
#
# Usage: scripts/check-dev-words.sh [DIR]   (default: the repository root)
# Searched: every text file under DIR except target/, node_modules/, .git/ and this script.
# A CQL session, the `Session` type, the `seed` of a simulation and another project's issue
# ("tokio issue 8212", seastar#1214) are not hits: only the phrasings below are.
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
self=$(basename "$0")

patterns=(
    '\b[Ss]essions?[ -][0-9]+\b'                  # session 12, sessions 8-9, the session-8 map
    '\b(?:[Qq]uiet|[Ll]oaded|[Ee]arlier|[Pp]revious|[Ll]ast|[Tt]his|[Tt]hat|[Nn]ext) (?:working )?sessions?\b(?! (?:type|object|handle|option|pool|keyspace|per|to|of the driver))' # the quiet session
    '\b[Ss]ession [0-9]+'"'"'s\b'                 # session 15's
    '\b[Qq]uiet (window|rerun)s?\b'               # quiet window, quiet rerun
    '\b[Ee]ngineers?\b'                           # the other engineer
    '\b[Tt]he lead(?:'"'"'s)?\b(?! itself)'       # the lead, the lead's rerun
    '\(lead[,)]'                                  # (lead, 28 Nov ...)
    '\b[Ss]eeds? 0[0-9]{2}\b'                     # seed 001
    '\b(?:[Ii]n|[Ss]ince|[Uu]ntil|[Bb]efore|[Aa]fter|[Ff]rom) round [0-9]+\b(?! (?:runs|of the bench))'
    '\b[Rr]ound [0-9]+(?:'"'"'s)? (?:shape|of (?:the )?(?:work|project))\b'
    '(?<!tokio )(?<!Tokio )(?<!seastar )(?<!Seastar )(?<!scylla )(?<!ScyllaDB )(?<!upstream )\b[Ii]ssues? #?[0-9]+\b(?![ -]?(?:[KMG]i?B|B\b|bytes?|requests?|reads?|writes?|I/Os?))'                   # issue 24, issues 20 and 24
    '(?:^|[\s(])#[0-9]{1,4}\b(?![0-9a-fA-F])(?=[\s),.:;]|$)' # (#45), see #12
    '\bPR #?[0-9]+\b'
    '\b[0-9]{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (?:[0-9]{4},? )?[0-9]{1,2}:[0-9]{2}'
    '\b[0-9]{1,2}:[0-9]{2}(?:-[0-9]{1,2}:[0-9]{2})? UTC\b' # 04:54 UTC, 20:42-21:55 UTC
    '\bmain [0-9a-f]{7,40}\b'                     # main 65a5bf4
    '\b(?:[Ee]arlier|[Pp]reviously),? we\b'       # earlier we tried
    '\bwe (?:had )?tried (?:earlier|before|previously)\b'
)
regex=$(IFS='|'; echo "${patterns[*]}")

# The files of the tree: tracked ones and new ones not ignored (build output, downloaded
# jars and node_modules are ignored, and none of them is the project's own words).
hits=$(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    grep -zv -e "^scripts/$(basename "$self")\$" |
    xargs -0 grep -snIP -e "$regex" -- 2>/dev/null || true)
if [[ -n "$hits" ]]; then
    echo "$hits"
    echo "check-dev-words: $(echo "$hits" | wc -l) line(s) speak of how the project was built" \
        "(say what the code does and why, in present tense)" >&2
    exit 1
fi
echo "check-dev-words: no development words in $root"
