// The allocator orderhub and orderpos are linked with (ORDERHUB_TCMALLOC, docs/performance.md "The allocator:
// tcmalloc"): this binary is linked the same way. malloc is tcmalloc's, and keep_freed_memory, whose glibc settings
// tcmalloc's mallopt would take and ignore, says it set nothing.
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
}  // namespace

TEST_CASE("tcmalloc: the process allocates through tcmalloc, and glibc's settings are not claimed", "[allocator]") {
    const auto property = reinterpret_cast<Property>(::dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
    REQUIRE(property != nullptr);
    std::size_t before = 0;
    REQUIRE(property("generic.current_allocated_bytes", &before) == 1);
    // Blocks allocated on another thread, as the database workers' are, count in tcmalloc's own figures.
    constexpr std::size_t kBlock = 64 * 1024;
    constexpr std::size_t kBlocks = 64;
    std::size_t during = 0;
    std::thread([&] {
        std::vector<void*> blocks;
        for (std::size_t i = 0; i < kBlocks; ++i) {
            blocks.push_back(std::malloc(kBlock));
            std::memset(blocks.back(), 1, kBlock);
        }
        property("generic.current_allocated_bytes", &during);
        for (void* b : blocks) std::free(b);
    }).join();
    CHECK(during >= before + kBlock * kBlocks);

    CHECK_FALSE(common::app::keep_freed_memory(no_env));
}
