#include "hub/ingest/webhook.hpp"

#include <boost/json.hpp>

#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "common/log/log.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/validate.hpp"

namespace hub::ingest {
namespace {

using common::http::Request;
using common::http::Response;

// Headers worth keeping with the raw body: enough to replay and to trace, never credentials.
constexpr std::string_view kKeptHeaders[] = {"content-type", "user-agent",       "webhook-id",
                                             "webhook-timestamp", "x-request-id", "x-forwarded-for"};

std::string kept_headers(const Request& req) {
    boost::json::object o;
    for (auto name : kKeptHeaders)
        if (auto v = req.header(name)) o[name] = v->substr(0, 256);
    if (!req.remote.empty()) o["remote_addr"] = req.remote;
    return boost::json::serialize(o);
}

Response unavailable() {
    auto r = webhook_failure(503, "store_unavailable", "the order store is unavailable; retry later");
    r.headers.emplace_back("Retry-After", "5");
    return r;
}

/// The body's `event` when it is one of the two known events, else empty.
std::string known_event(const boost::json::value& body) {
    const auto* o = body.if_object();
    if (o == nullptr) return {};
    auto it = o->find("event");
    if (it == o->end() || !it->value().is_string()) return {};
    std::string_view e = it->value().get_string();
    return e == kEventOrderCreated || e == kEventOrderUpdated ? std::string(e) : std::string();
}

}  // namespace

Response webhook_failure(unsigned status, std::string_view code, std::string_view message, boost::json::array details,
                         bool order_updated) {
    boost::json::object body{{"status", "failed"},
                             {"error", {{"code", code}, {"message", message}, {"details", std::move(details)}}}};
    if (!order_updated) body["order_id"] = "";
    return common::http::json_response(status, body);
}

boost::asio::awaitable<Response> WebhookHandler::handle(Request req, std::string key) {
    if (req.method != "POST") {
        auto r = webhook_failure(405, "method_not_allowed", "webhooks are delivered with POST");
        r.headers.emplace_back("Allow", "POST");
        co_return r;
    }
    std::optional<Partner> partner;
    try {
        partner = co_await partners_.find(std::move(key));
    } catch (const std::exception& e) {
        if (common::db::is_unavailable(std::current_exception())) co_return unavailable();
        throw;
    }
    if (!partner) co_return webhook_failure(404, "unknown_key", "unknown or disabled webhook URL");

    InboxRecord inbox;
    inbox.partner_id = partner->id;
    inbox.request_id = req.request_id;
    inbox.headers_json = kept_headers(req);
    inbox.body = std::move(req.body);

    // Refused before storage: record the request and its outcome, then answer.
    auto refuse = [&](Response r, std::string code) -> Response {
        inbox.http_status = r.status;
        inbox.outcome = "rejected";
        inbox.error_code = std::move(code);
        return r;
    };

    std::optional<Response> refusal;
    std::optional<Validated> validated;
    auto parsed = common::json::parse_strict(inbox.body);
    if (!parsed.value) {
        refusal = refuse(webhook_failure(400, "invalid_json", "the body is not valid JSON: " + parsed.error),
                         "invalid_json");
    } else {
        auto result = validate_webhook(*parsed.value);
        inbox.event = known_event(*parsed.value);
        const bool updated = inbox.event == kEventOrderUpdated;
        if (!result.value) {
            if (result.error_code == kErrorNotAnObject) {
                refusal = refuse(webhook_failure(400, "invalid_json", "the body must be a JSON object"), "not_an_object");
            } else {
                const std::string message = result.error_code == kErrorUnknownEvent
                                                ? "event must be order_created or order_updated"
                                                : "the webhook breaks the interface's rules: see details";
                refusal = refuse(webhook_failure(422, result.error_code, message, errors_to_json(result.errors), updated),
                                 result.error_code);
            }
        } else {
            validated = std::move(result.value);
            inbox.event = validated->envelope.event;
        }
    }

    try {
        if (refusal) {
            co_await store_.record(std::move(inbox));
            co_return std::move(*refusal);
        }
        if (auto* updated = std::get_if<OrderUpdated>(&validated->payload)) {
            inbox.external_id = updated->order_id;
            // order_updated is handled by the status-log issue; until then it is refused like an unknown event.
            Response r = refuse(webhook_failure(422, kErrorUnknownEvent, "order_updated is not supported yet",
                                                boost::json::array{{{"path", "/event"}, {"message", "not supported"}}},
                                                true),
                                std::string(kErrorUnknownEvent));
            co_await store_.record(std::move(inbox));
            co_return r;
        }
        inbox.external_id = std::get<OrderCreated>(validated->payload).external_id;
        auto outcome = co_await store_.store_order(partner->id, std::move(*validated), std::move(inbox));
        switch (outcome.kind) {
            case StoreOutcome::Kind::created:
            case StoreOutcome::Kind::duplicate:
                co_return common::http::json_response(200, {{"order_id", outcome.order_id}, {"status", "success"}});
            case StoreOutcome::Kind::conflict:
                co_return webhook_failure(409, "order_id_conflict",
                                          "payload.id was already used by this partner for a different order",
                                          boost::json::array{{{"path", "/payload/id"},
                                                              {"message", "already used for a different order"}}});
            case StoreOutcome::Kind::unknown_branch:
                co_return webhook_failure(422, kErrorValidationFailed, "the webhook breaks the interface's rules: see details",
                                          boost::json::array{{{"path", "/branch_id"}, {"message", "unknown branch"}}});
        }
    } catch (const std::exception& e) {
        if (common::db::is_unavailable(std::current_exception())) co_return unavailable();
        common::log::error("webhook failed", {{"request_id", req.request_id}, {"error", e.what()}});
        co_return webhook_failure(500, "internal_error", "internal error; the request was not stored");
    }
    co_return webhook_failure(500, "internal_error", "internal error");
}

}  // namespace hub::ingest
