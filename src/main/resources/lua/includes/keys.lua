-- The keys of one lcid, KEYS[1..5] of every lcid script, in the order redis/LockKeys.java
-- sends them. What each key and field holds: docs/internals/redis-layout.md, the one place it is written.

local K_LOCK, K_QUEUE, K_REQS, K_FENCE, K_PURGE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
