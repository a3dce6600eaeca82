#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "hub/admin/order_create_rules.hpp"
#include "hub/admin/refusal.hpp"
#include "hub/ingest/service.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/validate.hpp"

// The webhook body that `orderhub order create` builds (hub/admin/order_create_rules.hpp): what --item makes passes the
// webhook's own validation; a file is kept as given (a test order's note marked); bad requests are refused.

using hub::admin::OrderCreateRequest;
using hub::admin::Refusal;

namespace {

constexpr auto kNow = "2026-11-25T18:00:00Z";

boost::json::object body_of(const OrderCreateRequest& request) {
    return boost::json::parse(hub::admin::operator_body(request, "op-1", kNow)).as_object();
}

hub::ingest::ValidationResult validated(const OrderCreateRequest& request) {
    return hub::ingest::validate_webhook(boost::json::parse(hub::admin::operator_body(request, "op-1", kNow)));
}

bool refused_invalid(const OrderCreateRequest& request) {
    try {
        (void)hub::admin::operator_body(request, "op-1", kNow);
    } catch (const Refusal& r) {
        return r.kind == Refusal::Kind::invalid;
    }
    return false;
}

}  // namespace

TEST_CASE("order create: --item builds a minimal order that the webhook rules accept", "[order_create]") {
    const OrderCreateRequest request{"DEMO-1", std::nullopt, {"P-BURGER", "P-FRIES"}, false};
    const auto result = validated(request);
    REQUIRE(result.value.has_value());
    const auto& envelope = result.value->envelope;
    CHECK(envelope.event == "order_created");
    CHECK(envelope.branch_id == "DEMO-1");
    CHECK(envelope.event_time.offset_minutes == 0);
    const auto& order = std::get<hub::ingest::OrderCreated>(result.value->payload);
    CHECK(order.external_id == "op-1");
    CHECK(order.order_type == "PICK-UP");
    CHECK(!order.customer.has_value());
    CHECK(order.total == 0);
    REQUIRE(order.items.size() == 2);
    CHECK(order.items[0].id == "P-BURGER");
    CHECK(order.items[1].id == "P-FRIES");
    for (const auto& item : order.items) {
        CHECK(item.quantity == 1);
        CHECK(item.options.empty());
    }
    CHECK(order.note == "Pushed by an operator");
}

TEST_CASE("order create: a test order's note says so, once", "[order_create]") {
    const auto built = validated({"DEMO-1", std::nullopt, {"P-COLA"}, true});
    REQUIRE(built.value.has_value());
    CHECK(std::get<hub::ingest::OrderCreated>(built.value->payload).note == hub::admin::kTestNote);

    boost::json::object file = hub::admin::minimal_payload({"P-COLA"}, "PHONE-1", false);
    file["note"] = "no onions";
    auto body = body_of({"DEMO-1", boost::json::value(file), {}, true});
    CHECK(body.at("payload").at("note").as_string() == std::string(hub::admin::kTestNote) + ": no onions");
    file["note"] = body.at("payload").at("note");
    body = body_of({"DEMO-1", boost::json::value(file), {}, true});
    CHECK(body.at("payload").at("note").as_string() == std::string(hub::admin::kTestNote) + ": no onions");
    file.erase("note");
    body = body_of({"DEMO-1", boost::json::value(file), {}, true});
    CHECK(body.at("payload").at("note").as_string() == hub::admin::kTestNote);
}

TEST_CASE("order create: a file is the payload as given, in the envelope", "[order_create]") {
    boost::json::object file = hub::admin::minimal_payload({"P-1"}, "PHONE-7", false);
    file["extra"] = "kept";
    const auto body = body_of({"BR-9", boost::json::value(file), {}, false});
    CHECK(body.at("event") == "order_created");
    CHECK(body.at("event_time") == kNow);
    CHECK(body.at("branch_id") == "BR-9");
    CHECK(body.at("payload") == file);

    // A file that breaks the interface is passed on: the webhook's validation names the field.
    file["total"] = "x";
    const auto result = validated({"BR-9", boost::json::value(file), {}, false});
    REQUIRE(!result.value.has_value());
    REQUIRE(!result.errors.empty());
    CHECK(result.errors[0].path == "/payload/total");
}

TEST_CASE("order create: requests that name no order are refused", "[order_create]") {
    const auto file = boost::json::value(hub::admin::minimal_payload({"P-1"}, "X", false));
    CHECK(refused_invalid({"DEMO-1", std::nullopt, {}, false}));                              // neither
    CHECK(refused_invalid({"DEMO-1", file, {"P-1"}, false}));                                 // both
    CHECK(refused_invalid({"DEMO-1", boost::json::value(boost::json::array{}), {}, false}));  // not an object
    CHECK(refused_invalid({"", std::nullopt, {"P-1"}, false}));                               // no branch
    CHECK(refused_invalid({"DEMO-1", std::nullopt, {""}, false}));                            // an empty id
    CHECK(refused_invalid({"DEMO-1", std::nullopt, {"P-\n1"}, false}));                       // a control character
    CHECK(refused_invalid({"DEMO-1", std::nullopt, {std::string(129, 'p')}, false}));
    CHECK(refused_invalid({"DEMO-1", std::nullopt, std::vector<std::string>(201, "P-1"), false}));
    CHECK(!refused_invalid({"DEMO-1", std::nullopt, std::vector<std::string>(200, "P-1"), false}));
}

TEST_CASE("order create: the envelope's time is UTC with its offset", "[order_create]") {
    CHECK(hub::admin::event_time_text(0) == "1970-01-01T00:00:00Z");
    CHECK(hub::admin::event_time_text(1764093600) == "2025-11-25T18:00:00Z");
}

namespace {

struct NoPartners final : hub::ingest::PartnerLookup {
    boost::asio::awaitable<std::optional<hub::ingest::Partner>> find(std::string /*key*/) override {
        co_return std::nullopt;
    }
};

/// Keeps what the service hands to storage.
struct KeptStore final : hub::ingest::OrderSink {
    std::vector<hub::ingest::InboxRecord> stored, recorded;
    boost::asio::awaitable<hub::ingest::StoreOutcome> store(hub::ingest::Validated&& /*order*/,
                                                            hub::ingest::InboxRecord&& inbox) override {
        stored.push_back(std::move(inbox));
        co_return hub::ingest::StoreOutcome{hub::ingest::Kind::created, "o-1", false, "7"};
    }
    boost::asio::awaitable<std::string> record(hub::ingest::InboxRecord&& inbox) override {
        recorded.push_back(std::move(inbox));
        co_return "8";
    }
};

hub::ingest::IngestResult create(KeptStore& store, std::string body, bool test) {
    NoPartners partners;
    hub::ingest::IngestService service(partners, store);
    boost::asio::io_context ioc;
    auto future = boost::asio::co_spawn(ioc,
                                        service.create({"operator", "operator", "UTC"}, std::move(body), "r1", "{}",
                                                       {.by_operator = true, .actor = "ops", .test = test}),
                                        boost::asio::use_future);
    ioc.run();
    return future.get();
}

}  // namespace

TEST_CASE("order create: the service stores a valid order with its origin, and records no refusal", "[order_create]") {
    KeptStore store;
    const auto made =
        create(store, hub::admin::operator_body({"DEMO-1", std::nullopt, {"P-1"}, true}, "op-1", kNow), true);
    CHECK(made.kind == hub::ingest::Kind::created);
    CHECK(made.order_id == "o-1");
    REQUIRE(store.stored.size() == 1);
    CHECK(store.stored[0].origin.by_operator);
    CHECK(store.stored[0].origin.actor == "ops");
    CHECK(store.stored[0].origin.test);
    CHECK(store.stored[0].external_id == "op-1");

    boost::json::object file = hub::admin::minimal_payload({"P-1"}, "X", false);
    file["items"].as_array()[0].as_object()["quantity"] = 0;
    const auto refused =
        create(store, hub::admin::operator_body({"DEMO-1", boost::json::value(file), {}, false}, "op-2", kNow), false);
    CHECK(refused.kind == hub::ingest::Kind::validation_failed);
    REQUIRE(!refused.errors.empty());
    CHECK(refused.errors[0].path == "/payload/items/0/quantity");
    CHECK(store.stored.size() == 1);
    CHECK(store.recorded.empty());
}
