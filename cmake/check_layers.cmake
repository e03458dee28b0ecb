# ctest driver (test `layering`): no include points from a lower layer of the
# library up to a higher one. Run as: cmake -DROOT=<repo> -P check_layers.cmake
#
#   json/     JSON primitives; knows nothing about AG-UI (the public
#             canonical_json.h is its one public header)
#   wire/     the code table and wire constants both sides share
#   render/   prompt-safe rendering of state (JSON primitives + the code table)
#   edit/     user edits: ownership, overlap, acks, the client's pending layer
#   receive/  the receiving engine        emit/  the sender (neither sees the other)
#   run/      one run's life: its log, its clients, grace and abort (sans-I/O)
#   facade/   string facades for the bindings: may use everything below
#   include/agui_sync/  the public API: includes only its own headers
set(allowed_json "json/" "<agui_sync/canonical_json.h>")
set(allowed_wire "json/" "wire/" "<agui_sync/codes.h>")
set(allowed_render "json/" "wire/" "render/" "<agui_sync/")
set(forbidden_render "<agui_sync/sync_engine.h>" "<agui_sync/state_emitter.h>" "<agui_sync/approval_guard.h>"
    "<agui_sync/outcome.h>" "<agui_sync/metrics.h>" "<agui_sync/sync_status.h>" "<agui_sync/agui_sync.h>")
set(allowed_edit "json/" "wire/" "edit/" "<agui_sync/")
set(forbidden_edit "<agui_sync/sync_engine.h>" "<agui_sync/state_emitter.h>" "<agui_sync/approval_guard.h>"
    "<agui_sync/agui_sync.h>")
set(allowed_receive "json/" "wire/" "render/" "edit/" "receive/" "<agui_sync/")
set(forbidden_receive "<agui_sync/state_emitter.h>")
set(allowed_emit "json/" "wire/" "render/" "edit/" "emit/" "<agui_sync/")
set(forbidden_emit "<agui_sync/sync_engine.h>" "<agui_sync/approval_guard.h>" "<agui_sync/outcome.h>"
    "<agui_sync/metrics.h>" "<agui_sync/sync_status.h>")
set(allowed_run "json/" "wire/" "run/")
set(allowed_facade "json/" "wire/" "render/" "edit/" "receive/" "emit/" "run/" "facade/" "<agui_sync/")

set(violations "")
foreach(layer json wire render edit receive emit run facade)
  file(GLOB files "${ROOT}/src/${layer}/*.h" "${ROOT}/src/${layer}/*.cpp")
  foreach(f ${files})
    file(STRINGS "${f}" includes REGEX "^#include [\"<]")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include (.*)$" "\\1" target "${line}")
      string(REGEX REPLACE "[ \t]*//.*$" "" target "${target}")
      # Standard and third-party headers (<vector>, <nlohmann/json.hpp>) are not layers.
      if(target MATCHES "^<" AND NOT target MATCHES "^<agui_sync/")
        continue()
      endif()
      string(REGEX REPLACE "^\"(.*)\"$" "\\1" target "${target}")
      set(ok FALSE)
      foreach(prefix ${allowed_${layer}})
        string(FIND "${target}" "${prefix}" at)
        if(at EQUAL 0)
          set(ok TRUE)
        endif()
      endforeach()
      foreach(bad ${forbidden_${layer}})
        if(target STREQUAL bad)
          set(ok FALSE)
        endif()
      endforeach()
      if(NOT ok)
        file(RELATIVE_PATH rel "${ROOT}" "${f}")
        list(APPEND violations "${rel}: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()

file(GLOB public "${ROOT}/include/agui_sync/*.h")
foreach(f ${public})
  file(STRINGS "${f}" includes REGEX "^#include \"")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include \"([^\"]*)\".*$" "\\1" target "${line}")
    if(NOT EXISTS "${ROOT}/include/agui_sync/${target}")
      file(RELATIVE_PATH rel "${ROOT}" "${f}")
      list(APPEND violations "${rel}: ${line} (a public header may include only public headers)")
    endif()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering violations:\n  ${text}")
endif()
message(STATUS "layering: every include points down")
