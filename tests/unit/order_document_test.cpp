#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <random>

#include "hub/ingest/money.hpp"
#include "hub/ingest/order_document.hpp"
#include "hub/ingest/partners.hpp"
#include "tests/unit/ingest_support.hpp"

using namespace hub::ingest;

namespace {

const char* kOrder = R"({"event":"order_created","event_time":"2024-05-01 18:02:11","branch_id":"B1",
 "payload":{"id":"A-1","payment_method":"card","order_type":"DELIVERY","note":"n","subtotal":10,"tax":1.5,
 "discount":0,"total":11.5,"is_schedule":1,"schedule_date":"2024-05-01T19:30:00.5+03:00","car_data":null,
 "customer":{"name":"S","phone":"+9665","address":null},"items":[{"id":"i","quantity":2,"price":5,"note":"",
 "options":[{"id":"o","price":0.25,"quantity":3}]}]}})";

Validated parse(const std::string& text) { return tests::ingest::validated(text); }

std::string hash_of(boost::json::value body) {
    auto v = parse(boost::json::serialize(body));
    return payload_hash(v.envelope, std::get<OrderCreated>(v.payload));
}

/// order_document() without its event time: the canonical form that payload_hash() digests and order_forms()
/// writes (the event time's two members are the document's last, so erasing them keeps the others' order).
boost::json::object canonical_of(const Validated& v) {
    auto d = order_document(v.envelope, std::get<OrderCreated>(v.payload));
    d.erase("event_time_has_offset");
    d.erase("event_time");
    return d;
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

TEST_CASE("order forms: the ingest path's hash and text are payload_hash() and order_document()'s canonical part",
          "[ingest]") {
    // The ingest path builds both from one text; they must stay what the separate functions give, for
    // every shape of order: nulls or objects, many items and options, text that JSON must escape, long text.
    auto forms_of = [](const boost::json::value& body) {
        auto v = parse(boost::json::serialize(body));
        const auto& created = std::get<OrderCreated>(v.payload);
        auto forms = order_forms(v.envelope, created);
        CHECK(forms.hash == payload_hash(v.envelope, created));
        CHECK(boost::json::parse(forms.canonical) == boost::json::value(canonical_of(v)));
        CHECK(forms.canonical == boost::json::serialize(canonical_of(v)));
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

TEST_CASE("order forms: written straight from the order, the same text for random orders and every character",
          "[ingest]") {
    // order_forms() writes the canonical text itself; order_document() builds the document with Boost.JSON. Random
    // orders (a fixed seed) with text from every control character but NUL, quotes, backslashes and multi-byte UTF-8,
    // any number of items and options, every optional part present or absent.
    std::mt19937 rng(20261128);
    const std::vector<std::string> pieces = [] {
        std::vector<std::string> p;
        for (int c = 1; c < 0x20; ++c) p.emplace_back(1, static_cast<char>(c));  // NUL is refused
        for (const char* t : {"\x7f", "\"", "\\", "/", "a", "Z", "0", " ", "\u00e9", "\U0001F600", "\u2028", "</"})
            p.emplace_back(t);
        return p;
    }();
    auto text = [&](std::size_t max) {
        std::string t;
        const std::size_t n = std::uniform_int_distribution<std::size_t>(0, max)(rng);
        while (t.size() < n) t += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
        return t;
    };
    auto id = [&] { return "i" + text(40); };  // ids must not be empty
    auto money = [&] { return std::uniform_int_distribution<int>(0, 2'000'000)(rng) / 1000.0; };
    auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
    for (int round = 0; round < 300; ++round) {
        auto b = base();
        auto& p = b.at("payload").as_object();
        b.at("branch_id") = id();
        p["id"] = id();
        p["note"] = text(80);
        p["subtotal"] = money();
        p["tax"] = money();
        p["discount"] = money();
        p["total"] = money();
        if (coin()) {
            p["is_schedule"] = 0;
            p["schedule_date"] = nullptr;
        }
        if (coin()) b.at("event_time") = "2024-05-01T18:02:11.125-04:30";
        p["car_data"] = coin() ? boost::json::value(nullptr)
                               : boost::json::value({{"color", coin() ? "#a0F" : "#00ff7A"},
                                                     {"plate_number", text(20)},
                                                     {"plate_letters", text(20)},
                                                     {"car_brand", text(20)}});
        if (coin())
            p["customer"] = nullptr;
        else
            p["customer"] = {{"name", text(60)},
                             {"phone", "+966500000001"},
                             {"address", coin() ? boost::json::value(nullptr) : boost::json::value(text(200))}};
        boost::json::array items;
        const int item_count = std::uniform_int_distribution<int>(1, 6)(rng);
        for (int i = 0; i < item_count; ++i) {
            boost::json::array options;
            const int option_count = std::uniform_int_distribution<int>(0, 4)(rng);
            for (int k = 0; k < option_count; ++k)
                options.push_back({{"id", id()},
                                   {"price", money() / 100},
                                   {"quantity", std::uniform_int_distribution<int>(1, 9)(rng)}});
            items.push_back({{"id", id()},
                             {"quantity", std::uniform_int_distribution<int>(1, 9)(rng)},
                             {"price", money() / 10},
                             {"note", text(30)},
                             {"options", std::move(options)}});
        }
        p["items"] = std::move(items);
        auto v = parse(boost::json::serialize(b));
        const auto& created = std::get<OrderCreated>(v.payload);
        const auto forms = order_forms(v.envelope, created);
        INFO("round " << round);
        const auto document = canonical_of(v);
        REQUIRE(forms.canonical == boost::json::serialize(document));
        REQUIRE(forms.hash == payload_hash(v.envelope, created));
        // The order's lines (the statement's `ln`) are the document's items and options, nothing else.
        const boost::json::value lines = boost::json::parse("{" + std::string(forms.lines()) + "}");
        REQUIRE(lines == boost::json::object{{"items", document.at("items")}, {"options", document.at("options")}});
    }
}

TEST_CASE("webhook keys: 256 random bits, URL-safe, stored as SHA-256 hex", "[ingest]") {
    const std::string k = new_webhook_key();
    CHECK(k.size() == 43);
    CHECK(k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos);
    CHECK(new_webhook_key() != k);
    CHECK(webhook_key_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(webhook_key_hash(k).size() == 64);
}
