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
    // A thread of its own, as a database worker is: 8 MB in blocks like a batch's strings (below glibc's default
    // mmap threshold, so that they come from the thread's heap either way), allocated, then freed. With glibc's
    // defaults the heap is trimmed as soon as its free top passes 128 KB: the memory goes back to the kernel, and
    // the next batch takes it back through page faults.
    constexpr std::size_t kBlock = 64 * 1024;
    constexpr std::size_t kBlocks = 128;
    std::size_t before = 0, allocated = 0, freed = 0;
    std::thread([&] {
        std::vector<void*> blocks;
        blocks.reserve(kBlocks);
        before = mallinfo2().arena;
        for (std::size_t i = 0; i < kBlocks; ++i) blocks.push_back(std::malloc(kBlock));
        allocated = mallinfo2().arena;
        for (void* b : blocks) std::free(b);
        freed = mallinfo2().arena;
    }).join();
    REQUIRE(allocated > before);  // the heap grew for them (else the check below could not fail)
    CHECK(freed == allocated);    // and it kept what they freed
#endif
}

TEST_CASE("allocator: glibc's malloc has no thread caches to bound", "[allocator]") {
    // bound_thread_caches is for tcmalloc (tests/tcmalloc/ checks it there); this binary uses glibc's or ASan's.
    CHECK_FALSE(common::app::bound_thread_caches(no_env));
}
