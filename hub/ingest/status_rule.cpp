#include "hub/ingest/status_rule.hpp"

namespace hub::ingest {

bool is_final_status(std::string_view status) { return status == "delivered" || status == "cancelled"; }

int status_rank(std::string_view status) {
    if (status == "assigned") return 1;
    if (status == "at_pick_up") return 2;
    if (status == "on_the_way") return 3;
    if (status == "delivered" || status == "cancelled") return 4;
    return 0;  // received
}

bool update_applies(std::string_view current, std::int64_t current_time, std::string_view next,
                    std::int64_t next_time) {
    if (is_final_status(current)) return false;
    if (current == "received") return true;
    if (next_time != current_time) return next_time > current_time;
    return status_rank(next) > status_rank(current);
}

}  // namespace hub::ingest
