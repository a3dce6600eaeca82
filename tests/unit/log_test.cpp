#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "common/log/log.hpp"

using namespace common::log;

TEST_CASE("log: a JSON line carries time, level, message and fields", "[log]") {
    const std::string line = format_line(Format::json, "2026-01-02T03:04:05.006Z", Level::info, "request",
                                         {{"request_id", "r1"}, {"status", 200}, {"partner", "p \"x\""}});
    const auto v = boost::json::parse(line).as_object();
    CHECK(v.at("time") == "2026-01-02T03:04:05.006Z");
    CHECK(v.at("level") == "info");
    CHECK(v.at("msg") == "request");
    CHECK(v.at("request_id") == "r1");
    CHECK(v.at("status") == 200);
    CHECK(v.at("partner") == "p \"x\"");
    CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("log: the text format is key=value, quoting values a reader could misread", "[log]") {
    const std::string line = format_line(Format::text, "2026-01-02T03:04:05.006Z", Level::warn, "forward",
                                         {{"order_id", "0190-ab"},
                                          {"attempt", 2},
                                          {"error", "connect: refused"},
                                          {"empty", ""},
                                          {"multi", "a\nb"},
                                          {"ok", true}});
    CHECK(line ==
          "2026-01-02T03:04:05.006Z warn forward order_id=0190-ab attempt=2 error=\"connect: refused\" empty=\"\" "
          "multi=\"a\\nb\" ok=true");
}

TEST_CASE("log: ORDERHUB_LOG_FORMAT values", "[log]") {
    Format f = Format::json;
    CHECK(parse_format("text", f));
    CHECK(f == Format::text);
    CHECK(parse_format("json", f));
    CHECK(f == Format::json);
    CHECK_FALSE(parse_format("yaml", f));
}
