#include <array>
#include <catch2/catch.hpp>

#include "hub/adminapi/routes.hpp"

using hub::adminapi::decode_cursor;
using hub::adminapi::encode_cursor;
using hub::adminapi::find_route;
using hub::adminapi::match_pattern;
using hub::adminapi::Params;
using hub::adminapi::RouteKey;

TEST_CASE("admin API: a pattern matches literal segments and captures {name} segments percent-decoded") {
    Params p;
    CHECK(match_pattern("partners", "partners", p));
    CHECK(p.empty());
    REQUIRE(match_pattern("orders/{id}/resend", "orders/01ab/resend", p));
    CHECK(p == Params{{"id", "01ab"}});
    REQUIRE(match_pattern("brands/{brand}/pos", "brands/BR%20A/pos", p));
    CHECK(p == Params{{"brand", "BR A"}});
    REQUIRE(match_pattern("mappings/{partner}/{kind}/{external}", "mappings/p1/item/x%2Fy", p));
    CHECK(p == Params{{"partner", "p1"}, {"kind", "item"}, {"external", "x/y"}});
}

TEST_CASE("admin API: a pattern refuses other shapes") {
    Params p{{"kept", "yes"}};
    CHECK_FALSE(match_pattern("partners", "partners/", p));
    CHECK_FALSE(match_pattern("partners", "partner", p));
    CHECK_FALSE(match_pattern("partners/{id}", "partners", p));
    CHECK_FALSE(match_pattern("partners/{id}", "partners/", p));  // an empty id
    CHECK_FALSE(match_pattern("partners/{id}", "partners/a/b", p));
    CHECK_FALSE(match_pattern("partners/{id}", "partners/%zz", p));  // not percent-encoding
    CHECK_FALSE(match_pattern("orders/{id}/resend", "orders/a/audit", p));
    CHECK(p == Params{{"kept", "yes"}});  // a failed match leaves the params alone
}

TEST_CASE(
    "admin API: find_route picks method and pattern, and a known path with another method lists the allowed ones") {
    constexpr std::array<RouteKey, 4> routes{{
        {"GET", "branches"},
        {"POST", "branches"},
        {"GET", "branches/{id}"},
        {"PATCH", "branches/{id}"},
    }};
    auto m = find_route(routes, "PATCH", "branches/B-1");
    REQUIRE(m.index);
    CHECK(*m.index == 3);
    CHECK(m.params == Params{{"id", "B-1"}});
    m = find_route(routes, "DELETE", "branches");
    CHECK_FALSE(m.index);
    CHECK(m.allow == "GET, POST");
    m = find_route(routes, "GET", "nothing");
    CHECK_FALSE(m.index);
    CHECK(m.allow.empty());
}

TEST_CASE("admin API: a cursor round-trips and anything else is refused") {
    const std::string key = "01936b2a-0000-7000-8000-000000000001";
    const std::string c = encode_cursor(key);
    CHECK(c.find(key) == std::string::npos);  // opaque
    CHECK(decode_cursor(c) == key);
    CHECK(decode_cursor(encode_cursor("42")) == "42");
    CHECK_FALSE(decode_cursor(""));
    CHECK_FALSE(decode_cursor("42"));
    CHECK_FALSE(decode_cursor("!!!"));
    CHECK_FALSE(decode_cursor(encode_cursor("")));
    CHECK_FALSE(decode_cursor(std::string(600, 'A')));
}
