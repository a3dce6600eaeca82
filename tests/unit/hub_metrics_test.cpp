#include <catch2/catch.hpp>
#include <string>

#include "hub/metrics/hub_metrics.hpp"

using hub::metrics::HubMetrics;
using namespace std::chrono_literals;

namespace {

bool has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

}  // namespace

TEST_CASE("hub metrics: webhook answers by event, outcome and status, other routes by route", "[metrics]") {
    HubMetrics m;
    common::http::LogFields created;
    created.set("event", "order_created");
    created.set("outcome", "created");
    m.request("/webhooks/k1", created, 200, 1500us);
    m.request("/webhooks/k1", created, 200, 2500us);
    common::http::LogFields refused;  // the listener refused it before the handler: no fields
    m.request("/webhooks/k2", refused, 413, 10us);
    m.request("/healthz", {}, 200, 10us);
    const std::string text = m.registry.expose();
    CHECK(has(text, "orderhub_webhook_requests_total{event=\"order_created\",outcome=\"created\",status=\"200\"} 2"));
    CHECK(has(text, "orderhub_webhook_requests_total{event=\"other\",outcome=\"refused\",status=\"413\"} 1"));
    CHECK(has(text, "orderhub_http_requests_total{route=\"webhooks\",status=\"200\"} 2"));
    CHECK(has(text, "orderhub_http_requests_total{route=\"healthz\",status=\"200\"} 1"));
    CHECK(has(text, "orderhub_webhook_request_duration_seconds_count{event=\"order_created\"} 2"));
    CHECK(has(text, "orderhub_webhook_request_duration_seconds_bucket{event=\"order_created\",le=\"0.001\"} 0"));
    CHECK(has(text, "orderhub_webhook_request_duration_seconds_bucket{event=\"order_created\",le=\"0.0025\"} 2"));
    // Zero series with a status label are left out; the health request is not a webhook.
    CHECK(text.find("status=\"500\"") == std::string::npos);
    CHECK(text.find("event=\"other\",outcome=\"created\"") == std::string::npos);
}

TEST_CASE("hub metrics: forwarding attempts, claims and latency", "[metrics]") {
    HubMetrics m;
    m.forward_attempt("unauthorized", 12);
    m.forward_attempt("logged_in", 30);
    m.forward_attempt("delivered", 40);
    m.forward_attempt("something new", 1);  // counted, as other
    m.forward_finished("delivered");
    m.forward_latency(0.2);
    m.pool_wait().observe(0.0001);
    const std::string text = m.registry.expose();
    CHECK(has(text, "orderhub_forward_attempts_total{result=\"delivered\"} 1"));
    CHECK(has(text, "orderhub_forward_attempts_total{result=\"unauthorized\"} 1"));
    CHECK(has(text, "orderhub_forward_attempts_total{result=\"other\"} 1"));
    CHECK(has(text, "orderhub_forward_attempts_total{result=\"rejected\"} 0"));
    CHECK(has(text, "orderhub_forward_attempt_duration_seconds_count 4"));
    CHECK(has(text, "orderhub_forward_claims_finished_total{state=\"delivered\"} 1"));
    CHECK(has(text, "orderhub_forward_latency_seconds_bucket{le=\"0.25\"} 1"));
    CHECK(has(text, "orderhub_db_pool_wait_seconds_count 1"));
}
