# BlockwatchBlockscanRun.cmake - the analysis step of blockwatch_add_blockscan
# (cmake -DBLOCKSCAN=exe -DARGS=file -DREPORT=file [-DFAIL_ON_FINDINGS=ON]
# -P this file): runs `blockscan ARGS... -o REPORT`, shows the report, and
# fails on blockscan's errors (exit 2), and on findings (exit 1) only when
# asked, so that an analysis with findings does not stop a build.
#
# Invariant: REPORT is replaced only by a complete report (written beside
# it, then renamed), so a failed run leaves the build to run it again.
file(STRINGS "${ARGS}" args)
set(tmp "${REPORT}.tmp")
execute_process(COMMAND "${BLOCKSCAN}" ${args} -o "${tmp}"
  RESULT_VARIABLE status)
if(EXISTS "${tmp}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E cat "${tmp}")
endif()
if(NOT status MATCHES "^[01]$" OR (status EQUAL 1 AND FAIL_ON_FINDINGS))
  file(REMOVE "${tmp}")
  message(FATAL_ERROR "blockscan exited with status ${status}")
endif()
file(RENAME "${tmp}" "${REPORT}")
