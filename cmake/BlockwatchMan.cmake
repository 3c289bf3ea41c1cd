# Man pages: blockscan(1), blockwatch(1), bw-trace2svg(1), bw-merge(1) and
# blockwatch-rules(5), written into the build tree (man/) by
# scripts/gen-man.sh from the recipes in docs/man/, the docs they name and
# what the built tools print for --help; installed to share/man. No page is
# committed, so none can fall behind the docs or the tools. A page whose tool
# is turned off is left out.
set(_bw_man_dir ${PROJECT_BINARY_DIR}/man)
set(_bw_man_gen ${PROJECT_SOURCE_DIR}/scripts/gen-man.sh)
# Every doc a recipe may name: a change to any of them remakes the pages.
file(GLOB _bw_man_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
list(APPEND _bw_man_docs ${PROJECT_SOURCE_DIR}/rules/README.md)
find_program(BW_BASH bash REQUIRED)
find_program(BW_PERL perl REQUIRED)

set(BW_MAN_PAGES "")
# bw_man_page(PAGE SECTION [TOOL NAME PROGRAM DEPENDENCY]...)
function(bw_man_page page section)
  set(_args "")
  set(_deps "")
  set(_rest ${ARGN})
  while(_rest)
    list(POP_FRONT _rest _kw _name _program _dep)
    list(APPEND _args --tool "${_name}=${_program}")
    list(APPEND _deps ${_dep})
  endwhile()
  set(_out ${_bw_man_dir}/${page}.${section})
  set(_recipe ${PROJECT_SOURCE_DIR}/docs/man/${page}.${section}.recipe)
  add_custom_command(OUTPUT ${_out}
    COMMAND ${BW_BASH} ${_bw_man_gen} --version ${PROJECT_VERSION} ${_args} ${_recipe} ${_out}
    DEPENDS ${_bw_man_gen} ${_recipe} ${_bw_man_docs} ${_deps}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "man page ${page}(${section})"
    VERBATIM)
  install(FILES ${_out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  set(BW_MAN_PAGES ${BW_MAN_PAGES} ${_out} PARENT_SCOPE)
endfunction()

if(BLOCKWATCH_BUILD_ANALYZER)
  bw_man_page(blockscan 1 TOOL blockscan $<TARGET_FILE:blockscan> blockscan)
endif()
if(BLOCKWATCH_BUILD_SHIM)
  bw_man_page(blockwatch 1 TOOL blockwatch ${PROJECT_BINARY_DIR}/shim/blockwatch
    ${PROJECT_SOURCE_DIR}/shim/blockwatch.in)
endif()
if(BLOCKWATCH_BUILD_TOOLS)
  bw_man_page(bw-trace2svg 1 TOOL bw-trace2svg $<TARGET_FILE:bw-trace2svg> bw-trace2svg)
  bw_man_page(bw-merge 1 TOOL bw-merge $<TARGET_FILE:bw-merge> bw-merge)
endif()
bw_man_page(blockwatch-rules 5)
add_custom_target(man ALL DEPENDS ${BW_MAN_PAGES})
