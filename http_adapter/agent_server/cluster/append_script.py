"""The Lua script that appends a run's buffered events to its Redis Stream (`broker`)."""

__all__ = ["APPEND"]

# One run's buffered entries in ONE command: the XADDs run in Redis (~3 µs an event against
# ~15 for as many pipelined XADD commands, redis-py's packing and parsing being the cost), and
# atomically after a check that each id follows the stream's last: `n` one more (the end marker:
# the same n, a later ms). XADD alone would take a later ms with any n from a second writer.
# ARGV: maxlen, ttl, resumable flag, how many entries at the front were sent before (a
# connection broke: if the stream has them, they are skipped), whether to set the TTLs (they
# are set anyway on a new stream: Redis may have restarted unseen), the writer's attempt (0:
# not fenced; KEYS[3] keeps the highest that wrote, issue 26), then id, name, data per entry.
# Answers {count} when all are in, {k, error}: entry k does not follow, or {-1, error}: a
# later attempt wrote the stream (nothing was written).
APPEND = """
local function parse(id)
  local ms, n = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(n)
end
local attempt = tonumber(ARGV[6])
if attempt > 0 then
  local seen = tonumber(redis.call('GET', KEYS[3]) or '0')
  if seen > attempt then
    return {-1, 'attempt ' .. attempt .. ' is stale: attempt ' .. seen .. ' wrote'}
  elseif seen < attempt then
    redis.call('SET', KEYS[3], attempt, 'EX', ARGV[2])
  end
end
local top_ms, top_n
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if top then top_ms, top_n = parse(top[1]) end
local retried = tonumber(ARGV[4])
for i = 7, #ARGV, 3 do
  local k = (i - 7) / 3
  local ms, n = parse(ARGV[i])
  local done = top_ms and (ms < top_ms or (ms == top_ms and n <= top_n))
  if done and k < retried then
    -- written by the attempt whose answer was lost
  elseif top_ms and (done or ms < top_ms or
                     n ~= top_n + (ARGV[i + 1] == '' and 0 or 1)) then
    return {k, 'entry ' .. ARGV[i] .. ' does not follow ' .. top_ms .. '-' .. top_n}
  else
    if ARGV[i + 1] == '' then
      redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], ARGV[i], 'end', '1')
    else
      redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], ARGV[i], 'e', ARGV[i + 1], 'd', ARGV[i + 2])
    end
    top_ms, top_n = ms, n
  end
end
if ARGV[5] == '1' or not top then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
end
return {(#ARGV - 6) / 3}
"""
