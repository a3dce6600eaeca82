#include "common/json/parse.hpp"

#include <boost/json/array.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value_stack.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace common::json {

bool exact_decimal_fraction(std::string_view s) {
    constexpr std::size_t kMaxExactDigits = 15;
    std::size_t digits = 0;
    bool point = false;
    for (const char c : s) {
        if (c >= '0' && c <= '9')
            ++digits;
        else if (c == '.')
            point = true;
        else if (c != '-')
            return false;  // an exponent
    }
    return point && digits <= kMaxExactDigits;
}

namespace {

namespace bj = boost::json;

// Keys quoted in error messages are cut to this many bytes so that a hostile key cannot bloat the answer.
constexpr std::size_t kMaxQuotedKeyBytes = 64;

// The document's arena starts at this many bytes per byte of input (a parsed webhook body takes about three
// times its text), within bounds; it grows by itself beyond that.
constexpr std::size_t kArenaPerInputByte = 4;
constexpr std::size_t kMinArena = 4096;
constexpr std::size_t kMaxFirstArena = 1 << 20;

// Builds a boost::json::value from basic_parser events as boost::json::parser does (its value_stack), but
// refuses what Boost.JSON 1.81 accepts silently: duplicate keys (it keeps the last one) and out-of-range numbers
// (it yields +-inf for 1e400 and an inexact double for integers beyond uint64/int64).
//
// Duplicate keys are found without looking at them: Boost.JSON's object keeps the last of repeated keys, so a
// document whose objects hold fewer keys in all than the parser gave them has a repeated key, and one whose objects
// hold them all has none (keys_given(), keys_held()). Only then is the document parsed again with `name_duplicates`,
// which keeps the keys of every object still open, as text, beside the value stack, and compares them when the
// object ends (pairwise while few, sorted when many, so a hostile object of many keys costs n log n), to refuse it
// there, naming the first repeated key, as Boost.JSON would not. Every value of the document is allocated from one
// monotonic arena, released at once with the document; the stack itself starts in a buffer inside the handler.
class StrictHandler {
public:
    // Names required by the basic_parser handler concept.
    // NOLINTBEGIN(readability-identifier-naming)
    static constexpr std::size_t max_object_size = bj::object::max_size();
    static constexpr std::size_t max_array_size = bj::array::max_size();
    static constexpr std::size_t max_key_size = bj::string::max_size();
    static constexpr std::size_t max_string_size = bj::string::max_size();
    // NOLINTEND(readability-identifier-naming)

    StrictHandler(bj::storage_ptr sp, bool name_duplicates)
        : stack_({}, scratch_.data(), scratch_.size()), name_duplicates_(name_duplicates) {
        stack_.reset(std::move(sp));
        if (!name_duplicates_) return;
        keys_.reserve(kInitialKeys);
        objects_.reserve(kInitialDepth);
        key_text_.reserve(kInitialKeyText);
    }

    bool on_document_begin(bj::error_code&) { return true; }
    bool on_document_end(bj::error_code&) { return true; }
    bool on_array_begin(bj::error_code&) { return true; }

    bool on_object_begin(bj::error_code&) {
        if (name_duplicates_) objects_.push_back(keys_.size());
        return true;
    }

    bool on_array_end(std::size_t n, bj::error_code&) {
        stack_.push_array(n);
        return true;
    }

    bool on_object_end(std::size_t n, bj::error_code& ec) {
        keys_given_ += n;
        if (!name_duplicates_) {
            stack_.push_object(n);
            return true;
        }
        const std::size_t first = objects_.back();
        objects_.pop_back();
        if (const auto repeated = first_repeated(first, n)) {
            const std::string_view key = key_at(*repeated);
            return fail(ec, "duplicate object key \"" + std::string(key.substr(0, kMaxQuotedKeyBytes)) + "\"");
        }
        if (n > 0) key_text_.resize(keys_[first].offset);
        keys_.resize(first);
        stack_.push_object(n);
        return true;
    }

    bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
        stack_.push_chars(s);
        return true;
    }

    bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
        stack_.push_string(s);
        return true;
    }

    bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
        if (!name_duplicates_) {
            stack_.push_chars(s);
            return true;
        }
        if (!in_key_) {
            in_key_ = true;
            keys_.push_back({key_text_.size(), 0, 0});
        }
        key_text_.append(s.data(), s.size());
        stack_.push_chars(s);
        return true;
    }

    bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
        if (!name_duplicates_) {
            stack_.push_key(s);
            return true;
        }
        if (!in_key_) keys_.push_back({key_text_.size(), 0, 0});
        in_key_ = false;
        key_text_.append(s.data(), s.size());
        Key& key = keys_.back();
        key.size = key_text_.size() - key.offset;
        key.hash = hash(key_at(keys_.size() - 1));
        stack_.push_key(s);
        return true;
    }

    bool on_number_part(bj::string_view s, bj::error_code&) {
        number_.append(s.data(), s.size());
        return true;
    }

    bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
        number_.clear();
        stack_.push_int64(i);
        return true;
    }

    bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
        number_.clear();
        stack_.push_uint64(u);
        return true;
    }

    bool on_double(double d, bj::string_view s, bj::error_code& ec) {
        if (number_.empty() && exact_decimal_fraction(std::string_view(s.data(), s.size()))) {
            stack_.push_double(d);
            return true;
        }
        number_.append(s.data(), s.size());
        // Boost.JSON reports an integer literal that fits neither int64 nor uint64 as a double.
        const bool is_integer_literal = number_.find_first_of(".eE") == std::string::npos;
        // Boost.JSON 1.81 has no precise mode: some literals (large exponents, near-subnormals) come out one unit
        // in the last place off, so one number spelled two ways ("1614e186", "1.614e189") would give two doubles.
        // std::from_chars rounds correctly; on a range error Boost.JSON's value stays (0 for 1e-400, inf for 1e400).
        double precise = 0;
        const char* last = number_.data() + number_.size();
        const auto [end, error] = std::from_chars(number_.data(), last, precise);
        if (error == std::errc() && end == last) {
            d = precise;
        }
        number_.clear();
        if (is_integer_literal) {
            return fail(ec, "integer out of range");
        }
        if (!std::isfinite(d)) {
            return fail(ec, "number out of range");
        }
        stack_.push_double(d);
        return true;
    }

    bool on_bool(bool b, bj::error_code&) {
        stack_.push_bool(b);
        return true;
    }

    bool on_null(bj::error_code&) {
        stack_.push_null();
        return true;
    }

    // Comments are disabled in the parse options; these only satisfy the handler concept.
    bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
    bool on_comment(bj::string_view, bj::error_code&) { return true; }

    /// The reason of the last refusal made by this handler, empty when Boost.JSON itself refused.
    const std::string& reason() const { return reason_; }

    /// Takes the finished document; valid only after a successful complete parse.
    bj::value release() { return stack_.release(); }

    /// The keys the parser gave the document's objects, repeated ones included.
    std::size_t keys_given() const { return keys_given_; }

private:
    // Keys of the objects still open, in document order; a pairwise comparison is cheaper up to this many.
    static constexpr std::size_t kPairwiseKeys = 16;
    static constexpr std::size_t kInitialKeys = 64;
    static constexpr std::size_t kInitialKeyText = 1024;
    static constexpr std::size_t kInitialDepth = 16;
    // The value stack's first buffer (boost::json::parser keeps one the same way); it grows on the heap.
    static constexpr std::size_t kScratchBytes = 2048;

    struct Key {
        std::size_t offset;
        std::size_t size;
        std::uint32_t hash;  // compared first: two keys' texts are compared only when their hashes are equal
    };

    std::string_view key_at(std::size_t index) const {
        return {key_text_.data() + keys_[index].offset, keys_[index].size};
    }

    bool same_key(std::size_t a, std::size_t b) const {
        return keys_[a].hash == keys_[b].hash && key_at(a) == key_at(b);
    }

    /// FNV-1a: a handful of instructions per byte of short keys.
    static std::uint32_t hash(std::string_view text) {
        std::uint32_t h = 2166136261U;
        for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 16777619U;
        return h;
    }

    /// The index of the first key among keys_[first, first + n) that repeats an earlier one, in document order.
    std::optional<std::size_t> first_repeated(std::size_t first, std::size_t n) const {
        if (n <= kPairwiseKeys) {
            for (std::size_t j = first + 1; j < first + n; ++j)
                for (std::size_t i = first; i < j; ++i)
                    if (same_key(i, j)) return j;
            return std::nullopt;
        }
        std::vector<std::size_t> order(n);
        for (std::size_t k = 0; k < n; ++k) order[k] = first + k;
        std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
            const auto ka = key_at(a);
            const auto kb = key_at(b);
            return ka != kb ? ka < kb : a < b;
        });
        std::optional<std::size_t> repeated;
        for (std::size_t k = 1; k < n; ++k)
            if (same_key(order[k], order[k - 1]) && (!repeated || order[k] < *repeated)) repeated = order[k];
        return repeated;
    }

    bool fail(bj::error_code& ec, std::string reason) {
        reason_ = std::move(reason);
        ec = bj::error::input_error;
        return false;
    }

    alignas(16) std::array<unsigned char, kScratchBytes> scratch_{};
    bj::value_stack stack_;
    bool name_duplicates_;
    std::size_t keys_given_ = 0;
    std::vector<Key> keys_;             // the keys of the open objects, innermost last
    std::string key_text_;              // their text, one after another
    std::vector<std::size_t> objects_;  // where each open object's keys begin in keys_
    bool in_key_ = false;               // a key arrives in pieces (escapes, or split input)
    std::string number_;                // pieces of a number split across events
    std::string reason_;
};

/// The keys the objects of `v` hold, nested ones included. Recursion is bounded by the parse's max_depth; it goes
/// into objects and arrays only (most values of a document are neither: a call each cost more than the count).
std::size_t keys_held(const bj::value& v) {
    std::size_t n = 0;
    if (const auto* object = v.if_object()) {
        n = object->size();
        for (const auto& member : *object)
            if (member.value().is_structured()) n += keys_held(member.value());
    } else if (const auto* array = v.if_array()) {
        for (const auto& element : *array)
            if (element.is_structured()) n += keys_held(element);
    }
    return n;
}

// parse_strict with its values allocated from `storage`.
ParseResult parse_into(std::string_view text, const ParseLimits& limits, const bj::storage_ptr& storage,
                       bool name_duplicates = false) {
    bj::parse_options options;
    options.max_depth = limits.max_depth;
    options.allow_comments = false;
    options.allow_trailing_commas = false;
    options.allow_invalid_utf8 = false;

    ParseResult result;
    try {
        bj::basic_parser<StrictHandler> parser(options, storage, name_duplicates);
        bj::error_code ec;
        const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
        if (ec) {
            const std::string& reason = parser.handler().reason();
            std::string what = reason;
            if (what.empty()) {
                // Boost.JSON reports malformed UTF-8 as a plain syntax error.
                what = ec == bj::error::syntax ? "syntax error or invalid UTF-8" : ec.message();
            }
            result.error = what + " at byte " + std::to_string(consumed);
            return result;
        }
        if (consumed < text.size()) {
            result.error = "trailing data at byte " + std::to_string(consumed);
            return result;
        }
        result.value = parser.handler().release();
        if (!name_duplicates && keys_held(*result.value) != parser.handler().keys_given()) {
            // A repeated key: parsed again to refuse the document where it repeats, naming it.
            result.value.reset();
            result = parse_into(text, limits, storage, true);
            if (result.value) {
                result.value.reset();  // not reached: the objects held fewer keys than they were given
                result.error = "duplicate object key";
            }
        }
    } catch (const std::exception& e) {
        // Allocation failures and Boost.JSON size limits: refuse the document, keep the process.
        result.value.reset();
        result.error = std::string("cannot parse: ") + e.what();
    }
    return result;
}

}  // namespace

ParseResult parse_strict(std::string_view text, const ParseLimits& limits) {
    // The arena lives as long as the returned value (and anything that shares its storage).
    return parse_into(text, limits,
                      bj::make_shared_resource<bj::monotonic_resource>(
                          std::clamp(text.size() * kArenaPerInputByte, kMinArena, kMaxFirstArena)));
}

ParseResult parse_strict(std::string_view text, bj::monotonic_resource& arena, const ParseLimits& limits) {
    return parse_into(text, limits, bj::storage_ptr(&arena));
}

}  // namespace common::json
