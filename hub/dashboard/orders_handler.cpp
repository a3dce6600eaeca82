// GET orders, GET orders/{id}, POST orders/{id}/phone, POST orders/{id}/resend, GET branches.
#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/dashboard/branches.hpp"
#include "hub/dashboard/handlers.hpp"
#include "hub/dashboard/orders.hpp"
#include "hub/dashboard/queries.hpp"
#include "hub/forward/resend.hpp"

namespace hub::dashboard {
namespace {

using common::http::Response;
namespace json = boost::json;

constexpr std::size_t kListLimit = 200;

/// The query of GET orders.
struct ListQuery {
    std::string branch;
    std::string filter;  ///< all, today, active or problems
    std::string since;   ///< the start of "today" (ISO 8601), or ""
};

/// The list query of a request target; sets `refusal` to a 400 and returns nullopt when a parameter is wrong.
std::optional<ListQuery> parse_list_query(std::string_view target, Response& refusal) {
    ListQuery q{query_param(target, "branch").value_or(""), query_param(target, "filter").value_or("all"),
                query_param(target, "since").value_or("")};
    json::array details;
    if (q.branch.empty()) details.push_back({{"path", "branch"}, {"message", "required"}});
    if (!parse_filter(q.filter)) details.push_back({{"path", "filter"}, {"message", "all, today, active or problems"}});
    if (!q.since.empty() && !valid_since(q.since))
        details.push_back({{"path", "since"}, {"message", "a real time in ISO 8601 with an offset"}});
    if (!details.empty()) {
        refusal = invalid_request("bad query parameters", std::move(details));
        return std::nullopt;
    }
    if (q.filter.empty()) q.filter = "all";
    return q;
}

/// GET orders/{id} and POST orders/{id}/phone: the order in the user's scope, or 404; `render` makes the answer.
/// Not a coroutine (GCC 12 mishandles by-value lambda parameters of coroutines).
template <class Render>
boost::asio::awaitable<Response> with_order(Context& ctx, const Call& call, bool reveal_phone, Render render) {
    auto body = [id = call.order_id, reveal_phone, render = std::move(render)](pqxx::transaction_base& tx,
                                                                               const User& user) {
        auto order = order_detail(tx, id, user.id, reveal_phone);
        if (!order) return no_such_order();
        return render(user, std::move(*order));
    };
    return in_session<pqxx::read_transaction>(ctx.pool, call.session.hash, std::move(body));
}

}  // namespace

boost::asio::awaitable<Response> list_orders(Context& ctx, const Call& call) {
    Response refusal;
    auto query = parse_list_query(call.req.target, refusal);
    if (!query) co_return refusal;
    auto body = [q = std::move(*query)](pqxx::transaction_base& tx, const User& user) {
        if (auto refused = refuse_branch(user, q.branch)) return std::move(*refused);
        json::array orders;
        for (const auto& r :
             exec(tx, sql::kListOrders, q.branch, q.filter, q.since, static_cast<long long>(kListLimit)))
            orders.push_back(summary_json(r));
        return ok({{"branch", q.branch}, {"filter", q.filter}, {"orders", std::move(orders)}});
    };
    co_return co_await in_session<pqxx::read_transaction>(ctx.pool, call.session.hash, std::move(body));
}

boost::asio::awaitable<Response> order(Context& ctx, const Call& call) {
    auto render = [](const User&, json::object order) { return ok({{"order", std::move(order)}}); };
    co_return co_await with_order(ctx, call, false, std::move(render));
}

boost::asio::awaitable<Response> order_phone(Context& ctx, const Call& call) {
    auto render = [id = call.order_id, request_id = call.req.request_id](const User& user, json::object order) {
        const auto& customer = order.at("customer");
        if (customer.is_null()) return failed(404, "no_customer", "the order has no customer data");
        // Who opened which phone number is recorded; the number itself is never logged.
        common::log::info("customer phone opened",
                          {{"request_id", request_id}, {"user_id", user.id}, {"order_id", id}});
        return ok({{"order_id", id}, {"phone", customer.at("phone")}});
    };
    co_return co_await with_order(ctx, call, true, std::move(render));
}

boost::asio::awaitable<Response> resend(Context& ctx, const Call& call) {
    auto body = [id = call.order_id](pqxx::work& tx, const User& user) {
        if (exec(tx, sql::kOrderInScope, id, user.id).empty()) return no_such_order();
        const auto outcome = forward::resend_order(tx, id, user.id);
        if (outcome.kind != forward::ResendOutcome::Kind::requeued)
            return failed(409, "not_resendable", outcome.message());
        tx.commit();
        return ok(
            {{"order_id", id}, {"previous_state", forward::to_text(outcome.previous_state)}, {"state", "pending"}});
    };
    auto res = co_await in_session<pqxx::work>(ctx.pool, call.session.hash, std::move(body));
    if (res.status == 200) {
        ctx.feed.nudge();
        common::log::info("dashboard resend", {{"request_id", call.req.request_id}, {"order_id", call.order_id}});
    }
    co_return res;
}

boost::asio::awaitable<Response> branches(Context& ctx, const Call& call) {
    auto body = [branch = query_param(call.req.target, "branch").value_or(""),
                 environment = ctx.options.pos_environment](pqxx::transaction_base& tx, const User& user) {
        if (auto refused = refuse_branch(user, branch)) return std::move(*refused);
        return ok({{"branches", branch_states(tx, user.id, environment, branch)}});
    };
    co_return co_await in_session<pqxx::read_transaction>(ctx.pool, call.session.hash, std::move(body));
}

}  // namespace hub::dashboard
