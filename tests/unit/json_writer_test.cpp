#include "common/json/writer.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

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
