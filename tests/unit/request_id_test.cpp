#include <catch2/catch.hpp>
#include <string>

#include "common/http/request_id.hpp"

using common::http::incoming_request_id;
using common::http::trace_id_of;
using common::http::traceparent_for;
using common::http::valid_request_id;

namespace {
const std::string kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
const std::string kParent = "00-" + kTrace + "-00f067aa0ba902b7-01";
}  // namespace

TEST_CASE("request id: a caller's X-Request-Id is kept when bounded and visible ASCII") {
    CHECK(valid_request_id("plat-req-123"));
    CHECK(valid_request_id(std::string(128, 'x')));
    CHECK_FALSE(valid_request_id(std::string(129, 'x')));
    CHECK_FALSE(valid_request_id(""));
    CHECK_FALSE(valid_request_id("a b"));
    CHECK_FALSE(valid_request_id("a\tb"));
    CHECK_FALSE(valid_request_id("a\nb"));
    CHECK_FALSE(valid_request_id("a\x7f"));
    CHECK_FALSE(valid_request_id("caf\xc3\xa9"));
}

TEST_CASE("request id: the trace-id of a W3C traceparent") {
    CHECK(trace_id_of(kParent) == kTrace);
    CHECK(trace_id_of("01-" + kTrace + "-00f067aa0ba902b7-01-later") == kTrace);  // a later version may add
    CHECK_FALSE(trace_id_of(kParent + "-more"));                                  // version 00 may not
    CHECK_FALSE(trace_id_of("ff-" + kTrace + "-00f067aa0ba902b7-01"));
    CHECK_FALSE(trace_id_of("00-" + std::string(32, '0') + "-00f067aa0ba902b7-01"));
    CHECK_FALSE(trace_id_of("00-" + kTrace + "-0000000000000000-01"));
    CHECK_FALSE(trace_id_of("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"));
    CHECK_FALSE(trace_id_of("00-" + kTrace + "-00f067aa0ba902b7"));
    CHECK_FALSE(trace_id_of("00_" + kTrace + "_00f067aa0ba902b7_01"));
    CHECK_FALSE(trace_id_of(""));
}

TEST_CASE("request id: X-Request-Id, else the traceparent's trace-id, else a new one") {
    CHECK(incoming_request_id("plat-req-123", kParent) == "plat-req-123");
    CHECK(incoming_request_id(std::nullopt, kParent) == kTrace);
    CHECK(incoming_request_id(std::string(129, 'x'), kParent) == kTrace);
    const std::string fresh = incoming_request_id("bad id", "nonsense");
    CHECK(fresh.size() == 16);
    CHECK(fresh != incoming_request_id(std::nullopt, std::nullopt));
}

TEST_CASE("request id: a new one is the process's prefix and a counter, 16 lowercase hex digits") {
    const std::string a = common::http::new_request_id();
    const std::string b = common::http::new_request_id();
    REQUIRE(a.size() == 16);
    REQUIRE(b.size() == 16);
    const auto hex = [](const std::string& s) { return s.find_first_not_of("0123456789abcdef") == std::string::npos; };
    CHECK(hex(a));
    CHECK(hex(b));
    CHECK(a.substr(0, 8) == b.substr(0, 8));  // the process's prefix
    // The counter's next value, carried into the prefix's half only past 2^32 ids.
    CHECK(std::stoull(b.substr(8), nullptr, 16) == (std::stoull(a.substr(8), nullptr, 16) + 1) % (1ULL << 32));
}

TEST_CASE("request id: the traceparent sent on its behalf keeps one trace with a new span each time") {
    const std::string a = traceparent_for(kTrace);
    const std::string b = traceparent_for(kTrace);
    CHECK(trace_id_of(a) == kTrace);
    CHECK(a.size() == 55);
    CHECK(a.substr(0, 3) == "00-");
    CHECK(a.substr(52) == "-01");
    CHECK(a != b);  // new span ids (64 random bits)
    // An id that is not a trace-id: the first 128 bits of its SHA-256, the same for every call.
    const auto t = trace_id_of(traceparent_for("plat-req-123"));
    REQUIRE(t);
    CHECK(*t == "33b728c87c9f4606b17545143a9da3a7");
    CHECK(trace_id_of(traceparent_for("plat-req-123")) == t);
}
