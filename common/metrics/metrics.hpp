#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace common::metrics {

/// A monotonically increasing count. Lock-free; relaxed ordering (a scrape may see increments in any order).
class Counter {
public:
    void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
    std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> value_{0};
};

/// Counters of HTTP answers by a series (one per label set, numbered by the owner) and status, 100..599 (any other
/// status counts as 599). A family with a status label has 500 possible series per label set, a handful in use:
/// for_each visits only the non-zero ones. Counting is lock-free and allocation-free.
class StatusCounters {
public:
    explicit StatusCounters(std::size_t series) : counters_(new Counter[series * kStatuses]), series_(series) {}

    void inc(std::size_t series, unsigned status) noexcept {
        counters_[series * kStatuses + (status >= 100 && status <= 599 ? status - 100 : kStatuses - 1)].inc();
    }

    /// Calls `f(series, status, value)` for each non-zero counter, by series, then status; `status` as text.
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t i = 0; i < series_; ++i)
            for (std::size_t s = 0; s < kStatuses; ++s)
                if (const auto v = counters_[i * kStatuses + s].value(); v != 0)
                    f(i, std::to_string(s + 100), static_cast<double>(v));
    }

private:
    static constexpr std::size_t kStatuses = 500;
    std::unique_ptr<Counter[]> counters_;
    std::size_t series_;
};

/// A value that goes up and down. Lock-free.
class Gauge {
public:
    void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
    void add(double v) noexcept { value_.fetch_add(v, std::memory_order_relaxed); }
    double value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0};
};

/// A histogram with fixed upper bounds (`le`, inclusive) chosen at construction, plus +Inf. observe() is
/// lock-free and allocation-free: one binary search over the bounds and two relaxed atomic adds.
class Histogram {
public:
    /// `bounds` must be strictly increasing and finite.
    explicit Histogram(std::span<const double> bounds);

    void observe(double v) noexcept;

    /// Cumulative counts per bound (the last one is +Inf, equal to `count`) and the sum of observations.
    struct Snapshot {
        std::vector<double> bounds;
        std::vector<std::uint64_t> cumulative;
        std::uint64_t count = 0;
        double sum = 0;
    };
    Snapshot snapshot() const;

private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
    std::atomic<double> sum_{0};
};

/// Latency buckets in seconds, from 0.5 ms to 10 s.
std::span<const double> latency_buckets();
/// Slower latency buckets in seconds, from 10 ms to 10 minutes (forwarding, queue waits under load).
std::span<const double> slow_latency_buckets();

enum class Type { counter, gauge, histogram };

/// One label of a sample.
struct Label {
    std::string_view name;
    std::string_view value;
};

/// Builds Prometheus text exposition format 0.0.4. Not thread-safe: one per scrape.
class Writer {
public:
    /// Starts a metric family: `# HELP` and `# TYPE` lines. Each family once per exposition.
    void family(std::string_view name, std::string_view help, Type type);
    /// One sample line: `name{labels} value`.
    void sample(std::string_view name, std::initializer_list<Label> labels, double value);
    /// One sample line without labels: `name value`.
    void sample(std::string_view name, double value) { sample(name, std::span<const Label>(), value); }
    void sample(std::string_view name, std::span<const Label> labels, double value);
    /// The `_bucket`, `_sum` and `_count` lines of one histogram child.
    void histogram(std::string_view name, std::span<const Label> labels, const Histogram& h);
    void histogram(std::string_view name, std::initializer_list<Label> labels, const Histogram& h) {
        histogram(name, std::span<const Label>(labels.begin(), labels.size()), h);
    }

    const std::string& text() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    void labels(std::span<const Label> labels, const Label* extra);
    std::string out_;
};

/// A number as the exposition format writes it: shortest round-trip form, `+Inf`, `-Inf`, `NaN`.
std::string format_value(double v);
/// Escapes a label value (backslash, double quote, line feed).
std::string escape_label_value(std::string_view v);

/// Metric families of one process. Registration (at start-up) and exposition take a mutex; updating the
/// counters, gauges and histograms it hands out never does. References stay valid for the registry's lifetime.
class Registry {
public:
    /// A child of counter family `name` with fixed `labels` (label values owned by the registry).
    Counter& counter(std::string_view name, std::string_view help,
                     std::vector<std::pair<std::string, std::string>> labels = {});
    Gauge& gauge(std::string_view name, std::string_view help,
                 std::vector<std::pair<std::string, std::string>> labels = {});
    Histogram& histogram(std::string_view name, std::string_view help, std::span<const double> bounds,
                         std::vector<std::pair<std::string, std::string>> labels = {});
    /// A family whose samples are computed at scrape time by `collect`, which writes them with `Writer::sample`
    /// or `Writer::histogram` under `name` (the family line is written before).
    void collector(std::string_view name, std::string_view help, Type type, std::function<void(Writer&)> collect);

    /// The whole exposition, families in registration order.
    std::string expose() const;

private:
    /// One labelled series of a family: its one metric, of the family's type.
    struct Child {
        std::vector<std::pair<std::string, std::string>> labels;
        std::variant<std::unique_ptr<Counter>, std::unique_ptr<Gauge>, std::unique_ptr<Histogram>> metric;
    };
    struct Family {
        std::string name;
        std::string help;
        Type type;
        std::deque<Child> children;
        std::function<void(Writer&)> collect;
    };
    Family& family(std::string_view name, std::string_view help, Type type);
    /// Adds a child of `type` family `name` holding a new `Metric(args...)`; the metric.
    template <class Metric, class... Args>
    Metric& add_child(std::string_view name, std::string_view help, Type type,
                      std::vector<std::pair<std::string, std::string>> labels, Args&&... args);

    mutable std::mutex mutex_;
    std::deque<Family> families_;
};

/// The content type of the text exposition format.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace common::metrics
