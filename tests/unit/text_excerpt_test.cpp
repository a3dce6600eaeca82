// Text from other systems made storable: common::text::printable and common::text::excerpt.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <random>

#include "common/text/excerpt.hpp"

using common::text::excerpt;
using common::text::printable;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

/// Boost.JSON's parser refuses a string that is not UTF-8; serialize copies the bytes as they are.
bool valid_utf8(const std::string& s) {
    boost::system::error_code ec;
    boost::json::parse(boost::json::serialize(boost::json::string(s)), ec);
    return !ec;
}

}  // namespace

TEST_CASE("text: well-formed UTF-8 passes unchanged, control characters become spaces", "[text]") {
    CHECK(printable("Order created") == "Order created");
    CHECK(printable("المنتج غير متوفر — ok 🍔") == "المنتج غير متوفر — ok 🍔");
    CHECK(printable(std::string("a\0b\nc\td\x7F"
                                "e",
                                9)) == "a b c d e");
    CHECK(printable("") == "");
}

TEST_CASE("text: each byte outside a well-formed character becomes U+FFFD", "[text]") {
    CHECK(printable("r\xE9"
                    "essayez") == "r" + kFffd + "essayez");                 // Latin-1
    CHECK(printable("\xFF\xFE") == kFffd + kFffd);                          // never in UTF-8
    CHECK(printable("\xC0\xAF") == kFffd + kFffd);                          // overlong '/'
    CHECK(printable("\xE0\x80\xAF") == kFffd + kFffd + kFffd);              // overlong, three bytes
    CHECK(printable("\xED\xA0\x80") == kFffd + kFffd + kFffd);              // a UTF-16 surrogate
    CHECK(printable("\xF4\x90\x80\x80") == kFffd + kFffd + kFffd + kFffd);  // above U+10FFFF
    CHECK(printable("ok\xE2\x82") == "ok" + kFffd + kFffd);                 // a character cut short
    CHECK(printable("\x80x") == kFffd + "x");                               // a lone continuation byte
}

TEST_CASE("text: an excerpt ends between characters, within its limit", "[text]") {
    CHECK(excerpt("abcdef", 4) == "abcd");
    CHECK(excerpt("abc", 10) == "abc");
    CHECK(excerpt("ééé", 5) == "éé");  // the third é would need bytes 5 and 6
    CHECK(excerpt("ab🍔", 5) == "ab");  // four bytes do not fit in three
    CHECK(excerpt("ab🍔", 6) == "ab🍔");
    CHECK(excerpt("ab\xFF", 4) == "ab");  // nor does a replacement character
    CHECK(excerpt("ab\xFF", 5) == "ab" + kFffd);
    CHECK(excerpt("anything", 0).empty());
}

TEST_CASE("text: whatever the bytes, an excerpt is valid UTF-8 without control characters", "[text]") {
    std::mt19937 rng(20261124);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<std::size_t> length(0, 64);
    for (int round = 0; round < 2000; ++round) {
        std::string bytes(length(rng), '\0');
        for (char& c : bytes) c = static_cast<char>(byte(rng));
        const std::size_t limit = length(rng);
        const std::string out = excerpt(bytes, limit);
        INFO("round " << round);
        REQUIRE(out.size() <= limit);
        REQUIRE(valid_utf8(out));
        for (unsigned char c : out) REQUIRE((c >= 0x20 && c != 0x7F));
        // A prefix of the whole text: an excerpt never rewrites what it keeps.
        REQUIRE(printable(bytes).compare(0, out.size(), out) == 0);
    }
}
