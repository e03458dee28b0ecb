# Prints raw and gzip sizes of the WASM package files
# (cmake -DDIR=... [-DNAME=agui_sync] -P wasm_size.cmake).
if(NOT NAME)
  set(NAME agui_sync)
endif()
file(GLOB files "${DIR}/${NAME}.*")
foreach(f ${files})
  file(SIZE "${f}" raw)
  get_filename_component(name "${f}" NAME)
  execute_process(COMMAND gzip -9c "${f}" COMMAND wc -c OUTPUT_VARIABLE gz OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(gz "?")
  endif()
  message(STATUS "${f}: ${raw} bytes, ${gz} gzipped")
endforeach()
