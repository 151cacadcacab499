# Interop with Python TensorFlow, for tests that check files tapeflow writes against TensorFlow.
#
# With TAPEFLOW_INTEROP=ON, configuring creates the venv ${CMAKE_BINARY_DIR}/venv and pip-installs
# tensorflow-cpu, tensorboard and tf-keras (Keras 2: checkpoint names as tf_keras writes them)
# into it (once: a stamp file records success; after a failure, delete
# ${CMAKE_BINARY_DIR}/venv-pip.failed to retry). TAPEFLOW_PYTHON is the venv's python, or empty when
# provisioning failed (a loud warning; configuring goes on).
#
#   tapeflow_add_interop_test(NAME <name> COMMAND <cmd>... [WORKING_DIRECTORY <dir>] [TIMEOUT <s>])
#     Registers a test (only with TAPEFLOW_INTEROP=ON) that sees TAPEFLOW_PYTHON in its
#     environment; a test exiting 77 counts as skipped. Without Python TensorFlow the test runs a
#     command that prints "SKIPPED: ..." and exits 77 instead of COMMAND.
include_guard(GLOBAL)

set(TAPEFLOW_PYTHON "")
if(TAPEFLOW_INTEROP)
  set(_tapeflow_packages tensorflow-cpu tensorboard tf-keras)
  list(JOIN _tapeflow_packages " " _tapeflow_packages_text)
  set(_tapeflow_venv "${CMAKE_BINARY_DIR}/venv")
  set(_tapeflow_stamp "${_tapeflow_venv}/tapeflow-installed.txt")
  set(_tapeflow_failed "${CMAKE_BINARY_DIR}/venv-pip.failed")
  set(_tapeflow_log "${CMAKE_BINARY_DIR}/venv-pip.log")
  set(_tapeflow_error "")
  set(_tapeflow_installed "")
  if(EXISTS "${_tapeflow_stamp}")
    file(READ "${_tapeflow_stamp}" _tapeflow_installed)
  endif()
  if(_tapeflow_installed STREQUAL "${_tapeflow_packages}")
    set(TAPEFLOW_PYTHON "${_tapeflow_venv}/bin/python")
  elseif(EXISTS "${_tapeflow_failed}")
    file(READ "${_tapeflow_failed}" _tapeflow_error)
  else()
    find_package(Python3 3.9 COMPONENTS Interpreter)
    if(NOT Python3_Interpreter_FOUND)
      set(_tapeflow_error "no Python 3 interpreter found")
    else()
      message(STATUS "tapeflow interop: creating ${_tapeflow_venv} and installing "
                     "${_tapeflow_packages_text} (can take minutes; log: ${_tapeflow_log})")
      execute_process(COMMAND "${Python3_EXECUTABLE}" -m venv "${_tapeflow_venv}"
                      OUTPUT_FILE "${_tapeflow_log}" ERROR_FILE "${_tapeflow_log}"
                      RESULT_VARIABLE _tapeflow_rc)
      if(_tapeflow_rc EQUAL 0)
        execute_process(COMMAND "${_tapeflow_venv}/bin/python" -m pip install
                                --disable-pip-version-check ${_tapeflow_packages}
                        OUTPUT_FILE "${_tapeflow_log}" ERROR_FILE "${_tapeflow_log}"
                        RESULT_VARIABLE _tapeflow_rc TIMEOUT 3600)
        if(_tapeflow_rc EQUAL 0)
          file(WRITE "${_tapeflow_stamp}" "${_tapeflow_packages}")
          set(TAPEFLOW_PYTHON "${_tapeflow_venv}/bin/python")
        else()
          set(_tapeflow_error "pip install ${_tapeflow_packages_text} failed (${_tapeflow_rc})")
        endif()
      else()
        set(_tapeflow_error
            "${Python3_EXECUTABLE} -m venv failed (${_tapeflow_rc}); Debian: install python3-venv")
      endif()
      if(_tapeflow_error)
        file(WRITE "${_tapeflow_failed}" "${_tapeflow_error}")
      endif()
    endif()
  endif()
  if(TAPEFLOW_PYTHON)
    message(STATUS "tapeflow interop: TAPEFLOW_PYTHON=${TAPEFLOW_PYTHON}")
  else()
    set(_tapeflow_tail "")
    if(EXISTS "${_tapeflow_log}")
      file(READ "${_tapeflow_log}" _tapeflow_tail)
      string(LENGTH "${_tapeflow_tail}" _tapeflow_length)
      if(_tapeflow_length GREATER 2000)
        math(EXPR _tapeflow_length "${_tapeflow_length} - 2000")
        string(SUBSTRING "${_tapeflow_tail}" ${_tapeflow_length} -1 _tapeflow_tail)
      endif()
    endif()
    message(WARNING
      "\n******** tapeflow interop: NO PYTHON TENSORFLOW ********\n"
      "${_tapeflow_error}\n"
      "Interop tests will be SKIPPED. Log: ${_tapeflow_log}\n"
      "To retry: rm -f ${_tapeflow_failed} and configure again.\n"
      "Log tail:\n${_tapeflow_tail}\n"
      "*********************************************************\n")
  endif()
endif()

function(tapeflow_add_interop_test)
  if(NOT TAPEFLOW_INTEROP OR NOT TAPEFLOW_TESTS_ENABLED)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;WORKING_DIRECTORY;TIMEOUT" "COMMAND")
  if(NOT arg_WORKING_DIRECTORY)
    string(MAKE_C_IDENTIFIER "${arg_NAME}" dir)
    set(arg_WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/work/${dir}")
    file(MAKE_DIRECTORY "${arg_WORKING_DIRECTORY}")
  endif()
  if(TAPEFLOW_PYTHON)
    add_test(NAME "${arg_NAME}" COMMAND ${arg_COMMAND} WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}")
  else()
    add_test(NAME "${arg_NAME}" COMMAND sh -c
             "echo 'SKIPPED: interop needs Python TensorFlow (pip could not install it)'; exit 77")
  endif()
  set_tests_properties("${arg_NAME}" PROPERTIES
    SKIP_RETURN_CODE 77 LABELS interop
    ENVIRONMENT "TAPEFLOW_PYTHON=${TAPEFLOW_PYTHON};TF_CPP_MIN_LOG_LEVEL=2")
  if(arg_TIMEOUT)
    set_tests_properties("${arg_NAME}" PROPERTIES TIMEOUT ${arg_TIMEOUT})
  endif()
endfunction()
