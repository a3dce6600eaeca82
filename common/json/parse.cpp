#include "common/json/parse.hpp"

#include <boost/json/array.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/string.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <system_error>
#include <utility>
#include <vector>

namespace common::json {
namespace {

namespace bj = boost::json;

// Keys quoted in error messages are cut to this many bytes so that a hostile key cannot bloat the answer.
constexpr std::size_t kMaxQuotedKeyBytes = 64;

// Values pending on the build stack of a typical webhook body, reserved at once to avoid regrowth.
constexpr std::size_t kInitialStackSize = 64;

// The document's arena starts at this many bytes per byte of input (a parsed webhook body takes about three
// times its text), within bounds; it grows by itself beyond that.
constexpr std::size_t kArenaPerInputByte = 4;
constexpr std::size_t kMinArena = 4096;
constexpr std::size_t kMaxFirstArena = 1 << 20;

// Builds a boost::json::value from basic_parser events, like boost::json::parser does, but refuses what
// Boost.JSON 1.81 accepts silently: duplicate keys (it keeps the last one) and out-of-range numbers (it
// yields +-inf for 1e400 and an inexact double for integers beyond uint64/int64).
//
// Values are kept on a plain vector; an object is assembled with object::emplace, whose `inserted` flag
// detects a duplicate in O(1) per key (the object hashes its keys once it is not small). Every value of the
// document is allocated from one monotonic arena (`sp_`), released at once with the document: a handful of
// heap allocations per request instead of one per string, array and object.
class StrictHandler {
public:
    // Names required by the basic_parser handler concept.
    // NOLINTBEGIN(readability-identifier-naming)
    static constexpr std::size_t max_object_size = bj::object::max_size();
    static constexpr std::size_t max_array_size = bj::array::max_size();
    static constexpr std::size_t max_key_size = bj::string::max_size();
    static constexpr std::size_t max_string_size = bj::string::max_size();
    // NOLINTEND(readability-identifier-naming)

    explicit StrictHandler(bj::storage_ptr sp) : sp_(std::move(sp)) { stack_.reserve(kInitialStackSize); }

    bool on_document_begin(bj::error_code&) { return true; }
    bool on_document_end(bj::error_code&) { return true; }
    bool on_array_begin(bj::error_code&) { return true; }
    bool on_object_begin(bj::error_code&) { return true; }

    bool on_array_end(std::size_t n, bj::error_code&) {
        bj::array array(sp_);
        array.reserve(n);
        const auto first = stack_.end() - static_cast<std::ptrdiff_t>(n);
        for (auto it = first; it != stack_.end(); ++it) {
            array.push_back(std::move(*it));
        }
        stack_.erase(first, stack_.end());
        stack_.emplace_back(std::move(array));
        return true;
    }

    bool on_object_end(std::size_t n, bj::error_code& ec) {
        bj::object object(n, sp_);
        const auto first = stack_.end() - static_cast<std::ptrdiff_t>(2 * n);
        for (auto it = first; it != stack_.end(); it += 2) {
            const bj::string& key = it->get_string();
            if (!object.emplace(key, std::move(it[1])).second) {
                const std::string_view shown(key.data(), std::min(key.size(), kMaxQuotedKeyBytes));
                return fail(ec, "duplicate object key \"" + std::string(shown) + "\"");
            }
        }
        stack_.erase(first, stack_.end());
        stack_.emplace_back(std::move(object));
        return true;
    }

    bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
        chars_.append(s.data(), s.size());
        return true;
    }

    bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
        push_chars(s);
        return true;
    }

    bool on_key_part(bj::string_view s, std::size_t n, bj::error_code& ec) { return on_string_part(s, n, ec); }
    bool on_key(bj::string_view s, std::size_t n, bj::error_code& ec) { return on_string(s, n, ec); }

    bool on_number_part(bj::string_view s, bj::error_code&) {
        number_.append(s.data(), s.size());
        return true;
    }

    bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
        number_.clear();
        stack_.emplace_back(i, sp_);
        return true;
    }

    bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
        number_.clear();
        stack_.emplace_back(u, sp_);
        return true;
    }

    bool on_double(double d, bj::string_view s, bj::error_code& ec) {
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
        stack_.emplace_back(d, sp_);
        return true;
    }

    bool on_bool(bool b, bj::error_code&) {
        stack_.emplace_back(b, sp_);
        return true;
    }

    bool on_null(bj::error_code&) {
        stack_.emplace_back(nullptr, sp_);
        return true;
    }

    // Comments are disabled in the parse options; these only satisfy the handler concept.
    bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
    bool on_comment(bj::string_view, bj::error_code&) { return true; }

    /// The reason of the last refusal made by this handler, empty when Boost.JSON itself refused.
    const std::string& reason() const { return reason_; }

    /// Takes the finished document; valid only after a successful complete parse.
    bj::value release() {
        bj::value result = std::move(stack_.back());
        stack_.clear();
        return result;
    }

private:
    void push_chars(bj::string_view last) {
        if (chars_.empty()) {
            stack_.emplace_back(bj::string(last, sp_));
            return;
        }
        chars_.append(last.data(), last.size());
        stack_.emplace_back(bj::string(chars_, sp_));
        chars_.clear();
    }

    bool fail(bj::error_code& ec, std::string reason) {
        reason_ = std::move(reason);
        ec = bj::error::input_error;
        return false;
    }

    bj::storage_ptr sp_;
    std::vector<bj::value> stack_;
    std::string chars_;   // pieces of a string or key split across events (escapes)
    std::string number_;  // pieces of a number split across events
    std::string reason_;
};

}  // namespace

ParseResult parse_strict(std::string_view text, const ParseLimits& limits) {
    bj::parse_options options;
    options.max_depth = limits.max_depth;
    options.allow_comments = false;
    options.allow_trailing_commas = false;
    options.allow_invalid_utf8 = false;

    ParseResult result;
    try {
        // The arena lives as long as the returned value (and anything that shares its storage).
        auto arena = bj::make_shared_resource<bj::monotonic_resource>(
            std::clamp(text.size() * kArenaPerInputByte, kMinArena, kMaxFirstArena));
        bj::basic_parser<StrictHandler> parser(options, std::move(arena));
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
    } catch (const std::exception& e) {
        // Allocation failures and Boost.JSON size limits: refuse the document, keep the process.
        result.value.reset();
        result.error = std::string("cannot parse: ") + e.what();
    }
    return result;
}

}  // namespace common::json
