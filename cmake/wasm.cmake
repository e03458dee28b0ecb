# WebAssembly build of agui-state-sync (included from CMakeLists.txt when the
# toolchain is Emscripten: `emcmake cmake -S . -B build/wasm`).
#
# Produces the npm package's engines in js/wasm/:
#   agui_sync.mjs   ES module factory (MODULARIZE + EXPORT_ES6, no top-level await)
#   agui_sync.wasm  the receiver engine; the glue finds it with the bundler-friendly
#                   `new URL('agui_sync.wasm', import.meta.url)`, and under Node
#                   js/src/loader.js reads it from disk.
#   agui_emitter.*  the same for the sender (StateEmitter), loaded only by
#                   createStateEmitter().
#
# Why -O3 -flto and a separate .wasm (measured on this machine, 2,000 deltas of
# ~500 bytes in 2 KB chunks, best of 15 runs):
#   -O3 -flto : wasm 193 KB (74 KB gz) + glue 46 KB (12 KB gz), ~15 us/event
#   -O2       : wasm 195 KB (76 KB gz),                          ~23 us/event
#   -Os       : wasm 153 KB (65 KB gz),                          ~62 us/event
# -Os costs 4x the time for 11 KB gz. Embedding the -O3 wasm as base64
# (SINGLE_FILE) makes the module 119 KB gz, over the 100 KB budget; separate
# files total ~86 KB gz. AGUI_WASM_SINGLE_FILE=ON still builds the embedded
# variant for hosts that cannot serve a second file.
#
# Facts about Emscripten 3.1.6 on Debian that this file depends on:
#  - never put /usr/include on the include path under em++, so nlohmann_json's
#    CMake target is not used; a build-tree directory holding only a `nlohmann`
#    symlink is used instead;
#  - Emscripten's JS optimizer needs Debian's acorn: NODE_PATH=/usr/share/nodejs
#    is injected into every link command below;
#  - `emcmake` sets an emulator flag Node 20 rejects; it is overridden;
#  - -sDYNAMIC_EXECUTION=0 keeps `new Function`/eval out of the glue, so the
#    package runs under CSP `script-src 'self' 'wasm-unsafe-eval'`.

set(AGUI_WASM_OUTPUT_DIR "${CMAKE_CURRENT_SOURCE_DIR}/js/wasm" CACHE PATH
    "Where the WASM engine of the npm package is written")
set(AGUI_WASM_OPT "-O3" CACHE STRING "Optimization level of the WASM build (-O3 or -Os)")
option(AGUI_WASM_LTO "Link-time optimization (smaller and slightly faster)" ON)
option(AGUI_WASM_SINGLE_FILE "Embed the .wasm in the ES module as base64" OFF)
set(AGUI_NLOHMANN_INCLUDE_DIR "" CACHE PATH
    "Directory that contains nlohmann/json.hpp (default: found under /usr/include)")
set(AGUI_NODE_PATH "/usr/share/nodejs" CACHE PATH "NODE_PATH for Emscripten's JS optimizer (acorn)")

find_program(AGUI_NODE_EXECUTABLE node NO_CMAKE_FIND_ROOT_PATH)
if(AGUI_NODE_EXECUTABLE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${AGUI_NODE_EXECUTABLE}" CACHE FILEPATH
      "Node without the --experimental-wasm-threads flag emcmake adds" FORCE)
endif()

# --- nlohmann_json, without /usr/include -------------------------------------
if(NOT AGUI_NLOHMANN_INCLUDE_DIR)
  # The Emscripten toolchain confines find_* to its sysroot; look at the host
  # explicitly (the header is only symlinked, never put on the include path).
  foreach(dir /usr/include /usr/local/include)
    if(EXISTS "${dir}/nlohmann/json.hpp")
      set(AGUI_NLOHMANN_INCLUDE_DIR "${dir}" CACHE PATH "" FORCE)
      break()
    endif()
  endforeach()
endif()
if(NOT EXISTS "${AGUI_NLOHMANN_INCLUDE_DIR}/nlohmann/json.hpp")
  message(FATAL_ERROR "nlohmann/json.hpp not found (apt-get install nlohmann-json3-dev, "
                      "or pass -DAGUI_NLOHMANN_INCLUDE_DIR=...)")
endif()
set(AGUI_WASM_INCLUDE_SHIM "${CMAKE_CURRENT_BINARY_DIR}/nlohmann-only-include")
file(MAKE_DIRECTORY "${AGUI_WASM_INCLUDE_SHIM}")
if(NOT EXISTS "${AGUI_WASM_INCLUDE_SHIM}/nlohmann")
  file(CREATE_LINK "${AGUI_NLOHMANN_INCLUDE_DIR}/nlohmann" "${AGUI_WASM_INCLUDE_SHIM}/nlohmann"
       COPY_ON_ERROR SYMBOLIC)
endif()

# --- the modules ---------------------------------------------------------------
# Two modules from one bindings file: browsers load only the receiver.
#   agui_sync     SyncFacade (receiver, guard) + canonicalize/verify -DAGUI_BIND_SYNC
#   agui_emitter  EmitterFacade (sender)   + canonicalize/verify     -DAGUI_BIND_EMITTER
# (One module with both measured 97 KB gz of wasm + 12 KB of glue, over the
# 100 KB budget; the receiver alone is ~82 + 12 KB.)
# The core is exception-free; a stray throw becomes abort(), which the wrapper
# reports as an Error. Exceptions off also keeps invoke_* trampolines away.
# No RTTI either (embind works without it when EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES
# is 0): the type-name strings of nlohmann's templates cost ~2 KB gz.
set(AGUI_WASM_OPT_FLAGS ${AGUI_WASM_OPT})
if(AGUI_WASM_LTO)
  list(APPEND AGUI_WASM_OPT_FLAGS -flto)
endif()

set(AGUI_WASM_LINK_OPTIONS
  ${AGUI_WASM_OPT_FLAGS}
  -fno-exceptions
  -fno-rtti
  --bind
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  -sENVIRONMENT=web,worker
  -sALLOW_MEMORY_GROWTH=1
  -sDYNAMIC_EXECUTION=0
  -sFILESYSTEM=0
  -sTEXTDECODER=2
  -sINCOMING_MODULE_JS_API=[wasmBinary,locateFile,instantiateWasm,onAbort,print,printErr]
)
if(AGUI_WASM_SINGLE_FILE)
  list(APPEND AGUI_WASM_LINK_OPTIONS -sSINGLE_FILE=1)
endif()

# Code size. The prompt renderer (renderStateForPrompt) is bound in the server
# engine only (bindings/wasm/embind.cpp): in the browser engine it cost ~11 KB
# gzipped (122,339 -> 110,754 B, wasm + glue, as tests/js/package.test.mjs
# measures it with Node's zlib at level 9; the budget there is 112 KiB). The
# server engine is not downloaded by browsers, but its size is still a cost
# (cold starts, the npm tarball), so the sources below keep their flags there
# too. Paths that do not run per
# event are therefore built for size; the receiver's per-event path (framing,
# decoding, JSON reader, patch, pointers, result JSON, feedInput) keeps -O3:
#  - -Oz: the renderer's driver, options, trie, ownership and facade; the guard,
#    metrics, codes and outcome names; RFC 8785 + SHA-256 (digests, checked every
#    digestEvery events and on approvals, dominated by the JSON parse);
#  - -Os: the render walk, its character writer, ECMAScript numbers, UTF-16 key
#    order and the measure of what a render left out (where a render spends its
#    time: ~20% slower than -O3, against ~30% for -Oz).
# Result, renderer alone: 90,059 B wasm + 11,784 B glue = 101,843 B (99.5 KiB)
# (make wasm prints GNU gzip's figures, about 1 KB lower for the wasm).
set(AGUI_WASM_SIZE_SOURCES render/prompt_render.cpp render/path_trie.cpp render/ownership.cpp
    facade/prompt_facade.cpp facade/facade_json.cpp receive/approval_guard.cpp receive/metrics.cpp
    receive/outcome.cpp wire/codes.cpp json/canonical_json.cpp json/sha256.cpp
    # user edits and checkpoints: per edit or per reload, never per event unless an edit is pending
    edit/edit_layer.cpp edit/edit_paths.cpp edit/edit_acks.cpp edit/edit_ledger.cpp facade/edit_json.cpp
    emit/edit_intake.cpp
    # activities (docs/wire.md section 11): only routing around the receiver, which stays -O3;
    # a store-bound thread's activity record: per activity write on a server, never in a browser
    # (at the default level its template copies displaced the browser engine's smaller ones: +40 B gzipped)
    receive/activity_book.cpp emit/activity_record.cpp)
set(AGUI_WASM_SMALL_HOT_SOURCES render/renderer.cpp render/prompt_text.cpp json/ecma_number.cpp
    json/utf16_order.cpp json/json_measure.cpp)
list(TRANSFORM AGUI_WASM_SIZE_SOURCES PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/src/")
list(TRANSFORM AGUI_WASM_SMALL_HOT_SOURCES PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/src/")
set_source_files_properties(${AGUI_WASM_SIZE_SOURCES} PROPERTIES COMPILE_OPTIONS -Oz)
set_source_files_properties(${AGUI_WASM_SMALL_HOT_SOURCES} PROPERTIES COMPILE_OPTIONS -Os)

function(agui_wasm_module target output_name export_name define)
  add_executable(${target}
    ${CMAKE_CURRENT_SOURCE_DIR}/bindings/wasm/embind.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/bindings/wasm/type_name.cpp
    ${AGUI_CORE_SOURCES})
  target_include_directories(${target} PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/include
    ${CMAKE_CURRENT_SOURCE_DIR}/src
    ${AGUI_WASM_INCLUDE_SHIM})
  target_compile_options(${target} PRIVATE ${AGUI_WASM_OPT_FLAGS} -fno-exceptions -fno-rtti -Wall -Wextra)
  target_compile_definitions(${target} PRIVATE JSON_NOEXCEPTION EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0 ${define})
  target_link_options(${target} PRIVATE ${AGUI_WASM_LINK_OPTIONS} -sEXPORT_NAME=${export_name})
  # How a std::string crosses the boundary: the platform's TextEncoder/TextDecoder (why: in the file).
  set(std_string_js ${CMAKE_CURRENT_SOURCE_DIR}/bindings/wasm/std_string.js)
  # How a long decimal becomes a double: the platform's Number() (why: in the file).
  set(parse_decimal_js ${CMAKE_CURRENT_SOURCE_DIR}/bindings/wasm/parse_decimal.js)
  target_link_options(${target} PRIVATE "SHELL:--js-library ${std_string_js}"
                      "SHELL:--js-library ${parse_decimal_js}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${std_string_js} ${parse_decimal_js})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${output_name}
    SUFFIX ".mjs"
    RUNTIME_OUTPUT_DIRECTORY "${AGUI_WASM_OUTPUT_DIR}"
    # Emscripten's JS optimizer needs acorn, which Debian installs outside Node's path.
    RULE_LAUNCH_LINK "${CMAKE_COMMAND} -E env NODE_PATH=${AGUI_NODE_PATH}")
  # A stale .wasm from a previous separate-file build must not ship.
  if(AGUI_WASM_SINGLE_FILE)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E rm -f "${AGUI_WASM_OUTPUT_DIR}/${output_name}.wasm")
  endif()
  # Sizes, for the record (make wasm prints them).
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DDIR=${AGUI_WASM_OUTPUT_DIR} -DNAME=${output_name}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/wasm_size.cmake
    VERBATIM)
endfunction()

agui_wasm_module(agui_sync_wasm agui_sync createAguiSyncModule AGUI_BIND_SYNC)
# The browser engine inlines less than -O3's default (threshold 225 before
# LTO; both at compile and in the LTO step at link) and allocates with
# Emscripten's small allocator instead of dlmalloc: together ~7 KB of the
# page's gzipped download (issue 27: the 100 KB budget). Their price, measured
# side by side with bench/js/bench_consumers.mjs --baseline (that run is in
# git history; today's download and per-event figures, with their commands,
# are in docs/performance.md): each alone within the noise, together the
# engine alone 1.03-1.15x and end to end 0.99-1.12x. The saving is in the
# per-event path itself (its files at the default threshold give all of it
# back), so it cannot be had for free. The
# heap stays flat (bench_memory.mjs, 300,000 deltas) and the proxy's receiver
# is no slower per 50 KB snapshot (bench_proxy.mjs). The server engine keeps
# both defaults: nobody downloads it per page view.
target_compile_options(agui_sync_wasm PRIVATE "SHELL:-mllvm -inline-threshold=100")
target_link_options(agui_sync_wasm PRIVATE "-Wl,-mllvm,-inline-threshold=100")
target_link_options(agui_sync_wasm PRIVATE -sMALLOC=emmalloc)
agui_wasm_module(agui_emitter_wasm agui_emitter createAguiEmitterModule AGUI_BIND_EMITTER)
