// The fast path of webhook validation (hub/ingest/plain_webhook.hpp) held to the full path: whatever it accepts, the
// full path accepts with the same order; whatever the full path refuses, it declines.

#include "hub/ingest/plain_webhook.hpp"

#include "common/json/parse.hpp"
#include "hub/ingest/validate.hpp"
#include "tests/unit/webhook_bodies.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

// Named: the unit tests are compiled as one unit, and the validator's test has helpers of the same names.
namespace plain_webhook_test {
namespace {

namespace bj = boost::json;
using namespace hub::ingest;

using webhook_bodies::kUpdated;
using webhook_bodies::set_at;

/// The validator test's order with a second item, which has neither note nor options.
const std::string kCreated = [] {
    std::string body(webhook_bodies::kCreated);
    const std::string_view last_item_end = "\"quantity\": 3}]}";
    body.insert(body.find(last_item_end) + last_item_end.size(), R"(,
      {"id": "cola", "quantity": 1, "price": 3})");
    return body;
}();

/// The full path's verdict: the order, or none when refused.
std::optional<Validated> full(std::string_view body) {
    auto parsed = common::json::parse_strict(body);
    if (!parsed.value) return std::nullopt;
    ValidationResult result = validate_webhook(*parsed.value);
    return std::move(result.value);
}

/// The fast path's verdict: the order, or none when declined.
std::optional<Validated> plain(std::string_view body) {
    Validated out;
    if (!read_plain_webhook(body, out)) return std::nullopt;
    return out;
}

/// The rule the fast path keeps, for one body; true when the fast path accepted it.
bool agrees(std::string_view body) {
    const auto fast = plain(body);
    const auto slow = full(body);
    INFO(body);
    if (fast) {
        REQUIRE(slow.has_value());
        CHECK(*fast == *slow);
    }
    return fast.has_value();
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `v` as JSON text, its numbers as a partner writes them (20.5, not Boost.JSON's 2.05E1): the shortest text that
/// reads back as the same double.
std::string text_of(const bj::value& v) {
    if (const auto* o = v.if_object()) {
        std::string out = "{";
        for (const auto& member : *o) {
            if (out.size() > 1) out += ',';
            out += bj::serialize(bj::string(member.key())) + ":" + text_of(member.value());
        }
        return out + "}";
    }
    if (const auto* a = v.if_array()) {
        std::string out = "[";
        for (const auto& element : *a) out += (out.size() > 1 ? "," : "") + text_of(element);
        return out + "]";
    }
    if (v.is_double()) {
        std::array<char, 32> digits{};
        const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), v.get_double()).ptr;
        std::string number(digits.data(), end);
        // A whole double keeps a point, as the partner's "3.0" would: it stays a double, not an integer.
        if (number.find_first_of(".e") == std::string::npos) number += ".0";
        return number;
    }
    return bj::serialize(v);
}

/// Every JSON pointer of `v`'s members and elements, depth first, into `all`; those of its objects (itself, "",
/// included) into `objects` too.
void pointers(const bj::value& v, const std::string& at, std::vector<std::string>& all,
              std::vector<std::string>& objects) {
    if (const auto* o = v.if_object()) {
        objects.push_back(at);
        for (const auto& member : *o) {
            const std::string here = at + "/" + std::string(member.key());
            all.push_back(here);
            pointers(member.value(), here, all, objects);
        }
    } else if (const auto* a = v.if_array()) {
        for (std::size_t i = 0; i < a->size(); ++i) {
            const std::string here = at + "/" + std::to_string(i);
            all.push_back(here);
            pointers((*a)[i], here, all, objects);
        }
    }
}

}  // namespace

TEST_CASE("the plain path reads the interface's examples as the validator does", "[plain_webhook]") {
    for (const std::string_view body : {std::string_view(kCreated), kUpdated}) {
        INFO(body);
        REQUIRE(plain(body).has_value());
        CHECK(agrees(body));
    }
    const auto example = read_file(std::filesystem::path(ORDERHUB_SOURCE_DIR) / "deploy/examples/order-created.json");
    REQUIRE_FALSE(example.empty());
    CHECK(agrees(example));
    // fuzz_webhook's seed of the plain shape: compact, escaped values, scheduled with an offset, a null note and
    // address, an item's members in another order, the bounds' edges (quantity 10000 × price 100000).
    const auto seed = read_file(std::filesystem::path(ORDERHUB_SOURCE_DIR) /
                                "tests/fuzz/corpus/fuzz_webhook/valid-created-plain-compact-escaped.json");
    REQUIRE(plain(seed).has_value());
    CHECK(agrees(seed));
    const auto order = std::get<OrderCreated>(plain(seed)->payload);
    CHECK(plain(seed)->envelope.branch_id == "b-\u00e9\"1");
    CHECK(order.payment_method == "c\\a/sh");
    CHECK(order.schedule_date.has_value());
    CHECK(order.items.at(1).price == 1);
}

TEST_CASE("the plain path declines every refused fixture and reads the valid ones as the validator does",
          "[plain_webhook]") {
    // Valid bodies outside the plain shape, left to the full path: members the interface does not list, an amount
    // of more than 15 digits (0.30000000000000004).
    const std::set<std::string> not_plain = {"valid-created-extra-fields-everywhere.json",
                                             "valid-updated-space-timestamp-extra-fields.json",
                                             "valid-created-money-rounding-fractions.json"};
    std::size_t valid = 0;
    std::size_t invalid = 0;
    for (const auto& entry : std::filesystem::directory_iterator(ORDERHUB_WEBHOOK_FIXTURES)) {
        const std::string name = entry.path().filename().string();
        const std::string body = read_file(entry.path());
        INFO(name);
        if (name.rfind("invalid-", 0) == 0) {
            ++invalid;
            CHECK_FALSE(plain(body).has_value());
            CHECK_FALSE(full(body).has_value());
        } else if (name.rfind("valid-", 0) == 0) {
            ++valid;
            REQUIRE(full(body).has_value());
            CHECK(agrees(body) == (not_plain.count(name) == 0));
        }
    }
    CHECK(valid >= 30);
    CHECK(invalid >= 100);
}

TEST_CASE("the plain path never accepts what the validator refuses, member by member", "[plain_webhook]") {
    // Every member of both examples replaced by values of every kind (or removed), and every object given an unknown
    // or a repeated member: the fast path may decline a body the full path accepts, never the other way round.
    const std::vector<std::optional<bj::value>> replacements = {
        std::nullopt,
        bj::value(nullptr),
        bj::value(true),
        bj::value(0),
        bj::value(1),
        bj::value(-1),
        bj::value(10000),
        bj::value(10001),
        bj::value(0.5),
        bj::value(-0.5),
        bj::value(1e9),
        bj::value(1000000000.0005),
        bj::value(1e10),
        bj::value(static_cast<std::uint64_t>(1) << 63),
        bj::value(""),
        bj::value("x"),
        bj::value(std::string(129, 'x')),
        bj::value(std::string(1001, 'x')),
        bj::value(std::string("a\0b", 3)),
        bj::value("#fff"),
        bj::value("+971501234567"),
        bj::value("2024-05-01 12:30:00"),
        bj::value("2024-02-30 12:30:00"),
        bj::value("order_created"),
        bj::value("order_updated"),
        bj::value("DINE-IN"),
        bj::value("delivered"),
        bj::value(bj::array{}),
        bj::value(bj::array{bj::object{{"id", "x"}, {"price", 1}, {"quantity", 1}}}),
        bj::value(bj::object{}),
        bj::value(bj::object{{"color", "#abc"}, {"plate_number", ""}, {"plate_letters", ""}, {"car_brand", ""}}),
    };
    std::size_t accepted = 0;
    std::size_t bodies = 0;
    for (const std::string_view base : {std::string_view(kCreated), kUpdated}) {
        const bj::value original = bj::parse(base);
        std::vector<std::string> all;
        std::vector<std::string> objects;
        pointers(original, "", all, objects);
        for (const std::string& pointer : all) {
            for (const auto& replacement : replacements) {
                bj::value body = original;
                set_at(body, pointer, replacement);
                accepted += agrees(text_of(body)) ? 1 : 0;
                ++bodies;
            }
        }
        // An unknown member, and a repeated one, in every object.
        for (const std::string& pointer : objects) {
            bj::value body = original;
            bj::value& object = body.at_pointer(pointer);
            const std::string first_key(object.as_object().begin()->key());
            std::string text = text_of(body);
            // The serialized object's first member, written once more in front of it.
            const std::string member = "\"" + first_key + "\":" + text_of(object.as_object().begin()->value());
            const std::string opening = text_of(object).substr(0, 1 + member.size());
            const std::size_t at = text.find(opening);
            REQUIRE(at != std::string::npos);
            std::string repeated = text;
            repeated.insert(at + 1, member + ",");
            CHECK_FALSE(agrees(repeated));
            CHECK_FALSE(full(repeated).has_value());  // parse_strict refuses a repeated key
            object.as_object()["x-unknown"] = 1;
            const std::string unknown = text_of(body);
            CHECK_FALSE(plain(unknown).has_value());
            CHECK(full(unknown).has_value());  // valid, outside the plain shape: left to the full path
        }
    }
    INFO(accepted << " of " << bodies << " bodies accepted by the plain path");
    CHECK(accepted > 0);
    CHECK(accepted < bodies);
}

TEST_CASE("the plain path reads members in any order, escaped strings and every amount's spelling alike",
          "[plain_webhook]") {
    // Members in reverse order, in every object.
    bj::value body = bj::parse(kCreated);
    const auto reverse = [](auto& self, bj::value& v) -> void {
        if (auto* o = v.if_object()) {
            bj::object reversed;
            std::vector<std::pair<std::string, bj::value>> members;
            for (auto& m : *o) members.emplace_back(std::string(m.key()), m.value());
            std::reverse(members.begin(), members.end());
            for (auto& [k, value] : members) {
                self(self, value);
                reversed[k] = value;
            }
            v = reversed;
        } else if (auto* a = v.if_array()) {
            for (auto& e : *a) self(self, e);
        }
    };
    reverse(reverse, body);
    const std::string reversed = text_of(body);
    // `payload` now comes before `event`: left to the full path, which accepts it.
    CHECK_FALSE(plain(reversed).has_value());
    CHECK(full(reversed).has_value());
    bj::value envelope_first = bj::parse(kCreated);
    reverse(reverse, envelope_first.as_object()["payload"]);
    const std::string payload_reversed = text_of(envelope_first);
    CHECK(plain(payload_reversed).has_value());
    CHECK(agrees(payload_reversed));

    // Escapes in values (not in keys): the same text as the document's.
    std::string escaped(kCreated);
    escaped.replace(escaped.find("Leave at the door"), 17, R"(Leave \"at\" the\ndoor \u00e9\ud83d\ude00)");
    escaped.replace(escaped.find("Marina 4"), 8, R"(Marina\u0020\u0034)");
    REQUIRE(plain(escaped).has_value());
    CHECK(agrees(escaped));
    CHECK(std::get<OrderCreated>(plain(escaped)->payload).customer->address == "Marina 4");
    std::string escaped_key(kCreated);
    escaped_key.replace(escaped_key.find("\"note\""), 6, R"("no\u0074e")");
    CHECK_FALSE(plain(escaped_key).has_value());
    CHECK(full(escaped_key).has_value());

    // Amounts: integers, fractions, exponents (left to the full path), rounding at the third decimal.
    for (const std::string_view amount : {"0", "20", "20.5", "20.0005", "0.0001", "0.30000000000000004", "1e1", "2E-1",
                                          "1000000000", "999999999.9995", "1000000000.0004", "-0", "-0.0"}) {
        std::string text(kCreated);
        text.replace(text.find("20.5"), 4, amount);
        INFO(amount);
        agrees(text);
    }
    std::string exponent(kCreated);
    exponent.replace(exponent.find("20.5"), 4, "2.05e1");
    CHECK_FALSE(plain(exponent).has_value());
    CHECK(full(exponent).has_value());
}

TEST_CASE("the plain path holds the line totals' bounds whatever the order of an item's members", "[plain_webhook]") {
    // price × quantity past 10^9: refused by the validator, declined here, with quantity before or after price.
    for (const std::string_view item :
         {R"({"id": "a", "quantity": 10000, "price": 100001})", R"({"id": "a", "price": 100001, "quantity": 10000})",
          R"({"id": "a", "options": [{"id": "o", "price": 100000, "quantity": 2}], "quantity": 10000, "price": 1})",
          R"({"id": "a", "quantity": 10000, "price": 1, "options": [{"id": "o", "price": 100000, "quantity": 2}]})"}) {
        std::string text(kCreated);
        const std::size_t from = text.find("{\"id\": \"cola\"");
        text.replace(from, text.find('}', from) + 1 - from, item);
        INFO(text);
        CHECK_FALSE(full(text).has_value());
        CHECK_FALSE(plain(text).has_value());
    }
}

}  // namespace plain_webhook_test
