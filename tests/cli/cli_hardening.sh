#!/usr/bin/env bash
# CLI hardening (issue #21), end to end: -o never replaces a FIFO, device or symbolic link and
# "-o -" is stdout (item 1); an input FIFO is read as a stream, as cat would (item 2); ^C / SIGTERM / SIGHUP mid-write leave no temporary file (item 10);
# a program run by `gpuprof trace` dies with gpuprof, and the next run says where the trace left
# behind is (item 11); JSON output stays valid UTF-8 (item 8); int64-extreme correlation ids work
# (item 12); the reader's leniencies warn (item 13).
# Usage: cli_hardening.sh GPUPROF SOURCE_DIR
set -u
gp=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); src="$2"
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() { # name expected-rc command...
  local name="$1" want="$2"; shift 2
  local rc
  LAST=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$name: exit $rc, wanted $want"; echo "$LAST" | head -5; fi
}
contains() { # name needle
  if printf '%s' "$LAST" | grep -qF -- "$2"; then ok; else bad "$1: output lacks '$2'"; echo "$LAST" | head -5; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ex="$src/examples/traces/example_step.json"

# ---- item 1: what is at -o decides how it is written ----
mkfifo "$tmp/fifo"
(cat "$tmp/fifo" > "$tmp/from_fifo") &
reader=$!
check "convert into a FIFO" 0 timeout 30 "$gp" convert "$ex" -o "$tmp/fifo"
wait $reader
if [ -p "$tmp/fifo" ]; then ok; else bad "the FIFO was replaced"; fi
check "what went through the FIFO reads back" 0 "$gp" summary -q "$tmp/from_fifo"
ln -s real.json "$tmp/link.json"
check "convert through a dangling link" 0 "$gp" convert "$ex" -o "$tmp/link.json"
if [ -L "$tmp/link.json" ] && [ -s "$tmp/real.json" ]; then ok; else bad "the link was replaced or its target not written"; fi
check "convert through the link again" 0 "$gp" convert "$ex" -o "$tmp/link.json"
if [ -L "$tmp/link.json" ]; then ok; else bad "the link was replaced on the second write"; fi
if mknod "$tmp/null" c 1 3 2>/dev/null; then
  check "convert into a character device" 0 "$gp" convert "$ex" -o "$tmp/null"
  if [ -c "$tmp/null" ]; then ok; else bad "the device node was replaced by a file"; fi
else
  echo "note: mknod not permitted, the device case is covered by test_outputs (/dev/null)"
fi
check "analyze -o - writes to stdout" 0 "$gp" analyze --json "$ex" -o -
contains "analyze -o -" '"schema":"gpuprof.analyze/1"'
if [ ! -e ./- ]; then ok; else bad "a file named '-' was created"; rm -f ./-; fi
check "-o a directory" 2 "$gp" convert "$ex" -o "$tmp"
contains "-o a directory" "is a directory"

# ---- item 2: inputs that are not regular files ----
# The CLI reads a pipe as cat would (the library refuses them only when asked: serve does, and
# tests/trace/test_reader_limits.c checks that refusal, a FIFO swapped in after a check included).
check "summary of <(cat trace)" 0 timeout 30 "$gp" summary -q --json <(cat "$ex")
from_pipe=$LAST
from_file=$("$gp" summary -q --json "$ex")
if [ -n "$from_pipe" ] && [ "$from_pipe" = "$from_file" ]; then ok; else bad "a pipe reads differently from the file"; fi
mkfifo "$tmp/in_fifo.json"
(sleep 1; cat "$ex" > "$tmp/in_fifo.json") &
writer=$!
check "summary of a FIFO whose writer comes later" 0 timeout 30 "$gp" summary -q "$tmp/in_fifo.json"
wait "$writer"
check "summary of a character device (empty)" 2 timeout 10 "$gp" summary /dev/null
contains "summary of a character device" "/dev/null"

# ---- item 10: signals and stale temporary files ----
# A writer killed with -9 leaves <out>.tmp.XXXXXXXX; the next write of the same target removes it.
printf 'partial' > "$tmp/out.json.tmp.stale123"
check "convert after a killed writer" 0 "$gp" convert "$ex" -o "$tmp/out.json"
if [ ! -e "$tmp/out.json.tmp.stale123" ]; then ok; else bad "stale temporary file kept"; fi
# SIGTERM / SIGINT / SIGHUP while a big output is being written: the temporary file goes, and
# gpuprof still dies of the signal. (Python restores SIGINT, which a background job ignores.)
big="$tmp/big.json"
python3 - "$big" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"traceEvents":[')
    f.write(",".join('{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":%d,"ts":%d,"dur":1,"args":{"s":"%s"}}'
                     % (i % 500, i % 7, i, "x" * 200) for i in range(300000)))
    f.write("]}")
EOF
for sig in TERM INT HUP; do
  out="$tmp/killed.$sig.json"
  python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$gp" convert "$big" -o "$out" 2>/dev/null &
  pid=$!
  seen=no
  for _ in $(seq 800); do
    if ls "$tmp" | grep -q "killed.$sig.json.tmp."; then seen=yes; break; fi
    sleep 0.01
  done
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  if [ "$seen" = no ]; then
    echo "note: SIG$sig: the write ended before the signal could be sent (machine too fast?)"
  elif [ "$rc" -gt 128 ]; then
    if ls "$tmp" | grep -q "killed.$sig.json.tmp."; then bad "SIG$sig left a temporary file"; else ok; fi
  else
    echo "note: SIG$sig came after the write had finished (exit $rc)"
  fi
done

# ---- item 11: gpuprof trace killed ----
# The program is a shell (no CUDA): GP_INJECT_LIBRARY only has to name a readable file.
(
  cd "$tmp" || exit 1
  export GP_INJECT_LIBRARY=/bin/sh
  "$gp" trace -o t.json -- sh -c 'f=$(echo "$GP_TRACE_OUTPUT" | sed "s/%p/$$/"); printf "{\"traceEvents\":[]}" > "$f"; echo $$ > pidfile; exec sleep 60' 2>/dev/null &
  gpid=$!
  for _ in $(seq 100); do [ -s pidfile ] && break; sleep 0.05; done
  prog=$(cat pidfile)
  kill -9 $gpid
  wait $gpid 2>/dev/null
  state=alive
  for _ in $(seq 100); do
    st=$(awk '{print $3}' /proc/"$prog"/stat 2>/dev/null)
    if [ -z "$st" ] || [ "$st" = Z ]; then state=dead; break; fi
    sleep 0.05
  done
  echo "$state" > program_state
  kill -9 "$prog" 2>/dev/null
  "$gp" trace -o t.json -- true > second_run.txt 2>&1
)
if [ "$(cat "$tmp/program_state")" = dead ]; then ok; else bad "the traced program outlived gpuprof"; fi
LAST=$(cat "$tmp/second_run.txt")
contains "next trace run" "an earlier run was stopped before it could move its trace"
contains "next trace run" "/.gpuprof-trace."

# ---- item 8: invalid UTF-8 ----
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"bad\xff\xc3(name","pid":1,"tid":1,"ts":1,"dur":1}]}' > "$tmp/u8.json"
check "convert invalid UTF-8" 0 "$gp" convert "$tmp/u8.json" -o "$tmp/u8.out.json"
contains "convert invalid UTF-8" "2 invalid UTF-8 sequences in strings written as U+FFFD"
if python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$tmp/u8.out.json"; then ok; else bad "convert wrote invalid JSON"; fi
if "$gp" summary --json "$tmp/u8.json" 2>/dev/null | python3 -c 'import json,sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))'; then ok; else bad "summary --json wrote invalid JSON"; fi

# ---- item 12: correlation ids at the int64 limits ----
cat > "$tmp/ext.json" <<'EOF'
{"traceEvents":[
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"correlation":-9223372036854775808,"device":0,"stream":7}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":2,"args":{"correlation":-9223372036854775808}},
{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":20,"dur":5,"args":{"correlation":9223372036854775807,"device":0,"stream":7}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":15,"dur":2,"args":{"correlation":9223372036854775807}}
]}
EOF
check "flame with int64-extreme correlation ids" 0 "$gp" flame "$tmp/ext.json" -o "$tmp/ext.folded"
check "convert with int64-extreme correlation ids" 0 "$gp" convert "$tmp/ext.json" -o "$tmp/ext.out.json"

# ---- item 13: leniencies ----
printf '\xef\xbb\xbf{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":"123","dur":5}]}' > "$tmp/bom.json"
check "BOM and quoted ts" 0 "$gp" summary "$tmp/bom.json"
contains "BOM and quoted ts" "starts with a UTF-8 byte order mark (skipped)"
contains "BOM and quoted ts" "1 events with a time written as a string"
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0123,"dur":5}]}' > "$tmp/lz.json"
check "leading zero" 2 "$gp" summary "$tmp/lz.json"
contains "leading zero" "lz.json: byte 73: a number with a leading zero"
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":5}]}' | gzip > "$tmp/trail.json.gz"
printf 'garbage' >> "$tmp/trail.json.gz"
check "gzip trailing garbage" 0 "$gp" summary "$tmp/trail.json.gz"
contains "gzip trailing garbage" "warning: 7 bytes after the end of the gzip data"

# ---- issue 32: names crafted against the string table's hash ----
# 64 K kernel names of 240 bytes (15 MB), equal in the bytes a sampled hash read (head, middle,
# tail, length) and different in bytes 17..40, cost 20 s to read when the table hashed a sample;
# the same count of ordinary names 0.4 s. Generous bound: 10x the ordinary file, plus 2 s.
names_file() { # crafted|ordinary OUT
  awk -v mode="$1" 'BEGIN {
    pad = sprintf("%200s", ""); gsub(/ /, "x", pad)
    printf "{\"traceEvents\":["
    for (i = 0; i < 65536; i++) {
      if (mode == "crafted") n = sprintf("void_gemm_kernel<%023d%s", i, pad)
      else n = sprintf("k%06d_void_gemm_kernel<%015d%s", i, 0, pad)
      printf "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":1}", (i ? "," : ""), n, i * 2
    }
    printf "]}\n"
  }' > "$2"
}
names_file crafted "$tmp/crafted.json"
names_file ordinary "$tmp/ordinary.json"
t0=$(date +%s%N)
check "ordinary names" 0 "$gp" summary -q "$tmp/ordinary.json"
t1=$(date +%s%N)
check "crafted names" 0 timeout 120 "$gp" summary -q "$tmp/crafted.json"
t2=$(date +%s%N)
ord_ms=$(( (t1 - t0) / 1000000 )); crafted_ms=$(( (t2 - t1) / 1000000 ))
echo "note: 64 K names, ordinary ${ord_ms} ms, crafted ${crafted_ms} ms"
if [ "$crafted_ms" -le $(( 10 * ord_ms + 2000 )) ]; then ok; else bad "crafted names took ${crafted_ms} ms (ordinary ${ord_ms} ms)"; fi
rm -f "$tmp/crafted.json" "$tmp/ordinary.json"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
