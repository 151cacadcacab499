# Helpers for the targets tapeflow builds for itself (tests, examples, benches). Nothing here
# touches the tapeflow INTERFACE target that users link.
#
#   tapeflow_dev_flags                  INTERFACE target: warnings, -Werror, -march=native, -ftime-trace
#   tapeflow_add_unit_tests([DIRECTORY <dir>])   tests/<dir>/<module>/**/<entity>.test.cpp (dir: unit)
#   tapeflow_add_static_tests()          tests/static/**/*.cpp, compile-only
#     (these two and the next link tapeflow_test_flags, which tests/CMakeLists.txt defines first)
#   tapeflow_add_fail_tests()            tests/fail/**/*.cpp, must not compile
#   tapeflow_add_example(<name> SOURCES <src>...)
#   tapeflow_add_example_test(<name> [NAME <test>] [ARGS <arg>...] [PASS_REGULAR_EXPRESSION <re>...]
#                             [FAIL_REGULAR_EXPRESSION <re>...] [TIMEOUT <s>])
#   tapeflow_add_bench(<name> SOURCES <src>...)
#   tapeflow_add_skipped_test(NAME <name> REASON <text>)
include_guard(GLOBAL)

add_library(tapeflow_dev_flags INTERFACE)
target_compile_options(tapeflow_dev_flags INTERFACE -Wall -Wextra -Wpedantic)
if(TAPEFLOW_DEV_WERROR)
  target_compile_options(tapeflow_dev_flags INTERFACE -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 flags _mm512_undefined_ps() inside Eigen's AVX-512 tanh/exp as uninitialized once
  # inlined into our kernels (GCC bug 105593, fixed in 13): a false positive we cannot silence
  # at the site, since the warning points into the compiler's own intrinsics header.
  # GCC 12's middle-end also reports -Warray-bounds, -Wrestrict and -Wuse-after-free on
  # paths it cannot prove dead (fixed-size axis arrays indexed by a run-time rank; a buffer
  # freed when a reference count it cannot see drops to zero). GCC 13 no longer does.
  target_compile_options(tapeflow_dev_flags INTERFACE -Wno-uninitialized -Wno-array-bounds
                                                      -Wno-restrict -Wno-use-after-free)
endif()
# Our own programs find datasets in the repository's data/ from any working directory
# (keras/utils/get_file.hpp); the installed package compiles no such path in.
target_compile_definitions(tapeflow_dev_flags INTERFACE
  "TAPEFLOW_DEFAULT_DATASETS_DIR=\"${PROJECT_SOURCE_DIR}/data\"")
if(TAPEFLOW_NATIVE)
  # Eigen picks its SIMD width at compile time; without this GEMM runs on SSE2.
  target_compile_options(tapeflow_dev_flags INTERFACE -march=native)
endif()
if(TAPEFLOW_DEV_PRECOMPILED)
  if(NOT TAPEFLOW_BUILD_INSTANTIATIONS)
    message(FATAL_ERROR "TAPEFLOW_DEV_PRECOMPILED needs TAPEFLOW_BUILD_INSTANTIATIONS")
  endif()
  target_link_libraries(tapeflow_dev_flags INTERFACE tapeflow::instantiations)
endif()
if(TAPEFLOW_DEV_TIME_TRACE)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(tapeflow_dev_flags INTERFACE -ftime-trace)
  else()
    message(WARNING "TAPEFLOW_DEV_TIME_TRACE needs Clang (-ftime-trace); "
                    "ignored for ${CMAKE_CXX_COMPILER_ID}")
  endif()
endif()

# Registers a test that prints "SKIPPED: <reason>" and exits 77, which CTest reports as skipped.
function(tapeflow_add_skipped_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;REASON" "")
  add_test(NAME "${arg_NAME}" COMMAND sh -c "echo 'SKIPPED: ${arg_REASON}'; exit 77")
  set_tests_properties("${arg_NAME}" PROPERTIES SKIP_RETURN_CODE 77)
endfunction()

# One executable per tests/<dir>/<module>/ (all its <entity>.test.cpp, nested folders included),
# named test_<module> (other dirs than unit add <dir>_), linked with Catch2's main (compiled
# once) and tests/support/ on the include path. Its sources are compiled as unity batches of
# TAPEFLOW_TEST_UNITY_BATCH files: test files share most of their headers and template
# instantiations (the ops' kernels, tape and trace closures), which a batch parses and optimizes
# once; this halves the suite's compile time (bench/RESULTS.md, "Test build"). Each test file
# therefore wraps its body in namespace test_<module>_<entity> (a batch is one TU).
# Each case is registered as "<module>/<entity>: <case>" (selected by Catch's filename tag,
# `-#`), with label <dir>, run in <build>/tests/work/test_<module>_<entity>.
# TAPEFLOW_TEST_DATA_DIR names tests/data/ in the source tree.
set(TAPEFLOW_TEST_UNITY_BATCH 6 CACHE STRING "test files per unity TU (1: no unity build)")
function(tapeflow_add_unit_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "DIRECTORY" "")
  if(NOT arg_DIRECTORY)
    set(arg_DIRECTORY unit)
  endif()
  set(root "${tapeflow_SOURCE_DIR}/tests/${arg_DIRECTORY}")
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${root}/*.test.cpp")
  if(NOT files)
    return()
  endif()
  find_package(Catch2 2.13 CONFIG REQUIRED)
  include("${Catch2_DIR}/Catch.cmake")  # Catch2Config adds its module path only once
  # Catch.cmake hands TEST_PREFIX to its discovery script through `cmake -D`, which strips
  # trailing blanks: put the prefix's final space back in a wrapper around that script.
  if(DEFINED _CATCH_DISCOVER_TESTS_SCRIPT)
    set(wrapper "${CMAKE_CURRENT_BINARY_DIR}/tapeflow_catch_add_tests.cmake")
    file(CONFIGURE OUTPUT "${wrapper}" @ONLY CONTENT [[
set(TEST_PREFIX "${TEST_PREFIX} ")
include("@_CATCH_DISCOVER_TESTS_SCRIPT@")
]])
    set(_CATCH_DISCOVER_TESTS_SCRIPT "${wrapper}")
  endif()
  if(NOT TARGET tapeflow_catch_main)
    add_library(tapeflow_catch_main OBJECT "${tapeflow_SOURCE_DIR}/tests/catch_main.cpp")
    target_link_libraries(tapeflow_catch_main PUBLIC Catch2::Catch2 PRIVATE tapeflow_dev_flags)
    target_compile_features(tapeflow_catch_main PUBLIC cxx_std_20)
  endif()
  set(modules "")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${root}" "${file}")
    string(REGEX MATCH "^[^/]+" module "${rel}")
    list(APPEND modules "${module}")
    list(APPEND "sources_${module}" "${file}")
  endforeach()
  list(REMOVE_DUPLICATES modules)
  foreach(module IN LISTS modules)
    # tests/unit/cuda/ needs tapeflow::cuda (built where nvcc is); its cases carry the label
    # `gpu` and, on a machine without a CUDA device, print "GPU TESTS SKIPPED" and count as
    # skipped in CTest's summary.
    set(extra_properties "")
    if(module STREQUAL "cuda")
      if(NOT TARGET tapeflow_cuda)
        message(STATUS "tapeflow: tests/${arg_DIRECTORY}/cuda need tapeflow::cuda: not built")
        continue()
      endif()
      set(extra_properties SKIP_REGULAR_EXPRESSION "GPU TESTS SKIPPED")
    endif()
    # tests/unit/thrust_cpu/ runs the CUDA backend's Thrust algorithms under Thrust's C++ and
    # OpenMP systems with the host compiler: it needs the toolkit's CCCL headers, so it is
    # built where tapeflow::cuda is (every CI run), no GPU needed.
    if(module STREQUAL "thrust_cpu" AND NOT TARGET tapeflow_cuda)
      message(STATUS "tapeflow: tests/${arg_DIRECTORY}/thrust_cpu need the CUDA toolkit: not built")
      continue()
    endif()
    set(id "${module}")
    set(label "${arg_DIRECTORY}")
    if(module STREQUAL "cuda")
      set(label gpu)
    endif()
    if(NOT arg_DIRECTORY STREQUAL "unit")
      set(id "${arg_DIRECTORY}/${id}")
    endif()
    string(MAKE_C_IDENTIFIER "test_${id}" target)
    add_executable(${target} ${sources_${module}})
    target_link_libraries(${target} PRIVATE tapeflow::tapeflow tapeflow_catch_main tapeflow_test_flags)
    if(module STREQUAL "cuda")
      target_link_libraries(${target} PRIVATE tapeflow::cuda)
      if(TARGET tapeflow_nccl)  # the NCCL collective's cases say "skipped" without it
        target_link_libraries(${target} PRIVATE tapeflow::nccl)
      endif()
    endif()
    if(module STREQUAL "thrust_cpu")
      target_include_directories(${target} SYSTEM PRIVATE "${CUDAToolkit_INCLUDE_DIRS}"
                                                          "${CUDAToolkit_INCLUDE_DIRS}/cccl")
      # OpenMP's runtime is not built for ThreadSanitizer, which would report its own
      # synchronization as races: that build tests the C++ system alone.
      find_package(OpenMP COMPONENTS CXX QUIET)
      if(OpenMP_CXX_FOUND AND NOT CMAKE_CXX_FLAGS MATCHES "sanitize=thread")
        target_link_libraries(${target} PRIVATE OpenMP::OpenMP_CXX)
        target_compile_definitions(${target} PRIVATE TAPEFLOW_TEST_THRUST_OMP=1)
      endif()
    endif()
    target_include_directories(${target} PRIVATE "${tapeflow_SOURCE_DIR}/tests/support")
    target_compile_definitions(${target} PRIVATE
      "TAPEFLOW_TEST_DATA_DIR=\"${tapeflow_SOURCE_DIR}/tests/data\"")
    if(TAPEFLOW_TEST_UNITY_BATCH GREATER 1)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                                 UNITY_BUILD_BATCH_SIZE ${TAPEFLOW_TEST_UNITY_BATCH})
    endif()
    foreach(file IN LISTS sources_${module})
      file(RELATIVE_PATH entity "${root}/${module}" "${file}")
      string(REGEX REPLACE "\\.test\\.cpp$" "" entity "${entity}")
      get_filename_component(stem "${file}" NAME)
      string(REGEX REPLACE "\\.cpp$" "" stem "${stem}")  # Catch's tag: "#<name>.test"
      string(MAKE_C_IDENTIFIER "${target}_${entity}" workname)
      set(workdir "${CMAKE_CURRENT_BINARY_DIR}/work/${workname}")
      file(MAKE_DIRECTORY "${workdir}")
      # --warn NoTests: a registered name that selects no case fails instead of passing (CMake
      # splits a case name at ';' into names that match nothing).
      catch_discover_tests(${target} TEST_SPEC "-#" "[#${stem}]" TEST_PREFIX "${id}/${entity}:"
                           WORKING_DIRECTORY "${workdir}"
                           EXTRA_ARGS --warn NoTests PROPERTIES LABELS "${label}" ${extra_properties})
    endforeach()
  endforeach()
endfunction()

# tests/static/**/*.cpp: TUs of static_asserts, compiled (as part of `all`) into one library.
function(tapeflow_add_static_tests)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${tapeflow_SOURCE_DIR}/tests/static/*.cpp")
  if(files)
    add_library(tapeflow_static_tests OBJECT ${files})
    target_link_libraries(tapeflow_static_tests PRIVATE tapeflow::tapeflow tapeflow_test_flags)
  endif()
endfunction()

# tests/fail/<module>/<name>.cpp holds one mistake, guarded by #ifndef TAPEFLOW_FAIL_TEST_SANITY,
# and starts with the line `// error: <regex>` (a CMake regex, no `;`, no \d or \s) that the
# compiler's message must match. Two EXCLUDE_FROM_ALL object libraries are made,
# tapeflow_fail_<module>_<name> and ..._sanity (-DTAPEFLOW_FAIL_TEST_SANITY), and two tests that
# build them through `cmake --build`: fail/<module>/<name> (the build must fail with a matching
# message) and fail/<module>/<name>/sanity (the build must succeed).
function(tapeflow_add_fail_tests)
  set(root "${tapeflow_SOURCE_DIR}/tests/fail")
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${root}/*.cpp")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH id "${root}" "${file}")
    string(REGEX REPLACE "\\.cpp$" "" id "${id}")
    string(MAKE_C_IDENTIFIER "tapeflow_fail_${id}" target)
    file(READ "${file}" text)
    if(NOT text MATCHES "^// error: ([^\r\n]+)")
      message(FATAL_ERROR "${file}: the first line must be `// error: <regex>`")
    endif()
    set(regex "${CMAKE_MATCH_1}")
    if(regex MATCHES ";" OR regex MATCHES "\\\\[dswDSW]")
      message(FATAL_ERROR "${file}: the regex is a CMake regex: no `;` (use `.`), "
                          "no \\d \\s \\w (use [0-9], [ \\t], [A-Za-z0-9_])")
    endif()
    if(NOT text MATCHES "#ifndef TAPEFLOW_FAIL_TEST_SANITY")
      message(FATAL_ERROR "${file}: put the mistake under #ifndef TAPEFLOW_FAIL_TEST_SANITY")
    endif()
    foreach(suffix IN ITEMS "" "_sanity")
      add_library(${target}${suffix} OBJECT EXCLUDE_FROM_ALL "${file}")
      target_link_libraries(${target}${suffix} PRIVATE tapeflow::tapeflow tapeflow_test_flags)
    endforeach()
    target_compile_definitions(${target}_sanity PRIVATE TAPEFLOW_FAIL_TEST_SANITY)
    add_test(NAME "fail/${id}"
             COMMAND "${CMAKE_COMMAND}" "-DBINARY_DIR=${CMAKE_BINARY_DIR}" "-DTARGET=${target}"
                     "-DCONFIG=$<CONFIG>" -P "${tapeflow_SOURCE_DIR}/cmake/TapeflowBuildMustFail.cmake")
    add_test(NAME "fail/${id}/sanity"
             COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target ${target}_sanity
                     --config "$<CONFIG>")
    set_tests_properties("fail/${id}" PROPERTIES PASS_REGULAR_EXPRESSION "${regex}")
    # Builds in the main build tree must not run concurrently (one ninja per tree).
    set_tests_properties("fail/${id}" "fail/${id}/sanity" PROPERTIES
                         LABELS fail RESOURCE_LOCK tapeflow_build_tree)
  endforeach()
endfunction()

# Example <name> from SOURCES: target example_<name>, binary <build>/examples/<name>. With tests
# on, CTest test example/<name>/help runs `<name> --help` and expects exit code 0.
function(tapeflow_add_example name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  add_executable(example_${name} ${arg_SOURCES})
  target_link_libraries(example_${name} PRIVATE tapeflow::tapeflow tapeflow_dev_flags)
  if(TARGET tapeflow_keras_io)  # Keras 3 weights files (model.load_weights of .weights.h5)
    target_link_libraries(example_${name} PRIVATE tapeflow::keras_io)
  endif()
  # The precompiled op instantiations where they are built, as a CMake user links them for
  # faster builds: a third of each example's compile time, the largest part of CI's build
  # (bench/RESULTS.md). The header-only path is what the Clang run and single-header tests build.
  if(TARGET tapeflow::instantiations)
    target_link_libraries(example_${name} PRIVATE tapeflow::instantiations)
  endif()
  set_target_properties(example_${name} PROPERTIES
    OUTPUT_NAME ${name} RUNTIME_OUTPUT_DIRECTORY "${tapeflow_BINARY_DIR}/examples")
  if(TAPEFLOW_TESTS_ENABLED)
    set(workdir "${tapeflow_BINARY_DIR}/examples/${name}.work")
    file(MAKE_DIRECTORY "${workdir}")
    add_test(NAME "example/${name}/help" COMMAND example_${name} --help WORKING_DIRECTORY "${workdir}")
    set_tests_properties("example/${name}/help" PROPERTIES LABELS example)
  endif()
endfunction()

# Test example/<name>/<NAME> (NAME defaults to "output"): runs example <name> with ARGS in
# <build>/examples/<name>.work; passes when it exits 0, EVERY PASS_REGULAR_EXPRESSION matches its
# stdout+stderr and no FAIL_REGULAR_EXPRESSION does (CMake regexes; `.` matches newlines).
function(tapeflow_add_example_test name)
  if(NOT TAPEFLOW_TESTS_ENABLED)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;TIMEOUT"
                        "ARGS;PASS_REGULAR_EXPRESSION;FAIL_REGULAR_EXPRESSION")
  if(NOT arg_NAME)
    set(arg_NAME output)
  endif()
  set(workdir "${tapeflow_BINARY_DIR}/examples/${name}.work")
  file(MAKE_DIRECTORY "${workdir}")
  add_test(NAME "example/${name}/${arg_NAME}"
           COMMAND "${CMAKE_COMMAND}" "-DCOMMAND=$<TARGET_FILE:example_${name}>;${arg_ARGS}"
                   "-DPASS=${arg_PASS_REGULAR_EXPRESSION}" "-DFAIL=${arg_FAIL_REGULAR_EXPRESSION}"
                   -P "${tapeflow_SOURCE_DIR}/cmake/TapeflowCheckOutput.cmake"
           WORKING_DIRECTORY "${workdir}")
  set_tests_properties("example/${name}/${arg_NAME}" PROPERTIES LABELS example)
  if(arg_TIMEOUT)
    set_tests_properties("example/${name}/${arg_NAME}" PROPERTIES TIMEOUT ${arg_TIMEOUT})
  endif()
endfunction()

# Benchmark <name> from SOURCES: target bench_<name>, binary <build>/bench/bench_<name>; links
# Google Benchmark when it is installed. Benches are built, never registered as tests.
function(tapeflow_add_bench name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  add_executable(bench_${name} ${arg_SOURCES})
  target_link_libraries(bench_${name} PRIVATE tapeflow::tapeflow tapeflow_dev_flags)
  if(NOT TARGET benchmark::benchmark)
    find_package(benchmark CONFIG QUIET)
  endif()
  if(TARGET benchmark::benchmark)
    target_link_libraries(bench_${name} PRIVATE benchmark::benchmark)
  endif()
  set_target_properties(bench_${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY "${tapeflow_BINARY_DIR}/bench")
endfunction()
