#pragma once

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace common::json {

/// Bounds applied by parse_strict; the body size itself is bounded earlier, by the HTTP layer.
struct ParseLimits {
    std::size_t max_depth = 64;  ///< nesting of arrays and objects; 64 levels pass, 65 are refused
};

/// Outcome of parse_strict: `value` on success, otherwise a short human-readable `error`.
struct ParseResult {
    std::optional<boost::json::value> value;
    std::string error;
};

/// Parses `text` strictly: rejects syntax errors, invalid UTF-8 and lone UTF-16 surrogate escapes, nesting
/// deeper than max_depth, duplicate object keys, numbers that overflow a double (1e400), integer literals
/// beyond int64/uint64 (which Boost.JSON would silently turn into an inexact double), trailing data, comments
/// and trailing commas. Any top-level JSON value is accepted. Doubles are correctly rounded, so one number spelled
/// two ways ("1614e186", "1.614e189") gives one double. Thread-safe; allocates only the result,
/// from one monotonic arena that lives as long as the value (and any value sharing its storage).
ParseResult parse_strict(std::string_view text, const ParseLimits& limits = {});

/// As above, but the document's values are allocated from `arena`, which must outlive the result: for a document
/// read within one scope (a webhook's body, parsed then validated). The values then share a plain pointer to the
/// arena instead of a counted one, and the document is released with the arena at once, its values neither visited
/// nor freed one by one.
ParseResult parse_strict(std::string_view text, boost::json::monotonic_resource& arena, const ParseLimits& limits = {});

/// Whether Boost.JSON's double for the whole number literal `s` is already correctly rounded: a fraction of at most
/// 15 digits and no exponent is m / 10^f with m < 10^15 < 2^53 and f <= 15, both exact as doubles, which Boost.JSON
/// computes as one division (detail::dec_to_float), rounded once (Clinger's fast path). Most amounts of an order are
/// such literals; parse_strict reads the others again through std::from_chars.
bool exact_decimal_fraction(std::string_view s);

}  // namespace common::json
