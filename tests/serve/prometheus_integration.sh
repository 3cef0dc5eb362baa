#!/usr/bin/env bash
# Integration test: `gpuprof exporter` on the fake NVML driver (tests/fakes/nvml: this tests our
# code, not a GPU) scraped by a real Prometheus (Debian's package) on loopback; the values are
# checked through Prometheus' HTTP query API. Exit 77 (skip) when prometheus is not installed.
# Env: GPUPROF (the CLI), GP_FAKE_NVML (fake library), GP_SOURCE_DIR.
set -euo pipefail
PROM=${PROMETHEUS:-$(command -v prometheus || true)}
if [ -z "$PROM" ] || [ ! -x "$PROM" ]; then
  echo "prometheus not installed: skipping" >&2
  exit 77
fi
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool not installed: skipping" >&2; exit 77; }
done
work=$(mktemp -d /tmp/gp_prom_XXXXXX)
exp_pid=""
prom_pid=""
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null || true
  [ -n "$exp_pid" ] && kill "$exp_pid" 2>/dev/null && wait "$exp_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# 1. the exporter on the fake driver, on a free loopback port
GP_NVML_LIBRARY="$GP_FAKE_NVML" \
GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/serve/scenarios/exporter.txt" \
  "$GPUPROF" exporter --listen 127.0.0.1:0 --port-file "$work/port" --interval 200ms \
  --hostname itest 2>"$work/exporter.log" &
exp_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "exporter did not start"; cat "$work/exporter.log"; exit 1; }
exp_port=$(tr -d '\n' < "$work/port")
curl -sf "http://127.0.0.1:$exp_port/metrics" > "$work/metrics.txt"
if command -v promtool >/dev/null; then
  promtool check metrics < "$work/metrics.txt"
fi

# 2. Prometheus on loopback, scraping it every second, with a temporary storage folder
prom_port=$(free_port)
cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpuprof
    static_configs:
      - targets: ['127.0.0.1:$exp_port']
YML
"$PROM" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prom.log" 2>&1 &
prom_pid=$!

query() { # prints the JSON answer of an instant query
  curl -sf --get "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" || true
}
value_of() { # prints the single value of an instant query, or nothing
  query "$1" | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)["data"]["result"]
except Exception:
    sys.exit(0)
if len(r) == 1:
    print(r[0]["value"][1])'
}

# 3. wait (bounded: 60 s) for a successful scrape
ok=0
for _ in $(seq 1 120); do
  if [ "$(value_of 'up{job="gpuprof"}')" = "1" ] &&
     [ -n "$(value_of 'gpuprof_gpu_memory_used_bytes{gpu="0"}')" ]; then
    ok=1; break
  fi
  kill -0 "$prom_pid" 2>/dev/null || { echo "prometheus exited"; cat "$work/prom.log"; exit 1; }
  sleep 0.5
done
[ "$ok" = 1 ] || { echo "no successful scrape within 60 s"; cat "$work/prom.log"; exit 1; }

# 4. the values, as Prometheus stored them
fail=0
check() { # query expected
  got=$(value_of "$1")
  if [ "$got" != "$2" ]; then echo "FAIL: $1 = '$got', want '$2'"; fail=1; else echo "ok: $1 = $got"; fi
}
check 'gpuprof_gpu_memory_used_bytes{gpu="0",uuid="GPU-aaaaaaaa-0000-0000-0000-000000000000",hostname="itest"}' 42949672960
check 'gpuprof_gpu_memory_total_bytes{gpu="0"}' 85899345920
check 'gpuprof_gpu_utilization_ratio{gpu="0"}' 0.87
check 'gpuprof_gpu_temperature_celsius{gpu="0",name="NVIDIA A100-SXM4-80GB",pci_bus_id="00000000:07:00.0"}' 71
check 'gpuprof_gpu_power_watts{gpu="0"}' 312.25
check 'gpuprof_gpu_xid_errors_total{gpu="0",xid="79"}' 2
check 'gpuprof_gpu_xid_errors_total{gpu="0",xid="13"}' 1
check 'gpuprof_gpu_up{gpu="2"}' 0
check 'count(gpuprof_gpu_fan_speed_ratio)' 1
check 'gpuprof_gpu_clock_event_active{gpu="0",reason="sw_power_cap"}' 1
check 'gpuprof_gpu_process_memory_bytes{gpu="0",pid="1234"}' 21474836480
check 'count(gpuprof_gpu_info{name="Fake \"quoted\" \\ GPU"})' 1
check 'gpuprof_monitor_samples_total > bool 0' 1

# 5. every query of the example Grafana dashboard parses in this Prometheus and names only
#    metrics the exporter writes
python3 - "$GP_SOURCE_DIR/docs/grafana-dashboard.json" "$prom_port" "$work/metrics.txt" <<'PY' || fail=1
import json, re, sys, urllib.parse, urllib.request
dash = json.load(open(sys.argv[1]))
known = set(re.findall(r"^# TYPE (\S+)", open(sys.argv[3]).read(), re.M))
known |= {"gpuprof_gpu_memory_growth_bytes_per_second", "gpuprof_gpu_memory_leak_detected"}
bad = 0
for p in dash["panels"]:
    for t in p["targets"]:
        q = t["expr"].replace("$hostname", ".*").replace("$gpu", ".*")
        url = "http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[2], urllib.parse.urlencode({"query": q}))
        r = json.load(urllib.request.urlopen(url))
        names = set(re.findall(r"gpuprof_[a-z_]+", q))
        if r.get("status") != "success" or not names <= known:
            print("FAIL: dashboard query %r: %s, unknown %s" % (q, r.get("status"), names - known))
            bad = 1
print("ok: %d dashboard queries" % sum(len(p["targets"]) for p in dash["panels"]))
sys.exit(bad)
PY
exit $fail
