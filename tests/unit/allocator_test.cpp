// common::app::keep_freed_memory: what a thread frees stays with the allocator for that thread's next use, instead
// of going back to the kernel after every group commit (docs/performance.md, "Memory handed back after every batch").
#include <malloc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/app/service.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define ORDERHUB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORDERHUB_TEST_ASAN 1
#endif
#endif

namespace {

std::optional<std::string> no_env(const std::string&) { return std::nullopt; }

}  // namespace

TEST_CASE("allocator: an operator's glibc.malloc tunables are left as they are", "[allocator]") {
    const auto env = [](const std::string& name) -> std::optional<std::string> {
        if (name == "GLIBC_TUNABLES") return "glibc.malloc.trim_threshold=0";
        return std::nullopt;
    };
    CHECK_FALSE(common::app::keep_freed_memory(env));
}

TEST_CASE("allocator: a thread's freed batch stays with the allocator for its next batch", "[allocator]") {
    const bool kept = common::app::keep_freed_memory(no_env);
#if defined(ORDERHUB_TEST_ASAN)
    // The sanitizer's allocator has no such settings and says so.
    CHECK_FALSE(kept);
#else
    REQUIRE(kept);
    // A thread of its own, as a database worker is: about a batch's worth in blocks like a batch's strings,
    // allocated, then freed. With glibc's defaults about a third of it went back to the kernel at once (and came
    // back through page faults with the next batch).
    constexpr std::size_t kBlock = 16 * 1024;
    constexpr std::size_t kBlocks = 64;
    std::size_t kept_free = 0;
    std::thread([&] {
        const std::size_t before = mallinfo2().fordblks;
        std::vector<void*> blocks;
        blocks.reserve(kBlocks);
        for (std::size_t i = 0; i < kBlocks; ++i) blocks.push_back(std::malloc(kBlock));
        for (void* b : blocks) std::free(b);
        const std::size_t after = mallinfo2().fordblks;
        kept_free = after > before ? after - before : 0;
    }).join();
    CHECK(kept_free >= kBlock * kBlocks);
#endif
}
