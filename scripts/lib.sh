# Shared by the launchers: find the repository and make sure the fat jar exists and is current.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/proxy-core/target/model-gateway.jar"

ensure_jar() {
  # Build when the jar is missing or older than any main source or pom (quietly, tests skipped).
  if [ ! -f "$jar" ] || [ -n "$(find "$root/pom.xml" "$root"/proxy-codecs/pom.xml "$root"/proxy-core/pom.xml \
        "$root"/proxy-codecs/src/main "$root"/proxy-core/src/main -type f -newer "$jar" -print -quit)" ]; then
    echo "building $jar ..." >&2
    (cd "$root" && mvn -B -q -DskipTests -pl proxy-core -am package) >&2
  fi
}

# java_cmd: the java of the tools (load generator, simulator, reports): $JAVA_HOME's when set, else the one on PATH.
java_cmd() {
  if [ -n "${JAVA_HOME:-}" ]; then echo "$JAVA_HOME/bin/java"; else echo java; fi
}

# default_jdk: the feature release the gateway runs on by default (scripts/gateway, scripts/bench, the release's
# bundled runtime): 25 where that JDK is installed, else 17. With compact object headers JDK 25 allocated 5-9 % less
# per request than JDK 17 on every workload of two bench runs, with no CPU difference beyond the runs' spread
# (README, "Which JDK runs the gateway").
default_jdk() {
  if jdk_home 25 >/dev/null 2>&1; then echo 25; else echo 17; fi
}

# gateway_java: the java scripts/gateway runs: $JAVA_HOME's when set, else the default JDK's.
gateway_java() {
  if [ -n "${JAVA_HOME:-}" ]; then java_cmd; else echo "$(jdk_home "$(default_jdk)")/bin/java"; fi
}

# jdk_opts JAVA: the options the launchers add for that java command's release. JDK 24 and later:
# --sun-misc-unsafe-memory-access=allow, without which sun.misc.Unsafe's memory access is off (JEP 498) and Netty 4.2
# takes slower paths for direct memory. JDK 25 and later: -XX:+UseCompactObjectHeaders (JEP 519, a product option
# since 25, off by default): 8-byte object headers instead of 12, which on the gateway's hot path is 3-7 % fewer
# bytes allocated per request (README, "Which JDK runs the gateway"). Nothing on older JDKs, which refuse both.
jdk_opts() {
  local major
  major=$(java_major "$1")
  if [ -n "$major" ] && [ "$major" -ge 24 ] 2>/dev/null; then echo "--sun-misc-unsafe-memory-access=allow"; fi
  if [ -n "$major" ] && [ "$major" -ge 25 ] 2>/dev/null; then echo "-XX:+UseCompactObjectHeaders"; fi
}

# java_major JAVA: the feature release of that java command (17, 25).
java_major() {
  "$1" -version 2>&1 | head -1 | sed -E 's/.*version "([0-9]+).*/\1/'
}

# apt_install PACKAGE...: installs Debian packages (root only; the package lists are fetched when there are
# none, and once more when an install fails on stale ones).
apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$script_name: need $*: run as root, or install them: apt-get install -y $*" >&2
    return 1
  fi
  echo "$script_name: installing $* ..." >&2
  apt_lists
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2; }
}

# apt_lists: fetches the package lists when there are none (a fresh machine), as root.
apt_lists() {
  if [ "$(id -u)" -eq 0 ] && [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -print -quit 2>/dev/null)" ]; then
    apt-get update -q >&2
  fi
}

# ensure_systemd_analyze: systemd-analyze (Debian's systemd package) for checking unit files; it runs without
# systemd being PID 1.
ensure_systemd_analyze() {
  command -v systemd-analyze >/dev/null 2>&1 || apt_install systemd
}

# The load generator and the benchmarks live in proxy-bench's shaded jar (it holds proxy-core too).
bench_jar="$root/proxy-bench/target/benchmarks.jar"

ensure_bench_jar() {
  if [ ! -f "$bench_jar" ] || [ -n "$(find "$root/pom.xml" "$root"/proxy-*/pom.xml "$root"/proxy-*/src/main \
        -type f -newer "$bench_jar" -print -quit)" ]; then
    echo "building $bench_jar ..." >&2
    (cd "$root" && mvn -B -q -DskipTests -pl proxy-bench -am package) >&2
  fi
}

# Installs nginx-light, wrk, h2load (nghttp2-client) and openssl from Debian's packages when a command is
# missing (root only; apt-get update runs once per call).
ensure_bench_tools() {
  local missing=()
  command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "need ${missing[*]}: run as root, or install them: apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  echo "installing ${missing[*]} ..." >&2
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
}

# async-profiler's agent (tools.profiler:async-profiler, its linux-x64 jar from Maven Central), unpacked once into
# ~/.cache/model-gateway; prints the path of libasyncProfiler.so.
ensure_async_profiler() {
  local v=4.1 dir="$HOME/.cache/model-gateway/async-profiler-4.1"
  if [ ! -f "$dir/libasyncProfiler.so" ]; then
    mkdir -p "$dir"
    echo "fetching async-profiler $v ..." >&2
    (cd "$root" && mvn -B -q dependency:copy -Dartifact="tools.profiler:async-profiler:$v:jar:linux-x64" \
      -DoutputDirectory="$dir") >&2
    (cd "$dir" && unzip -q -o "async-profiler-$v-linux-x64.jar" 'linux-x64/libasyncProfiler.so' \
      && mv linux-x64/libasyncProfiler.so . && rmdir linux-x64) >&2
  fi
  echo "$dir/libasyncProfiler.so"
}

# Installs what the browser and Prometheus tests drive when it is missing: Debian's chromium (the dashboard
# in a real browser, and the load-test report), prometheus (a real scrape of /metrics), nghttp2-client's h2load
# and a curl with HTTP/2 (the TLS and HTTP/2 tests). Root only; apt-get
# update runs first, once per call.
ensure_test_tools() {
  local missing=() recommends=()
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v prometheus >/dev/null 2>&1 || recommends+=(prometheus)
  # h2load: a bounded multiplexed HTTP/2 load against the gateway (Http2EndToEndTest); curl must speak HTTP/2.
  command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
  # wrk: the bench's closed-loop client, which WrkRunTest runs for real
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  curl --version 2>/dev/null | grep -q 'HTTP2' || missing+=(curl)
  [ ${#missing[@]} -eq 0 ] && [ ${#recommends[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "need ${missing[*]} ${recommends[*]}: run as root, or install them: apt-get install -y ${missing[*]} ${recommends[*]}" >&2
    return 1
  fi
  echo "installing ${missing[*]} ${recommends[*]} ..." >&2
  apt-get update -q >&2
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  fi
  # Prometheus alone: its recommended node exporter is a daemon the tests have no use for.
  if [ ${#recommends[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${recommends[@]}" >&2
  fi
}

# Installs redis-server from Debian's packages when it is missing (root only), for the shared limits' tests.
# The package would start a system-wide Redis on port 6379; a policy-rc.d that refuses service starts (the
# Debian way) is put in place for the install only, unless the machine already has one.
ensure_redis_server() {
  command -v redis-server >/dev/null 2>&1 && return 0
  [ -x /usr/bin/redis-server ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "need redis-server: run as root, or install it: apt-get install -y redis-server" >&2
    return 1
  fi
  echo "installing redis-server ..." >&2
  local policy=/usr/sbin/policy-rc.d placed=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && placed=1
  fi
  local rc=0
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; } >&2 || rc=$?
  [ -n "$placed" ] && rm -f "$policy"
  return $rc
}

# ---- process helpers of the scripts that start servers (bench, soak) ---------------------------------
# Messages name the script that sourced this file.
script_name=$(basename "$0")

# stop_pid PID: SIGTERM (the gateway drains and closes cleanly), SIGKILL after 5 s.
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# wait_listening WHAT PID LOG: the port a server printed in "listening on http://HOST:PORT", once it did.
wait_listening() {
  local what=$1 pid=$2 log=$3 i port
  for i in $(seq 1 600); do
    port=$(grep -oE 'listening on https?://[0-9.]+:[0-9]+' "$log" 2>/dev/null | head -1 | grep -oE '[0-9]+$' || true)
    if [ -n "$port" ]; then echo "$port"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$script_name: $what exited at start:" >&2; tail -20 "$log" >&2; return 1
    fi
    sleep 0.1
  done
  echo "$script_name: $what did not start within 60 s" >&2; tail -20 "$log" >&2; return 1
}

# jdk_home 17|25: the JDK's directory.
jdk_home() {
  case "$1" in
    17) for d in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-17-jdk-amd64; do
          [ -x "$d/bin/java" ] && { echo "$d"; return; }
        done
        dirname "$(dirname "$(readlink -f "$(command -v java)")")" ;;
    25) local d=/usr/lib/jvm/temurin-25-jdk-amd64
        [ -x "$d/bin/java" ] || { echo "$script_name: JDK 25 not found at $d" >&2; return 1; }
        echo "$d" ;;
  esac
}

# heap_mib used|total HEAP_INFO_FILE: the Java heap's generations summed, in MiB, from `jcmd PID
# GC.heap_info` (ParallelGC prints "PSYoungGen total NK, used NK" and "ParOldGen total NK, used NK";
# metaspace is left out).
heap_mib() {
  grep -E 'Gen +total' "$2" | grep -oE "$1 [0-9]+K" | grep -oE '[0-9]+' | awk '{s += $1} END {printf "%.0f", s / 1024}'
}

# metric PORT NAME: a metric's value from the gateway's /metrics, summed over its labels ("?" when it does
# not answer); sends the caller's $key.
metric() {
  local text
  text=$(curl -s -m 20 "http://127.0.0.1:$1/metrics" -H "Authorization: Bearer ${key:-}") || { echo "?"; return; }
  awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2; found = 1 } END { if (found) printf "%d\n", s; else print "?" }' <<<"$text"
}
