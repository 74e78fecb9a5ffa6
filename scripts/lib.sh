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
