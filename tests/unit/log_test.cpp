#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>

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

TEST_CASE("log: a written line's time is the current UTC time with milliseconds", "[log]") {
    // Lines go to stderr: catch them in a file for the duration of the test.
    char path[] = "/tmp/orderhub-log-test.XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    std::fflush(stderr);
    const int saved = dup(2);
    REQUIRE(dup2(fd, 2) == 2);
    const auto before = std::chrono::system_clock::now();
    for (int i = 0; i < 3; ++i) write(Level::info, "tick", {{"n", i}});
    const auto after = std::chrono::system_clock::now();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path);

    const std::regex form(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
    std::string line;
    int lines = 0;
    while (std::getline(text, line)) {
        const auto v = boost::json::parse(line).as_object();
        const std::string time(v.at("time").as_string());
        INFO(time);
        REQUIRE(std::regex_match(time, form));
        // Back to a time point: whole seconds by timegm, then the milliseconds.
        std::tm tm{};
        REQUIRE(strptime(time.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr);
        const auto at = std::chrono::system_clock::from_time_t(timegm(&tm)) +
                        std::chrono::milliseconds(std::stoi(time.substr(20, 3)));
        CHECK(at >= std::chrono::time_point_cast<std::chrono::milliseconds>(before));
        CHECK(at <= after);
        CHECK(v.at("n") == lines);
        ++lines;
    }
    CHECK(lines == 3);
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
