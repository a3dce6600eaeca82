#include "common/json/writer.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace {

std::string written_text(std::string_view s) {
    std::string out;
    common::json::Writer(out).text(s);
    return out;
}

}  // namespace

TEST_CASE("json writer: every byte, alone and inside text, as boost::json::serialize writes it", "[json]") {
    // Printable ASCII takes the writer's own path; every other byte goes through Boost.JSON's serializer.
    for (int b = 1; b < 256; ++b) {
        const std::string one(1, static_cast<char>(b));
        const std::string inside = "order " + one + " of 12";
        INFO("byte " << b);
        CHECK(written_text(one) == boost::json::serialize(boost::json::string_view(one)));
        CHECK(written_text(inside) == boost::json::serialize(boost::json::string_view(inside)));
    }
    CHECK(written_text("") == "\"\"");
    CHECK(written_text(std::string(5000, '\n')) ==
          boost::json::serialize(boost::json::string_view(std::string(5000, '\n'))));
}

TEST_CASE("json writer: every byte at every place of a text longer than one word", "[json]") {
    // The plain path reads eight bytes at a time: a byte that needs escaping must be found in any lane, in the
    // tail, and beside neighbours that could borrow (0x00, 0x20, 0x7F, 0x80, 0xFF).
    const auto rule = [](std::string_view s) {
        return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7E && c != '"' && c != '\\'; });
    };
    for (const char filler : {'a', ' ', '~', '!', '#', '[', ']'}) {
        for (int b = 0; b < 256; ++b) {
            for (std::size_t at = 0; at < 17; ++at) {
                std::string text(17, filler);
                text[at] = static_cast<char>(b);
                INFO("byte " << b << " at " << at << " among '" << filler << "'");
                CHECK(common::json::Writer::plain(text) == rule(text));
                CHECK(written_text(text) == boost::json::serialize(boost::json::string_view(text)));
            }
        }
    }
    for (int a = 0; a < 256; ++a) {
        for (int b = 0; b < 256; b += 3) {
            const std::string pair = {'x', 'x', 'x', static_cast<char>(a), static_cast<char>(b), 'y', 'y', 'y'};
            INFO("bytes " << a << ", " << b);
            CHECK(common::json::Writer::plain(pair) == rule(pair));
        }
    }
}

TEST_CASE("json writer: every byte at every place of texts of every length up to three blocks", "[json]") {
    // Shorter than a block (16 bytes), a text is read from overlapping pieces (its first and last 1, 4 or 8 bytes
    // and its middle byte) padded with a plain byte; longer, its tail is read as its last 16 bytes, partly again:
    // a byte that needs escaping must be found at any place of any length.
    const auto rule = [](std::string_view s) {
        return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7E && c != '"' && c != '\\'; });
    };
    CHECK(common::json::Writer::plain(""));
    for (std::size_t size = 1; size <= 48; ++size) {
        CHECK(common::json::Writer::plain(std::string(size, 'k')));
        for (std::size_t at = 0; at < size; ++at) {
            for (int b = 0; b < 256; ++b) {
                std::string text(size, 'k');
                text[at] = static_cast<char>(b);
                INFO("byte " << b << " at " << at << " of " << size);
                CHECK(common::json::Writer::plain(text) == rule(text));
            }
        }
    }
}

TEST_CASE("json writer: numbers, booleans, null and values as boost::json::serialize writes them", "[json]") {
    std::string out;
    common::json::Writer w(out);
    w.raw("[");
    w.number(std::numeric_limits<std::int64_t>::min());
    w.raw(",");
    w.number(std::numeric_limits<std::uint64_t>::max());
    w.raw(",");
    w.boolean(true);
    w.raw(",");
    w.null();
    w.raw(",");
    w.value(boost::json::parse(R"({"a":[1.5,-0.0,1e300,"x\u0001"]})"));
    w.raw("]");
    boost::json::array expected{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::uint64_t>::max(),
                                true, nullptr, boost::json::parse(R"({"a":[1.5,-0.0,1e300,"x\u0001"]})")};
    CHECK(out == boost::json::serialize(expected));
}

TEST_CASE("json writer: a member's key, short or long, plain or escaped, as boost::json::serialize writes it",
          "[json]") {
    const std::string long_key(100, 'k');
    // With a one-byte separator, a key of 60 bytes is the longest staged on the stack (Writer::key); 61 goes the
    // long way.
    for (const std::string& key :
         {std::string("status"), std::string(""), std::string("a\"b"), std::string("x\\y"), std::string("tab\there"),
          std::string("caf\xc3\xa9"), long_key, long_key + "\"", std::string(60, 'm'), std::string(61, 'm')}) {
        for (const std::string_view separator : {",", "{"}) {
            std::string out;
            common::json::Writer(out).key(separator, key);
            CAPTURE(key, separator);
            CHECK(out == std::string(separator) + boost::json::serialize(boost::json::value(key)) + ":");
        }
    }
}

TEST_CASE("json writer: with room taken ahead, the text is whole when the writer ends, however far it grew", "[json]") {
    // Each piece is written into room taken ahead (doubled when a piece does not fit); a text that needs escaping
    // takes room for its worst case and gives back what it did not use. When the writer ends, the string holds
    // exactly what was written, after what it held before.
    for (const std::size_t ahead : {std::size_t{1}, std::size_t{16}, std::size_t{512}}) {
        for (const std::size_t pieces : {std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
            std::string out = "before:";
            boost::json::array expected;
            std::size_t size_seen = 0;
            {
                common::json::Writer w(out, ahead);
                w.raw("[");
                for (std::size_t k = 0; k < pieces; ++k) {
                    if (k > 0) w.raw(",");
                    // Plain, escaped (a quote, a control byte, non-ASCII) and long, in turn.
                    std::string piece = k % 3 == 0   ? "plain " + std::to_string(k)
                                        : k % 3 == 1 ? "quote \" tab \t é " + std::to_string(k)
                                                     : std::string(100 + k, 'x');
                    w.text(piece);
                    expected.emplace_back(piece);
                }
                w.raw("]");
                size_seen = w.size();
            }
            INFO("ahead " << ahead << ", pieces " << pieces);
            CHECK(out == "before:" + boost::json::serialize(expected));
            CHECK(size_seen == out.size());
        }
    }
}
