-- Workload for recipes/lua-stale.toml (written for afterburner): objects
-- with metatables, method calls and closures, the table traffic of a
-- typical Lua program. Prints a checksum so every build can be compared.
local n = tonumber(arg[1]) or 200000

local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({x = x, y = y}, Point) end
function Point:add(o) return Point.new(self.x + o.x, self.y + o.y) end
function Point:norm1() return math.abs(self.x) + math.abs(self.y) end

local function counter()
  local c = 0
  return function(k) c = c + k; return c end
end

local acc, tick = Point.new(0, 0), counter()
for i = 1, n do
  local p = Point.new(i % 17 - 8, i % 13 - 6)
  acc = acc:add(p)
  if p:norm1() > 10 then tick(1) end
end
local seen = {}
for i = 1, n // 4 do seen[i % 1000] = (seen[i % 1000] or 0) + i end
local sum = 0
for _, v in pairs(seen) do sum = sum + v end
print(acc.x, acc.y, tick(0), sum)
