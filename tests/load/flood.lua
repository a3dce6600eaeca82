-- wrk script for tests/load/flood-bench.sh: POST /webhooks/<key> with a fresh random key per request (43
-- URL-safe base64 characters, the shape of a real key, never a partner's), the small body {}. Answers are counted
-- by status; done() prints one RESULT line: total answers and those 404 (unknown key), 503 (new-key lookups
-- saturated, or the database busy), 429 and any other status.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

function init(args)
  math.randomseed(os.time() * 1000 + tid * 7919 + math.floor(os.clock() * 1e6))
  n404, n503, n429, other = 0, 0, 0, 0
  wrk.method = "POST"
  wrk.body = "{}"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local key = {}
  for i = 1, 43 do
    local c = math.random(1, 64)
    key[i] = alphabet:sub(c, c)
  end
  return wrk.format(nil, "/webhooks/" .. table.concat(key))
end

function response(status, headers, body)
  if status == 404 then n404 = n404 + 1
  elseif status == 503 then n503 = n503 + 1
  elseif status == 429 then n429 = n429 + 1
  else other = other + 1 end
end

function done(summary, latency, requests)
  local a, b, c, d = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("n404")
    b = b + t:get("n503")
    c = c + t:get("n429")
    d = d + t:get("other")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT answers=%d s404=%d s503=%d s429=%d other=%d p50_us=%d p99_us=%d duration_us=%d connect=%d read=%d write=%d timeout=%d\n",
    summary.requests, a, b, c, d, latency:percentile(50), latency:percentile(99), summary.duration, e.connect,
    e.read, e.write, e.timeout))
end
