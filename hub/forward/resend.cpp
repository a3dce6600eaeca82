#include "hub/forward/resend.hpp"

#include <pqxx/pqxx>
#include <stdexcept>

namespace hub::forward {

std::string ResendOutcome::message() const {
    switch (kind) {
        case Kind::requeued: return "queued again after " + std::string(to_text(previous_state));
        case Kind::not_found: return "no such order";
        case Kind::cancelled: return "the order was cancelled; it is not sent";
        case Kind::already_queued: return "the order is already queued (" + std::string(to_text(previous_state)) + ")";
        case Kind::staff_decides:
            return previous_state == JobState::awaiting_acceptance
                       ? "the order waits for the branch's staff to accept or reject it"
                       : "the branch's staff did not accept the order (" + std::string(to_text(previous_state)) +
                             "); it is not sent";
    }
    return {};
}

ResendOutcome resend_order(pqxx::transaction_base& tx, const std::string& order_id,
                           const std::optional<std::string>& actor) {
    ResendOutcome out;
    auto job = tx.exec_params(
        "SELECT j.state, o.delivery_status, o.branch_id, o.partner_id FROM hub.forward_jobs j "
        "JOIN hub.orders o ON o.id = j.order_id WHERE j.order_id = $1 FOR UPDATE OF j",
        order_id);
    if (job.empty()) return out;
    const auto previous = job_state_from_text(job[0][0].c_str());
    if (!previous) throw std::runtime_error("hub.forward_jobs holds an unknown state");
    out.previous_state = *previous;
    out.branch_id = job[0][2].as<std::string>();
    if (job[0][1].as<std::string>() == "cancelled") {
        out.kind = ResendOutcome::Kind::cancelled;
        return out;
    }
    if (is_held_for_staff(out.previous_state)) {
        out.kind = ResendOutcome::Kind::staff_decides;
        return out;
    }
    if (is_queued(out.previous_state)) {
        out.kind = ResendOutcome::Kind::already_queued;
        return out;
    }
    tx.exec_params(
        "UPDATE hub.forward_jobs SET state = 'pending', due_at = now(), due_since = now(), attempts = 0, "
        "last_error = NULL, "
        "updated_at = now() WHERE order_id = $1",
        order_id);
    // libpqxx 6.4 sends a null `const char*` as NULL (it has no std::optional parameters).
    tx.exec_params(
        "INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, "
        "applied, actor, detail) VALUES ($1, $2, $3, 'forward_requeued', 'operator', now(), true, "
        "coalesce($4, current_user), $5)",
        order_id, out.branch_id, job[0][3].as<std::string>(), actor ? actor->c_str() : nullptr,
        "resend after " + std::string(to_text(out.previous_state)));
    out.kind = ResendOutcome::Kind::requeued;
    return out;
}

}  // namespace hub::forward
