# format-check: fails when any C file of ours differs from .clang-format.
# format: rewrites them in place.
find_program(CLANG_FORMAT_EXE NAMES clang-format-14 clang-format)
if(CLANG_FORMAT_EXE)
  file(GLOB_RECURSE _bw_format_sources CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/runtime/*.[ch] ${PROJECT_SOURCE_DIR}/rules/*.[ch]
    ${PROJECT_SOURCE_DIR}/analyzer/*.[ch] ${PROJECT_SOURCE_DIR}/shim/*.[ch]
    ${PROJECT_SOURCE_DIR}/samples/*.[ch] ${PROJECT_SOURCE_DIR}/tests/*.[ch]
    ${PROJECT_SOURCE_DIR}/bench/*.[ch] ${PROJECT_SOURCE_DIR}/tools/*.[ch])
  # Fixture inputs of the analyzer tests are kept exactly as written: their
  # line numbers are part of the expected output.
  list(FILTER _bw_format_sources EXCLUDE REGEX "/tests/analyzer/fixtures/")
  add_custom_target(format-check
    COMMAND ${CLANG_FORMAT_EXE} --dry-run --Werror ${_bw_format_sources}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "clang-format --dry-run --Werror"
    VERBATIM)
  add_custom_target(format
    COMMAND ${CLANG_FORMAT_EXE} -i ${_bw_format_sources}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    VERBATIM)
else()
  add_custom_target(format-check
    COMMAND ${CMAKE_COMMAND} -E echo "format-check: clang-format not found (apt-get install clang-format)"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()
