-- wrk script: every connection walks the same list of pages (paths in PAGES_FILE, one per line) with the
-- session cookie in COOKIE; non-2xx answers are counted and printed at the end.
local paths = {}
for line in io.lines(os.getenv("PAGES_FILE")) do
  if #line > 0 then table.insert(paths, line) end
end
local cookie = os.getenv("COOKIE")
local i = 0
local bad = 0

request = function()
  i = i + 1
  local p = paths[(i % #paths) + 1]
  return wrk.format("GET", p, { ["Cookie"] = cookie, ["Host"] = "127.0.0.1" })
end

response = function(status, headers, body)
  if status < 200 or status > 299 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("non-2xx (this thread's counter, printed per thread): %d\n", bad))
  io.write(string.format("p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  max %.1f ms  requests %d  errors %d\n",
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout))
end
