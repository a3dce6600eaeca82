// What the inbox keeps of a body to find it by, refused requests included: hub::ingest::inbox_keys.
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include "hub/ingest/inbox_keys.hpp"
#include "hub/ingest/validate.hpp"

using hub::ingest::inbox_keys;

namespace {

constexpr const char* kValidCreated = R"({"event":"order_created","event_time":"2024-05-01 18:02:11","branch_id":"B1",
 "payload":{"id":"A-1","payment_method":"card","order_type":"DELIVERY","note":"","subtotal":10,"tax":0,"discount":0,
 "total":10,"is_schedule":0,"schedule_date":null,"car_data":null,"customer":null,
 "items":[{"id":"i","quantity":1,"price":10,"note":""}]}})";
constexpr const char* kValidUpdated = R"({"event":"order_updated","event_time":"2024-05-01 18:02:11",
 "branch_id":"B1","payload":{"order_id":"A-1","status":"delivered"}})";

hub::ingest::InboxKeys keys(std::string_view json) { return inbox_keys(boost::json::parse(json)); }

}  // namespace

TEST_CASE("inbox keys: an order_created that fails validation still gives its order id and branch", "[ingest]") {
    const auto k = keys(R"({"event": "order_created", "branch_id": "B1", "payload": {"id": "A-1", "total": -5}})");
    CHECK(k.event == "order_created");
    CHECK(k.external_id == "A-1");
    CHECK(k.branch_id == "B1");
}

TEST_CASE("inbox keys: an order_updated names its order by payload.order_id", "[ingest]") {
    const auto k = keys(R"({"event": "order_updated", "branch_id": "B1", "payload": {"order_id": "A-1", "id": "x"}})");
    CHECK(k.external_id == "A-1");
    CHECK(keys(R"({"event": "order_updated", "payload": {"id": "x"}})").external_id.empty());
}

TEST_CASE("inbox keys: a whole number id is kept as its decimal text", "[ingest]") {
    CHECK(keys(R"({"event": "order_created", "branch_id": 17, "payload": {"id": 12345}})").external_id == "12345");
    CHECK(keys(R"({"event": "order_created", "branch_id": 17, "payload": {"id": 12345}})").branch_id == "17");
    CHECK(keys(R"({"event": "order_created", "payload": {"id": 1.5}})").external_id.empty());
}

TEST_CASE("inbox keys: an unknown event gives no event and no order id", "[ingest]") {
    const auto k = keys(R"({"event": "order_create", "branch_id": "B1", "payload": {"id": "A-1"}})");
    CHECK(k.event.empty());
    CHECK(k.external_id.empty());
    CHECK(k.branch_id == "B1");
}

TEST_CASE("inbox keys: nothing from bodies that do not have them", "[ingest]") {
    for (const char* body : {"[]", "\"order_created\"", "null", R"({"event": 1})", R"({"event": "order_created"})",
                             R"({"event": "order_created", "payload": []})", R"({"branch_id": ["B1"]})"}) {
        const auto k = keys(body);
        CHECK(k.external_id.empty());
        CHECK(k.branch_id.empty());
    }
}

TEST_CASE("inbox keys: ids a text column or a terminal would choke on are left out", "[ingest]") {
    CHECK(keys(R"({"event": "order_created", "payload": {"id": "A\u0000B"}})").external_id.empty());
    CHECK(keys(R"({"event": "order_created", "payload": {"id": "A\u001b[2J"}})").external_id.empty());
    CHECK(keys(R"({"event": "order_created", "payload": {"id": ""}})").external_id.empty());
    const std::string long_id(129, 'x');
    CHECK(keys(R"({"event": "order_created", "branch_id": ")" + long_id + R"("})").branch_id.empty());
    CHECK(keys(R"({"event": "order_created", "payload": {"id": "طلب-1"}})").external_id == "طلب-1");
}

TEST_CASE("inbox keys: a body that passes validation has as keys its event, and its branch by the same rule",
          "[ingest]") {
    // The ingest path takes a valid body's keys from its validated values instead of reading the document again:
    // the event, and the branch through inbox_id(), must be what inbox_keys() reads, whatever the branch's bytes.
    const std::string long_id(hub::ingest::kMaxIdBytes, 'b');
    for (const std::string& branch : {std::string("B1"), std::string("B\t1"), std::string("B\x7f"), long_id,
                                      std::string("fr\xc3\xa9"), std::string("\x1b[31m")}) {
        for (const bool created : {true, false}) {
            boost::json::value body = boost::json::parse(created ? kValidCreated : kValidUpdated);
            body.as_object()["branch_id"] = branch;
            hub::ingest::ValidationResult checked;
            hub::ingest::validate_webhook(body, checked);
            INFO("branch " << branch << (created ? ", order_created" : ", order_updated"));
            REQUIRE(checked.value);
            const auto k = inbox_keys(body);
            CHECK(k.event == checked.value->envelope.event);
            CHECK(k.branch_id == hub::ingest::inbox_id(checked.value->envelope.branch_id));
        }
    }
    CHECK(hub::ingest::inbox_id("B\t1").empty());
    CHECK(hub::ingest::inbox_id("B1") == "B1");
}
