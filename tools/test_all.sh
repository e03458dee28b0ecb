#!/usr/bin/env bash
# make test's driver (issue 37): every suite, independent ones side by side,
# and how long each stage took.
#
# Two lanes share the machine's cores. The build lane compiles (each build
# with -j$JOBS); the test lane runs each suite as soon as what it needs is
# built, so tests that wait on sockets, Redis or a browser overlap with
# compiles that keep the cores busy. Downloads (npm, pip) have a lane of
# their own from the start: they wait on the network, not the CPU.
#
# Every stage runs whatever the others did; each one's output goes to
# build/logs/test/<stage>.log and is printed whole when it fails. The last
# lines are the table of stages and their times; the exit status is 1 if any
# stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."

MAKE=${MAKE:-make}
LOGS=build/logs/test
rm -rf "$LOGS" && mkdir -p "$LOGS"
T0=$(date +%s)

# A stage that outlives this is stopped and reported failed with its log: a suite
# that hangs (a process left alive by a handle nobody closed) then costs minutes and
# names itself, rather than running CI out of time with nothing printed. The
# slowest stage takes under 10 minutes on a slow machine.
STAGE_TIMEOUT_S=${STAGE_TIMEOUT_S:-1200}

# stage NAME TARGET...: run `make TARGET...`, log it, record its time and status.
stage() {
  local name=$1; shift
  local start=$SECONDS status=0
  echo "[$(elapsed)] $name: started"
  # timeout signals make's whole process group (the suites it started too).
  timeout -k 20 "$STAGE_TIMEOUT_S" $MAKE --no-print-directory "$@" >"$LOGS/$name.log" 2>&1 || status=$?
  [ "$status" = 124 ] && echo "$name: stopped after ${STAGE_TIMEOUT_S} s (STAGE_TIMEOUT_S)" >>"$LOGS/$name.log"
  local took=$((SECONDS - start))
  echo "$name $took $status" >>"$LOGS/times"
  if [ "$status" = 0 ]; then
    echo "[$(elapsed)] $name: passed in ${took} s"
  else
    echo "[$(elapsed)] $name: FAILED in ${took} s (log: $LOGS/$name.log)"
    touch "$LOGS/$name.failed"
  fi
  return "$status"
}

elapsed() { local s=$(($(date +%s) - T0)); printf '%d:%02d' $((s / 60)) $((s % 60)); }

# A lane waits for a build another lane makes: the marker appears when it is done.
done_mark() { touch "$LOGS/$1.built"; }
await() { while [ ! -e "$LOGS/$1.built" ]; do sleep 1; done; [ ! -e "$LOGS/$1.failed" ]; }

# 1. What everything needs; then the downloads, beside the builds.
stage deps deps conformance npm-deps || { echo "make test: prerequisites failed"; cat "$LOGS/deps.log"; exit 1; }
(stage downloads -j2 demo-install copilotkit-install py-venvs; done_mark downloads) & downloads=$!

# 2. The build lane: in the order the test lane needs them.
build_lane() {
  stage wasm wasm; done_mark wasm
  stage native-build native-build; done_mark native-build
  if await downloads; then stage py-wheel py-install frameworks-install; else not_run py-wheel downloads; fi; done_mark py-wheel
  stage sanitize-build sanitize-build; done_mark sanitize-build
  # The build lane is free now: the fuzz targets run beside the sanitizer suite.
  if await sanitize-build; then stage fuzz-smoke fuzz-smoke FUZZ_SMOKE_DEPS=; else not_run fuzz-smoke sanitize-build; fi
  # Then the release artifacts (make dist from the wasm and py-wheel builds),
  # each installed as a user installs it (issue 41). This runs while the test lane
  # runs the sanitizer suite, which outlasts fuzz-smoke. About 20 s with ccache
  # warm; about 2 minutes cold, most of it the sdist's compile.
  if await wasm && await py-wheel; then stage install-test dist-only install-test-only; else not_run install-test "wasm or py-wheel"; fi
}

# 3. The test lane. A suite whose build failed is reported failed, not skipped.
not_run() { echo "$1 0 1" >>"$LOGS/times"; touch "$LOGS/$1.failed" "$LOGS/$1.log"; echo "[$(elapsed)] $1: FAILED ($2 failed)"; }
run_after() { local build=$1 name=$2; shift 2
  if await "$build"; then stage "$name" "$@"; else not_run "$name" "$build"; fi
}
test_lane() {
  run_after wasm js-test js-test-only
  run_after native-build native-test native-test-only
  await downloads
  run_after wasm copilotkit-test copilotkit-test
  run_after native-build demo-test demo-test
  run_after py-wheel py-test py-test-only
  run_after py-wheel py-live-test py-live-test-only
  run_after py-wheel frameworks-test frameworks-test-only
  run_after sanitize-build sanitize sanitize-only
}

build_lane & builds=$!
test_lane
wait "$builds" "$downloads"

# 4. Failed stages' logs, then the table.
for f in "$LOGS"/*.failed; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .failed)
  echo; echo "======== $name: log ($LOGS/$name.log) ========"
  cat "$LOGS/$name.log"
done
echo
echo "make test: stage times (wall clock; the two lanes overlap)"
awk '{ printf "  %-16s %5d s  %s\n", $1, $2, ($3 == 0 ? "passed" : "FAILED") }' "$LOGS/times"
total=$(($(date +%s) - T0))
printf '  %-16s %5d s  (%d:%02d)\n' total "$total" $((total / 60)) $((total % 60))
if ls "$LOGS"/*.failed >/dev/null 2>&1; then echo "make test: FAILED"; exit 1; fi
echo "make test: PASSED"
