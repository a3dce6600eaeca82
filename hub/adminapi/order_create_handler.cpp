// POST orders: `orderhub order create` over HTTP (hub/admin/order_create_rules.hpp), with the body fields of the CLI's
// options: {"branch", "file" | "item": [...], "test", "wait", "wait_seconds"}.
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>

#include "common/crypto/uuid.hpp"
#include "common/http/server.hpp"
#include "hub/admin/order_create_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/adminapi/handlers.hpp"
#include "hub/ingest/outcome.hpp"
#include "hub/ingest/service.hpp"

namespace hub::adminapi {
namespace {

using admin::Refusal;
using common::http::Response;

constexpr auto kPollEvery = std::chrono::milliseconds(200);

/// Over HTTP the wait ends well inside the listener's handler time-out (common/http/server.hpp), so that a POS
/// that does not answer gets this endpoint's 504 `pos_answer_timeout` naming the stored order, never the
/// listener's 503 `handler_timeout` (the CLI, with no listener in between, allows up to 600 s).
constexpr long long kApiDefaultWaitSeconds = 20;
constexpr long long kApiMaxWaitSeconds = 25;
static_assert(std::chrono::seconds(kApiMaxWaitSeconds) + std::chrono::seconds(2) <=
                  common::http::Limits{}.handler_timeout,
              "the API's longest wait must end before the listener's handler time-out");

admin::OrderCreateRequest request_of(const boost::json::object& body) {
    admin::OrderCreateRequest r;
    r.branch = string_field(body, "branch").value_or("");
    if (const auto* file = body.if_contains("file"); file != nullptr && !file->is_null()) r.file = *file;
    if (const auto* items = body.if_contains("item"); items != nullptr && !items->is_null()) {
        const auto* list = items->if_array();
        if (list == nullptr) throw Refusal(Refusal::Kind::invalid, "item must be an array of POS product ids");
        for (const auto& v : *list) {
            if (!v.is_string()) throw Refusal(Refusal::Kind::invalid, "item must be an array of POS product ids");
            r.items.emplace_back(v.get_string());
        }
    }
    r.test = bool_field(body, "test").value_or(false);
    return r;
}

/// The webhook failure shape for a wait that ended without the POS's answer; the order stays stored.
Response wait_timed_out(const std::string& id, long long seconds) {
    boost::json::object body{
        {"status", "failed"},
        {"order_id", id},
        {"error",
         {{"code", "pos_answer_timeout"},
          {"message", "no answer from the POS within " + std::to_string(seconds) + " s; the order " + id +
                          " is stored and still queued (GET orders/" + id + ")"},
          {"details", boost::json::array()}}}};
    return answer(504, body);
}

/// The POS's answer to order `id`, polled until `seconds` passed (nullopt then).
boost::asio::awaitable<std::optional<boost::json::object>> wait_for_pos(Context& ctx, std::string id,
                                                                        long long seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    for (;;) {
        auto job = [id](pqxx::transaction_base& tx) {
            auto a = admin::delivery_answer(tx, id);
            return a ? boost::json::value(std::move(*a)) : boost::json::value(nullptr);
        };
        auto found = co_await read(ctx, std::move(job));
        if (found.is_object()) co_return std::move(found.as_object());
        if (std::chrono::steady_clock::now() >= deadline) co_return std::nullopt;
        timer.expires_after(kPollEvery);
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
}

}  // namespace

boost::asio::awaitable<Response> create_order(Context& ctx, const Call& call) {
    const auto body = call.body();
    const admin::OrderCreateRequest request = request_of(body);
    const bool wait = bool_field(body, "wait").value_or(false);
    const long long seconds = int_field(body, "wait_seconds").value_or(kApiDefaultWaitSeconds);
    if (seconds < 1 || seconds > kApiMaxWaitSeconds)
        throw Refusal(Refusal::Kind::invalid,
                      "wait_seconds must be between 1 and " + std::to_string(kApiMaxWaitSeconds));
    std::string order_body =
        admin::operator_body(request, "op-" + common::crypto::uuid_v7(),
                             admin::event_time_text(ingest::IngestService::system_clock_seconds()));
    if (ctx.ingest == nullptr)
        co_return common::http::render({503, "ingest_unavailable", "this hub does not take orders (--role)", {}, {}});
    auto find = [branch = request.branch](pqxx::transaction_base& tx) {
        const auto p = admin::operator_partner(tx, branch);
        return boost::json::object{{"id", p.id}, {"label", p.label}, {"time_zone", p.time_zone}};
    };
    const auto found = (co_await read(ctx, std::move(find))).as_object();
    ingest::Partner partner;
    partner.id = found.at("id").as_string().c_str();
    partner.label = found.at("label").as_string().c_str();
    partner.time_zone = found.at("time_zone").as_string().c_str();
    const boost::json::object headers{{"origin", "operator"}, {"actor", call.token.name}, {"test", request.test}};
    ingest::Origin origin{.by_operator = true, .actor = call.token.name, .test = request.test};
    const ingest::IngestResult result = co_await ctx.ingest->create(partner, std::move(order_body), call.req.request_id,
                                                                    boost::json::serialize(headers), std::move(origin));
    // A refusal is the webhook's own answer (its failure shape and status); nothing was stored or recorded.
    if (result.kind != ingest::Kind::created && result.kind != ingest::Kind::duplicate)
        co_return answer(result.http_status(), ingest::answer_body(result));
    if (result.kind == ingest::Kind::duplicate) {
        auto same = [id = result.order_id, test = request.test](pqxx::transaction_base& tx) {
            admin::require_same_test_mark(tx, id, test);
            return boost::json::value(nullptr);
        };
        co_await read(ctx, std::move(same));
    }
    const unsigned status = result.kind == ingest::Kind::created ? 201 : 200;
    boost::json::object out{{"status", "success"},
                            {"order_id", result.order_id},
                            {"external_id", result.external_id},
                            {"branch_id", request.branch},
                            {"test", request.test},
                            {"duplicate", result.kind == ingest::Kind::duplicate}};
    auto record = [out](pqxx::transaction_base&) { return out; };
    co_await change(ctx, call, result.order_id, status, std::move(record));
    if (!wait) co_return answer(status, out);
    auto pos = co_await wait_for_pos(ctx, result.order_id, seconds);
    if (!pos) co_return wait_timed_out(result.order_id, seconds);
    for (auto& [k, v] : *pos) out[k] = v;
    co_return answer(status, out);
}

}  // namespace hub::adminapi
