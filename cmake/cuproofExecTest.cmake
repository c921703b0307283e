# cuproofExecTest.cmake: runs a command and passes exactly when it exits with
# the status a test is written for. cuproof_add_exec_test (cuproofCase.cmake)
# registers it for tests whose EXIT_CODE is not 0:
#
#   cmake -DCUPROOF_EXIT_CODE=N -P cuproofExecTest.cmake -- COMMAND [ARGS...]
#
# The command's output goes straight through. The script fails (exit 1)
# unless the command exits with N; a command that exits 77 (cuproof exec
# --skip-without-gpu with no GPU) is a skip whatever N is: the script prints
# "cuproofExecTest: skipped" (the test's SKIP_REGULAR_EXPRESSION) and exits
# 77 where CMake can (cmake_language(EXIT), CMake 3.29 and later). A command
# ended by a signal, or that cannot be started, fails. The arguments after
# "--" reach the command unchanged, ';' included; an empty argument is lost
# (CMake lists cannot hold one).

cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED CUPROOF_EXIT_CODE OR NOT CUPROOF_EXIT_CODE MATCHES "^[0-9]+$")
  message(FATAL_ERROR "cuproofExecTest: -DCUPROOF_EXIT_CODE=N (the expected exit status) is "
    "missing or not a number: '${CUPROOF_EXIT_CODE}'")
endif()

# The command is everything after the first "--" (CMAKE_ARGV0 is cmake).
set(cmd)
set(found FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(found)
    string(REPLACE ";" "\\;" arg "${CMAKE_ARGV${i}}")
    list(APPEND cmd "${arg}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(found TRUE)
  endif()
endforeach()
if(NOT cmd)
  message(FATAL_ERROR "cuproofExecTest: no command after '--' "
    "(cmake -DCUPROOF_EXIT_CODE=N -P cuproofExecTest.cmake -- COMMAND [ARGS...])")
endif()

execute_process(COMMAND ${cmd} RESULT_VARIABLE result)

if(result STREQUAL "77")
  message("cuproofExecTest: skipped (the command exited 77)")
  if(COMMAND cmake_language AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  endif()
  return()
endif()
if(NOT result MATCHES "^[0-9]+$")
  # A signal or a command that could not start: execute_process says which.
  message(FATAL_ERROR "cuproofExecTest: the command did not exit normally: ${result}; "
    "the test expects exit status ${CUPROOF_EXIT_CODE}")
endif()
if(NOT result EQUAL CUPROOF_EXIT_CODE)
  message(FATAL_ERROR "cuproofExecTest: the command exited with ${result}; "
    "the test expects exit status ${CUPROOF_EXIT_CODE}")
endif()
message("cuproofExecTest: the command exited with ${result}, as the test expects")
