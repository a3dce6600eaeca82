// What the inbox keeps of a body to find it by, refused requests included: hub::ingest::inbox_keys.
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include "hub/ingest/inbox_keys.hpp"

using hub::ingest::inbox_keys;

namespace {

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
