# Install-time package files: blockwatch.pc for pkg-config and a CMake package
# config, so that `pkg-config --cflags --libs blockwatch` and
# `find_package(blockwatch)` both link the runtime; the package also brings
# blockwatch_add_blockscan() (cmake/BlockwatchBlockscan.cmake).
set(_bw_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/blockwatch)

install(EXPORT blockwatchTargets NAMESPACE blockwatch:: DESTINATION ${_bw_cmake_dir})
# blockscan's place in the install, for blockwatch_add_blockscan().
set(BLOCKWATCH_INSTALL_BLOCKSCAN ${CMAKE_INSTALL_BINDIR}/blockscan)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/blockwatchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/blockwatchConfig.cmake INSTALL_DESTINATION ${_bw_cmake_dir}
  PATH_VARS BLOCKWATCH_INSTALL_BLOCKSCAN)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/blockwatchConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/blockwatchConfig.cmake
  ${PROJECT_BINARY_DIR}/blockwatchConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/BlockwatchBlockscan.cmake
  ${PROJECT_SOURCE_DIR}/cmake/BlockwatchBlockscanRun.cmake
  DESTINATION ${_bw_cmake_dir})

# blockwatch.pc finds its prefix from its own location (${pcfiledir}), so the
# install stays relocatable whatever depth CMAKE_INSTALL_LIBDIR has.
file(RELATIVE_PATH BW_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" BW_PC_PREFIX_FROM_PCDIR "${BW_PC_PREFIX_FROM_PCDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/blockwatch.pc.in ${PROJECT_BINARY_DIR}/blockwatch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/blockwatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
