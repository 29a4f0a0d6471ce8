#!/usr/bin/env bash
# The soak of weir-cql against Apache Cassandra: bench/soak.js at a steady load for
# SOAK_MINUTES (default 30), then every acknowledged write read back; resident memory must
# stay within 10% after warm-up and no rejection may go unhandled (soak.js checks; exit 1
# when a check fails). Starts one node with scripts/cassandra.sh (node index
# SOAK_NODE, default 1: 127.0.0.N) pinned to CPU 0, the client on CPU 1, and stops the node
# by pid at the end, unless WEIR_CQL_CONTACT_POINT names a running server.
#
#   bench/soak.sh [soak.js options: --rate 2000 --inflight 32 --reads-per-write 0.5]
#   env: SOAK_MINUTES (30)  SOAK_NODE (1)  WEIR_CQL_CONTACT_POINT (host:port)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PKG="$(cd "$HERE/.." && pwd)"
MINUTES="${SOAK_MINUTES:-30}"
NODE="${SOAK_NODE:-1}"
started=""
stop() { if [ -n "$started" ]; then bash "$PKG/scripts/cassandra.sh" stop "$NODE" || true; fi; }
trap stop EXIT
if [ -z "${WEIR_CQL_CONTACT_POINT:-}" ]; then
  bash "$PKG/scripts/cassandra.sh" start "$NODE"
  started=1
  taskset -apc 0 "$(bash "$PKG/scripts/cassandra.sh" pid "$NODE")" > /dev/null
  WEIR_CQL_CONTACT_POINT="127.0.0.$NODE:9042"
fi
echo "soak: $MINUTES minutes against $WEIR_CQL_CONTACT_POINT, started $(date -u +%FT%TZ)" >&2
taskset -c 1 node "$HERE/soak.js" --minutes "$MINUTES" "$@" "$WEIR_CQL_CONTACT_POINT"
