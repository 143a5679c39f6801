-- Wakes the long-polls on one request (protocol v1.1), on whichever replica of the service holds
-- them: one classic PUBLISH on the channel every replica subscribes to (redis/Wakeups.java). The
-- message is the lcid's hash tag followed by the requestId, e.g. "{tenant|order-42}pay-1".
-- Classic, not sharded, pub/sub: it works on Redis 6.2 and 7, Valkey and Cluster alike (a Cluster
-- node forwards it to every node, so a replica subscribed on any one node hears it). At most once:
-- a lost message only delays a waiter until its re-check (docs/modes-and-batches.md, long-poll).
--- @include "includes/store"

local function wake(rid)
  redis.call('PUBLISH', 'baton:wake', string.match(K_STATE, '%b{}') .. rid)
end
