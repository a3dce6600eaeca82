// POST orders/{id}/accept and POST orders/{id}/reject: the decision of a manual-accept branch's staff on an order
// the hub holds for them (product.md section 11; the hold and its time-out: sql/hub/0017_manual_accept.sql).
#include <algorithm>
#include <boost/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "common/log/log.hpp"
#include "hub/dashboard/handlers.hpp"
#include "hub/dashboard/queries.hpp"
#include "hub/forward/job_state.hpp"

namespace hub::dashboard {
namespace {

using common::http::Response;
namespace json = boost::json;

constexpr std::size_t kMaxReasonChars = 200;

/// The number of characters (code points) of UTF-8 `text`.
std::size_t characters(std::string_view text) {
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// The reason of a reject body, or nullopt with `refusal` set to a 422.
std::optional<std::string> parse_reason(std::string_view body, Response& refusal) {
    auto parsed = common::json::parse_strict(body);
    const json::object* o = parsed.value && parsed.value->is_object() ? &parsed.value->as_object() : nullptr;
    const json::value* v = o ? o->if_contains("reason") : nullptr;
    std::string message;
    if (!o) {
        message = "the body is not a JSON object";
    } else if (!v || !v->is_string()) {
        message = "a string";
    } else if (const std::string_view text = v->as_string(); text.find_first_not_of(" \t") == std::string::npos) {
        message = "a non-empty string";
    } else if (auto problem = text_problem(text)) {
        message = "the reason " + *problem;
    } else if (characters(text) > kMaxReasonChars) {
        message = "at most " + std::to_string(kMaxReasonChars) + " characters";
    } else {
        return std::string(text);
    }
    refusal = failed(422, "invalid_reason", R"(the body must be {"reason": "..."})",
                     json::array{json::object{{"path", "/reason"}, {"message", message}}});
    return std::nullopt;
}

/// The job of an order the user may see, locked, when it waits for a decision; else the refusal (404, 409).
struct Held {
    std::string branch_id;
    std::string partner_id;
};
std::optional<Held> held_job(pqxx::transaction_base& tx, const std::string& id, const User& user, Response& refusal) {
    if (exec(tx, sql::kOrderInScope, id, user.id).empty()) {
        refusal = no_such_order();
        return std::nullopt;
    }
    auto job = exec(tx, sql::kJobForDecision, id);
    const std::string state = job.empty() ? "" : job[0]["state"].c_str();
    if (forward::job_state_from_text(state) != forward::JobState::awaiting_acceptance) {
        refusal = failed(409, "not_waiting",
                         "the order is not waiting for acceptance" + (state.empty() ? "" : " (" + state + ")"));
        return std::nullopt;
    }
    if (!job[0]["in_time"].as<bool>()) {
        // The time-out sweep ends it (and logs time_out) on its next round.
        refusal = failed(409, "not_waiting", "the time to accept the order has passed");
        return std::nullopt;
    }
    return Held{job[0]["branch_id"].c_str(), job[0]["partner_id"].c_str()};
}

}  // namespace

boost::asio::awaitable<Response> accept(Context& ctx, const Call& call) {
    auto body = [id = call.order_id](pqxx::work& tx, const User& user) {
        Response refusal;
        auto held = held_job(tx, id, user, refusal);
        if (!held) return refusal;
        exec(tx, sql::kAcceptJob, id);
        exec(tx, sql::kInsertDecision, id, held->branch_id, held->partner_id, "merchant_accepted", user.id, "");
        tx.commit();
        return ok({{"order_id", id}, {"state", "pending"}});
    };
    auto res = co_await in_session<pqxx::work>(ctx.pool, call.session.hash, std::move(body));
    if (res.status == 200) {
        ctx.feed.nudge();
        common::log::info("dashboard accept", {{"request_id", call.req.request_id}, {"order_id", call.order_id}});
    }
    co_return res;
}

boost::asio::awaitable<Response> reject(Context& ctx, const Call& call) {
    Response refusal;
    auto reason = parse_reason(call.req.body, refusal);
    if (!reason) co_return refusal;
    auto body = [id = call.order_id, reason = std::move(*reason)](pqxx::work& tx, const User& user) {
        Response refused;
        auto held = held_job(tx, id, user, refused);
        if (!held) return refused;
        exec(tx, sql::kRejectJob, id, reason);
        exec(tx, sql::kInsertDecision, id, held->branch_id, held->partner_id, "merchant_rejected", user.id, reason);
        tx.commit();
        return ok({{"order_id", id}, {"state", forward::to_text(forward::JobState::merchant_rejected)}});
    };
    auto res = co_await in_session<pqxx::work>(ctx.pool, call.session.hash, std::move(body));
    if (res.status == 200) {
        ctx.feed.nudge();
        common::log::info("dashboard reject", {{"request_id", call.req.request_id}, {"order_id", call.order_id}});
    }
    co_return res;
}

}  // namespace hub::dashboard
