#include "common/metrics/metrics.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <variant>

namespace common::metrics {
namespace {

constexpr std::array<double, 14> kLatency = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};
constexpr std::array<double, 13> kSlowLatency = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 600};

const char* type_name(Type t) {
    switch (t) {
        case Type::counter: return "counter";
        case Type::gauge: return "gauge";
        case Type::histogram: return "histogram";
    }
    return "untyped";
}

/// The exposition format's escapes: backslash and line feed, and the double quote when `quote` (label values).
std::string escape(std::string_view v, bool quote) {
    std::string s;
    s.reserve(v.size());
    for (char c : v) {
        if (c == '\\')
            s += "\\\\";
        else if (c == '"' && quote)
            s += "\\\"";
        else if (c == '\n')
            s += "\\n";
        else
            s += c;
    }
    return s;
}

std::string escape_help(std::string_view v) { return escape(v, false); }

void write_child(Writer& w, std::string_view name, std::span<const Label> labels, const Counter& c) {
    w.sample(name, labels, static_cast<double>(c.value()));
}
void write_child(Writer& w, std::string_view name, std::span<const Label> labels, const Gauge& g) {
    w.sample(name, labels, g.value());
}
void write_child(Writer& w, std::string_view name, std::span<const Label> labels, const Histogram& h) {
    w.histogram(name, labels, h);
}

}  // namespace

std::span<const double> latency_buckets() { return kLatency; }
std::span<const double> slow_latency_buckets() { return kSlowLatency; }

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()), buckets_(new std::atomic<std::uint64_t>[bounds.size() + 1]) {
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
        if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
            throw std::invalid_argument("histogram bounds must be finite and strictly increasing");
    }
    for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) noexcept {
    // The first bound >= v: `le` is inclusive. NaN lands in +Inf.
    const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
    buckets_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
    Snapshot s;
    s.bounds = bounds_;
    s.cumulative.resize(bounds_.size() + 1);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
        total += buckets_[i].load(std::memory_order_relaxed);
        s.cumulative[i] = total;
    }
    // Derived from the buckets, so that _count always equals the +Inf bucket even while others observe.
    s.count = total;
    s.sum = sum_.load(std::memory_order_relaxed);
    return s;
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return {buf, r.ptr};
}

std::string escape_label_value(std::string_view v) { return escape(v, true); }

void Writer::family(std::string_view name, std::string_view help, Type type) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += escape_help(help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type_name(type);
    out_ += '\n';
}

void Writer::labels(std::span<const Label> labels, const Label* extra) {
    if (labels.empty() && extra == nullptr) return;
    out_ += '{';
    bool first = true;
    auto one = [&](const Label& l) {
        if (!first) out_ += ',';
        first = false;
        out_ += l.name;
        out_ += "=\"";
        out_ += escape_label_value(l.value);
        out_ += '"';
    };
    for (const auto& l : labels) one(l);
    if (extra != nullptr) one(*extra);
    out_ += '}';
}

void Writer::sample(std::string_view name, std::initializer_list<Label> l, double value) {
    sample(name, std::span<const Label>(l.begin(), l.size()), value);
}

void Writer::sample(std::string_view name, std::span<const Label> l, double value) {
    out_ += name;
    labels(l, nullptr);
    out_ += ' ';
    out_ += format_value(value);
    out_ += '\n';
}

void Writer::histogram(std::string_view name, std::span<const Label> l, const Histogram& h) {
    const auto s = h.snapshot();
    const std::string bucket = std::string(name) + "_bucket";
    for (std::size_t i = 0; i <= s.bounds.size(); ++i) {
        const std::string le = i < s.bounds.size() ? format_value(s.bounds[i]) : "+Inf";
        const Label extra{"le", le};
        out_ += bucket;
        labels(l, &extra);
        out_ += ' ';
        out_ += std::to_string(s.cumulative[i]);
        out_ += '\n';
    }
    sample(std::string(name) + "_sum", l, s.sum);
    sample(std::string(name) + "_count", l, static_cast<double>(s.count));
}

Registry::Family& Registry::family(std::string_view name, std::string_view help, Type type) {
    for (auto& f : families_)
        if (f.name == name) {
            if (f.type != type || f.collect) throw std::logic_error("metric family registered twice: " + f.name);
            return f;
        }
    families_.push_back(Family{std::string(name), std::string(help), type, {}, {}});
    return families_.back();
}

template <class Metric, class... Args>
Metric& Registry::add_child(std::string_view name, std::string_view help, Type type,
                            std::vector<std::pair<std::string, std::string>> labels, Args&&... args) {
    auto metric = std::make_unique<Metric>(std::forward<Args>(args)...);
    Metric& out = *metric;
    std::lock_guard lock(mutex_);
    family(name, help, type).children.push_back(Child{std::move(labels), std::move(metric)});
    return out;
}

Counter& Registry::counter(std::string_view name, std::string_view help,
                           std::vector<std::pair<std::string, std::string>> labels) {
    return add_child<Counter>(name, help, Type::counter, std::move(labels));
}

Gauge& Registry::gauge(std::string_view name, std::string_view help,
                       std::vector<std::pair<std::string, std::string>> labels) {
    return add_child<Gauge>(name, help, Type::gauge, std::move(labels));
}

Histogram& Registry::histogram(std::string_view name, std::string_view help, std::span<const double> bounds,
                               std::vector<std::pair<std::string, std::string>> labels) {
    return add_child<Histogram>(name, help, Type::histogram, std::move(labels), bounds);
}

void Registry::collector(std::string_view name, std::string_view help, Type type,
                         std::function<void(Writer&)> collect) {
    std::lock_guard lock(mutex_);
    for (const auto& f : families_)
        if (f.name == name) throw std::logic_error("metric family registered twice: " + f.name);
    families_.push_back(Family{std::string(name), std::string(help), type, {}, std::move(collect)});
}

std::string Registry::expose() const {
    std::lock_guard lock(mutex_);
    Writer w;
    std::vector<Label> labels;
    for (const auto& f : families_) {
        w.family(f.name, f.help, f.type);
        if (f.collect) {
            f.collect(w);
            continue;
        }
        for (const auto& c : f.children) {
            labels.clear();
            for (const auto& [k, v] : c.labels) labels.push_back({k, v});
            std::visit([&](const auto& metric) { write_child(w, f.name, labels, *metric); }, c.metric);
        }
    }
    return w.take();
}

}  // namespace common::metrics
