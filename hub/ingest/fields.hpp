#pragma once

// The field readers of webhook validation (hub/ingest/validate.cpp): each reads one field of a JSON object, checks
// it against its rule and reports a problem at the field's JSON pointer when it does not pass. Internal to the
// validator; the rules in words are in hub/ingest/validate.hpp.

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hub/ingest/validate.hpp"

namespace hub::ingest::fields {

namespace bj = boost::json;

// Collects problems; a path is built only when a problem is reported, so valid bodies pay nothing for it.
class Problems {
public:
    /// Records `message` at `parent` + "/" + `key` (`key` empty: at `parent` itself).
    void add(std::string_view parent, std::string_view key, std::string message) {
        if (errors_.size() > kMaxReportedErrors) {
            return;
        }
        if (errors_.size() == kMaxReportedErrors) {
            errors_.push_back(
                {"", "too many errors; only the first " + std::to_string(kMaxReportedErrors) + " are listed"});
            return;
        }
        std::string path;
        path.reserve(parent.size() + 1 + key.size());
        path.append(parent);
        if (!key.empty()) {
            path.push_back('/');
            path.append(key);
        }
        errors_.push_back({std::move(path), std::move(message)});
    }

    bool empty() const { return errors_.empty(); }
    std::vector<FieldError> take() { return std::move(errors_); }

private:
    std::vector<FieldError> errors_;
};

// Where a field sits: the JSON pointer of its object and the problem sink.
struct Scope {
    Problems& problems;
    std::string_view parent;

    void add(std::string_view key, std::string message) const { problems.add(parent, key, std::move(message)); }
};

/// An object's members by key, each search starting after the member found last: a body lists its keys in the
/// order the validator reads them (the interface's), so a lookup mostly compares one key where
/// boost::json::object's own (a linear scan up to 18 members) compares half of them. Keys are unique (the parser
/// refuses a repeated one), so any order finds the member if_contains() finds. An object of more than kScanned
/// members (no body of this interface) is searched by its own hash index. Views `object`, which outlives it.
class Members {
public:
    static constexpr std::size_t kScanned = 32;

    explicit Members(const bj::object& object) : object_(object) {}

    const bj::value* find(std::string_view key) const {
        const std::size_t n = object_.size();
        if (n > kScanned) return object_.if_contains(key);
        const bj::key_value_pair* const members = object_.begin();
        std::size_t i = next_;
        for (std::size_t k = 0; k < n; ++k, ++i) {
            if (i == n) i = 0;
            if (members[i].key() == key) {
                next_ = i + 1;
                return &members[i].value();
            }
        }
        return nullptr;
    }

private:
    const bj::object& object_;
    mutable std::size_t next_ = 0;
};

struct TextRule {
    std::size_t min_bytes;
    std::size_t max_bytes;
};

inline constexpr TextRule kIdRule{1, kMaxIdBytes};
inline constexpr TextRule kPaymentMethodRule{0, kMaxPaymentMethodBytes};
inline constexpr TextRule kNoteRule{0, kMaxNoteBytes};
inline constexpr TextRule kAddressRule{0, kMaxAddressBytes};
inline constexpr TextRule kNameRule{0, kMaxNameBytes};
inline constexpr TextRule kCarFieldRule{0, kMaxCarFieldBytes};

/// Whether a string's `text` passes `rule` (check_text() names what it does not pass).
inline bool text_fits(std::string_view text, TextRule rule) {
    return text.size() >= rule.min_bytes && text.size() <= rule.max_bytes && text.find('\0') == std::string_view::npos;
}

// The POS order carries line totals (product.md section 6): price × quantity per item, and option price × option
// quantity × item quantity per modifier. Each is money, so it has the bound of an amount, in thousandths.
inline constexpr Money kMaxLineTotal = kMaxMoneyUnits * 1000;

/// True when `amount` × `quantity` passes kMaxLineTotal, computed without overflow (`amount` is below 10^16).
inline bool line_too_large(Money amount, std::int64_t quantity) {
    return quantity > 0 && amount > kMaxLineTotal / quantity;
}

/// '#' and 3 or 6 hex digits: "#fa0", "#1A2B3C".
bool is_color(std::string_view s);

/// '+' and 6 to 15 digits (E.164 style).
bool is_phone(std::string_view s);

template <std::size_t N>
bool is_one_of(std::string_view s, const std::array<std::string_view, N>& allowed) {
    for (const std::string_view candidate : allowed) {
        if (s == candidate) {
            return true;
        }
    }
    return false;
}

template <std::size_t N>
std::string one_of_message(const std::array<std::string_view, N>& allowed) {
    std::string message = "must be one of ";
    for (std::size_t i = 0; i < N; ++i) {
        message.append(i == 0 ? "" : ", ").append(allowed[i]);
    }
    return message;
}

/// Checks a present value as text under `rule`; reports and returns nullopt when it does not pass. The text views
/// the document, for the caller to copy where it stays.
std::optional<std::string_view> check_text(const bj::value& v, const Scope& scope, std::string_view key, TextRule rule,
                                           std::string_view type_message = "must be a string");

/// A required text field under `rule`.
std::optional<std::string_view> required_text(const Members& o, const Scope& scope, std::string_view key,
                                              TextRule rule);

/// Absent or null: nullopt; a string: checked under `rule` (a problem is reported, nullopt).
std::optional<std::string_view> optional_text(const Members& o, const Scope& scope, std::string_view key,
                                              TextRule rule);

/// A required string field of a fixed form: its text when `fits(text)`, else nullopt and a problem (absent, not a
/// string, or `rule()`, the form in words).
template <class Fits, class Rule>
std::optional<std::string_view> required_form(const Members& o, const Scope& scope, std::string_view key, Fits fits,
                                              Rule rule) {
    const bj::value* v = o.find(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    const bj::string* s = v->if_string();
    if (s == nullptr) {
        scope.add(key, "must be a string");
        return std::nullopt;
    }
    const std::string_view text(s->data(), s->size());
    if (!fits(text)) {
        scope.add(key, std::string(rule()));
        return std::nullopt;
    }
    return text;
}

template <std::size_t N>
std::optional<std::string_view> required_enum(const Members& o, const Scope& scope, std::string_view key,
                                              const std::array<std::string_view, N>& allowed) {
    return required_form(
        o, scope, key, [&allowed](std::string_view text) { return is_one_of(text, allowed); },
        [&allowed] { return one_of_message(allowed); });
}

/// A required integer from 1 to kMaxQuantity.
std::optional<std::int64_t> required_quantity(const Members& o, const Scope& scope, std::string_view key);

/// A required amount of money (hub/ingest/money.hpp).
std::optional<Money> required_money(const Members& o, const Scope& scope, std::string_view key);

/// A present value as a timestamp (hub/ingest/timestamp.hpp).
std::optional<Timestamp> check_timestamp(const bj::value& v, const Scope& scope, std::string_view key,
                                         std::string_view type_message = "must be a string");

}  // namespace hub::ingest::fields
