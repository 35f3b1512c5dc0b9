-- Workload for recipes/lua-stale.toml (written for afterburner): string
-- building, formatting, pattern matching and substitution.
local n = tonumber(arg[1]) or 40000

local parts = {}
for i = 1, n do
  parts[#parts + 1] = string.format("%d:%s;", i, (i % 7 == 0) and "seven" or "item")
end
local text = table.concat(parts)
local count = 0
for key, word in text:gmatch("(%d+):(%a+);") do
  if word == "seven" then count = count + #key end
end
local replaced, subs = text:gsub("item", "x")
print(#text, count, #replaced, subs, text:upper():find("SEVEN", 1, true))
