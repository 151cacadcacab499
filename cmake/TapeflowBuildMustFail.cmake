# cmake -DBINARY_DIR=<build tree> -DTARGET=<target> [-DCONFIG=<config>] -P TapeflowBuildMustFail.cmake
# Builds TARGET, which must fail to compile (see tapeflow_add_fail_tests). On failure prints the
# diagnostics without the build tool's own lines (ninja's FAILED:/command line, progress), so the
# test's PASS_REGULAR_EXPRESSION cannot match those; a successful build is an error.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target "${TARGET}"
                        --config "${CONFIG}"
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "This fail test compiled, but it must not.")
endif()
string(REGEX REPLACE "FAILED: [^\n]*\n[^\n]*\n" "" out "${out}")
string(REGEX REPLACE "(^|\n)(\\[[0-9]+/[0-9]+\\]|ninja: |g?make(\\[[0-9]+\\])?: )[^\n]*" "\\1" out
       "${out}")
message("${out}")
