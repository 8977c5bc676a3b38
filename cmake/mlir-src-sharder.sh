#!/bin/sh
# Stand-in for MLIR's `mlir-src-sharder`, which Debian's MLIR 22 packages do not ship.
# add_sharded_ops() calls it as: <tool> -op-shard-index=N [-I dir]... SRC [--write-if-changed]
#   -o OUT [-d DEPFILE]
# and it must write a source that compiles shard N of SRC's generated op definitions.
set -e
index= src= out= dep=
while [ $# -gt 0 ]; do
  case "$1" in
    -op-shard-index=*) index=${1#-op-shard-index=} ;;
    -o) out=$2; shift ;;
    -d) dep=$2; shift ;;
    -I) shift ;;
    -*) ;;
    *) src=$1 ;;
  esac
  shift
done
[ -n "$index" ] && [ -n "$src" ] && [ -n "$out" ] || { echo "usage: $0 -op-shard-index=N SRC -o OUT" >&2; exit 1; }
tmp="$out.tmp.$$"
printf '#define GET_OP_DEFS_%s\n#include "%s"\n' "$index" "$src" > "$tmp"
if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv "$tmp" "$out"; fi
[ -z "$dep" ] || printf '%s: %s\n' "$out" "$src" > "$dep"
