#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/db/pool.hpp"
#include "hub/ingest/outcome.hpp"
#include "hub/ingest/service.hpp"
#include "hub/ingest/signature.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/webhook.hpp"
#include "hub/ingest/webhook_ids.hpp"

// The ingest service and its endpoint without sockets or a database: a partner lookup and a store that answer
// what each case needs.
namespace {

namespace asio = boost::asio;
using namespace hub::ingest;

constexpr std::string_view kCreatedBody = R"({"event": "order_created", "event_time": "2024-05-01 12:30:00",
  "branch_id": "B1", "payload": {"id": "A-1", "payment_method": "cash", "order_type": "DELIVERY", "subtotal": 1,
  "tax": 0, "discount": 0, "total": 1, "is_schedule": 0, "items": [{"id": "x", "quantity": 1, "price": 1}]}})";

struct FakePartners final : PartnerLookup {
    std::optional<Partner> partner = Partner{"p1", "P", "UTC"};
    bool down = false;
    int lookups = 0;
    asio::awaitable<std::optional<Partner>> find(std::string /*key*/) override {
        ++lookups;
        if (down) throw common::db::Unavailable("database down");
        co_return partner;
    }
};

struct FakeStore final : OrderSink {
    bool down = false;
    StoreOutcome answer{Kind::created, "o-1", false, "7"};
    std::vector<InboxRecord> recorded;
    int stored = 0;
    asio::awaitable<StoreOutcome> store(Validated&& /*webhook*/, InboxRecord&& inbox) override {
        if (down) throw common::db::Unavailable("database down");
        ++stored;
        recorded.push_back(std::move(inbox));
        co_return answer;
    }
    asio::awaitable<std::string> record(InboxRecord&& inbox) override {
        if (down) throw common::db::Unavailable("database down");
        recorded.push_back(std::move(inbox));
        co_return "8";
    }
};

template <class T>
T run(asio::awaitable<T> work) {
    asio::io_context ioc;
    auto future = asio::co_spawn(ioc, std::move(work), asio::use_future);
    ioc.run();
    return future.get();
}

WebhookRequest request(std::string body = std::string(kCreatedBody)) {
    WebhookRequest r;
    r.key = "k";
    r.body = std::move(body);
    r.request_id = "r1";
    r.headers_json = "{}";
    return r;
}

common::http::Request http_post(std::string body = std::string(kCreatedBody)) {
    common::http::Request r;
    r.method = "POST";
    r.path = r.target = "/webhooks/k";
    r.body = std::move(body);
    r.request_id = "r1";
    return r;
}

boost::json::value body_of(const common::http::Response& r) { return boost::json::parse(r.body); }

std::optional<std::string> answer_header(const common::http::Response& r, std::string_view name) {
    for (const auto& [k, v] : r.headers)
        if (k == name) return v;
    return std::nullopt;
}

}  // namespace

TEST_CASE("outcome table: every kind has its row, in order", "[ingest][outcome]") {
    for (std::size_t k = 0; k < kOutcomes.size(); ++k) CHECK(static_cast<std::size_t>(kOutcomes[k].kind) == k);
    CHECK(outcome_row(Kind::created).http_status == 200);
    CHECK(inbox_outcome(Kind::appended, true) == "applied");
    CHECK(inbox_outcome(Kind::appended, false) == "logged");
    CHECK(inbox_outcome(Kind::conflict) == "conflict");
    CHECK(refusal_kind(kErrorNotAnObject) == Kind::not_an_object);
    CHECK(refusal_kind(kErrorUnknownEvent) == Kind::unknown_event);
    CHECK(refusal_kind(kErrorValidationFailed) == Kind::validation_failed);
}

TEST_CASE("ingest: an unknown key is 404 and nothing is recorded", "[ingest]") {
    FakePartners partners;
    partners.partner.reset();
    FakeStore store;
    IngestService service(partners, store);
    const auto result = run(service.receive(request()));
    CHECK(result.kind == Kind::unknown_key);
    CHECK(store.recorded.empty());
    const auto r = render(result);
    CHECK(r.status == 404);
    CHECK(body_of(r).at("error").at("code") == "unknown_key");
    CHECK(body_of(r).at("order_id") == "");
    CHECK(r.log.get("outcome") == "unknown_key");
}

TEST_CASE("ingest: a partner lookup the store cannot answer is 503 with Retry-After", "[ingest]") {
    FakePartners partners;
    partners.down = true;
    FakeStore store;
    WebhookHandler handler(partners, store);
    const auto r = run(handler.handle(http_post(), "k"));
    CHECK(r.status == 503);
    CHECK(answer_header(r, "Retry-After") == "5");
    CHECK(body_of(r).at("error").at("code") == "store_unavailable");
    CHECK(r.log.get("outcome") == "unavailable");
    CHECK(r.log.get("partner").empty());
}

TEST_CASE("ingest: a store that is down is 503, and the event stays known", "[ingest]") {
    FakePartners partners;
    FakeStore store;
    store.down = true;
    WebhookHandler handler(partners, store);
    const auto r = run(handler.handle(http_post(), "k"));
    CHECK(r.status == 503);
    CHECK(answer_header(r, "Retry-After") == "5");
    CHECK(r.log.get("partner") == "p1");
    CHECK(r.log.get("event") == "order_created");
}

TEST_CASE("ingest: the store gets the partner in the inbox row, and the log line names it too", "[ingest]") {
    FakePartners partners;
    FakeStore store;
    WebhookHandler handler(partners, store);
    const auto r = run(handler.handle(http_post(), "k"));
    CHECK(r.status == 200);
    REQUIRE(store.stored == 1);
    REQUIRE(store.recorded.size() == 1);
    CHECK(store.recorded[0].partner_id == "p1");
    CHECK(store.recorded[0].request_id == "r1");
    CHECK(r.log.get("partner") == "p1");
}

TEST_CASE("ingest: on_stored is called after each stored webhook, not for a refusal or a store that is down",
          "[ingest]") {
    FakePartners partners;
    FakeStore store;
    WebhookHandler handler(partners, store);
    int stored_calls = 0;
    handler.service().on_stored([&] { ++stored_calls; });
    CHECK(run(handler.handle(http_post(), "k")).status == 200);
    CHECK(stored_calls == 1);
    CHECK(run(handler.handle(http_post("{not json"), "k")).status == 400);
    CHECK(stored_calls == 1);
    store.down = true;
    CHECK(run(handler.handle(http_post(), "k")).status == 503);
    CHECK(stored_calls == 1);
    store.down = false;
    CHECK(run(handler.handle(http_post(), "k")).status == 200);
    CHECK(stored_calls == 2);
}

TEST_CASE("ingest: past its rate a partner gets 429 with Retry-After, unrecorded", "[ingest]") {
    FakePartners partners;
    partners.partner->rate_per_second = 1;
    partners.partner->rate_burst = 1;
    FakeStore store;
    WebhookHandler handler(partners, store);
    handler.limit_rate({});
    CHECK(run(handler.handle(http_post(), "k")).status == 200);
    const auto r = run(handler.handle(http_post(), "k"));
    CHECK(r.status == 429);
    CHECK(answer_header(r, "Retry-After") == "1");
    CHECK(body_of(r).at("error").at("code") == "rate_limited");
    CHECK(r.log.get("outcome") == "rate_limited");
    CHECK(r.log.get("partner") == "p1");
    CHECK(store.recorded.size() == 1);  // the first request only
}

TEST_CASE("ingest: a signing partner's unsigned request is 401, recorded with its reason", "[ingest]") {
    FakePartners partners;
    partners.partner->signing = true;
    partners.partner->signing_keys = {std::string(32, 'k')};
    FakeStore store;
    WebhookHandler handler(partners, store, [] { return std::int64_t{1'700'000'000}; });
    const auto r = run(handler.handle(http_post(), "k"));
    CHECK(r.status == 401);
    CHECK(body_of(r).at("error").at("code") == "invalid_signature");
    CHECK(r.log.get("outcome") == "unauthorized");
    REQUIRE(store.recorded.size() == 1);
    CHECK(store.recorded[0].http_status == 401);
    CHECK(store.recorded[0].outcome == "rejected");
    CHECK(store.recorded[0].error_code == "signature_missing");
    CHECK(store.stored == 0);
}

TEST_CASE("ingest: a signed request goes on to storage", "[ingest]") {
    FakePartners partners;
    const std::string key(32, 'k');
    partners.partner->signing = true;
    partners.partner->signing_keys = {key};
    FakeStore store;
    WebhookHandler handler(partners, store, [] { return std::int64_t{1'700'000'000}; });
    auto req = http_post();
    req.headers = {{"webhook-id", "msg_1"},
                   {"webhook-timestamp", "1700000000"},
                   {"webhook-signature", sign_webhook(key, "msg_1", "1700000000", req.body)}};
    const auto r = run(handler.handle(std::move(req), "k"));
    CHECK(r.status == 200);
    CHECK(body_of(r) == boost::json::parse(R"({"order_id": "o-1", "status": "success"})"));
    CHECK(r.log.get("order_id") == "o-1");
    CHECK(r.log.get("external_id") == "A-1");
}

TEST_CASE("ingest: a signature refusal keeps a 4 KiB prefix of a larger body, and its size", "[ingest]") {
    FakePartners partners;
    partners.partner->signing = true;
    partners.partner->signing_keys = {std::string(32, 'k')};
    FakeStore store;
    WebhookHandler handler(partners, store, [] { return std::int64_t{1'700'000'000}; });
    const std::string big = std::string(kCreatedBody) + std::string(100'000, ' ');
    CHECK(run(handler.handle(http_post(big), "k")).status == 401);
    const std::string small(kCreatedBody);
    CHECK(run(handler.handle(http_post(small), "k")).status == 401);
    REQUIRE(store.recorded.size() == 2);
    CHECK(store.recorded[0].body == big.substr(0, 4096));
    CHECK(store.recorded[0].body_size == big.size());
    CHECK(store.recorded[1].body == small);  // a body within the prefix is kept whole
    CHECK(store.recorded[1].body_size == 0);
}

/// Webhook ids in memory, as WebhookIds keeps them in the database.
struct FakeIds final : WebhookIdLog {
    std::map<std::string, std::pair<RememberedAnswer, int>> seen;  // id -> answer, replays
    std::vector<InboxRecord> recorded;
    asio::awaitable<std::optional<RememberedAnswer>> replayed(std::string id, InboxRecord inbox) override {
        auto it = seen.find(id);
        if (it == seen.end()) co_return std::nullopt;
        if (++it->second.second == 1) recorded.push_back(std::move(inbox));
        co_return it->second.first;
    }
    asio::awaitable<void> remember(std::string /*partner*/, std::string id, RememberedAnswer answer) override {
        seen.emplace(id, std::make_pair(std::move(answer), 0));
        co_return;
    }
};

TEST_CASE("ingest: a replayed webhook-id gets the first answer and stores nothing", "[ingest]") {
    FakePartners partners;
    const std::string key(32, 'k');
    partners.partner->signing = true;
    partners.partner->signing_keys = {key};
    FakeStore store;
    FakeIds ids;
    WebhookHandler handler(partners, store, [] { return std::int64_t{1'700'000'000}; });
    handler.guard_replays(ids);
    auto signed_post = [&](std::string id, std::string body) {
        auto req = http_post(std::move(body));
        req.headers = {{"webhook-id", id},
                       {"webhook-timestamp", "1700000000"},
                       {"webhook-signature", sign_webhook(key, id, "1700000000", req.body)}};
        return req;
    };
    const auto first = run(handler.handle(signed_post("msg_1", std::string(kCreatedBody)), "k"));
    REQUIRE(first.status == 200);
    for (int n = 0; n < 3; ++n) {
        const auto again = run(handler.handle(signed_post("msg_1", std::string(kCreatedBody)), "k"));
        CHECK(again.status == first.status);
        CHECK(body_of(again) == body_of(first));
        CHECK(again.log.get("outcome") == "replayed");
    }
    CHECK(store.stored == 1);
    CHECK(ids.recorded.size() == 1);  // the first replay only

    SECTION("a refusal is remembered too, with its status") {
        const auto refused = run(handler.handle(signed_post("msg_2", "{}"), "k"));
        REQUIRE(refused.status == 422);
        const auto again = run(handler.handle(signed_post("msg_2", "{}"), "k"));
        CHECK(again.status == 422);
        CHECK(body_of(again) == body_of(refused));
    }
    SECTION("a 503 is not remembered: the platform's retry runs again") {
        store.down = true;
        CHECK(run(handler.handle(signed_post("msg_3", std::string(kCreatedBody)), "k")).status == 503);
        store.down = false;
        CHECK(run(handler.handle(signed_post("msg_3", std::string(kCreatedBody)), "k")).status == 200);
        CHECK(store.stored == 2);
    }
}

TEST_CASE("ingest: a signature refusal whose record fails is 503", "[ingest]") {
    FakePartners partners;
    partners.partner->signing = true;
    FakeStore store;
    store.down = true;
    WebhookHandler handler(partners, store);
    const auto r = run(handler.handle(http_post(), "k"));
    CHECK(r.status == 503);
    CHECK(r.log.get("outcome") == "unavailable");
}

TEST_CASE("ingest: refusals are recorded with the table's inbox values", "[ingest]") {
    FakePartners partners;
    FakeStore store;
    IngestService service(partners, store);
    SECTION("not JSON") {
        const auto result = run(service.receive(request("{")));
        CHECK(result.kind == Kind::invalid_json);
        CHECK(render(result).status == 400);
        CHECK(store.recorded.at(0).error_code == "invalid_json");
    }
    SECTION("not an object") {
        const auto result = run(service.receive(request("[]")));
        CHECK(result.kind == Kind::not_an_object);
        const auto body = answer_body(result);
        CHECK(body.at("error").at("code") == "invalid_json");
        CHECK(store.recorded.at(0).error_code == "not_an_object");
    }
    SECTION("an order_updated that breaks the rules has no order_id in its answer") {
        const auto result = run(service.receive(request(R"({"event": "order_updated"})")));
        CHECK(result.kind == Kind::validation_failed);
        const auto body = answer_body(result);
        CHECK_FALSE(body.contains("order_id"));
        CHECK_FALSE(body.at("error").at("details").as_array().empty());
        CHECK(store.recorded.at(0).http_status == 422);
        CHECK(store.recorded.at(0).outcome == "rejected");
        CHECK(store.recorded.at(0).event == "order_updated");
    }
    CHECK(store.stored == 0);
}

TEST_CASE("ingest: storage kinds render from the table", "[ingest]") {
    FakePartners partners;
    FakeStore store;
    WebhookHandler handler(partners, store);
    using Case = std::tuple<Kind, unsigned, std::string_view>;
    for (const auto& [kind, status, code] :
         {Case{Kind::duplicate, 200, ""}, Case{Kind::conflict, 409, "order_id_conflict"},
          Case{Kind::unknown_branch, 422, "validation_failed"}}) {
        store.answer.kind = kind;
        const auto r = run(handler.handle(http_post(), "k"));
        CHECK(r.status == status);
        if (!code.empty()) CHECK(body_of(r).at("error").at("code").as_string() == code);
        CHECK(r.log.get("outcome") == outcome_row(kind).metric);
    }
}

TEST_CASE("ingest: every kind's answer text is its answer body serialized", "[ingest]") {
    // Successes are written without building the object; every kind must read as answer_body() says.
    for (int k = 0; k <= static_cast<int>(Kind::replayed); ++k) {
        for (const char* order_id : {"", "01a2211e-c60e-73fb-9516-78d79be7528e", "a \"quoted\\ id\x01"}) {
            IngestResult result;
            result.kind = static_cast<Kind>(k);
            result.order_id = order_id;
            result.replayed_status = 200;
            result.replayed_answer = R"({"order_id": "o-9", "status": "success"})";
            INFO("kind " << k << ", order id " << order_id);
            CHECK(answer_text(result) == boost::json::serialize(answer_body(result)));
        }
    }
}

TEST_CASE("ingest: only POST is allowed", "[ingest]") {
    FakePartners partners;
    FakeStore store;
    WebhookHandler handler(partners, store);
    auto req = http_post();
    req.method = "GET";
    const auto r = run(handler.handle(std::move(req), "k"));
    CHECK(r.status == 405);
    CHECK(answer_header(r, "Allow") == "POST");
    CHECK(partners.lookups == 0);
}
