-- test only: includes cycle_b, which includes this file back
--- @include "includes/test_cycle_b"
local a = 1
