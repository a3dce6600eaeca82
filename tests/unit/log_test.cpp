#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/log/log.hpp"

using namespace common::log;

namespace log_test {

/// What `write_lines` writes to stderr (the process's lines go there without a LineWriter): stderr goes to a
/// file for the call.
std::string written_to_stderr(const std::function<void()>& write_lines) {
    char path[] = "/tmp/orderhub-log-test.XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    std::fflush(stderr);
    const int saved = dup(2);
    REQUIRE(dup2(fd, 2) == 2);
    write_lines();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path);
    return text.str();
}

}  // namespace log_test

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

TEST_CASE("log: a JSON line escapes every value, and a key set twice keeps its first place and last value", "[log]") {
    const std::vector<std::pair<std::string_view, std::string>> more{
        {"outcome", "created"}, {"status", "twice"}, {"note", "a \"quote\",\n a line feed, \x01 and caf\xc3\xa9"}};
    const std::string line = format_line(Format::json, "2026-01-02T03:04:05.006Z", Level::warn, "request",
                                         {{"status", 200}, {"ok", true}, {"latency_us", 12.5}}, more);
    const auto v = boost::json::parse(line).as_object();
    std::vector<std::string> keys;
    for (const auto& kv : v) keys.emplace_back(kv.key());
    CHECK(keys == std::vector<std::string>{"time", "level", "msg", "status", "ok", "latency_us", "outcome", "note"});
    CHECK(v.at("level") == "warn");
    CHECK(v.at("status") == "twice");
    CHECK(v.at("ok") == true);
    CHECK(v.at("latency_us").as_double() == 12.5);
    CHECK(v.at("note") == "a \"quote\",\n a line feed, \x01 and caf\xc3\xa9");
    CHECK(line.find('\n') == std::string::npos);  // one line, whatever the values hold
}

TEST_CASE("log: a JSON line is the text of the object with its fields, byte for byte", "[log]") {
    // Lines are written piece by piece, not as an object: the text must be what serializing the object gives.
    const std::vector<std::pair<std::string_view, std::string>> more{
        {"outcome", "created"}, {"note", "\x1f\x7f \\ \" </ \xe2\x80\xa8 \xf0\x9f\x98\x80"}};
    boost::json::value nested = boost::json::parse(R"({"a":[1,-2,3.25,null,true],"b":{"c":"d\n"}})");
    const std::string line = format_line(Format::json, "2026-01-02T03:04:05.006Z", Level::error, "a \"message\"\t",
                                         {{"status", 503},
                                          {"latency_us", 12.5},
                                          {"tiny", 1e-300},
                                          {"big", std::uint64_t{18446744073709551615ULL}},
                                          {"negative", std::int64_t{-9223372036854775807LL - 1}},
                                          {"ok", false},
                                          {"nested", nested},
                                          {"empty", ""},
                                          {"escaped", "\x01 \" \\ \xe2\x80\xa8 \xf0\x9f\x98\x80 plain after"},
                                          {"k\"ey", "v"}},
                                         more);
    boost::json::object o;
    o["time"] = "2026-01-02T03:04:05.006Z";
    o["level"] = "error";
    o["msg"] = "a \"message\"\t";
    o["status"] = 503;
    o["latency_us"] = 12.5;
    o["tiny"] = 1e-300;
    o["big"] = std::uint64_t{18446744073709551615ULL};
    o["negative"] = std::int64_t{-9223372036854775807LL - 1};
    o["ok"] = false;
    o["nested"] = nested;
    o["empty"] = "";
    o["escaped"] = "\x01 \" \\ \xe2\x80\xa8 \xf0\x9f\x98\x80 plain after";
    o["k\"ey"] = "v";
    for (const auto& [k, v] : more) o[k] = v;
    CHECK(line == boost::json::serialize(o));
}

TEST_CASE("log: a written line's time is the current UTC time with milliseconds", "[log]") {
    // Lines go to stderr: caught in a file for the duration of the writes.
    const auto before = std::chrono::system_clock::now();
    std::stringstream text(log_test::written_to_stderr([] {
        for (int i = 0; i < 3; ++i) write(Level::info, "tick", {{"n", i}});
    }));
    const auto after = std::chrono::system_clock::now();

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

namespace {

// A pipe whose read end the test reads (or leaves unread, or closes).
struct Pipe {
    int read = -1;
    int write = -1;
    Pipe() {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        read = fds[0];
        write = fds[1];
    }
    ~Pipe() {
        if (read >= 0) ::close(read);
        if (write >= 0) ::close(write);
    }
    std::string read_all() {  // up to end of file: the write end must be closed first
        std::string out;
        char buf[65536];
        for (ssize_t n; (n = ::read(read, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
        return out;
    }
};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace

TEST_CASE("log: a LineWriter writes every queued line, in order, before its close returns", "[log]") {
    Pipe pipe;
    std::string text;
    std::thread reader([&] {
        char buf[4096];
        for (ssize_t n; (n = ::read(pipe.read, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    });
    {
        LineWriter writer(pipe.write, 1 << 20);
        for (int i = 0; i < 500; ++i)
            REQUIRE(writer.push("line " + std::to_string(i), i % 100 == 0) == LineWriter::Push::queued);
        CHECK(writer.close(std::chrono::seconds(5)));
        CHECK(writer.push("after the close", false) == LineWriter::Push::closed);
        CHECK(writer.dropped() == 0);
    }
    ::close(pipe.write);
    pipe.write = -1;
    reader.join();
    const auto lines = lines_of(text);
    REQUIRE(lines.size() == 500);
    for (int i = 0; i < 500; ++i) CHECK(lines[static_cast<std::size_t>(i)] == "line " + std::to_string(i));
}

TEST_CASE("log: a LineWriter whose reader stalls drops what does not fit, never waits, and says how many", "[log]") {
    Pipe pipe;  // nobody reads it until the end: a Linux pipe holds 64 KiB, the writer 16 KiB more
    const std::string filler(99, 'x');
    std::vector<int> queued;
    std::uint64_t refused = 0;
    {
        LineWriter writer(pipe.write, 16 << 10, std::chrono::milliseconds(1));
        for (int i = 0; i < 4000; ++i) {  // 400 KB: five times what both hold
            const auto r = writer.push(std::to_string(i) + " " + filler, false);
            if (r == LineWriter::Push::queued) queued.push_back(i);
            if (r == LineWriter::Push::dropped) ++refused;
            if (i % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the thread fills the pipe
        }
        CHECK(refused > 0);
        CHECK(writer.dropped() == refused);
        CHECK(queued.size() + refused == 4000);
        CHECK_FALSE(writer.close(std::chrono::milliseconds(50)));  // stderr still takes nothing: close gives up

        std::string text;
        std::thread reader([&] {  // the reader comes back
            char buf[65536];
            for (ssize_t n; (n = ::read(pipe.read, buf, sizeof buf)) > 0;)
                text.append(buf, static_cast<std::size_t>(n));
        });
        // The thread left running by the first close writes the rest and ends.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!writer.close(std::chrono::milliseconds(100)) && std::chrono::steady_clock::now() < deadline) {
        }
        CHECK(writer.close(std::chrono::milliseconds(0)));
        ::close(pipe.write);
        pipe.write = -1;
        reader.join();

        std::vector<int> written;
        std::uint64_t told = 0;
        for (const auto& line : lines_of(text)) {
            if (line.find("\"msg\":\"log lines dropped\"") != std::string::npos) {
                const auto v = boost::json::parse(line).as_object();
                CHECK(v.at("level").as_string() == "warn");
                told += static_cast<std::uint64_t>(v.at("count").as_int64());
                continue;
            }
            written.push_back(std::stoi(line));
            CHECK(line.size() == std::to_string(written.back()).size() + 1 + filler.size());
        }
        CHECK(written == queued);  // every line that was queued, once, in order
        CHECK(told == refused);    // and the count of the others
    }
}

TEST_CASE("log: a LineWriter whose reader went away counts its lines as dropped, and the process lives", "[log]") {
    Pipe pipe;
    ::close(pipe.read);  // a write now raises SIGPIPE, which would end this test binary, unless blocked
    pipe.read = -1;
    LineWriter writer(pipe.write, 1 << 20, std::chrono::milliseconds(1));
    CHECK(writer.push("first", true) == LineWriter::Push::queued);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (writer.dropped() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(writer.dropped() == 1);
    CHECK(writer.push("second", false) == LineWriter::Push::dropped);
    CHECK(writer.dropped() == 2);
    CHECK(writer.close(std::chrono::seconds(5)));
}

TEST_CASE("log: lines written one after another on a thread are each whole, long ones and short ones", "[log]") {
    // A thread formats its lines into one string whose room it keeps for the next (a line past 16 kB is not kept):
    // each line must hold its own text only, after a longer one, a shorter one or one past that bound.
    const std::vector<std::string> values{
        std::string(300, 'a'), "b", std::string(20000, 'c'), "", std::string(40, 'd'), std::string(17000, 'e'), "f"};
    std::stringstream in(log_test::written_to_stderr([&values] {
        for (std::size_t i = 0; i < values.size(); ++i)
            write(Level::info, "line " + std::to_string(i), {{"v", values[i]}});
    }));
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        REQUIRE(n < values.size());
        const auto v = boost::json::parse(line).as_object();
        CHECK(std::string_view(v.at("msg").as_string()) == "line " + std::to_string(n));
        CHECK(std::string_view(v.at("v").as_string()) == values[n]);
        CHECK(v.size() == 4);  // time, level, msg, v
        ++n;
    }
    CHECK(n == values.size());
}
