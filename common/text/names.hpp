#pragma once

// The names of an enum's values at the text edge (SQL, JSON, logs, metric labels): one array per enum, its names in
// the order the values are declared (the values 0, 1, 2, ...), the one place where a value becomes a word and a
// word a value.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace common::text {

/// The name of `value` in `names`, or "" when the array has none.
template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<std::string_view, N>& names, E value) {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : std::string_view();
}

/// The value of `E` that `name` names in `names`, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> value_named(const std::array<std::string_view, N>& names, std::string_view name) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == name) return static_cast<E>(i);
    return std::nullopt;
}

}  // namespace common::text
