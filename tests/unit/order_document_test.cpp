#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <limits>

#include "common/json/parse.hpp"
#include "hub/ingest/money.hpp"
#include "hub/ingest/order_document.hpp"
#include "hub/ingest/partners.hpp"

using namespace hub::ingest;

namespace {

const char* kOrder = R"({"event":"order_created","event_time":"2024-05-01 18:02:11","branch_id":"B1",
 "payload":{"id":"A-1","payment_method":"card","order_type":"DELIVERY","note":"n","subtotal":10,"tax":1.5,
 "discount":0,"total":11.5,"is_schedule":1,"schedule_date":"2024-05-01T19:30:00.5+03:00","car_data":null,
 "customer":{"name":"S","phone":"+9665","address":null},"items":[{"id":"i","quantity":2,"price":5,"note":"",
 "options":[{"id":"o","price":0.25,"quantity":3}]}]}})";

Validated parse(const std::string& text) {
    auto p = common::json::parse_strict(text);
    REQUIRE(p.value);
    auto v = validate_webhook(*p.value);
    INFO(text);
    REQUIRE(v.value);
    return *v.value;
}

std::string hash_of(boost::json::value body) {
    auto v = parse(boost::json::serialize(body));
    return payload_hash(v.envelope, std::get<OrderCreated>(v.payload));
}

boost::json::value base() {
    std::string text = kOrder;
    text.replace(text.find("+9665"), 5, "+966500000001");
    return boost::json::parse(text);
}

}  // namespace

TEST_CASE("order document: money with three decimals, times with their offset flag, flattened options", "[ingest]") {
    auto v = parse(boost::json::serialize(base()));
    auto d = order_document(v.envelope, std::get<OrderCreated>(v.payload));
    CHECK(d.at("subtotal") == "10.000");
    CHECK(d.at("tax") == "1.500");
    CHECK(d.at("event_time") == "2024-05-01 18:02:11");
    CHECK(d.at("event_time_has_offset") == false);
    CHECK(d.at("schedule_date") == "2024-05-01 19:30:00.500000+03:00");
    CHECK(d.at("schedule_date_has_offset") == true);
    CHECK(d.at("customer").at("address").is_null());
    REQUIRE(d.at("options").as_array().size() == 1);
    CHECK(d.at("options").at(0).at("line_no") == 0);
    CHECK(d.at("options").at(0).at("price") == "0.250");
    CHECK(d.at("items").at(0).at("quantity") == 2);
}

TEST_CASE("money text: thousandths with three decimals, for every amount including the extremes", "[ingest]") {
    CHECK(format_money(0) == "0.000");
    CHECK(format_money(7) == "0.007");
    CHECK(format_money(70) == "0.070");
    CHECK(format_money(1500) == "1.500");
    CHECK(format_money(12'345) == "12.345");
    CHECK(format_money(kMaxMoneyUnits * 1000) == "1000000000.000");
    CHECK(format_money(-1) == "-0.001");
    CHECK(format_money(-12'345) == "-12.345");
    CHECK(format_money(std::numeric_limits<Money>::max()) == "9223372036854775.807");
    CHECK(format_money(std::numeric_limits<Money>::min()) == "-9223372036854775.808");
}

TEST_CASE("payload hash: the canonical form of a known order keeps its hash", "[ingest]") {
    // Stored orders keep this hash: a change of the canonical form would turn every re-sent order into a conflict.
    CHECK(hash_of(base()) == "0c0176fd0a8b251719dff0177e8ab53920084e853337f4a3d7bbcf03728c1b08");
}

TEST_CASE("payload hash: the same order hashes the same, any change of the order changes it", "[ingest]") {
    const std::string h = hash_of(base());
    CHECK(h.size() == 64);
    // Not part of the order: event_time, key order, unknown extra fields, 5 versus 5.0.
    auto later = base();
    later.at("event_time") = "2024-05-01 18:09:00";
    CHECK(hash_of(later) == h);
    auto extra = base();
    extra.at("payload").as_object()["unknown"] = 1;
    extra.as_object()["also_unknown"] = "x";
    CHECK(hash_of(extra) == h);
    auto floaty = base();
    floaty.at("payload").at("subtotal") = 10.0;
    CHECK(hash_of(floaty) == h);
    // Part of the order: every field.
    auto changes = std::vector<std::function<void(boost::json::value&)>>{
        [](auto& b) { b.at("branch_id") = "B2"; },
        [](auto& b) { b.at("payload").at("note") = "m"; },
        [](auto& b) { b.at("payload").at("total") = 11.501; },
        [](auto& b) { b.at("payload").at("payment_method") = "cash"; },
        [](auto& b) { b.at("payload").at("schedule_date") = "2024-05-01T19:30:00.5+02:00"; },
        [](auto& b) { b.at("payload").at("customer").at("address") = "here"; },
        [](auto& b) { b.at("payload").at("items").at(0).at("quantity") = 3; },
        [](auto& b) { b.at("payload").at("items").at(0).at("options").at(0).at("id") = "p"; },
        [](auto& b) {
            b.at("payload").at("car_data") = {
                {"color", "#fff"}, {"plate_number", "1"}, {"plate_letters", "A"}, {"car_brand", "K"}};
        },
    };
    for (std::size_t i = 0; i < changes.size(); ++i) {
        auto b = base();
        changes[i](b);
        INFO("change " << i);
        CHECK(hash_of(b) != h);
    }
}

TEST_CASE("order forms: the ingest path's hash and document are payload_hash() and order_document()", "[ingest]") {
    // The ingest path builds both from one document; they must stay what the separate functions give, for
    // every shape of order: nulls or objects, many items and options, text that JSON must escape, long text.
    auto forms_of = [](const boost::json::value& body) {
        auto v = parse(boost::json::serialize(body));
        const auto& created = std::get<OrderCreated>(v.payload);
        auto forms = order_forms(v.envelope, created);
        CHECK(forms.hash == payload_hash(v.envelope, created));
        CHECK(boost::json::parse(forms.document) == boost::json::value(order_document(v.envelope, created)));
        CHECK(forms.document == boost::json::serialize(order_document(v.envelope, created)));
    };
    forms_of(base());
    auto full = base();
    full.at("event_time") = "2024-05-01T18:02:11.25+03:00";
    full.at("payload").at("car_data") = {
        {"color", "#fff"}, {"plate_number", "1"}, {"plate_letters", "A\"B\\"}, {"car_brand", "K\u00e9\n"}};
    full.at("payload").at("customer").at("address") = std::string(1000, 'x');
    full.at("payload").at("note") = "\u0001 \U0001F600 </script>";
    auto& items = full.at("payload").at("items").as_array();
    for (int i = 0; i < 40; ++i) items.push_back(items.at(0));
    forms_of(full);
    auto bare = base();
    bare.at("payload").at("customer") = nullptr;
    bare.at("payload").at("schedule_date") = nullptr;
    bare.at("payload").at("is_schedule") = 0;
    bare.at("payload").at("items").at(0).at("options") = boost::json::array();
    forms_of(bare);
}

TEST_CASE("webhook keys: 256 random bits, URL-safe, stored as SHA-256 hex", "[ingest]") {
    const std::string k = new_webhook_key();
    CHECK(k.size() == 43);
    CHECK(k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos);
    CHECK(new_webhook_key() != k);
    CHECK(webhook_key_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(webhook_key_hash(k).size() == 64);
}
