#!/bin/sh
# Pack the packages of .debs/ (see benchmarks/gpu_stack.sh) into one smaller file, .debs/stack.tar.xz, and move the
# packages aside to .debs-full/: the checkout (19 MiB on 2026-12-04), .debs/ (29 MiB) and .whl/ (20 MiB) no longer fit
# in the device tool's 64 MiB together. Left out: translations, documentation, JIT bitcode and the contrib
# extensions the product does not create (it uses none; plpgsql, the text-search dictionaries and the encoding
# conversions stay). gpu_stack.sh unpacks stack.tar.xz when it is there, the packages otherwise.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
for f in .debs/*.deb; do dpkg -x "$f" "$tmp"; done
rm -rf "$tmp/usr/share/locale" "$tmp/usr/share/doc" "$tmp/usr/share/man" "$tmp"/usr/lib/postgresql/*/lib/bitcode \
  "$tmp"/usr/lib/postgresql/*/lib/llvmjit*
keep="plpgsql dict_snowball dict_int dict_xsyn libpqwalreceiver pgoutput"
for so in "$tmp"/usr/lib/postgresql/*/lib/*.so; do
  base=$(basename "$so" .so)
  case "$base" in utf8_and_*|*_and_*|euc*|latin*|cyrillic*) continue ;; esac
  echo " $keep " | grep -q " $base " || rm -f "$so"
done
mkdir -p .debs-full
tar -C "$tmp" -cJf .debs/stack.tar.xz .
mv .debs/*.deb .debs-full/
rm -rf "$tmp"
ls -la .debs/stack.tar.xz
