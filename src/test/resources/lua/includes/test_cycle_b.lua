-- test only
--- @include "includes/test_cycle_a"
local b = 2
