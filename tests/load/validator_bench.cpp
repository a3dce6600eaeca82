// Microbenchmark of the webhook path before the database: strict JSON parsing and validation of the interface's
// example order_created (deploy/examples/order-created.json), the fast reader that does both without a document
// (read_plain_webhook), and what the order store derives from a validated
// order (payload hash and order document). Reports per-core throughput (items_per_second: one thread) and
// heap allocations per request, counted by the global operator new below (this binary only).
//   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DORDERHUB_BENCH=ON && cmake --build build-bench
//   build-bench/bin/validator_bench
#include <benchmark/benchmark.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>

#include "common/crypto/uuid.hpp"
#include "common/json/parse.hpp"
#include "hub/ingest/order_document.hpp"
#include "hub/ingest/plain_webhook.hpp"
#include "hub/ingest/validate.hpp"

namespace {

std::atomic<std::uint64_t> g_allocations{0};

std::string example_body() {
    std::ifstream in(ORDERHUB_SOURCE_DIR "/deploy/examples/order-created.json", std::ios::binary);
    if (!in) throw std::runtime_error("cannot read deploy/examples/order-created.json");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::string& body() {
    static const std::string b = example_body();
    return b;
}

/// Adds allocs_per_request: heap allocations during the timed loop divided by its iterations.
class AllocationCounter {
public:
    AllocationCounter() : start_(g_allocations.load(std::memory_order_relaxed)) {}
    void report(benchmark::State& state) const {
        const auto n = g_allocations.load(std::memory_order_relaxed) - start_;
        state.counters["allocs_per_request"] =
            benchmark::Counter(static_cast<double>(n) / static_cast<double>(state.iterations()));
        state.SetItemsProcessed(state.iterations());
        state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body().size()));
    }

private:
    std::uint64_t start_;
};

void bm_parse(benchmark::State& state) {
    AllocationCounter count;
    for (auto _ : state) {
        auto parsed = common::json::parse_strict(body());
        if (!parsed.value) state.SkipWithError("the example does not parse");
        benchmark::DoNotOptimize(parsed);
    }
    count.report(state);
}

void bm_validate(benchmark::State& state) {
    const auto parsed = common::json::parse_strict(body());
    AllocationCounter count;
    for (auto _ : state) {
        auto v = hub::ingest::validate_webhook(*parsed.value);
        if (!v.value) state.SkipWithError("the example does not validate");
        benchmark::DoNotOptimize(v);
    }
    count.report(state);
}

void bm_parse_and_validate(benchmark::State& state) {
    AllocationCounter count;
    for (auto _ : state) {
        auto parsed = common::json::parse_strict(body());
        auto v = hub::ingest::validate_webhook(*parsed.value);
        if (!v.value) state.SkipWithError("the example does not validate");
        benchmark::DoNotOptimize(v);
    }
    count.report(state);
}

// The ingest path's fast reader since 2026-12-06: the same body read straight into its order, no document.
void bm_read_plain(benchmark::State& state) {
    AllocationCounter count;
    for (auto _ : state) {
        hub::ingest::Validated v;
        if (!hub::ingest::read_plain_webhook(body(), v)) state.SkipWithError("the example is not read as plain");
        benchmark::DoNotOptimize(v);
    }
    count.report(state);
}

void bm_store_inputs(benchmark::State& state) {
    const auto parsed = common::json::parse_strict(body());
    const auto v = hub::ingest::validate_webhook(*parsed.value);
    const auto& created = std::get<hub::ingest::OrderCreated>(v.value->payload);
    AllocationCounter count;
    for (auto _ : state) {
        auto hash = hub::ingest::payload_hash(v.value->envelope, created);
        auto doc = boost::json::serialize(hub::ingest::order_document(v.value->envelope, created));
        benchmark::DoNotOptimize(hash);
        benchmark::DoNotOptimize(doc);
    }
    count.report(state);
}

// What the ingest path builds per order since 2026-11-26: both forms from one document in one arena.
void bm_order_forms(benchmark::State& state) {
    const auto parsed = common::json::parse_strict(body());
    const auto v = hub::ingest::validate_webhook(*parsed.value);
    const auto& created = std::get<hub::ingest::OrderCreated>(v.value->payload);
    AllocationCounter count;
    for (auto _ : state) {
        auto forms = hub::ingest::order_forms(v.value->envelope, created);
        benchmark::DoNotOptimize(forms);
    }
    count.report(state);
}

void bm_uuid_v7(benchmark::State& state) {
    AllocationCounter count;
    for (auto _ : state) {
        auto id = common::crypto::uuid_v7();
        benchmark::DoNotOptimize(id);
    }
    count.report(state);
}

}  // namespace

BENCHMARK(bm_parse);
BENCHMARK(bm_validate);
BENCHMARK(bm_parse_and_validate);
BENCHMARK(bm_read_plain);
BENCHMARK(bm_store_inputs);
BENCHMARK(bm_order_forms);
BENCHMARK(bm_uuid_v7);
BENCHMARK_MAIN();

// Every allocation of this binary goes through these: counted, then served by malloc.
void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    const auto align = static_cast<std::size_t>(a);
    if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return ::operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
