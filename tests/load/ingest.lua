-- wrk script for tests/load/ingest-bench.sh: POSTs the interface's example order_created
-- (deploy/examples/order-created.json, or $BENCH_BODY) with a unique payload.id per request:
-- $BENCH_RUN-<thread>-<counter>. After $BENCH_SECONDS a thread sends nothing more (delay() parks its
-- connections), so when wrk ends (-d a little longer) every request it sent has been answered: the 200s it
-- counts are exactly the orders the hub stored. done() prints one RESULT line for the bench script.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } orderhub_timespec;
int clock_gettime(int clk_id, orderhub_timespec *tp);
]]
local ts = ffi.new("orderhub_timespec")
local function now()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  local path = os.getenv("BENCH_BODY") or "deploy/examples/order-created.json"
  local f = assert(io.open(path, "rb"))
  local body = f:read("*a")
  f:close()
  local s, e = body:find('"ORD%-2024%-000123"', 1)
  assert(s, "the example's payload.id was not found in " .. path)
  head = body:sub(1, s)
  tail = body:sub(e)
  run = os.getenv("BENCH_RUN") or "R"
  counter = 0
  ok = 0
  non200 = 0
  local seconds = tonumber(os.getenv("BENCH_SECONDS") or "0")
  deadline = seconds > 0 and now() + seconds or nil
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, head .. run .. "-" .. tid .. "-" .. counter .. tail)
end

function delay()
  if deadline ~= nil and now() >= deadline then return 3600000 end
  return 0
end

function response(status, headers, body)
  if status == 200 then ok = ok + 1 else non200 = non200 + 1 end
end

function done(summary, latency, requests)
  local total_ok, total_bad = 0, 0
  for _, t in ipairs(threads) do
    total_ok = total_ok + t:get("ok")
    total_bad = total_bad + t:get("non200")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT ok=%d non200=%d p50_us=%d p90_us=%d p99_us=%d mean_us=%.0f max_us=%d connect=%d read=%d write=%d timeout=%d\n",
    total_ok, total_bad, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean,
    latency.max, e.connect, e.read, e.write, e.timeout))
end
