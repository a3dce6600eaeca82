#include "hub/metrics/hub_metrics.hpp"

#include <string>

namespace hub::metrics {
namespace {

using common::metrics::Type;
using common::metrics::Writer;

std::size_t route_of(std::string_view path) {
    if (path.rfind("/webhooks/", 0) == 0) return 0;
    if (path == "/healthz") return 1;
    if (path == "/readyz") return 2;
    if (path == "/metrics") return 3;
    return 4;
}

}  // namespace

HubMetrics::HubMetrics() : webhook_requests_(kEvents.size() * kOutcomes.size()), http_requests_(kRoutes.size()) {
    registry.collector("orderhub_webhook_requests_total",
                       "Webhook requests answered, by event, outcome and HTTP status.", Type::counter,
                       [this](Writer& w) {
                           webhook_requests_.for_each([&w](std::size_t i, const std::string& status, double v) {
                               w.sample("orderhub_webhook_requests_total",
                                        {{"event", kEvents[i / kOutcomes.size()]},
                                         {"outcome", kOutcomes[i % kOutcomes.size()]},
                                         {"status", status}},
                                        v);
                           });
                       });
    for (std::size_t e = 0; e < kEvents.size(); ++e)
        webhook_latency_[e] = &registry.histogram(
            "orderhub_webhook_request_duration_seconds", "Time from a webhook request's last byte to its answer.",
            common::metrics::latency_buckets(), {{"event", std::string(kEvents[e])}});
    registry.collector("orderhub_http_requests_total", "HTTP requests answered, by route and status.", Type::counter,
                       [this](Writer& w) {
                           http_requests_.for_each([&w](std::size_t r, const std::string& status, double v) {
                               w.sample("orderhub_http_requests_total", {{"route", kRoutes[r]}, {"status", status}}, v);
                           });
                       });
    for (std::size_t i = 0; i < kAttemptResults.size(); ++i)
        attempts_[i] = &registry.counter("orderhub_forward_attempts_total",
                                         "HTTP exchanges with POS systems (orders and logins), by result.",
                                         {{"result", std::string(kAttemptResults[i])}});
    attempt_latency_ = &registry.histogram("orderhub_forward_attempt_duration_seconds",
                                           "Time a POS took to answer one exchange (or to fail).",
                                           common::metrics::slow_latency_buckets());
    for (std::size_t i = 0; i < kJobStates.size(); ++i)
        finished_[i] = &registry.counter("orderhub_forward_claims_finished_total",
                                         "Forwarding claims ended by this process, by the job's new state.",
                                         {{"state", std::string(kJobStates[i])}});
    forward_latency_ = &registry.histogram(
        "orderhub_forward_latency_seconds",
        "From an order's storage to its POS's acceptance, for orders due at once (not scheduled ones).",
        common::metrics::slow_latency_buckets());
    pool_wait_ = &registry.histogram("orderhub_db_pool_wait_seconds",
                                     "Time a database job waited in the pool's queue for a worker.",
                                     common::metrics::latency_buckets());
}

void HubMetrics::request(std::string_view path, const common::http::LogFields& fields, unsigned status,
                         std::chrono::microseconds latency) noexcept {
    const std::size_t route = route_of(path);
    http_requests_.inc(route, status);
    if (route != 0) return;
    // The server's own refusals (413, 408, 431, malformed requests) never reached the handler: no fields.
    const std::string_view outcome = fields.get("outcome");
    const std::size_t e = index_of(kEvents, fields.get("event"));
    const std::size_t o = index_of(kOutcomes, outcome.empty() ? std::string_view("refused") : outcome);
    webhook_requests_.inc(e * kOutcomes.size() + o, status);
    webhook_latency_[e]->observe(std::chrono::duration<double>(latency).count());
}

void HubMetrics::forward_attempt(std::string_view outcome, std::int64_t latency_ms) noexcept {
    attempts_[index_of(kAttemptResults, outcome)]->inc();
    attempt_latency_->observe(static_cast<double>(latency_ms) / 1000.0);
}

void HubMetrics::forward_finished(std::string_view state) noexcept { finished_[index_of(kJobStates, state)]->inc(); }

}  // namespace hub::metrics
