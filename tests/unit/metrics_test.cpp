#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "common/metrics/metrics.hpp"

using namespace common::metrics;

TEST_CASE("metrics: counters and gauges in the text exposition format", "[metrics]") {
    Registry r;
    auto& created = r.counter("x_requests_total", "Requests.", {{"event", "order_created"}, {"status", "200"}});
    auto& other = r.counter("x_requests_total", "Requests.", {{"event", "other"}, {"status", "404"}});
    auto& ready = r.gauge("x_ready", "1 when ready.");
    created.inc();
    created.inc(2);
    other.inc();
    ready.set(1);
    CHECK(r.expose() ==
          "# HELP x_requests_total Requests.\n"
          "# TYPE x_requests_total counter\n"
          "x_requests_total{event=\"order_created\",status=\"200\"} 3\n"
          "x_requests_total{event=\"other\",status=\"404\"} 1\n"
          "# HELP x_ready 1 when ready.\n"
          "# TYPE x_ready gauge\n"
          "x_ready 1\n");
}

TEST_CASE("metrics: histogram buckets are cumulative, le inclusive, +Inf equals _count", "[metrics]") {
    Registry r;
    const double bounds[] = {0.1, 1, 2.5};
    auto& h = r.histogram("x_seconds", "Latency.", bounds, {{"event", "order_created"}});
    h.observe(0.05);
    h.observe(0.1);  // on the bound: counted in le="0.1"
    h.observe(2);
    h.observe(30);
    CHECK(r.expose() ==
          "# HELP x_seconds Latency.\n"
          "# TYPE x_seconds histogram\n"
          "x_seconds_bucket{event=\"order_created\",le=\"0.1\"} 2\n"
          "x_seconds_bucket{event=\"order_created\",le=\"1\"} 2\n"
          "x_seconds_bucket{event=\"order_created\",le=\"2.5\"} 3\n"
          "x_seconds_bucket{event=\"order_created\",le=\"+Inf\"} 4\n"
          "x_seconds_sum{event=\"order_created\"} 32.15\n"
          "x_seconds_count{event=\"order_created\"} 4\n");
}

TEST_CASE("metrics: label values and help are escaped, special values spelled as Prometheus reads them", "[metrics]") {
    CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
    CHECK(format_value(0) == "0");
    CHECK(format_value(0.25) == "0.25");
    CHECK(format_value(1.0 / 0.0) == "+Inf");
    CHECK(format_value(-1.0 / 0.0) == "-Inf");
    CHECK(format_value(0.0 / 0.0) == "NaN");
    Writer w;
    w.family("x", "line one\nback\\slash", Type::gauge);
    w.sample("x", {{"p", "q\"r"}}, 2);
    CHECK(w.text() == "# HELP x line one\\nback\\\\slash\n# TYPE x gauge\nx{p=\"q\\\"r\"} 2\n");
}

TEST_CASE("metrics: collectors write at scrape time, families cannot be registered twice", "[metrics]") {
    Registry r;
    int depth = 7;
    r.collector("x_depth", "Depth.", Type::gauge, [&](Writer& w) { w.sample("x_depth", {{"state", "dead"}}, depth); });
    CHECK(r.expose().find("x_depth{state=\"dead\"} 7\n") != std::string::npos);
    depth = 9;
    CHECK(r.expose().find("x_depth{state=\"dead\"} 9\n") != std::string::npos);
    CHECK_THROWS(r.collector("x_depth", "Again.", Type::gauge, [](Writer&) {}));
    CHECK_THROWS(r.gauge("x_depth", "Again."));
    r.counter("x_total", "T.");
    CHECK_THROWS(r.gauge("x_total", "Another type."));
    const double bad[] = {1, 1};
    CHECK_THROWS(Histogram(bad));
}

TEST_CASE("metrics: concurrent updates are all counted", "[metrics]") {
    Counter c;
    Histogram h(latency_buckets());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10000; ++i) {
                c.inc();
                h.observe(0.001);
            }
        });
    for (auto& t : threads) t.join();
    CHECK(c.value() == 40000);
    auto s = h.snapshot();
    CHECK(s.count == 40000);
    CHECK(s.cumulative.back() == 40000);
    CHECK(s.sum == Approx(40.0));
}
