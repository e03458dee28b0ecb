#!/usr/bin/env bash
# make install-test (issue 41): each artifact `make dist` put in build/dist/,
# installed the way a user installs it, somewhere fresh under
# build/install-test/, then run:
#   npm    the tarball into a new npm project (Vite pinned by package.json and
#          package-lock.json here). Vite bundles a page that imports the browser
#          entry, and the bundle must carry the engine's .wasm. Then Node runs
#          the server and proxy entries (node-entries.mjs);
#   wheel  the auditwheel-repaired wheel into a new venv, with python the only
#          thing on PATH (no cc, c++, g++, cmake), and run there (smoke.py);
#   sdist  the sdist into a new venv, with Debian's nlohmann_json CMake config
#          hidden, so the build must take PyPI nlohmann-json's headers. Then run
#          there (smoke.py).
# The npm part waits on npm and Vite, the sdist part on the compiler: they run
# side by side. Each part logs to build/install-test/<part>.log, and its log is
# printed if it fails.
#
# Usage: tests/install/run.sh [npm] [wheel] [sdist]   (no argument: all three)
# Environment: PYTHON3 (the interpreter the venvs are made from), JOBS
# (compile jobs, default 2), KEEP=1 (keep build/install-test/ after a pass).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/install
DIST=$ROOT/build/dist
W=$ROOT/build/install-test
JOBS=${JOBS:-2}
PY=$("${PYTHON3:-python3}" -c 'import os, sys; print(os.path.realpath(sys.executable))')
PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(npm wheel sdist)

rm -rf "$W" && mkdir -p "$W"

fail() { echo "FAIL: $*" >&2; exit 1; }
# A line of the part's summary (printed when it passes).
say() { echo ">> $*"; }
# one GLOB: the one file matching it, or fail.
one() {
  local matches=()
  for f in $1; do [ -e "$f" ] && matches+=("$f"); done
  [ ${#matches[@]} = 1 ] || fail "expected one $1, found ${#matches[@]}: run make dist"
  echo "${matches[0]}"
}

# ---- npm ----------------------------------------------------------------------
part_npm() {
  local tgz p=$W/npm
  tgz=$(one "$DIST/agui-state-sync-*.tgz")
  # The tarball: the WebAssembly build output is in, tests are not.
  local listing; listing=$(tar tzf "$tgz")
  for f in package/package.json package/src/index.js package/src/server.js package/src/proxy.js \
    package/wasm/agui_sync.mjs package/wasm/agui_sync.wasm package/wasm/agui_emitter.mjs package/wasm/agui_emitter.wasm; do
    grep -qx "$f" <<<"$listing" || fail "$(basename "$tgz") lacks $f"
  done
  if grep -E '(^|/)tests?/|\.test\.m?js$|\.e2e\.m?js$' <<<"$listing"; then fail "$(basename "$tgz") ships tests"; fi
  say "tarball: $(basename "$tgz"), $(wc -l <<<"$listing") files, $(stat -c %s "$tgz") bytes"

  mkdir -p "$p"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE/node-entries.mjs" "$HERE/web/index.html" "$HERE/web/main.js" "$p/"
  cd "$p"
  export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
  npm ci --prefer-offline --loglevel=error
  npm install --no-save --prefer-offline --loglevel=error "$tgz"
  [ -f node_modules/agui-state-sync/wasm/agui_sync.wasm ] || fail "the installed package has no wasm/agui_sync.wasm"

  # The browser: Vite (no config) bundles index.html + main.js.
  npx --no-install vite build --logLevel warn
  local wasm; wasm=$(one "dist/assets/agui_sync-*.wasm")
  cmp -s "$wasm" node_modules/agui-state-sync/wasm/agui_sync.wasm || fail "$wasm is not the package's agui_sync.wasm"
  grep -lq "$(basename "$wasm")" dist/assets/*.js || fail "no bundled script loads $(basename "$wasm")"
  say "vite: $(ls dist/assets | tr '\n' ' ')"

  # Node: the server and proxy entries.
  node node-entries.mjs | sed "s/^/>> /"
}

# ---- wheel --------------------------------------------------------------------
# A PATH with python and nothing else: pip installs a wheel without a compiler.
NOCC_BIN=$W/nocc-bin
nocc() { env -i HOME="$HOME" LANG=C.UTF-8 PATH="$NOCC_BIN" "$@"; }

part_wheel() {
  local whl v=$W/wheel-venv
  whl=$(one "$DIST/agui_state_sync-*-manylinux*.whl")
  mkdir -p "$NOCC_BIN" && ln -sf "$PY" "$NOCC_BIN/python3" && ln -sf "$PY" "$NOCC_BIN/python"
  nocc python3 -c '
import shutil, sys
found = {t: shutil.which(t) for t in ("cc", "c++", "gcc", "g++", "clang", "clang++", "cmake", "ninja", "make")}
found = {t: p for t, p in found.items() if p}
sys.exit(f"a build tool is on PATH: {found}" if found else None)'
  say "PATH=$NOCC_BIN: $(ls "$NOCC_BIN" | tr '\n' ' ')(cc, c++, gcc, g++, clang, cmake, ninja, make: not found)"
  nocc "$PY" -m venv "$v"   # the interpreter itself, not the symlink: the venv's home is its real bin/
  nocc "$v/bin/python" -m pip install --no-index --only-binary=:all: --disable-pip-version-check -q "$whl"
  cd "$W" && nocc "$v/bin/python" -I "$HERE/smoke.py" | sed "s/^/>> /"
}

# ---- sdist --------------------------------------------------------------------
# pip builds an sdist in an isolated environment: it installs build-system.requires
# into /tmp/pip-build-env-<random> and unpacks the sdist into /tmp/pip-req-build-<random>.
# Here the venv holds those same requirements (from PyPI, pinned by the lock), and
# pip builds with --no-build-isolation. Then every path the compiler sees is under $W,
# at a depth that is the same in every run: the venv's (nanobind, nlohmann-json),
# and the unpacked sources with their build dir (build/python/<tag>, from
# pyproject.toml) in $W/tmp/pip-req-build-<random>. CCACHE_BASEDIR=$W makes them
# relative to the build dir, so ccache serves the compile again next time. With
# pip's own build env, the include paths change every run and every compile misses:
# ISOLATED=1 runs that instead (the build requirements from PyPI, or pip's cache, into
# pip's build env; about 2 minutes of compiling on 2 cores).
part_sdist() {
  local sdist v=$W/sdist-venv reqs isolation=(--no-index --no-build-isolation) headers
  sdist=$(one "$DIST/agui_state_sync-*.tar.gz")
  # The sdist: the module's sources and nothing else (no JS, tests, docs).
  local listing; listing=$(tar tzf "$sdist" | cut -d/ -f2- | grep -v '/$')
  for f in pyproject.toml CMakeLists.txt LICENSE PKG-INFO python/README.md bindings/python/module.cpp python/agui_state_sync/__init__.py; do
    grep -qx "$f" <<<"$listing" || fail "$(basename "$sdist") lacks $f"
  done
  if grep -vE '^(pyproject\.toml|CMakeLists\.txt|LICENSE|PKG-INFO|(src|include|bindings/python|python)/.*|js/src/(server/store|proxy)/lua/[^/]*\.lua)$' <<<"$listing"; then
    fail "$(basename "$sdist") ships files the module does not need (above)"
  fi
  say "sdist: $(basename "$sdist"), $(wc -l <<<"$listing") files ($(grep -c '^js/' <<<"$listing") under js/, all Lua), $(stat -c %s "$sdist") bytes"

  "$PY" -m venv "$v"
  mapfile -t reqs < <("$PY" - "$sdist" <<'EOF'
import sys, tarfile, tomllib
with tarfile.open(sys.argv[1]) as tar:
    [member] = [m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/pyproject.toml")]
    print("\n".join(tomllib.load(tar.extractfile(member))["build-system"]["requires"]))
EOF
  )
  say "build-system.requires: ${reqs[*]}"
  if [ "${ISOLATED:-}" = 1 ]; then
    isolation=() headers=$W/tmp/pip-build-env-
  else
    "$v/bin/pip" install -q --disable-pip-version-check -c "$ROOT/tests/python/requirements.lock" "${reqs[@]}"
    headers=$v/
  fi

  local launcher=() ccache_env=()
  if command -v ccache >/dev/null; then
    launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
    ccache_env=(CCACHE_BASEDIR="$W" CCACHE_STATSLOG="$W/sdist-ccache.stats")
  fi
  mkdir -p "$W/tmp"
  local start=$SECONDS
  env TMPDIR="$W/tmp" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "${ccache_env[@]}" \
    "$v/bin/pip" install -v "${isolation[@]}" --no-clean --disable-pip-version-check \
      -C cmake.define.CMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON "${launcher[@]}" -C build.verbose=true \
      "$sdist" >"$W/sdist-build.log" 2>&1 || { cat "$W/sdist-build.log"; fail "pip install of the sdist failed"; }
  say "pip install of the sdist (configure, compile, install${isolation[0]:+; its build requirements installed before}): $((SECONDS - start)) s"
  if [ ${#ccache_env[@]} -gt 0 ]; then
    say "ccache: $(CCACHE_STATSLOG="$W/sdist-ccache.stats" ccache --show-log-stats | grep -E '^ *(Hits|Misses):' | sed -E 's/ +/ /g; s/^ //' | paste -sd';')"
  fi

  # The fallback was taken: CMake said so, and the objects' dependencies name
  # PyPI's json.hpp (the venv's), never Debian's /usr/include/nlohmann.
  grep -F "nlohmann_json: no CMake config found; using PyPI nlohmann-json's headers: $headers" "$W/sdist-build.log" \
    || fail "the sdist build did not report the PyPI nlohmann-json fallback"
  local bdir deps
  bdir=$(dirname "$(one "$W/tmp/pip-req-build-*/build/python/*/CMakeCache.txt")")
  if [ -f "$bdir/build.ninja" ]; then deps=$(ninja -C "$bdir" -t deps)
  else deps=$(find "$bdir" -name '*.o.d' -exec cat {} +); fi   # CMake's Makefiles generator
  grep -q 'nlohmann_json/include/nlohmann/json.hpp' <<<"$deps" || fail "no object depends on PyPI nlohmann-json's json.hpp"
  if grep -m3 '/usr/include/nlohmann/' <<<"$deps"; then fail "objects include Debian's nlohmann headers"; fi
  say "nlohmann: $(grep -c 'nlohmann_json/include/nlohmann/json.hpp' <<<"$deps") objects include PyPI's json.hpp, none /usr/include/nlohmann"
  rm -rf "$W/tmp"

  cd "$W" && "$v/bin/python" -I "$HERE/smoke.py" | sed "s/^/>> /"
}

# ---- driver -------------------------------------------------------------------
run_part() {
  local part=$1 start=$SECONDS status=0
  # In the background and waited for: a subshell tested with || would run with set -e off.
  ( "part_$part" ) >"$W/$part.log" 2>&1 &
  wait $! || status=$?
  if [ "$status" = 0 ]; then
    sed -n "s/^>> /  [$part] /p" "$W/$part.log"
    echo "install-test $part: passed in $((SECONDS - start)) s"
  else
    echo "======== install-test $part: FAILED in $((SECONDS - start)) s; log ($W/$part.log):"
    cat "$W/$part.log"
  fi
  return "$status"
}

pids=()
names=()
for part in "${PARTS[@]}"; do
  case $part in npm | wheel | sdist) ;; *) fail "unknown part $part (npm, wheel, sdist)" ;; esac
  run_part "$part" & pids+=($!); names+=("$part")
done
failed=()
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
if [ ${#failed[@]} -gt 0 ]; then echo "install-test: FAILED (${failed[*]})"; exit 1; fi
[ "${KEEP:-}" = 1 ] || rm -rf "$W"
echo "install-test: PASSED (${PARTS[*]})"
