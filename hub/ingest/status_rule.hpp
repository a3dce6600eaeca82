#pragma once

#include <cstdint>
#include <string_view>

namespace hub::ingest {

/// `delivered` and `cancelled` are final: an order never leaves them.
bool is_final_status(std::string_view status);

/// The order of delivery statuses (received < assigned < at_pick_up < on_the_way < delivered, cancelled), used
/// only to break ties between updates with the same event time.
int status_rank(std::string_view status);

/// Whether a platform update becomes the order's current delivery status. The current status is the one with
/// the latest event time: an update that is older than the current one is recorded but not applied; a final
/// status is never left; `received` (the hub's own first row) yields to any delivery status whatever the clocks
/// say; at the same event time the further status wins. Times are microseconds since the epoch.
bool update_applies(std::string_view current, std::int64_t current_time, std::string_view next, std::int64_t next_time);

}  // namespace hub::ingest
