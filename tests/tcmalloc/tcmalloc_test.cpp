// The allocator orderhub and orderpos are linked with (ORDERHUB_TCMALLOC, docs/performance.md "The allocator:
// tcmalloc"): this binary is linked the same way. malloc is tcmalloc's, and keep_freed_memory, whose glibc settings
// tcmalloc's mallopt would take and ignore, says it set nothing; bound_thread_caches bounds its thread caches.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/app/service.hpp"

namespace {
std::optional<std::string> no_env(const std::string&) { return std::nullopt; }

using Property = int (*)(const char*, std::size_t*);

/// One of tcmalloc's numeric properties, read through its C interface (REQUIREs that this is tcmalloc).
std::size_t numeric_property(const char* name) {
    const auto property = reinterpret_cast<Property>(::dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
    std::size_t value = 0;
    REQUIRE(property != nullptr);
    REQUIRE(property(name, &value) == 1);
    return value;
}

std::size_t thread_cache_bound() { return numeric_property("tcmalloc.max_total_thread_cache_bytes"); }
}  // namespace

TEST_CASE("tcmalloc: the process allocates through tcmalloc, and glibc's settings are not claimed", "[allocator]") {
    const std::size_t before = numeric_property("generic.current_allocated_bytes");
    // Blocks allocated on another thread and freed on this one, as a job's are (a network thread makes them, the
    // pipe's thread frees them), count in tcmalloc's own figures.
    constexpr std::size_t kBlock = 64 * 1024;
    constexpr std::size_t kBlocks = 64;
    std::vector<void*> blocks;
    std::thread([&] {
        for (std::size_t i = 0; i < kBlocks; ++i) {
            blocks.push_back(std::malloc(kBlock));
            std::memset(blocks.back(), 1, kBlock);
        }
    }).join();
    const std::size_t during = numeric_property("generic.current_allocated_bytes");
    for (void* b : blocks) std::free(b);
    CHECK(during >= before + kBlock * kBlocks);

    CHECK_FALSE(common::app::keep_freed_memory(no_env));
}

TEST_CASE("tcmalloc: the threads' caches are bounded, unless the operator chose their bound", "[allocator]") {
    // The operator's variable, read by tcmalloc itself at start: left as it is.
    const auto operator_env = [](const std::string& name) -> std::optional<std::string> {
        if (name == "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES") return "67108864";
        return std::nullopt;
    };
    const std::size_t before = thread_cache_bound();
    // tcmalloc's default (32 MB): were it the bound already, the last check could not fail.
    REQUIRE(before != common::app::kThreadCacheBytes);
    CHECK_FALSE(common::app::bound_thread_caches(operator_env));
    CHECK(thread_cache_bound() == before);

    CHECK(common::app::bound_thread_caches(no_env));
    CHECK(thread_cache_bound() == common::app::kThreadCacheBytes);
}
