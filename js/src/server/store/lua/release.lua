-- KEYS[1]: a record; ARGV: value. Deletes it if it still holds value: 1, else 0
-- (once() gives its lease back after a failed effect, never another's lease).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
