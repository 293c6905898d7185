#!/bin/bash
# onlinews-config --check: the configuration, and whether the HDF5 output
# module next to the library loads (tools/module_check.cpp).
# usage: test_config_check.sh ONLINEWS_CONFIG LIBONLINEWS CC WORKDIR
set -uo pipefail
tool=$1 lib=$2 cc=$3
rm -rf "$4" && mkdir -p "$4" && work=$(cd "$4" && pwd -P)  # (the tool prints resolved paths)
# Only the variables a case sets: any other ONLINEWS_* would be checked too.
unset $(env | grep -o '^ONLINEWS_[A-Za-z0-9_]*' || true)
fail=0
expect() {  # what, wanted exit code, wanted text, command...
  local what=$1 code=$2 text=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -q -- "$text" <<<"$out"; then
    echo "FAIL: $what: exit $rc (want $code), output lacks '$text':"; echo "$out" | sed 's/^/    /'; fail=1
  else
    echo "ok   $what: exit $rc, '$text'"
  fi
}
# The build tree: configuration and module fine, HDF5's version named.
expect "build tree" 0 "HDF5 output module OK: .*libonlinews_io.so (HDF5 1\.[0-9]*\.[0-9]*)" "$tool" --check
expect "build tree, bad value" 1 "ONLINEWS_BUFFER='lots' is not valid" env ONLINEWS_BUFFER=lots "$tool" --check
# An install without its module: <prefix>/bin/onlinews-config, <prefix>/lib/libonlinews.so.
mkdir -p "$work/p/bin" "$work/p/lib"
cp "$tool" "$work/p/bin/"
expect "no library next to the tool" 1 "no libonlinews.so in $work/p/lib" "$work/p/bin/onlinews-config" --check
cp "$lib" "$work/p/lib/libonlinews.so"
expect "no module" 1 "the HDF5 output module cannot be loaded: runs would write no file" \
  "$work/p/bin/onlinews-config" --check
# Something else under the module's name: a library without the entry.
echo 'int not_the_module(void) { return 1; }' > "$work/other.c"
"$cc" -shared -fPIC "$work/other.c" -o "$work/p/lib/libonlinews_io.so"
expect "not the module" 1 "is not onlinews' module" "$work/p/bin/onlinews-config" --check
[ "$fail" -eq 0 ] && { echo PASS; rm -rf "$work"; }
exit "$fail"
