#include "hub/adminapi/api.hpp"

#include <array>
#include <boost/json.hpp>
#include <pqxx/except>

#include "common/http/error.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/adminapi/handlers.hpp"
#include "hub/adminapi/openapi.hpp"

namespace hub::adminapi {
namespace {

using common::http::HttpError;
using common::http::Request;
using common::http::Response;

struct Route {
    RouteKey key;
    Handler handler;
};

// Below kPrefix. Patterns without a method of their own answer 405.
const std::array<Route, 24> kRoutes{{
    {{"GET", "partners"}, &list_partners},
    {{"POST", "partners"}, &create_partner},
    {{"GET", "partners/{id}"}, &show_partner},
    {{"POST", "partners/{id}/rotate"}, &rotate_partner},
    {{"POST", "partners/{id}/rotate-secret"}, &rotate_partner_secret},
    {{"POST", "partners/{id}/disable"}, &disable_partner},
    {{"POST", "partners/{id}/limit"}, &limit_partner},
    {{"GET", "brands/{brand}/pos"}, &show_pos},
    {{"PUT", "brands/{brand}/pos"}, &set_pos},
    {{"GET", "branches"}, &list_branches},
    {{"POST", "branches"}, &create_branch},
    {{"GET", "branches/{id}"}, &show_branch},
    {{"PATCH", "branches/{id}"}, &update_branch},
    {{"GET", "mappings"}, &list_mappings},
    {{"POST", "mappings"}, &set_mapping},
    {{"DELETE", "mappings/{partner}/{kind}/{external}"}, &delete_mapping},
    {{"GET", "orders"}, &list_orders},
    {{"POST", "orders"}, &create_order},
    {{"GET", "orders/{id}"}, &show_order},
    {{"POST", "orders/{id}/resend"}, &resend_order},
    {{"GET", "orders/{id}/audit"}, &order_audit},
    {{"GET", "events"}, &list_events},
    {{"GET", "events/{id}"}, &show_event},
    {{"POST", "events/{id}/replay"}, &replay_event},
}};

const std::array<RouteKey, kRoutes.size()> kKeys = [] {
    std::array<RouteKey, kRoutes.size()> keys{};
    for (std::size_t i = 0; i < kRoutes.size(); ++i) keys[i] = kRoutes[i].key;
    return keys;
}();

Response failure(unsigned status, std::string code, std::string message,
                 std::chrono::seconds retry_after = std::chrono::seconds(0)) {
    Response r = common::http::render(HttpError{status, std::move(code), std::move(message), {}, retry_after});
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

Response refused(const admin::Refusal& r) {
    switch (r.kind) {
        case admin::Refusal::Kind::invalid: return failure(400, "invalid_request", r.what());
        case admin::Refusal::Kind::not_found: return failure(404, "not_found", r.what());
        case admin::Refusal::Kind::conflict: return failure(409, "conflict", r.what());
    }
    return failure(400, "invalid_request", r.what());
}

/// The bearer token of `req`, or "" when there is none.
std::string bearer(const Request& req) {
    constexpr std::string_view kScheme = "Bearer ";
    const auto h = req.header("Authorization");
    if (!h || h->size() <= kScheme.size() || h->size() > 512) return {};
    if (!std::equal(kScheme.begin(), kScheme.end(), h->begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        }))
        return {};
    return std::string(h->substr(kScheme.size()));
}

}  // namespace

AdminApi::AdminApi(common::db::Pool& pool, const common::crypto::SecretBox* box, ingest::IngestService* ingest,
                   std::string public_url, ingest::RateLimit rate)
    : ctx_{pool, box, ingest, std::move(public_url)}, rate_(rate) {}

boost::asio::awaitable<Response> AdminApi::handle(const Request& req) {
    try {
        co_return co_await dispatch(req);
    } catch (const admin::Refusal& r) {
        co_return refused(r);
    } catch (const pqxx::insufficient_privilege&) {
        // The operator role lacks a right a rule needs: a bug of the migrations, not of the request.
        co_return failure(500, "database_rights", "the hub's operator role may not make this change");
    } catch (const std::exception&) {
        if (!common::db::is_unavailable(std::current_exception())) throw;
    }
    co_return common::http::render(
        common::http::unavailable("database_unavailable", "the database is not reachable; try again shortly"));
}

void AdminApi::make_room() {
    if (cache_.size() < kMaxCachedTokens) return;
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(cache_, [now](const auto& e) { return !e.second.token || e.second.until <= now; });
    if (cache_.size() >= kMaxCachedTokens) cache_.clear();  // that many live tokens: no guess put them there
}

boost::asio::awaitable<AdminApi::Auth> AdminApi::authenticate(const Request& req) {
    const std::string token = bearer(req);
    if (token.empty()) co_return Auth{};
    const std::string hash = admin::admin_token_hash(token);
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        if (auto it = cache_.find(hash); it != cache_.end() && it->second.until > now) co_return Auth{it->second.token};
        if (lookups_ >= kMaxTokenLookups) co_return Auth{std::nullopt, true};
        ++lookups_;
    }
    struct Done {
        AdminApi& api;
        ~Done() {
            std::lock_guard lock(api.mutex_);
            --api.lookups_;
        }
    } done{*this};
    auto job = [hash](pqxx::connection& c) {
        pqxx::read_transaction tx(c);
        return admin::find_admin_token(tx, hash);
    };
    auto found = co_await ctx_.pool.run(std::move(job));
    std::lock_guard lock(mutex_);
    make_room();
    cache_[hash] = Cached{found, now + kTokenCacheTime};
    co_return Auth{found};
}

boost::asio::awaitable<Response> AdminApi::dispatch(const Request& req) {
    if (req.path.substr(kPrefix.size()) == "openapi.json") {
        if (req.method != "GET" && req.method != "HEAD") {
            Response r = failure(405, "method_not_allowed", "use GET");
            r.headers.emplace_back("Allow", "GET");
            co_return r;
        }
        Response r;
        r.status = 200;
        r.body = std::string(openapi_json());
        co_return r;
    }
    const Auth auth = co_await authenticate(req);
    if (auth.busy)
        co_return failure(503, "busy", "too many token checks at once; retry shortly", std::chrono::seconds(1));
    const auto& token = auth.token;
    if (!token) {
        Response r = failure(401, "unauthenticated", "an admin token is needed: Authorization: Bearer <token>");
        r.headers.emplace_back("WWW-Authenticate", "Bearer");
        co_return r;
    }
    if (auto wait = limiter_.take(token->id, rate_)) {
        co_return failure(429, "rate_limited", "too many requests for this token; slow down",
                          std::chrono::ceil<std::chrono::seconds>(*wait));
    }
    const Match m = find_route(kKeys, req.method, std::string_view(req.path).substr(kPrefix.size()));
    if (!m.index) {
        if (m.allow.empty()) co_return failure(404, "not_found", "no such endpoint");
        Response r = failure(405, "method_not_allowed", "use " + m.allow);
        r.headers.emplace_back("Allow", m.allow);
        co_return r;
    }
    if (token->read_only && req.method != "GET")
        co_return failure(403, "read_only_token", "this token is read-only: it may only GET");
    const Call call{req, m.params, *token};
    co_return co_await kRoutes[*m.index].handler(ctx_, call);
}

}  // namespace hub::adminapi
