#include "hub/forward/status_log.hpp"

#include "hub/forward/outbox.hpp"

namespace hub::forward {
namespace {

struct Rule {
    JobState state;
    std::string_view status;
    std::string_view source;
};

constexpr Rule kRules[] = {
    {JobState::delivered, "pos_accepted", "pos"},          {JobState::rejected, "pos_rejected", "pos"},
    {JobState::auth_failed, "forward_auth_failed", "hub"}, {JobState::dead, "forward_dead", "hub"},
    {JobState::cancelled, "forward_cancelled", "hub"},
};

}  // namespace

std::optional<StatusLogRow> status_log_row(const JobResult& result) {
    for (const Rule& rule : kRules) {
        if (rule.state != result.state) continue;
        const bool delivered = rule.state == JobState::delivered;
        return StatusLogRow{rule.status, rule.source, delivered ? result.pos_order_id : std::string(),
                            delivered ? std::string() : result.error};
    }
    return std::nullopt;
}

}  // namespace hub::forward
