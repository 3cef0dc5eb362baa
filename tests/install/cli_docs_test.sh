#!/usr/bin/env bash
# The man pages and bash completion generated at build time (cmake/gen_cli_docs.py) follow the
# CLI: one page per command of `gpuprof --help` and no other, every option of `gpuprof <cmd> --help`
# on its page, pages that groff reads without a warning, and a completion script that completes
# commands and each command's options.   usage: cli_docs_test.sh GPUPROF MANDIR COMPLETION
set -euo pipefail
exe=$1 mandir=$2 comp=$3
fail() { echo "cli_docs_test: $*" >&2; exit 1; }

mapfile -t cmds < <("$exe" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1; next} on{exit}')
[ "${#cmds[@]}" -gt 3 ] || fail "could not read the commands of $exe --help"
[ -f "$mandir/gpuprof.1" ] || fail "no gpuprof.1"
expected=$(printf 'gpuprof.1\n'; printf 'gpuprof-%s.1\n' "${cmds[@]}")
actual=$(cd "$mandir" && ls -- *.1)
[ "$(sort <<<"$expected")" = "$(sort <<<"$actual")" ] ||
  fail "pages $(echo $actual) but commands $(echo $expected)"

# Every option word of a command's help (lines starting with '-') appears on its page.
opts_of() { "$exe" "$1" --help | grep -E '^ +-' | grep -oE '(^|[ ,|[])--?[A-Za-z0-9][A-Za-z0-9-]*' |
            sed 's/^[ ,|[]//' | sort -u; }
checked=0
for c in "${cmds[@]}"; do
  page="$mandir/gpuprof-$c.1"
  grep -q "^\\.SH NAME" "$page" || fail "$page has no NAME section"
  while read -r o; do
    [ -n "$o" ] || continue
    grep -qF -- "${o//-/\\-}" "$page" || fail "$page lacks option $o of gpuprof $c --help"
    checked=$((checked + 1))
  done < <(opts_of "$c")
  grep -q "gpuprof\\\\-$c" "$mandir/gpuprof.1" || fail "gpuprof.1 does not name gpuprof-$c"
done
[ "$checked" -gt 50 ] || fail "only $checked options found in the help texts"

if command -v groff >/dev/null; then
  for p in "$mandir"/*.1; do
    w=$(groff -man -Tutf8 -ww -z "$p" 2>&1) || fail "groff failed on $p"
    [ -z "$w" ] || fail "groff warns on $p: $w"
  done
fi

# Completion: commands at position 1, a command's options after it.
bash -n "$comp" || fail "$comp is not valid bash"
complete_words() { bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
                            _gpuprof; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"; }
complete_words gpuprof ana | grep -x analyze >/dev/null || fail "completion of 'gpuprof ana'"
complete_words gpuprof --v | grep -x -- --version >/dev/null || fail "completion of 'gpuprof --v'"
for c in "${cmds[@]}"; do
  o=$(opts_of "$c" | grep -E '^--' | head -1)
  complete_words gpuprof "$c" "${o:0:4}" | grep -x -- "$o" >/dev/null || fail "completion of '$c ${o:0:4}'"
done
echo "cli_docs_test: ${#cmds[@]} command pages, $checked options, completion OK" >&2
