#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fuzz {

/// Aborts with `what` on stderr when an invariant does not hold: libFuzzer then keeps the input as a crash.
inline void require(bool holds, std::string_view what) {
    if (!holds) {
        std::fprintf(stderr, "fuzz invariant violated: %.*s\n", static_cast<int>(what.size()), what.data());
        std::abort();
    }
}

/// True when `text` has `min`..`max` bytes and no NUL (PostgreSQL text cannot hold U+0000).
inline bool storable(std::string_view text, std::size_t min, std::size_t max) {
    return text.size() >= min && text.size() <= max && text.find('\0') == std::string_view::npos;
}

}  // namespace fuzz
