#include "common/json/parse.hpp"

#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <random>
#include <string>

namespace {

using common::json::parse_strict;
using common::json::ParseLimits;

// Nested arrays `depth` levels deep: depth 2 is "[[]]".
std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Nested objects `depth` levels deep: depth 2 is {"a":{"a":{}}} minus one level, i.e. {"a":{}}.
std::string nested_objects(std::size_t depth) {
    std::string text;
    for (std::size_t i = 1; i < depth; ++i) {
        text += "{\"a\":";
    }
    text += "{}";
    text += std::string(depth - 1, '}');
    return text;
}

void require_refused(std::string_view text) {
    INFO("input: " << text);
    const auto result = parse_strict(text);
    CHECK_FALSE(result.value.has_value());
    CHECK_FALSE(result.error.empty());
}

}  // namespace

TEST_CASE("parse_strict builds the same value as Boost.JSON for well-formed input", "[json]") {
    const auto result = parse_strict(R"( {"a": [1, -2, 3.5, true, false, null, "x\ny\u00e9"], "b": {"c": {}}} )");
    REQUIRE(result.value.has_value());
    CHECK(result.error.empty());
    CHECK(boost::json::serialize(*result.value) == R"({"a":[1,-2,3.5E0,true,false,null,"x\ny)"
                                                   "\xc3\xa9"
                                                   R"("],"b":{"c":{}}})");
    CHECK(result.value->at("a").as_array().size() == 7);
    CHECK(result.value->at("a").at(0).is_int64());
    CHECK(result.value->at("a").at(2).is_double());
}

TEST_CASE("parse_strict accepts any top-level value and surrounding whitespace", "[json]") {
    CHECK(parse_strict("1").value == boost::json::value(1));
    CHECK(parse_strict(" \"s\" \r\n").value == boost::json::value("s"));
    CHECK(parse_strict("null").value->is_null());
    CHECK(parse_strict("[]").value->as_array().empty());
}

TEST_CASE("parse_strict refuses duplicate object keys", "[json]") {
    SECTION("top level") {
        const auto result = parse_strict(R"({"a":1,"a":2})");
        CHECK_FALSE(result.value);
        CHECK(result.error.find("duplicate object key \"a\"") != std::string::npos);
    }
    SECTION("nested, with the same value") { require_refused(R"({"x":{"id":"1","id":"1"}})"); }
    SECTION("spelled differently with escapes") { require_refused(R"({"ab":1,"a\u0062":2})"); }
    SECTION("in an object too large for the small linear table") {
        std::string text = "{";
        for (int i = 0; i < 500; ++i) {
            text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
        }
        CHECK(parse_strict(text + "\"last\":0}").value.has_value());
        require_refused(text + "\"k250\":0}");
    }
    SECTION("the message names the first key that repeats, in document order") {
        CHECK(parse_strict(R"({"b":1,"a":1,"b":2,"a":2})").error.find("duplicate object key \"b\"") !=
              std::string::npos);
        std::string text = "{";
        for (int i = 0; i < 100; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
        const auto result = parse_strict(text + R"("k70":1,"k3":1,"k70":2})");
        CHECK(result.error.find("duplicate object key \"k70\"") != std::string::npos);
    }
    SECTION("a key written with escapes, in objects small and large") {
        require_refused(R"({"x":{"c":1,"\u0061b":1,"d":1,"ab":2}})");
        std::string text = "{";
        for (int i = 0; i < 40; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
        require_refused(text + R"("\u006b7":1})");
        CHECK(parse_strict(text + R"("\u006b":1})").value.has_value());
    }
    SECTION("keys of an inner object do not count for the outer one, before or after it") {
        const auto result = parse_strict(R"({"a":1,"in":{"b":1,"c":{"a":2}},"b":2,"c":3})");
        REQUIRE(result.value);
        CHECK(result.value->at("in").at("c").at("a") == 2);
        CHECK(result.value->as_object().size() == 4);
        CHECK_FALSE(parse_strict(R"({"a":1,"in":{"b":1,"c":{"a":2}},"b":2,"a":3})").value);
    }
    SECTION("many distinct keys in one object") {
        std::string text = "{";
        for (int i = 0; i < 50000; ++i) text += "\"key" + std::to_string(i) + "\":null,";
        text.back() = '}';
        const auto result = parse_strict(text);
        REQUIRE(result.value);
        CHECK(result.value->as_object().size() == 50000);
    }
    SECTION("the same key in different objects is fine") {
        const auto result = parse_strict(R"({"a":{"a":1},"b":[{"a":1},{"a":2}]})");
        REQUIRE(result.value);
        CHECK(result.value->at("b").at(1).at("a") == 2);
    }
    SECTION("whatever the repeated key's first value held, and wherever it is") {
        // The first value of a repeated key is what Boost.JSON's object drops: objects, empty ones, or nothing.
        for (const std::string_view text :
             {R"({"a":{"x":1},"a":5})", R"({"a":{},"a":1})", R"({"a":{"x":{"y":{}}},"a":{"z":1}})",
              R"({"a":1,"b":{"c":1},"a":{"d":2}})", R"([1,{"q":[{"r":1,"r":2}]}])", R"([[[{"s":[],"s":[]}]]])",
              R"({"in":{"k":{"m":1},"k":{"m":1}},"out":{}})"}) {
            INFO("input: " << text);
            const auto result = parse_strict(text);
            CHECK_FALSE(result.value);
            CHECK(result.error.find("duplicate object key") != std::string::npos);
            boost::json::monotonic_resource arena;
            CHECK(parse_strict(text, arena).error == result.error);
        }
    }
    SECTION("a long quoted key is cut in the message") {
        const std::string key(1000, 'k');
        const auto result = parse_strict("{\"" + key + "\":1,\"" + key + "\":2}");
        CHECK_FALSE(result.value);
        CHECK(result.error.size() < 200);
    }
}

TEST_CASE("parse_strict bounds nesting depth", "[json]") {
    CHECK(parse_strict(nested_arrays(64)).value.has_value());
    CHECK(parse_strict(nested_objects(64)).value.has_value());
    require_refused(nested_arrays(65));
    require_refused(nested_objects(65));
    require_refused(nested_arrays(100000));

    const ParseLimits shallow{.max_depth = 2};
    CHECK(parse_strict("[[1]]", shallow).value.has_value());
    CHECK_FALSE(parse_strict("[[[1]]]", shallow).value.has_value());
    CHECK_FALSE(parse_strict(R"({"a":{"b":{}}})", shallow).value.has_value());
}

TEST_CASE("parse_strict refuses invalid UTF-8 and lone surrogates", "[json]") {
    require_refused("[\"\xc3\x28\"]");          // bad continuation byte
    require_refused("[\"\x80\"]");              // lone continuation byte
    require_refused("[\"\xc0\xaf\"]");          // overlong '/'
    require_refused("[\"\xe2\x82\"]");          // truncated sequence
    require_refused("[\"\xed\xa0\x80\"]");      // UTF-16 surrogate encoded in UTF-8
    require_refused("[\"\xf4\x90\x80\x80\"]");  // above U+10FFFF
    require_refused("[\"\xff\"]");              // never valid
    require_refused("{\"k\xff\":1}");           // in a key
    require_refused(R"(["\ud800"])");           // lone leading surrogate escape
    require_refused(R"(["\udc00"])");           // lone trailing surrogate escape
    require_refused(R"(["\ud800\u0041"])");     // leading surrogate not followed by a trailing one
    require_refused("\xef\xbb\xbf{}");          // byte order mark

    const auto emoji = parse_strict("[\"\xf0\x9f\x98\x80\", \"\\ud83d\\ude00\"]");
    REQUIRE(emoji.value);
    CHECK(emoji.value->at(0) == emoji.value->at(1));
    const auto result = parse_strict("[\"\xc3\x28\"]");
    CHECK(result.error.find("UTF-8") != std::string::npos);
}

TEST_CASE("parse_strict refuses numbers that overflow", "[json]") {
    require_refused("1e400");
    require_refused("-1e400");
    require_refused("[1.7976931348623159e308]");  // rounds to infinity
    require_refused("18446744073709551616");      // UINT64_MAX + 1
    require_refused("-9223372036854775809");      // INT64_MIN - 1
    require_refused("123456789012345678901234567890");
    CHECK(parse_strict("1e400").error.find("number out of range") != std::string::npos);
    CHECK(parse_strict("18446744073709551616").error.find("integer out of range") != std::string::npos);

    CHECK(parse_strict("18446744073709551615").value == boost::json::value(UINT64_MAX));
    CHECK(parse_strict("-9223372036854775808").value == boost::json::value(INT64_MIN));
    CHECK(parse_strict("1.7976931348623157e308").value->as_double() == 1.7976931348623157e308);
    // Underflow is not refused: the value is simply zero.
    CHECK(parse_strict("1e-400").value->as_double() == 0.0);
    // A long decimal with a fraction is an ordinary double, not an out-of-range integer.
    CHECK(parse_strict("123456789012345678901234567890.5").value->is_double());
}

TEST_CASE("parse_strict rounds doubles correctly, whatever the spelling", "[json]") {
    // Boost.JSON 1.81 alone reads the first as -1.6139999999999999e189, one unit in the last place off
    // (found by tests/fuzz/fuzz_webhook: serializing and parsing again gave another number).
    CHECK(parse_strict("-1614E186").value->as_double() == -1.614e189);
    CHECK(parse_strict("-1614E186").value == parse_strict("-1.614e189").value);
    CHECK(parse_strict("2.2250738585072011e-308").value->as_double() == 2.2250738585072011e-308);
    CHECK(parse_strict("20.0005").value->as_double() == 20.0005);
}

TEST_CASE("parse_strict gives the correctly rounded double for short fractions, which skip std::from_chars", "[json]") {
    // Fractions of at most 15 digits without an exponent keep Boost.JSON's own double (one exact division); the
    // rest are read again by std::from_chars. Both must give the correctly rounded double of the text.
    std::mt19937_64 random(20261129);
    for (int n = 0; n < 200000; ++n) {
        const int digits = 1 + static_cast<int>(random() % 17);
        std::string text = random() % 4 == 0 ? "-" : "";
        std::string mantissa;
        for (int k = 0; k < digits; ++k) mantissa += static_cast<char>('0' + random() % 10);
        const std::size_t point = random() % mantissa.size();
        if (point > 0 && mantissa[0] == '0') mantissa[0] = '1';  // JSON has no leading zeros
        text += mantissa.substr(0, point + 1) + "." + mantissa.substr(point + 1);
        if (text.back() == '.') text += '0';
        double expected = 0;
        REQUIRE(std::from_chars(text.data(), text.data() + text.size(), expected).ec == std::errc());
        const auto parsed = parse_strict(text);
        INFO(text);
        REQUIRE(parsed.value);
        REQUIRE(parsed.value->is_double());
        CHECK(std::bit_cast<std::uint64_t>(parsed.value->get_double()) == std::bit_cast<std::uint64_t>(expected));
    }
    CHECK(parse_strict("0.1").value->as_double() == 0.1);
    CHECK(parse_strict("-6.225").value->as_double() == -6.225);
    CHECK(parse_strict("[1234567890.12345, 0.000000000000001]").value ==
          boost::json::value{1234567890.12345, 0.000000000000001});
}

TEST_CASE("parse_strict refuses trailing data and non-standard syntax", "[json]") {
    require_refused("{} x");
    require_refused("{}{}");
    require_refused("1 2");
    require_refused("[1,]");
    require_refused(R"({"a":1,})");
    require_refused("/* c */ {}");
    require_refused("{} // c");
    require_refused("NaN");
    require_refused("[Infinity]");
    require_refused("{'a':1}");
    require_refused("{a:1}");
    require_refused("[01]");
    require_refused("\"\t\"");  // raw control character in a string
    require_refused("");
    require_refused("   ");
    require_refused(R"({"a":1)");
    CHECK(parse_strict("{} x").error.find("trailing data") != std::string::npos);
}

TEST_CASE("parse_strict reassembles strings and keys delivered in pieces", "[json]") {
    // Escapes make Boost.JSON deliver a string as several parts.
    std::string long_text;
    std::string expected;
    for (int i = 0; i < 5000; ++i) {
        long_text += R"(ab\n\u00e9\")";
        expected += "ab\n\xc3\xa9\"";
    }
    const auto result = parse_strict(R"({"k\u0065y":")" + long_text + R"("})");
    REQUIRE(result.value);
    CHECK(result.value->at("key").as_string() == expected);
}

TEST_CASE("parse_strict into a caller's arena gives the same values and refusals", "[json]") {
    std::string many = "[";
    for (int i = 0; i < 3000; ++i) many += (i ? "," : "") + std::string(R"({"id":"item-)") + std::to_string(i) + "\"}";
    many += "]";
    const std::string texts[] = {R"( {"a": [1, -2, 3.5, true, false, null, "x\ny\u00e9"], "b": {"c": {}}} )", many};
    for (const auto& text : texts) {
        // A first buffer far smaller than the document: the arena continues on the heap.
        std::array<unsigned char, 64> first{};
        boost::json::monotonic_resource arena(first.data(), first.size());
        const auto scoped = parse_strict(text, arena);
        const auto shared = parse_strict(text);
        REQUIRE(scoped.value);
        REQUIRE(shared.value);
        CHECK(*scoped.value == *shared.value);
        CHECK(scoped.value->storage().get() == &arena);
        // Released with the arena: no value visited or freed one by one.
        CHECK(scoped.value->storage().is_not_shared_and_deallocate_is_trivial());
        CHECK_FALSE(shared.value->storage().is_not_shared_and_deallocate_is_trivial());
    }
    for (const std::string_view bad : {R"({"a":1,"a":2})", R"({"a":1e400})", "[1,]", "\"\xff\"", "{} x", ""}) {
        INFO("input: " << bad);
        boost::json::monotonic_resource arena;
        const auto scoped = parse_strict(bad, arena);
        CHECK_FALSE(scoped.value);
        CHECK(scoped.error == parse_strict(bad).error);
        CHECK_FALSE(scoped.error.empty());
    }
}
