#include "hub/ingest/webhook.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "common/json/writer.hpp"
#include "common/text/excerpt.hpp"
#include "hub/ingest/validate.hpp"

namespace hub::ingest {
namespace {

using common::http::Request;
using common::http::Response;

// Headers worth keeping with the raw body: enough to replay and to trace, never credentials.
constexpr std::string_view kKeptHeaders[] = {"content-type", "user-agent",  "webhook-id",     "webhook-timestamp",
                                             "x-request-id", "traceparent", "x-forwarded-for"};

/// A kept header's value is cut to this many bytes (common::text::excerpt).
constexpr std::size_t kKeptHeaderBytes = 256;
/// A platform's usual kept headers take less than this: one allocation.
constexpr std::size_t kKeptHeadersReserve = 256;

/// Writes the kept headers as a JSON object through `w` (each name at most once: the list has no repeats).
void write_kept_headers(common::json::Writer& w, const Request& req) {
    char separator = '{';
    auto member = [&](std::string_view name, std::string_view value) {
        w.key(std::string_view(&separator, 1), name);
        separator = ',';
        w.text(value);
    };
    for (auto name : kKeptHeaders)
        // HTTP allows any byte above 0x7F in a header value: Latin-1 in a User-Agent made the inbox row, and with
        // it the order, unstorable (PostgreSQL refused the JSON), so the platform's every retry failed too.
        if (auto v = req.header(name)) {
            // Most values are short printable ASCII, which the excerpt would copy byte by byte unchanged.
            if (v->size() <= kKeptHeaderBytes && common::json::Writer::plain(*v))
                member(name, *v);
            else
                member(name, common::text::excerpt(*v, kKeptHeaderBytes));
        }
    if (!req.remote.empty()) member("remote_addr", req.remote);
    w.raw(separator == '{' ? "{}" : "}");
}

/// The kept headers as a JSON object's text (each name at most once: the list has no repeats).
std::string kept_headers(const Request& req) {
    std::string out;
    {
        common::json::Writer w(out, kKeptHeadersReserve);  // cuts `out` to the text when it ends, here
        write_kept_headers(w, req);
    }
    return out;
}

/// The known event as a static string, for the access log.
std::string_view static_event(std::string_view event) {
    if (event == kEventOrderCreated) return kEventOrderCreated;
    if (event == kEventOrderUpdated) return kEventOrderUpdated;
    return {};
}

}  // namespace

namespace {

/// The answer, its log fields taking the result's strings.
Response render_fresh(IngestResult& result) {
    const OutcomeRow& row = result.row();
    // A replay's remembered answer is final (no Retry-After): sent as it was.
    Response r;
    if (row.http_status < 300 || result.kind == Kind::replayed) {
        r.status = result.http_status();
        r.body = answer_text(result);
    } else {
        const boost::json::object body = answer_body(result);
        r = common::http::render(error_of(result), &body);
    }
    if (result.kind == Kind::method_not_allowed) r.headers.emplace_back("Allow", "POST");
    r.log.set("partner", std::move(result.partner_id));
    r.log.set("event", std::string(static_event(result.event)));
    r.log.set("outcome", std::string(row.metric));
    r.log.set("order_id", std::move(result.order_id));
    r.log.set("external_id", std::move(result.external_id));
    return r;
}

}  // namespace

Response render(IngestResult result) {
    if (result.kind != Kind::unknown_key) return render_fresh(result);
    // The answer to an unknown key is the same for every request (nothing of the request is in it): rendered once,
    // as a flood of random keys would otherwise have it rendered thousands of times a second.
    static const Response kUnknown = [] {
        IngestResult unknown;
        unknown.kind = Kind::unknown_key;
        Response r = render_fresh(unknown);
        r.refusal = true;
        return r;
    }();
    return kUnknown;
}

boost::asio::awaitable<Response> WebhookHandler::handle(Request&& req, std::string_view key) {
    if (req.method != "POST") {
        IngestResult refused;
        refused.kind = Kind::method_not_allowed;
        co_return render(std::move(refused));
    }
    WebhookRequest w;
    w.key = key;
    w.headers_json = kept_headers(req);
    w.webhook_id = req.header("webhook-id").value_or("");
    w.webhook_timestamp = req.header("webhook-timestamp").value_or("");
    w.webhook_signature = req.header("webhook-signature").value_or("");
    w.request_id = std::move(req.request_id);
    w.body = std::move(req.body);
    // What is kept of the headers is in `w` now: the rest is freed before the wait for the commit, while its memory
    // is in this thread's cache and the next request can reuse it. (The path stays: `key` is a view of it.)
    req.headers = {};
    co_return render(co_await service_.receive(std::move(w)));
}

}  // namespace hub::ingest
