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
    set_tests_properties("${test}" PROPERTIES RESOURCE_GROUPS "${gpus},gpus:1")
  endif()
endfunction()

cmake_policy(POP)
