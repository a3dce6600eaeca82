// Orders and the inbox: GET orders, orders/{id}, orders/{id}/audit; POST orders/{id}/resend; GET events,
// events/{id}; POST events/{id}/replay.
#include <boost/json.hpp>

#include "common/http/error.hpp"
#include "common/http/request_id.hpp"
#include "hub/admin/inbox_rules.hpp"
#include "hub/admin/order_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/adminapi/handlers.hpp"
#include "hub/forward/resend.hpp"
#include "hub/ingest/outcome.hpp"
#include "hub/ingest/service.hpp"

namespace hub::adminapi {
namespace {

using admin::Refusal;
using common::http::Response;

bool failed_filter(const Call& call) {
    const auto v = call.query("failed");
    if (!v || *v == "false") return false;
    if (*v == "true" || v->empty()) return true;
    throw Refusal(Refusal::Kind::invalid, "failed must be true or false");
}

std::int64_t event_cursor(const Call& call) {
    const std::string key = cursor_key(call);
    if (key.empty()) return 0;
    if (key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos)
        throw Refusal(Refusal::Kind::invalid, "cursor is not one this API gave");
    return std::stoll(key);
}

admin::OrderFilter order_filter(const Call& call, long long fetch) {
    return {call.query("branch").value_or(""), call.query("state").value_or(""), cursor_key(call), fetch};
}

admin::InboxFilter event_filter(const Call& call, long long fetch) {
    return {failed_filter(call), call.query("external_id").value_or(""), fetch, event_cursor(call)};
}

/// GET a list: the page that `list` reads with the filter of `call` (asking for one row more than the page size,
/// which says whether a next page exists).
template <class Filter>
boost::asio::awaitable<Response> list_page(Context& ctx, const Call& call, Filter (*filter_of)(const Call&, long long),
                                           boost::json::array (*list)(pqxx::transaction_base&, const Filter&)) {
    const long long limit = page_size(call);
    auto job = [f = filter_of(call, limit + 1), list](pqxx::transaction_base& tx) { return list(tx, f); };
    auto rows = co_await read(ctx, std::move(job));
    co_return answer(200, page(std::move(rows.as_array()), limit, "id"));
}

/// GET one item: what `show` reads for the `{id}` of the path.
boost::asio::awaitable<Response> show_by_id(Context& ctx, const Call& call,
                                            boost::json::object (*show)(pqxx::transaction_base&, const std::string&)) {
    auto job = [id = call.param("id"), show](pqxx::transaction_base& tx) { return show(tx, id); };
    co_return answer(200, co_await read(ctx, std::move(job)));
}

}  // namespace

boost::asio::awaitable<Response> list_orders(Context& ctx, const Call& call) {
    co_return co_await list_page(ctx, call, order_filter, admin::list_orders);
}

boost::asio::awaitable<Response> show_order(Context& ctx, const Call& call) {
    co_return co_await show_by_id(ctx, call, admin::show_order);
}

boost::asio::awaitable<Response> order_audit(Context& ctx, const Call& call) {
    auto job = [id = call.param("id")](pqxx::transaction_base& tx) {
        admin::show_order(tx, id);  // 404 for an unknown order
        return admin::order_audit(tx, id);
    };
    co_return answer(200, one_page(co_await read(ctx, std::move(job))));
}

boost::asio::awaitable<Response> resend_order(Context& ctx, const Call& call) {
    auto job = [id = call.param("id"), actor = call.token.name](pqxx::transaction_base& tx) {
        const auto outcome = forward::resend_order(tx, id, actor);
        if (outcome.kind == forward::ResendOutcome::Kind::not_found)
            throw Refusal(Refusal::Kind::not_found, outcome.message());
        if (outcome.kind != forward::ResendOutcome::Kind::requeued)
            throw Refusal(Refusal::Kind::conflict, outcome.message());
        return boost::json::object{
            {"order_id", id}, {"previous_state", forward::to_text(outcome.previous_state)}, {"state", "pending"}};
    };
    co_return answer(200, co_await change(ctx, call, call.param("id"), 200, std::move(job)));
}

boost::asio::awaitable<Response> list_events(Context& ctx, const Call& call) {
    co_return co_await list_page(ctx, call, event_filter, admin::list_events);
}

boost::asio::awaitable<Response> show_event(Context& ctx, const Call& call) {
    co_return co_await show_by_id(ctx, call, admin::show_event);
}

boost::asio::awaitable<Response> replay_event(Context& ctx, const Call& call) {
    if (ctx.ingest == nullptr)
        co_return common::http::render({503, "replay_unavailable", "this hub does not take webhooks (--role)", {}, {}});
    const std::string id = call.param("id");
    auto job = [id](pqxx::transaction_base& tx) {
        auto src = admin::replay_source(tx, id);
        return boost::json::object{
            {"partner_id", src.partner.id},   {"label", src.partner.label}, {"time_zone", src.partner.time_zone},
            {"signing", src.partner.signing}, {"body", src.body},           {"headers", src.headers}};
    };
    // The source is read first (a Refusal answers without a change); today's ingest path then stores the replay
    // (its own inbox row, `replay_of` = id), and the replay is recorded as a change.
    auto src = (co_await read(ctx, std::move(job))).as_object();
    ingest::Partner partner;
    partner.id = src.at("partner_id").as_string().c_str();
    partner.label = src.at("label").as_string().c_str();
    partner.time_zone = src.at("time_zone").as_string().c_str();
    partner.signing = src.at("signing").as_bool();
    const ingest::IngestResult result = co_await ctx.ingest->process(partner, std::string(src.at("body").as_string()),
                                                                     "replay-" + common::http::new_request_id(),
                                                                     std::string(src.at("headers").as_string()), id);
    const unsigned status = result.row().http_status;
    boost::json::object out{
        {"event_id", std::stoll(id)}, {"http_status", status}, {"response", ingest::answer_body(result)}};
    auto record = [out](pqxx::transaction_base&) { return out; };
    co_return answer(200, co_await change(ctx, call, id, 200, std::move(record)));
}

}  // namespace hub::adminapi
