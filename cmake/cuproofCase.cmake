# cuproof_add_case: a cuproof case as a ctest test.
#
#   cuproof_add_case(NAME
#       [SOURCES src...]      # the case's files (C and/or CUDA)
#       [EXECUTABLE target]   # the executable that holds the case; default NAME
#       [LABELS label...]     # added to "gpu" ("cpu" when GPUS is 0)
#       [GPUS n]              # GPUs the test takes; default 1, 0 = a CPU-only case
#       [TIMEOUT seconds]     # default 600
#       [PROFILE ci|full])    # default ci
#
# NAME is the case's name as `cuproof list` shows it: the identifier given
# to CUPROOF_CASE with '_' written as '-' (CUPROOF_CASE(copy_overlap, ...)
# is "copy-overlap").
#
# The SOURCES are added to EXECUTABLE. When no target of that name exists
# yet, it is created (add_executable) and linked with cuproof::main, which
# supplies main() and the whole command line (`EXE list`, `EXE run`, ...);
# it is then built with C11 and the shared CUDA runtime, the runtime that
# libcuproof itself uses (a second, static copy in the executable would not
# share streams or memory with it). Several cases may share one executable:
# name it in each call. An executable that exists already is used as it is:
# it must link cuproof::main (or provide the same `test` command).
#
# The test is `case.NAME`, which runs `EXE test NAME --profile PROFILE`:
# exit 0 passed, 1 failed, 77 skipped (SKIP_RETURN_CODE: no GPU here; with
# CUPROOF_REQUIRE_GPU=1 in the environment a missing GPU fails instead). A
# GPU test declares RESOURCE_GROUPS, one group of one slot per GPU
# ("gpus:1", or "N,gpus:1"), so that with `ctest --resource-spec-file`
# (`cuproof gpus --ctest-spec FILE` writes one) no two tests share a GPU.
#
# Works the same in cuproof's own tree (cuproof::main is an ALIAS there),
# under add_subdirectory(cuproof) and from the installed package
# (find_package(cuproof) includes this file). The calling project must
# enable the languages of its SOURCES (C, CUDA) and call enable_testing()
# (or include(CTest)) for the test to reach ctest.

include_guard(GLOBAL)
# A function runs under the policies in force where it is defined: these,
# whatever the project that includes the file asks for (relative SOURCES
# are relative to the caller's source directory, CMP0076).
cmake_policy(PUSH)
cmake_policy(VERSION 3.25)

function(cuproof_add_case)
  if(ARGC LESS 1 OR "${ARGV0}" STREQUAL "" OR
     ARGV0 MATCHES "^(SOURCES|EXECUTABLE|LABELS|GPUS|TIMEOUT|PROFILE)$")
    message(FATAL_ERROR "cuproof_add_case: the first argument must be the case's NAME "
      "(as `cuproof list` shows it, e.g. cuproof_add_case(copy-overlap SOURCES ...))")
  endif()
  set(name "${ARGV0}")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXECUTABLE;GPUS;TIMEOUT;PROFILE" "SOURCES;LABELS")
  set(where "cuproof_add_case(${name})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${arg_UNPARSED_ARGUMENTS} "
      "(expected SOURCES, EXECUTABLE, LABELS, GPUS, TIMEOUT, PROFILE)")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: ${arg_KEYWORDS_MISSING_VALUES} given without a value")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$")
    message(FATAL_ERROR "${where}: '${name}' is not a case name: case names are the "
      "CUPROOF_CASE identifier with '_' written as '-' (letters, digits, single '-')")
  endif()

  if(NOT DEFINED arg_GPUS)
    set(arg_GPUS 1)
  elseif(NOT arg_GPUS MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${where}: GPUS '${arg_GPUS}' must be a non-negative integer "
      "(0 for a CPU-only case)")
  endif()
  math(EXPR gpus "${arg_GPUS}") # "01" -> 1
  if(NOT DEFINED arg_TIMEOUT)
    set(arg_TIMEOUT 600)
  elseif(NOT arg_TIMEOUT MATCHES "^[0-9]+$" OR arg_TIMEOUT EQUAL 0)
    message(FATAL_ERROR "${where}: TIMEOUT '${arg_TIMEOUT}' must be a positive number of seconds")
  endif()
  if(NOT DEFINED arg_PROFILE)
    set(arg_PROFILE ci)
  elseif(NOT arg_PROFILE MATCHES "^(ci|full)$")
    message(FATAL_ERROR "${where}: PROFILE '${arg_PROFILE}' must be ci or full")
  endif()
  if(NOT DEFINED arg_EXECUTABLE)
    set(arg_EXECUTABLE "${name}")
  endif()
  set(exe "${arg_EXECUTABLE}")

  if(TARGET "${exe}")
    # Add to an executable that exists (an ALIAS names the real one).
    get_target_property(real "${exe}" ALIASED_TARGET)
    if(real)
      set(exe "${real}")
    endif()
    get_target_property(type "${exe}" TYPE)
    get_target_property(imported "${exe}" IMPORTED)
    if(NOT type STREQUAL "EXECUTABLE")
      message(FATAL_ERROR "${where}: target '${arg_EXECUTABLE}' exists and is a ${type}, "
        "not an executable: name another EXECUTABLE")
    endif()
    if(arg_SOURCES)
      if(imported)
        message(FATAL_ERROR "${where}: cannot add SOURCES to the imported executable "
          "'${arg_EXECUTABLE}'")
      endif()
      target_sources("${exe}" PRIVATE ${arg_SOURCES})
    endif()
  else()
    if(NOT arg_SOURCES)
      message(FATAL_ERROR "${where}: no SOURCES, and no executable '${exe}' to find the case "
        "in: give the case's SOURCES, or EXECUTABLE naming a target that holds it")
    endif()
    if(NOT TARGET cuproof::main)
      message(FATAL_ERROR "${where}: no target cuproof::main: call find_package(cuproof) "
        "or add_subdirectory(<cuproof>) first")
    endif()
    add_executable("${exe}" ${arg_SOURCES})
    target_link_libraries("${exe}" PRIVATE cuproof::main)
    set_target_properties("${exe}" PROPERTIES
      C_STANDARD 11 C_STANDARD_REQUIRED ON
      CUDA_RUNTIME_LIBRARY Shared)
    # CMake leaves the toolkit's library directory out of the RPATH when it
    # is one of nvcc's implicit link directories; the executable needs it
    # for libcudart wherever ld.so.conf does not name the toolkit.
    set(cudart "")
    if(TARGET CUDA::cudart)
      get_target_property(cudart CUDA::cudart IMPORTED_LOCATION)
    elseif(CUDA_cudart_LIBRARY) # cached by FindCUDAToolkit; its targets are directory-scoped
      set(cudart "${CUDA_cudart_LIBRARY}")
    endif()
    if(cudart)
      get_filename_component(cudart_dir "${cudart}" DIRECTORY)
      set_property(TARGET "${exe}" APPEND PROPERTY BUILD_RPATH "${cudart_dir}")
    endif()
  endif()

  set(test "case.${name}")
  if(TEST "${test}")
    message(FATAL_ERROR "${where}: a test ${test} exists already")
  endif()
  add_test(NAME "${test}" COMMAND "${exe}" test "${name}" --profile "${arg_PROFILE}")
  if(gpus EQUAL 0)
    set(labels cpu ${arg_LABELS})
  else()
    set(labels gpu ${arg_LABELS})
  endif()
  list(REMOVE_DUPLICATES labels)
  set_tests_properties("${test}" PROPERTIES
    LABELS "${labels}"
    SKIP_RETURN_CODE 77
    TIMEOUT "${arg_TIMEOUT}")
  # ctest's syntax: "gpus:1" is one group with one GPU slot; "N,gpus:1" is
  # N such groups, i.e. N different GPUs (CTEST_RESOURCE_GROUP_0..N-1_GPUS).
  if(gpus EQUAL 1)
    set_tests_properties("${test}" PROPERTIES RESOURCE_GROUPS "gpus:1")
  elseif(gpus GREATER 1)
    # As case.multi-gpu: one slot of ctest's resource spec (a spec of fewer
    # GPUs than n would leave the test unrunnable, where --need-gpus skips
    # it with the reason) and nothing beside it, since it takes every GPU.
    set_tests_properties("${test}" PROPERTIES RESOURCE_GROUPS "gpus:1" RUN_SERIAL TRUE)
  endif()
endfunction()

# cuproof_add_exec_test: an unmodified program, traced by `cuproof exec`, as
# a ctest test.
#
#   cuproof_add_exec_test(NAME COMMAND prog [args...]
#       [EXPECT "expr"]...     # an expectation (docs/DESIGN.md, "Expectations")
#       [EXPECT_FILE f]        # a file of them, one a line; relative to the
#                              # calling directory's sources
#       [RANGE name]           # range(name) for every expectation without a scope
#       [CAPTURE spec]         # trace only inside capture windows (exec --capture:
#                              # range:step@10-20, profiler-api, after:S,for:D)
#       [GPUS n]               # GPUs the test takes; default 1
#       [TIMEOUT seconds]      # default 600
#       [EXIT_CODE n]          # the exit status the test is written for; default 0
#       [ENVIRONMENT VAR=value...]  # for cuproof exec and so for the program
#       [LABELS label...])     # added to "gpu" and "exec"
#
# The test is `exec.NAME`, which runs
#
#   cuproof exec --skip-without-gpu --out <binary dir>/exec-out/NAME --timeout S
#       [--expect expr]... [--expect-file f] [--range name] [--capture spec]
#       -- prog args...
#
# with the cuproof executable of cuproof's own tree (the target cuproof) or
# of the installed package (the imported target cuproof::cli). When the
# first word of COMMAND is an executable target, its file is run
# ($<TARGET_FILE:...>); otherwise the word is run as it is (found on PATH
# when it has no '/'). COMMAND ends at the next keyword of this function, so
# a program argument cannot be one of these words, nor empty.
#
# cuproof exec's status is one of the one table's (`cuproof help`, EXIT
# STATUS, from include/cuproof/exit.h): 0 when every expectation is met
# and the program succeeded, 77 without a GPU (SKIP_RETURN_CODE: the test
# is skipped), and the others for what went wrong, the worst winning.
# With EXIT_CODE 0 the test runs that command as it is; with another EXIT_CODE it runs it under
# cuproofExecTest.cmake (installed beside this file), which passes exactly
# when the status is EXIT_CODE and still skips on 77. Either way ctest's
# TIMEOUT is TIMEOUT + 30 s: cuproof exec kills the program itself after
# TIMEOUT and has the rest to merge the traces and report. RESOURCE_GROUPS
# are those of cuproof_add_case: "gpus:1", or "N,gpus:1" for N GPUs.
set_property(GLOBAL PROPERTY cuproof_exec_test_script
  "${CMAKE_CURRENT_LIST_DIR}/cuproofExecTest.cmake")

function(cuproof_add_exec_test)
  set(keywords COMMAND EXPECT EXPECT_FILE RANGE CAPTURE GPUS TIMEOUT EXIT_CODE ENVIRONMENT LABELS)
  list(JOIN keywords "|" keyword_regex)
  if(ARGC LESS 1 OR "${ARGV0}" STREQUAL "" OR ARGV0 MATCHES "^(${keyword_regex})$")
    message(FATAL_ERROR "cuproof_add_exec_test: the first argument must be the test's NAME "
      "(the test is exec.NAME, e.g. cuproof_add_exec_test(streams COMMAND my_program ...))")
  endif()
  set(name "${ARGV0}")
  cmake_parse_arguments(PARSE_ARGV 1 arg ""
    "EXPECT_FILE;RANGE;CAPTURE;GPUS;TIMEOUT;EXIT_CODE" "COMMAND;EXPECT;ENVIRONMENT;LABELS")
  set(where "cuproof_add_exec_test(${name})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${arg_UNPARSED_ARGUMENTS} "
      "(expected COMMAND, EXPECT, EXPECT_FILE, RANGE, CAPTURE, GPUS, TIMEOUT, EXIT_CODE, "
      "ENVIRONMENT, LABELS)")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: ${arg_KEYWORDS_MISSING_VALUES} given without a value")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    message(FATAL_ERROR "${where}: '${name}' is not a test name: letters, digits, '_', '.' "
      "and '-', starting with a letter or digit (it names the test exec.NAME and its output "
      "directory)")
  endif()
  if(NOT arg_COMMAND)
    message(FATAL_ERROR "${where}: no COMMAND: give the program to trace and its arguments")
  endif()

  if(NOT DEFINED arg_GPUS)
    set(arg_GPUS 1)
  elseif(NOT arg_GPUS MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${where}: GPUS '${arg_GPUS}' must be a non-negative integer")
  endif()
  math(EXPR gpus "${arg_GPUS}") # "01" -> 1
  if(NOT DEFINED arg_TIMEOUT)
    set(arg_TIMEOUT 600)
  elseif(NOT arg_TIMEOUT MATCHES "^[0-9]+$" OR arg_TIMEOUT EQUAL 0 OR arg_TIMEOUT GREATER 604800)
    message(FATAL_ERROR "${where}: TIMEOUT '${arg_TIMEOUT}' must be a number of seconds, "
      "1 to 604800")
  endif()
  math(EXPR timeout "${arg_TIMEOUT}")
  if(NOT DEFINED arg_EXIT_CODE)
    set(arg_EXIT_CODE 0)
  elseif(NOT arg_EXIT_CODE MATCHES "^[0-9]+$" OR arg_EXIT_CODE GREATER 255)
    message(FATAL_ERROR "${where}: EXIT_CODE '${arg_EXIT_CODE}' must be an exit status, 0 to 255 "
      "(cuproof exec: 0 met, 1 an expectation failed, 2 usage, 3 no verdict, 4 the program "
      "failed, 5 bad input, 6 tool error)")
  endif()
  math(EXPR exit_code "${arg_EXIT_CODE}")
  if(exit_code EQUAL 77)
    message(FATAL_ERROR "${where}: EXIT_CODE 77 is the skip status (no GPU); a test cannot be "
      "written for it")
  endif()
  if(DEFINED arg_RANGE AND arg_RANGE STREQUAL "")
    message(FATAL_ERROR "${where}: RANGE is empty: name an NVTX range")
  endif()
  # CAPTURE: exec --capture's SPEC (range:NAME[@K[-L]], steps:..., profiler-api,
  # after:S,for:D), whose grammar cuproof itself checks when the test runs.
  if(DEFINED arg_CAPTURE AND NOT arg_CAPTURE MATCHES "^(range:.+|steps:.+|profiler-api|after:.+)$")
    message(FATAL_ERROR "${where}: CAPTURE '${arg_CAPTURE}' is not a capture window "
      "(range:NAME[@K[-L]], steps:NAME:W,U,A[,R], profiler-api or after:S,for:D)")
  endif()
  foreach(e IN LISTS arg_EXPECT)
    if(e MATCHES "^[ \t]*$")
      message(FATAL_ERROR "${where}: an EXPECT is empty")
    endif()
  endforeach()
  foreach(v IN LISTS arg_ENVIRONMENT)
    if(NOT v MATCHES "^[A-Za-z_][A-Za-z0-9_]*=")
      message(FATAL_ERROR "${where}: ENVIRONMENT '${v}' is not VAR=value")
    endif()
  endforeach()
  if(DEFINED arg_EXPECT_FILE)
    get_filename_component(expect_file "${arg_EXPECT_FILE}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${expect_file}" OR IS_DIRECTORY "${expect_file}")
      message(FATAL_ERROR "${where}: EXPECT_FILE '${arg_EXPECT_FILE}' is not a file "
        "(looked for ${expect_file})")
    endif()
  endif()

  # The cuproof executable: the installed package's, else this tree's.
  if(TARGET cuproof::cli)
    set(cuproof_exe "$<TARGET_FILE:cuproof::cli>")
  elseif(TARGET cuproof)
    get_target_property(type cuproof TYPE)
    if(NOT type STREQUAL "EXECUTABLE")
      message(FATAL_ERROR "${where}: the target cuproof is a ${type}, not the cuproof "
        "executable")
    endif()
    set(cuproof_exe "$<TARGET_FILE:cuproof>")
  else()
    message(FATAL_ERROR "${where}: no cuproof executable (target cuproof::cli or cuproof): "
      "call find_package(cuproof) or add_subdirectory(<cuproof>) first")
  endif()

  # The program: an executable target's file, or the word as it is. Its
  # arguments are taken as text, so that a ';' in one (escaped in the list)
  # stays in it: list operations would split it.
  string(FIND "${arg_COMMAND}" ";" sep)
  set(args "")
  if(sep EQUAL -1)
    set(program "${arg_COMMAND}")
  else()
    string(SUBSTRING "${arg_COMMAND}" 0 ${sep} program)
    math(EXPR sep "${sep} + 1")
    string(SUBSTRING "${arg_COMMAND}" ${sep} -1 args)
  endif()
  if(TARGET "${program}")
    get_target_property(real "${program}" ALIASED_TARGET)
    if(NOT real)
      set(real "${program}")
    endif()
    get_target_property(type "${real}" TYPE)
    if(NOT type STREQUAL "EXECUTABLE")
      message(FATAL_ERROR "${where}: COMMAND starts with the target '${program}', a ${type}, "
        "not an executable")
    endif()
    set(program "$<TARGET_FILE:${real}>")
  endif()

  set(test "exec.${name}")
  if(TEST "${test}")
    message(FATAL_ERROR "${where}: a test ${test} exists already")
  endif()
  set(cmd "${cuproof_exe}" exec --skip-without-gpu
    --out "${CMAKE_CURRENT_BINARY_DIR}/exec-out/${name}" --timeout "${timeout}")
  # A program of several GPUs: skipped with the reason on fewer, and given
  # them all (not the one GPU of ctest's first resource group).
  if(gpus GREATER 1)
    list(APPEND cmd --need-gpus "${gpus}")
  endif()
  foreach(e IN LISTS arg_EXPECT)
    list(APPEND cmd --expect "${e}")
  endforeach()
  if(DEFINED arg_EXPECT_FILE)
    list(APPEND cmd --expect-file "${expect_file}")
  endif()
  if(DEFINED arg_RANGE)
    list(APPEND cmd --range "${arg_RANGE}")
  endif()
  if(DEFINED arg_CAPTURE)
    list(APPEND cmd --capture "${arg_CAPTURE}")
  endif()
  list(APPEND cmd -- "${program}")
  if(NOT args STREQUAL "")
    string(APPEND cmd ";${args}")
  endif()

  if(exit_code EQUAL 0)
    add_test(NAME "${test}" COMMAND ${cmd})
  else()
    get_property(script GLOBAL PROPERTY cuproof_exec_test_script)
    add_test(NAME "${test}" COMMAND "${CMAKE_COMMAND}" "-DCUPROOF_EXIT_CODE=${exit_code}"
      -P "${script}" -- ${cmd})
    # CMake before 3.29 cannot exit 77 from a script: it prints this instead.
    set_tests_properties("${test}" PROPERTIES SKIP_REGULAR_EXPRESSION "cuproofExecTest: skipped")
  endif()
  set(labels gpu exec ${arg_LABELS})
  list(REMOVE_DUPLICATES labels)
  math(EXPR ctest_timeout "${timeout} + 30")
  set_tests_properties("${test}" PROPERTIES
    LABELS "${labels}"
    SKIP_RETURN_CODE 77
    TIMEOUT "${ctest_timeout}")
  if(arg_ENVIRONMENT)
    set_tests_properties("${test}" PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
  endif()
  if(gpus EQUAL 1)
    set_tests_properties("${test}" PROPERTIES RESOURCE_GROUPS "gpus:1")
  elseif(gpus GREATER 1)
    # As case.multi-gpu: one slot of ctest's resource spec (a spec of fewer
    # GPUs than n would leave the test unrunnable, where --need-gpus skips
    # it with the reason) and nothing beside it, since it takes every GPU.
    set_tests_properties("${test}" PROPERTIES RESOURCE_GROUPS "gpus:1" RUN_SERIAL TRUE)
  endif()
endfunction()

cmake_policy(POP)
