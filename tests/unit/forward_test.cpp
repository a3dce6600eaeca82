#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "hub/forward/mapping.hpp"
#include "hub/forward/policy.hpp"

using namespace hub::forward;
using namespace std::chrono_literals;

namespace {

PosSource source() {
    PosSource s;
    s.pos_branch_id = "POS-BR-1";
    s.brand_id = "BRAND-A";
    s.partner_label = "hunger";
    s.external_id = "ORD-9";
    s.note = "ring \"twice\"";
    s.subtotal = 41'500;
    s.tax = 6'225;
    s.total = 42'725;
    s.customer_name = "Sara";
    s.customer_phone = "+966500000001";
    hub::ingest::OrderItem burger{"burger", 2, 18'250, "no onion", {{"cheese", 2'500, 1}, {"sauce", 333, 3}}};
    hub::ingest::OrderItem fries{"fries", 1, 5'000, "", {}};
    s.items = {burger, fries};
    s.item_map = {{"burger", "P-1"}};
    s.option_map = {{"cheese", "M-1"}};
    return s;
}

}  // namespace

TEST_CASE("mapping: every field of the POS order", "[forward]") {
    const std::string text = pos_order_json(source());
    auto v = boost::json::parse(text).as_object();
    CHECK(v.at("branch_id") == "POS-BR-1");
    CHECK(v.at("brand_id") == "BRAND-A");
    CHECK(v.at("partner_reference") == "hunger:ORD-9");
    CHECK(v.at("note") == "ring \"twice\"");
    CHECK(v.at("status") == "PENDING");
    CHECK(v.at("customer").at("name") == "Sara");
    CHECK(v.at("customer").at("phone") == "+966500000001");
    auto& products = v.at("products").as_array();
    REQUIRE(products.size() == 2);
    CHECK(products[0].at("id") == "P-1");    // mapped
    CHECK(products[1].at("id") == "fries");  // unmapped: passes through
    CHECK(products[0].at("quantity") == 2);
    CHECK(products[0].at("note") == "no onion");
    CHECK(products[1].at("note").is_null());
    auto& mods = products[0].at("modifiers").as_array();
    REQUIRE(mods.size() == 2);
    CHECK(mods[0].at("id") == "M-1");
    CHECK(mods[1].at("id") == "sauce");
    CHECK(mods[1].at("quantity") == 3);
    CHECK(products[1].at("modifiers").as_array().empty());
    // Money: exactly three decimals in the text, and the right amounts.
    CHECK(text.find("\"subtotal\":41.500") != std::string::npos);
    CHECK(text.find("\"tax\":6.225") != std::string::npos);
    CHECK(text.find("\"total\":42.725") != std::string::npos);
    CHECK(text.find("\"total\":36.500") != std::string::npos);  // burger: 18.250 x 2
    CHECK(text.find("\"total\":5.000") != std::string::npos);   // cheese: 2.500 x 1 x 2
    CHECK(text.find("\"total\":1.998") != std::string::npos);   // sauce: 0.333 x 3 x 2
}

TEST_CASE("mapping: auto-accept branches send ACCEPTED, no customer, no customer object", "[forward]") {
    auto s = source();
    s.auto_accept = true;
    s.customer_name.reset();
    s.customer_phone.reset();
    auto v = boost::json::parse(pos_order_json(s)).as_object();
    CHECK(v.at("status") == "ACCEPTED");
    CHECK_FALSE(v.contains("customer"));
}

TEST_CASE("mapping: text is escaped, never breaks the JSON", "[forward]") {
    auto s = source();
    s.note = "line\nbreak \\ \"quote\" \x01 ü";
    s.external_id = "A\"B";
    auto v = boost::json::parse(pos_order_json(s)).as_object();
    CHECK(v.at("note") == "line\nbreak \\ \"quote\" \x01 ü");
    CHECK(v.at("partner_reference") == "hunger:A\"B");
}

TEST_CASE("policy: the answer table", "[forward]") {
    auto ok = classify_response(201, R"({"success":true,"message":"Order created","order_id":"77"})", std::nullopt);
    CHECK(ok.verdict == Verdict::delivered);
    CHECK(ok.pos_order_id == "77");
    CHECK(classify_response(200, R"({"success":true,"order_id":"77"})", std::nullopt).verdict == Verdict::delivered);
    CHECK(classify_response(200, R"({"success":false})", std::nullopt).verdict == Verdict::rejected);
    CHECK(classify_response(200, "not json", std::nullopt).verdict == Verdict::rejected);
    CHECK(classify_response(401, "{}", std::nullopt).verdict == Verdict::unauthorized);
    for (unsigned s : {400u, 403u, 404u, 409u, 422u, 405u, 410u, 301u}) {
        INFO(s);
        CHECK(classify_response(s, "{}", std::nullopt).verdict == Verdict::rejected);
    }
    for (unsigned s : {408u, 429u, 500u, 502u, 503u, 504u}) {
        INFO(s);
        CHECK(classify_response(s, "{}", std::nullopt).verdict == Verdict::retry);
    }
    auto rej = classify_response(422, R"({"success":false,"errors":{"products.0.id":["unknown"]}})", std::nullopt);
    CHECK_THAT(rej.reason, Catch::Contains("products.0.id"));
    CHECK(classify_failure(false, "connection refused").verdict == Verdict::retry);
    CHECK(classify_failure(true, "bad url").verdict == Verdict::rejected);
}

TEST_CASE("policy: Retry-After in seconds is honoured, dates and garbage are ignored", "[forward]") {
    CHECK(classify_response(429, "", std::string_view("30")).retry_after == 30s);
    CHECK(classify_response(503, "", std::string_view("99999")).retry_after == 3600s);
    CHECK_FALSE(classify_response(503, "", std::string_view("Wed, 21 Oct 2015 07:28:00 GMT")).retry_after);
    CHECK_FALSE(classify_response(503, "", std::string_view("-5")).retry_after);
}

TEST_CASE("policy: back-off doubles from 1 s to 5 min with 20% jitter", "[forward]") {
    CHECK(backoff(1, 0) == 1000ms);
    CHECK(backoff(2, 0) == 2000ms);
    CHECK(backoff(5, 0) == 16000ms);
    CHECK(backoff(9, 0) == 256000ms);
    CHECK(backoff(10, 0) == 300000ms);
    CHECK(backoff(12, 0) == 300000ms);
    CHECK(backoff(1, 1) == 1200ms);
    CHECK(backoff(1, -1) == 800ms);
    CHECK(backoff(10, 1) == 360000ms);
    CHECK(backoff(3, 5.0) == 4800ms);  // jitter is clamped
    CHECK(backoff(1, 0, 30s) == 30000ms);
    CHECK(backoff(10, 0, 30s) == 300000ms);
    // The whole schedule before `dead`: bounded.
    std::chrono::milliseconds total{0};
    for (int i = 1; i < kMaxAttempts; ++i) total += backoff(i, 0);
    CHECK(total ==
          1000ms + 2000ms + 4000ms + 8000ms + 16000ms + 32000ms + 64000ms + 128000ms + 256000ms + 300000ms + 300000ms);
}
