-- Workload for recipes/lua-stale.toml (written for afterburner), never
-- trained on: table.sort with a Lua comparison function over records, and
-- a recursive Fibonacci (calls and returns).
local n = tonumber(arg[1]) or 60000

local seed = 42
local function rand()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed
end
local records = {}
for i = 1, n do records[i] = {key = rand() % 100000, id = i} end
table.sort(records, function(a, b)
  if a.key ~= b.key then return a.key < b.key end
  return a.id < b.id
end)
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
print(records[1].key, records[n].key, fib(20))
