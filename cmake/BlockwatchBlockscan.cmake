# BlockwatchBlockscan.cmake - blockscan as build steps, for projects that use
# find_package(blockwatch):
#
#   blockwatch_add_blockscan(<target>... [NAME <step>] [ALL]
#                            [OUTPUT <report>] [FAIL_ON_FINDINGS]
#                            [OPTIONS <blockscan option>...])
#
# adds one facts action per C source of each target (blockscan --emit-facts,
# with the target's include directories, definitions, options and C
# standard, and a dependency file so that a changed header re-runs it) and
# one analysis step, the custom target <step> (default blockscan_<first
# target>), that runs `blockscan --facts` over all of them and writes the
# report to <report> (default <step>.txt in the current binary directory)
# and to the console. The build tool then runs, caches and (through
# distcc, icecc or remote execution) distributes the parse phase as it does
# compilation; only the analysis sees the whole program.
#
# Findings do not fail the step unless FAIL_ON_FINDINGS is given; a TU that
# does not parse fails its facts action, as it would fail compilation.
# Paths in the report are relative to the top source directory, where the
# analysis runs. BLOCKWATCH_BLOCKSCAN names the blockscan executable
# (set by blockwatchConfig.cmake; override it to use another).
set(_bw_blockscan_run "${CMAKE_CURRENT_LIST_DIR}/BlockwatchBlockscanRun.cmake")

# The compile flags of `target` that change what a parse sees, as a list
# of generator expressions, in `out`.
function(_bw_blockscan_flags target out)
  set(p "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(d "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(std "$<TARGET_PROPERTY:${target},C_STANDARD>")
  # C_EXTENSIONS unset means on, as in CMake's own compile lines.
  set(e "$<TARGET_PROPERTY:${target},C_EXTENSIONS>")
  set(ext "$<IF:$<OR:$<STREQUAL:${e},>,$<BOOL:${e}>>,gnu,c>")
  separate_arguments(cflags UNIX_COMMAND "${CMAKE_C_FLAGS}")
  set(${out}
    ${cflags}
    "$<$<BOOL:${p}>:-I$<JOIN:${p},$<SEMICOLON>-I>>"
    "$<$<BOOL:${d}>:-D$<JOIN:${d},$<SEMICOLON>-D>>"
    "$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>"
    "$<$<BOOL:${std}>:-std=${ext}${std}>"
    PARENT_SCOPE)
endfunction()

function(blockwatch_add_blockscan)
  cmake_parse_arguments(BS "ALL;FAIL_ON_FINDINGS" "NAME;OUTPUT" "OPTIONS"
    ${ARGN})
  set(targets ${BS_UNPARSED_ARGUMENTS})
  if(NOT targets)
    message(FATAL_ERROR "blockwatch_add_blockscan: name at least one target")
  endif()
  if(NOT BLOCKWATCH_BLOCKSCAN OR NOT EXISTS "${BLOCKWATCH_BLOCKSCAN}")
    message(FATAL_ERROR "blockwatch_add_blockscan: blockscan not found at "
      "'${BLOCKWATCH_BLOCKSCAN}' (was blockwatch built with the analyzer?); "
      "set BLOCKWATCH_BLOCKSCAN to its path")
  endif()
  list(GET targets 0 first)
  if(NOT BS_NAME)
    set(BS_NAME blockscan_${first})
  endif()
  if(NOT BS_OUTPUT)
    set(BS_OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${BS_NAME}.txt)
  endif()
  set(facts_dir ${CMAKE_CURRENT_BINARY_DIR}/${BS_NAME}.facts)
  set(all_facts "")
  foreach(target IN LISTS targets)
    if(NOT TARGET ${target})
      message(FATAL_ERROR "blockwatch_add_blockscan: no target '${target}'")
    endif()
    _bw_blockscan_flags(${target} flags)
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.c$")
        continue() # generator expressions and headers: nothing to parse
      endif()
      get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
      file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${path}")
      string(REGEX REPLACE "[.][.]/" "__/" rel "${rel}")
      set(facts ${facts_dir}/${target}/${rel}.bwfacts)
      get_source_file_property(defs "${path}" COMPILE_DEFINITIONS)
      get_source_file_property(opts "${path}" COMPILE_OPTIONS)
      set(source_flags "")
      if(defs)
        foreach(def IN LISTS defs)
          list(APPEND source_flags "-D${def}")
        endforeach()
      endif()
      if(opts)
        list(APPEND source_flags ${opts})
      endif()
      set(depends DEPFILE ${facts}.d)
      if(CMAKE_VERSION VERSION_LESS 3.20 AND NOT CMAKE_GENERATOR MATCHES "Ninja")
        set(depends IMPLICIT_DEPENDS C ${path})
      endif()
      get_filename_component(facts_parent "${facts}" DIRECTORY)
      file(MAKE_DIRECTORY "${facts_parent}")
      add_custom_command(OUTPUT ${facts}
        COMMAND "${BLOCKWATCH_BLOCKSCAN}" --emit-facts ${facts} --
          "${CMAKE_C_COMPILER}" ${flags} ${source_flags} -c ${path}
        DEPENDS ${path} "${BLOCKWATCH_BLOCKSCAN}"
        ${depends}
        WORKING_DIRECTORY ${source_dir}
        COMMENT "blockscan facts of ${rel} (${target})"
        COMMAND_EXPAND_LISTS VERBATIM)
      list(APPEND all_facts ${facts})
    endforeach()
  endforeach()

  # The analysis reads its arguments from a file: options may hold ';'.
  set(args_file ${CMAKE_CURRENT_BINARY_DIR}/${BS_NAME}.args)
  list(JOIN BS_OPTIONS "\n" options_text)
  list(JOIN all_facts "\n" facts_text)
  file(WRITE ${args_file}.in "${options_text}\n--facts\n${facts_text}\n")
  configure_file(${args_file}.in ${args_file} COPYONLY)
  set(all "")
  if(BS_ALL)
    set(all ALL)
  endif()
  add_custom_command(OUTPUT ${BS_OUTPUT}
    COMMAND "${CMAKE_COMMAND}" "-DBLOCKSCAN=${BLOCKWATCH_BLOCKSCAN}"
      "-DARGS=${args_file}" "-DREPORT=${BS_OUTPUT}"
      "-DFAIL_ON_FINDINGS=${BS_FAIL_ON_FINDINGS}" -P "${_bw_blockscan_run}"
    DEPENDS ${all_facts} ${args_file} "${BLOCKWATCH_BLOCKSCAN}"
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    COMMENT "blockscan analysis (${BS_NAME})"
    VERBATIM)
  add_custom_target(${BS_NAME} ${all} DEPENDS ${BS_OUTPUT})
endfunction()
