# What `cmake --install` and `cpack -G DEB` lay out (included from the
# top-level CMakeLists.txt when CUPROOF_INSTALL is on):
#
#   bin/cuproof                       the command line with the built-in cases
#   lib/libcuproof.so*                the library (cuproof::cuproof)
#   lib/libcuproof_main.a             main() and the command line (cuproof::main)
#   include/cuproof/*.h               the public headers, version.h included
#   lib/cmake/cuproof/                cuproofConfig.cmake, its version file, the
#                                     exported targets and cuproofCase.cmake
#   share/man/man1/cuproof.1          the man page, every command in one page
#                                     (written by `cuproof help --man`)
#
# A project then writes find_package(cuproof) and cuproof_add_case(...)
# (examples/my-cases/ does; ci/example.sh proves it against this install).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CUPROOF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cuproof)

# The installed executable finds libcuproof beside it ($ORIGIN/../lib), and
# both find CUDA's libraries (cudart, CUPTI, NVRTC) in the directories they
# were linked from. CMake leaves those out of the RPATH when the toolkit's
# library directory is one of nvcc's implicit link directories (it is with
# CUDA 13 in /usr/local/cuda: lib is a link to targets/x86_64-linux/lib),
# which works only where ld.so.conf names the toolkit; so they are named
# here. A RUNPATH serves only the object's own
# dependencies: libcuproof needs CUDA's directories itself. Only the install
# tree is concerned: the build tree keeps CMake's own RPATH.
set(cuproof_cuda_rpath)
foreach(lib CUDA::cudart CUDA::cupti CUDA::nvrtc)
  get_target_property(loc ${lib} IMPORTED_LOCATION)
  if(loc)
    get_filename_component(dir "${loc}" DIRECTORY)
    list(APPEND cuproof_cuda_rpath "${dir}")
  endif()
endforeach()
list(REMOVE_DUPLICATES cuproof_cuda_rpath)
file(RELATIVE_PATH cuproof_bin_to_lib
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR} ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
set_target_properties(cuproof PROPERTIES
  INSTALL_RPATH "$ORIGIN/${cuproof_bin_to_lib};${cuproof_cuda_rpath}"
  INSTALL_RPATH_USE_LINK_PATH ON
  # The exported executable would clash with the library's cuproof::cuproof.
  EXPORT_NAME cli)
set_target_properties(cuproof_lib cuproof_inject PROPERTIES
  INSTALL_RPATH "${cuproof_cuda_rpath}"
  INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS cuproof cuproof_main
  EXPORT cuproofTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The headers' directory goes with the library (cuproof::main has it from
# there), wherever CMAKE_INSTALL_INCLUDEDIR puts it.
install(TARGETS cuproof_lib
  EXPORT cuproofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The injection library of cuproof exec, beside libcuproof, where the
# launcher looks for it. A module: nothing links it, so it is not exported.
install(TARGETS cuproof_inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Public headers: every include/cuproof/*.h (not version.h.in) and the
# generated version.h.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cuproof
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/cuproof/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuproof)

# The man page (CUPROOF_MAN_PAGE, built with `all` by the top-level
# CMakeLists.txt): `man cuproof` once the prefix's share/man is on MANPATH.
install(FILES ${CUPROOF_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(EXPORT cuproofTargets
  NAMESPACE cuproof::
  DESTINATION ${CUPROOF_CMAKE_DIR})

# The CUDA major version libcuproof was built with: its libcudart.so.N is
# the one the users' executables must load too.
set(CUPROOF_CUDA_VERSION_MAJOR ${CUDAToolkit_VERSION_MAJOR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/cuproofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cuproofConfig.cmake
  INSTALL_DESTINATION ${CUPROOF_CMAKE_DIR})
# While the version is 0.x, any minor release may change the interface (the
# library's SOVERSION is MAJOR.MINOR for the same reason), so a request for
# 0.1 accepts 0.1.z only: SameMinorVersion. From 1.0 on, semantic versioning
# keeps a major version compatible: SameMajorVersion.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(cuproof_compat SameMinorVersion)
else()
  set(cuproof_compat SameMajorVersion)
endif()
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cuproofConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${cuproof_compat})
install(FILES
  ${PROJECT_BINARY_DIR}/cuproofConfig.cmake
  ${PROJECT_BINARY_DIR}/cuproofConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/cuproofCase.cmake
  ${PROJECT_SOURCE_DIR}/cmake/cuproofExecTest.cmake
  DESTINATION ${CUPROOF_CMAKE_DIR})

# cpack -G DEB in the build directory: one package with all of the above.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cuproof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "cuproof")
set(CUPROOF_PACKAGE_MAINTAINER "cuproof maintainers <cuproof@localhost>" CACHE STRING
  "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${CUPROOF_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CUPROOF_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Test-and-profiling harness for CUDA: cases as ctest tests, checked against CUPTI traces")
string(JOIN "\n" CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "cuproof runs CUDA experiments as test cases: a CPU reference the GPU result"
  "must match, NVTX ranges around every phase, and a CUPTI activity trace from"
  "which it measures overlap, concurrency and idle time. This package holds the"
  "cuproof command line, libcuproof, its headers and the CMake package"
  "(find_package(cuproof), cuproof_add_case). The CUDA Toolkit it was built"
  "with (CUDA ${CUDAToolkit_VERSION_MAJOR}) must be installed separately.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# cJSON is linked by the shared library; CUDA's libraries come from the
# toolkit, which is often not installed from a package, so they are not
# listed.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcjson1")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
