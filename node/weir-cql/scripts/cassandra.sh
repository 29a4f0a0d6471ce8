#!/usr/bin/env bash
# Start or stop one Apache Cassandra node built from Maven Central jars (no tarball, no docker).
#
#   usage: scripts/cassandra.sh start|stop|fetch
#   env:   CASSANDRA_VERSION (5.0.9)  CASSANDRA_HOME_DIR (<package>/.cassandra)  CASSANDRA_HEAP (512M)
#          CASSANDRA_ADDR (127.0.0.1: listen, rpc and seed address; CQL on port 9042)
#          CASSANDRA_JMX_PORT (unset: no JMX; set it for nodetool)
#          CASSANDRA_CLIENT_TLS (1: generate a CA and a node certificate for CASSANDRA_ADDR into
#          $DIR/node/tls with openssl, and accept TLS and plaintext clients on the CQL port)
#
# `fetch` downloads cassandra-all and its runtime dependencies once into the cache directory
# (~67 MB, Maven's local repository lives beside it). `start` wipes the node's data, starts the
# JVM in the background, writes its pid to $DIR/node/cassandra.pid and waits until CQL answers
# on 127.0.0.1:9042. `stop` sends SIGTERM to that pid and waits for the JVM to exit (SIGKILL
# after 30 s): the test command and the benchmark always stop the node they started.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VER="${CASSANDRA_VERSION:-5.0.9}"
DIR="${CASSANDRA_HOME_DIR:-$HERE/.cassandra}"
HEAP="${CASSANDRA_HEAP:-512M}"
ADDR="${CASSANDRA_ADDR:-127.0.0.1}"
JARS="$DIR/cassandra-$VER"
NODE="$DIR/node"
PIDFILE="$NODE/cassandra.pid"

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

# A throw-away CA and a node certificate whose subjectAltName is the node's IP (clients
# check the IP they connected to), plus a second CA that signed nothing the node serves
# (tests use it as the "bad certificate" case). The node's key and chain go into a PKCS#12
# keystore for Cassandra's default SSL context factory.
make_tls() {
  command -v openssl >/dev/null || { echo "cassandra.sh: openssl not found (apt-get install openssl)" >&2; exit 1; }
  local t="$NODE/tls"
  mkdir -p "$t"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=weir-cql test CA" \
    -keyout "$t/ca.key" -out "$t/ca.pem" 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=weir-cql other CA" \
    -keyout "$t/other-ca.key" -out "$t/other-ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=${ADDR}" -keyout "$t/node.key" -out "$t/node.csr" 2>/dev/null
  printf 'subjectAltName=IP:%s\n' "$ADDR" > "$t/node.ext"
  openssl x509 -req -in "$t/node.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial -days 2 \
    -extfile "$t/node.ext" -out "$t/node.pem" 2>/dev/null
  openssl pkcs12 -export -inkey "$t/node.key" -in "$t/node.pem" -certfile "$t/ca.pem" \
    -passout pass:weircql -out "$t/node.p12"
}

tls_config() {
  [ "${CASSANDRA_CLIENT_TLS:-0}" = 1 ] || return 0
  cat <<YAML
client_encryption_options:
  enabled: true
  optional: true
  keystore: ${NODE}/tls/node.p12
  keystore_password: weircql
  store_type: PKCS12
  require_client_auth: false
YAML
}

write_config() {
  rm -rf "$NODE"
  mkdir -p "$NODE"/{conf,data,commitlog,saved_caches,hints,cdc_raw,logs}
  if [ "${CASSANDRA_CLIENT_TLS:-0}" = 1 ]; then make_tls; fi
  cat > "$NODE/conf/cassandra.yaml" <<YAML
cluster_name: 'weir-cql-test'
num_tokens: 16
allocate_tokens_for_local_replication_factor: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "${ADDR}"
listen_address: ${ADDR}
rpc_address: ${ADDR}
storage_port: 7000
native_transport_port: 9042
start_native_transport: true
data_file_directories:
  - ${NODE}/data
commitlog_directory: ${NODE}/commitlog
saved_caches_directory: ${NODE}/saved_caches
hints_directory: ${NODE}/hints
cdc_raw_directory: ${NODE}/cdc_raw
commitlog_sync: periodic
commitlog_sync_period: 10000ms
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
memtable_allocation_type: heap_buffers
user_defined_functions_enabled: true
# Tests create a keyspace per file; keep schema changes quick on one node.
auto_snapshot: false
$(tls_config)
YAML
  cat > "$NODE/conf/logback.xml" <<XML
<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>${NODE}/logs/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE" /></root>
</configuration>
XML
}

start() {
  fetch
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "cassandra.sh: a node is already running (pid $(cat "$PIDFILE")); run 'scripts/cassandra.sh stop' first" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/${ADDR}/9042") 2>/dev/null; then
    echo "cassandra.sh: port ${ADDR}:9042 is already in use by another process; stop it first" >&2
    exit 1
  fi
  write_config
  local jamm
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
    -Dcassandra.ring_delay_ms=1000 -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.superuser_setup_delay_ms=0
    -Dcassandra.config="file://$NODE/conf/cassandra.yaml"
    -Dlogback.configurationFile="$NODE/conf/logback.xml"
    -Dcassandra.logdir="$NODE/logs" -Dcassandra.storagedir="$NODE"
    -Dcassandra-foreground=yes
  )
  if [ -n "${CASSANDRA_JMX_PORT:-}" ]; then opts+=(-Dcassandra.jmx.local.port="$CASSANDRA_JMX_PORT"); fi
  local start_s pid
  start_s=$(date +%s)
  nohup java "${opts[@]}" -cp "$NODE/conf:$JARS/lib/*" org.apache.cassandra.service.CassandraDaemon \
    > "$NODE/logs/stdout.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$PIDFILE"
  for _ in $(seq 1 360); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "cassandra.sh: Cassandra exited during start-up; last log lines:" >&2
      tail -n 30 "$NODE/logs/stdout.log" "$NODE/logs/system.log" >&2 || true
      rm -f "$PIDFILE"; exit 1
    fi
    if (exec 3<>"/dev/tcp/${ADDR}/9042") 2>/dev/null; then
      echo "cassandra.sh: pid $pid, CQL up on ${ADDR}:9042 after $(( $(date +%s) - start_s )) s" >&2
      return 0
    fi
    sleep 0.5
  done
  echo "cassandra.sh: CQL port ${ADDR}:9042 not open after 180 s; stopping pid $pid" >&2
  stop; exit 1
}

stop() {
  [ -f "$PIDFILE" ] || { echo "cassandra.sh: no pid file at $PIDFILE; nothing to stop" >&2; return 0; }
  local pid; pid="$(cat "$PIDFILE")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "cassandra.sh: stopped pid $pid" >&2
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  fetch) fetch ;;
  *) echo "usage: scripts/cassandra.sh start|stop|fetch" >&2; exit 2 ;;
esac
