#!/usr/bin/env bash
# hiding_pkg_config.sh ARGS... - pkg-config as if the module named in
# BW_HIDE_PKG were not installed: any query that names it fails, every other
# query goes to the real pkg-config.
for arg in "$@"; do
  case $arg in
    "$BW_HIDE_PKG" | "$BW_HIDE_PKG "* | "$BW_HIDE_PKG>"* | "$BW_HIDE_PKG="*)
      echo "Package $BW_HIDE_PKG was not found in the pkg-config search path." >&2
      exit 1
      ;;
  esac
done
exec pkg-config "$@"
