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

java_cmd() {
  if [ -n "${JAVA_HOME:-}" ]; then echo "$JAVA_HOME/bin/java"; else echo java; fi
}

# unsafe_opt JAVA: the option that lets Netty use sun.misc.Unsafe on JDK 24 and later, where it is otherwise
# off (JEP 498; Netty 4.2 then takes slower paths for direct memory); nothing on older JDKs, which refuse
# the option.
unsafe_opt() {
  local major
  major=$("$1" -version 2>&1 | head -1 | sed -E 's/.*version "([0-9]+).*/\1/')
  if [ -n "$major" ] && [ "$major" -ge 24 ] 2>/dev/null; then echo "--sun-misc-unsafe-memory-access=allow"; fi
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

# Installs nginx-light and wrk from Debian's packages when a command is missing (root only; apt-get
# update runs once per call).
ensure_bench_tools() {
  local missing=()
  command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
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
