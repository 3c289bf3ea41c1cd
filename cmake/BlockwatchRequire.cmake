# bw_require_pkg(PREFIX MODULE DEBIAN_PACKAGE WHAT [OFF_OPTION])
#
# Finds a pkg-config MODULE as the imported target PkgConfig::PREFIX, or stops
# the configure step. A part of the build that needs a library either has it
# or fails loudly: a test or a tool that silently drops out when a package is
# missing looks exactly like a green run with less in it. The message names
# the Debian package that brings the module, what needs it, and the option
# that turns that part off for a user who does not want it.
find_package(PkgConfig REQUIRED)

function(bw_require_pkg prefix module debian_package what)
  if(TARGET PkgConfig::${prefix})
    return()
  endif()
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${prefix}_FOUND)
    set(_off "")
    if(ARGC GREATER 4)
      set(_off " or configure with -D${ARGV4}=OFF")
    endif()
    message(FATAL_ERROR
      "${what} needs ${module}, which pkg-config does not find: install "
      "${debian_package} (scripts/setup.sh does)${_off}.")
  endif()
endfunction()
