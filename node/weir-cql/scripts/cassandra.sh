#!/usr/bin/env bash
# Start or stop Apache Cassandra nodes built from Maven Central jars (no tarball, no docker).
#
#   usage: scripts/cassandra.sh start [N...]     wipe and start nodes N (default 1), in order
#          scripts/cassandra.sh stop [N...]      stop nodes N (default every running node)
#          scripts/cassandra.sh resume N         start node N again on its existing data
#          scripts/cassandra.sh pid N            print node N's JVM pid
#          scripts/cassandra.sh nodetool N ARGS  run nodetool against node N (its JMX port)
#          scripts/cassandra.sh fetch            download the jars only
#   env:   CASSANDRA_VERSION (5.0.9)  CASSANDRA_HOME_DIR (<package>/.cassandra)  CASSANDRA_HEAP (512M)
#          CASSANDRA_JMX_PORT_BASE (7190: node N's JMX listens on 127.0.0.1:BASE+N)
#          CASSANDRA_CLIENT_TLS (1: `start` makes a CA in $DIR/tls and a certificate for each
#          node's IP, and the nodes accept TLS and plaintext clients on the CQL port)
#
# Node N listens on 127.0.0.N (CQL 9042, gossip 7000; Linux routes all of 127/8 to lo) and
# keeps its data, logs, yaml and pid in $DIR/nodeN. Nodes join one after another (a node
# must finish joining before the next starts), the first one named is the seed. `fetch`
# downloads cassandra-all and its runtime dependencies once (~67 MB). `start` waits until
# each node's CQL port answers. `stop` sends SIGTERM to every node at once and waits for the
# JVMs to exit (SIGKILL after 30 s): the test command and the benchmark always stop the
# nodes they started.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VER="${CASSANDRA_VERSION:-5.0.9}"
DIR="${CASSANDRA_HOME_DIR:-$HERE/.cassandra}"
HEAP="${CASSANDRA_HEAP:-512M}"
JMX_BASE="${CASSANDRA_JMX_PORT_BASE:-7190}"
JARS="$DIR/cassandra-$VER"

node_dir() { echo "$DIR/node$1"; }
pid_file() { echo "$DIR/node$1/cassandra.pid"; }
jmx_port() { echo $((JMX_BASE + $1)); }

check_index() {
  [[ "$1" =~ ^[1-9]$ ]] || { echo "cassandra.sh: node index must be 1-9, got '$1'" >&2; exit 2; }
}

fetch() {
  if [ -f "$JARS/lib/cassandra-all-${VER}.jar" ]; then return 0; fi
  command -v mvn >/dev/null || { echo "cassandra.sh: mvn not found; install Maven (apt-get install maven)" >&2; exit 1; }
  mkdir -p "$JARS"
  cat > "$JARS/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.weircql</groupId><artifactId>cassandra-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId><version>${VER}</version></dependency>
  </dependencies>
</project>
POM
  echo "cassandra.sh: downloading Cassandra ${VER} jars from Maven Central into $JARS/lib" >&2
  local tries=0
  until (cd "$JARS" && mvn -q -B -Dmaven.repo.local="$DIR/m2" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$JARS/lib.tmp"); do
    tries=$((tries + 1))
    if [ "$tries" -ge 3 ]; then echo "cassandra.sh: Maven download failed 3 times" >&2; exit 1; fi
    sleep 5
  done
  rm -rf "$JARS/lib" && mv "$JARS/lib.tmp" "$JARS/lib"
}

tls_on() { [ "${CASSANDRA_CLIENT_TLS:-0}" = 1 ]; }

# A throw-away CA for this start, plus a second CA that signed nothing the nodes serve
# (tests use it as the "bad certificate" case).
make_ca() {
  command -v openssl >/dev/null || { echo "cassandra.sh: openssl not found (apt-get install openssl)" >&2; exit 1; }
  local t="$DIR/tls"
  rm -rf "$t"; mkdir -p "$t"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=weir-cql test CA" \
    -keyout "$t/ca.key" -out "$t/ca.pem" 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=weir-cql other CA" \
    -keyout "$t/other-ca.key" -out "$t/other-ca.pem" 2>/dev/null
}

# Node $1's certificate, signed by the CA, with its IP as subjectAltName (clients check the
# IP they connected to); key and chain in a PKCS#12 keystore for Cassandra's default SSL
# context factory.
make_node_cert() {
  local ca="$DIR/tls" t addr="127.0.0.$1"
  t="$(node_dir "$1")/tls"
  mkdir -p "$t"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=${addr}" -keyout "$t/node.key" -out "$t/node.csr" 2>/dev/null
  printf 'subjectAltName=IP:%s\n' "$addr" > "$t/node.ext"
  openssl x509 -req -in "$t/node.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" -CAcreateserial -days 2 \
    -extfile "$t/node.ext" -out "$t/node.pem" 2>/dev/null
  openssl pkcs12 -export -inkey "$t/node.key" -in "$t/node.pem" -certfile "$ca/ca.pem" \
    -passout pass:weircql -out "$t/node.p12"
}

tls_config() {
  tls_on || return 0
  cat <<YAML
client_encryption_options:
  enabled: true
  optional: true
  keystore: $1/tls/node.p12
  keystore_password: weircql
  store_type: PKCS12
  require_client_auth: false
YAML
}

write_config() {
  local n="$1" seed="$2" node addr
  node="$(node_dir "$n")"; addr="127.0.0.$n"
  rm -rf "$node"
  mkdir -p "$node"/{conf,data,commitlog,saved_caches,hints,cdc_raw,logs}
  if tls_on; then make_node_cert "$n"; fi
  cat > "$node/conf/cassandra.yaml" <<YAML
cluster_name: 'weir-cql-test'
num_tokens: 16
allocate_tokens_for_local_replication_factor: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.${seed}"
listen_address: ${addr}
rpc_address: ${addr}
storage_port: 7000
native_transport_port: 9042
start_native_transport: true
data_file_directories:
  - ${node}/data
commitlog_directory: ${node}/commitlog
saved_caches_directory: ${node}/saved_caches
hints_directory: ${node}/hints
cdc_raw_directory: ${node}/cdc_raw
commitlog_sync: periodic
commitlog_sync_period: 10000ms
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
memtable_allocation_type: heap_buffers
user_defined_functions_enabled: true
# Tests create a keyspace per file; keep schema changes quick.
auto_snapshot: false
$(tls_config "$node")
YAML
  cat > "$node/conf/logback.xml" <<XML
<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>${node}/logs/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE" /></root>
</configuration>
XML
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

running_pid() {
  local f; f="$(pid_file "$1")"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
}

# Launches node $1's JVM on whatever its directory holds and waits for its CQL port.
# The ring delay bounds a joining node's gossip shadow round: 1 s is plenty for a lone
# node, but a node joining a loaded 2-core machine's cluster needs longer (seen: "Unable
# to gossip with any peers" at 1 s under a load average of 24).
RING_DELAY_MS=1000

launch() {
  local n="$1" node addr jamm
  node="$(node_dir "$n")"; addr="127.0.0.$n"
  if [ -n "$(running_pid "$n" || true)" ]; then
    echo "cassandra.sh: node $n is already running (pid $(cat "$(pid_file "$n")")); run 'scripts/cassandra.sh stop $n' first" >&2
    exit 1
  fi
  if port_open "$addr" 9042; then
    echo "cassandra.sh: port ${addr}:9042 is already in use by another process; stop it first" >&2
    exit 1
  fi
  if port_open 127.0.0.1 "$(jmx_port "$n")"; then
    echo "cassandra.sh: JMX port 127.0.0.1:$(jmx_port "$n") is in use; set CASSANDRA_JMX_PORT_BASE" >&2
    exit 1
  fi
  jamm="$(ls "$JARS"/lib/jamm-*.jar | head -n 1)"
  # Flags from Cassandra's conf/jvm-server.options and conf/jvm17-server.options.
  local opts=(
    -Xms"$HEAP" -Xmx"$HEAP" -Xss256k -ea -da:net.openhft...
    -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1
    -XX:G1RSetUpdatingPauseTimePercent=5 -XX:MaxGCPauseMillis=300
    -XX:+UseThreadPriorities -XX:+UseTLAB -XX:+ResizeTLAB -XX:+PerfDisableSharedMem
    -Djava.net.preferIPv4Stack=true -Djdk.attach.allowAttachSelf=true
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
    --add-exports java.sql/java.sql=ALL-UNNAMED
    --add-exports java.base/java.lang.ref=ALL-UNNAMED
    --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
    --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
    --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
    --add-opens java.base/java.lang.module=ALL-UNNAMED
    --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
    --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
    --add-opens java.base/jdk.internal.math=ALL-UNNAMED
    --add-opens java.base/jdk.internal.module=ALL-UNNAMED
    --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens java.base/java.io=ALL-UNNAMED
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
    --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED
    -Dio.netty.tryReflectionSetAccessible=true
    -Dio.netty.allocator.useCacheForAllThreads=true -Dio.netty.allocator.maxOrder=11
    -javaagent:"$jamm"
    -Dcassandra.jmx.local.port="$(jmx_port "$n")"
    -Dcassandra.ring_delay_ms="$RING_DELAY_MS" -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.superuser_setup_delay_ms=0
    -Dcassandra.config="file://$node/conf/cassandra.yaml"
    -Dlogback.configurationFile="$node/conf/logback.xml"
    -Dcassandra.logdir="$node/logs" -Dcassandra.storagedir="$node"
    -Dcassandra-foreground=yes
  )
  local start_s pid
  start_s=$(date +%s)
  nohup java "${opts[@]}" -cp "$node/conf:$JARS/lib/*" org.apache.cassandra.service.CassandraDaemon \
    > "$node/logs/stdout.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$(pid_file "$n")"
  for _ in $(seq 1 360); do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$(pid_file "$n")"
      # A join that found no gossip peer in time is retried once, from scratch.
      if [ "${LAUNCH_RETRY:-1}" = 1 ] && grep -q "Unable to gossip with any peers" "$node/logs/stdout.log" 2>/dev/null; then
        echo "cassandra.sh: node $n found no gossip peer in time; starting it once more" >&2
        write_config "$n" "$SEED"
        LAUNCH_RETRY=0 launch "$n"
        return
      fi
      echo "cassandra.sh: node $n exited during start-up; last log lines:" >&2
      tail -n 30 "$node/logs/stdout.log" "$node/logs/system.log" >&2 || true
      exit 1
    fi
    if port_open "$addr" 9042; then
      echo "cassandra.sh: node $n pid $pid, CQL up on ${addr}:9042 after $(( $(date +%s) - start_s )) s" >&2
      return 0
    fi
    sleep 0.5
  done
  echo "cassandra.sh: CQL port ${addr}:9042 not open after 180 s; stopping node $n" >&2
  stop "$n"; exit 1
}

start() {
  fetch
  local nodes=("$@")
  [ "${#nodes[@]}" -gt 0 ] || nodes=(1)
  for n in "${nodes[@]}"; do check_index "$n"; done
  if tls_on; then make_ca; fi
  SEED="${nodes[0]}"
  for n in "${nodes[@]}"; do
    # Nodes that join a cluster wait longer for gossip (see RING_DELAY_MS).
    if [ "$n" != "$SEED" ]; then RING_DELAY_MS=5000; fi
    write_config "$n" "$SEED"
    launch "$n"
  done
}

resume() {
  check_index "$1"
  [ -f "$(node_dir "$1")/conf/cassandra.yaml" ] || { echo "cassandra.sh: node $1 was never started; use 'start $1'" >&2; exit 1; }
  # A restarting node gossips with the others before it serves, like a joining one; it is
  # never retried from scratch (that would wipe its data).
  RING_DELAY_MS=5000 LAUNCH_RETRY=0 launch "$1"
}

stop() {
  local nodes=("$@") pids=() n pid
  if [ "${#nodes[@]}" -eq 0 ]; then
    for f in "$DIR"/node*/cassandra.pid; do [ -f "$f" ] && nodes+=("$(basename "$(dirname "$f")" | sed 's/^node//')"); done
  fi
  [ "${#nodes[@]}" -gt 0 ] || { echo "cassandra.sh: no node is running; nothing to stop" >&2; return 0; }
  for n in "${nodes[@]}"; do
    check_index "$n"
    pid="$(running_pid "$n" || true)"
    # A paused (SIGSTOP) node cannot act on SIGTERM until it is continued.
    if [ -n "$pid" ]; then kill -CONT "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); fi
    rm -f "$(pid_file "$n")"
  done
  for _ in $(seq 1 60); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.5
  done
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "cassandra.sh: stopped pid $pid" >&2
  done
}

nodetool() {
  check_index "$1"
  local n="$1"; shift
  mkdir -p "$DIR/tools"
  # Only warnings: the jars' default logback configuration prints netty's debug lines.
  [ -f "$DIR/tools/logback.xml" ] || cat > "$DIR/tools/logback.xml" <<'XML'
<configuration scan="false">
  <appender name="ERR" class="ch.qos.logback.core.ConsoleAppender"><target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder></appender>
  <root level="WARN"><appender-ref ref="ERR" /></root>
</configuration>
XML
  # Flags from Cassandra's conf/jvm17-clients.options; its history file goes under $DIR.
  java -Xmx128m -XX:TieredStopAtLevel=1 -Duser.home="$DIR/tools" -Dlogback.configurationFile="$DIR/tools/logback.xml" \
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
    --add-exports java.base/sun.nio.ch=ALL-UNNAMED --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED \
    --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED --add-exports java.sql/java.sql=ALL-UNNAMED \
    --add-opens java.base/java.lang.module=ALL-UNNAMED --add-opens java.base/java.net=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.loader=ALL-UNNAMED --add-opens java.base/jdk.internal.ref=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED --add-opens java.base/jdk.internal.math=ALL-UNNAMED \
    --add-opens java.base/jdk.internal.module=ALL-UNNAMED --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED \
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
    -cp "$JARS/lib/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$(jmx_port "$n")" "$@"
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  start) start "$@" ;;
  stop) stop "$@" ;;
  resume) [ $# -eq 1 ] || { echo "usage: scripts/cassandra.sh resume N" >&2; exit 2; }; resume "$1" ;;
  pid) [ $# -eq 1 ] || { echo "usage: scripts/cassandra.sh pid N" >&2; exit 2; }; check_index "$1"; running_pid "$1" ;;
  nodetool) [ $# -ge 1 ] || { echo "usage: scripts/cassandra.sh nodetool N ARGS" >&2; exit 2; }; nodetool "$@" ;;
  fetch) fetch ;;
  *) echo "usage: scripts/cassandra.sh start [N...]|stop [N...]|resume N|pid N|nodetool N ARGS|fetch" >&2; exit 2 ;;
esac
