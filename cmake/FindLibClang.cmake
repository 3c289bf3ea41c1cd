# FindLibClang - locate libclang's C API (clang-c/Index.h, libclang.so).
#
# Looks in the paths that llvm-config reports (llvm-config-14 first, as
# Debian 12 ships it), then in the usual Debian LLVM prefixes. Defines the
# imported target LibClang::LibClang and LibClang_FOUND. LibClang_ROOT or
# LLVM_CONFIG_EXECUTABLE select another installation.
find_program(LLVM_CONFIG_EXECUTABLE NAMES llvm-config-14 llvm-config-15 llvm-config-16 llvm-config)
set(_libclang_hints)
if(LLVM_CONFIG_EXECUTABLE)
  execute_process(COMMAND ${LLVM_CONFIG_EXECUTABLE} --prefix
    OUTPUT_VARIABLE _llvm_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  list(APPEND _libclang_hints ${_llvm_prefix})
endif()
foreach(_ver 14 15 16 17 18 19)
  list(APPEND _libclang_hints /usr/lib/llvm-${_ver})
endforeach()

find_path(LibClang_INCLUDE_DIR clang-c/Index.h HINTS ${_libclang_hints} PATH_SUFFIXES include)
find_library(LibClang_LIBRARY NAMES clang libclang HINTS ${_libclang_hints} PATH_SUFFIXES lib)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibClang
  REQUIRED_VARS LibClang_LIBRARY LibClang_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "blockscan needs libclang's C API: on Debian 12 run 'apt-get install libclang-14-dev' (or configure with -DBLOCKWATCH_BUILD_ANALYZER=OFF)")

if(LibClang_FOUND AND NOT TARGET LibClang::LibClang)
  add_library(LibClang::LibClang UNKNOWN IMPORTED)
  set_target_properties(LibClang::LibClang PROPERTIES
    IMPORTED_LOCATION "${LibClang_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LibClang_INCLUDE_DIR}")
  # The directory holding clang's own builtin headers (stddef.h, ...), which
  # libclang needs to parse real code; blockscan passes it as -isystem.
  get_filename_component(_libclang_libdir "${LibClang_LIBRARY}" DIRECTORY)
  file(GLOB _libclang_resource LIST_DIRECTORIES true "${_libclang_libdir}/clang/*/include")
  list(SORT _libclang_resource)
  list(REVERSE _libclang_resource)
  list(GET _libclang_resource 0 LibClang_RESOURCE_INCLUDE_DIR)
  set(LibClang_RESOURCE_INCLUDE_DIR "${LibClang_RESOURCE_INCLUDE_DIR}" CACHE PATH "clang builtin headers")
endif()
mark_as_advanced(LibClang_INCLUDE_DIR LibClang_LIBRARY LLVM_CONFIG_EXECUTABLE)
