#pragma once

#include <boost/json/serializer.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace common::json {

/// Appends JSON text to a string piece by piece, for texts whose shape the caller knows (an order's document, a
/// batch entry, a log line): the text boost::json::serialize() gives for the same values, without building a
/// boost::json::value tree first. Strings and arbitrary values go through Boost.JSON's serializer, so escaping and
/// number forms are Boost.JSON's own; the caller writes the punctuation and keys it knows with raw().
class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}

    /// Appends `text` as it is: punctuation, or a quoted key the caller knows needs no escaping.
    void raw(std::string_view text) { out_.append(text); }

    /// Appends `s` as a JSON string (quoted and escaped).
    void text(std::string_view s) {
        // Most strings are printable ASCII without a quote or a backslash, which JSON writes as they are; anything
        // else (control characters, quotes, backslashes, bytes above 0x7E) goes through Boost.JSON's serializer.
        if (plain(s)) {
            out_ += '"';
            out_.append(s);
            out_ += '"';
            return;
        }
        // At most six characters per byte (\u00XX) and the quotes: one read writes it all.
        const std::size_t at = out_.size();
        const std::size_t room = s.size() * 6 + 2;
        out_.resize(at + room);
        serializer_.reset(boost::json::string_view(s.data(), s.size()));
        out_.resize(at + serializer_.read(out_.data() + at, room).size());
        finish();
    }

    /// Appends `separator` as it is (a comma or a brace), `key` as a JSON string and a colon: a member's key whose
    /// text is known only at run time (a log line's), in one append while it is short and plain.
    void key(std::string_view separator, std::string_view key) {
        if (separator.size() + key.size() + 3 <= kShortMember && plain(key)) {
            std::array<char, kShortMember> text{};
            char* p = std::copy(separator.begin(), separator.end(), text.data());
            *p++ = '"';
            p = std::copy(key.begin(), key.end(), p);
            *p++ = '"';
            *p++ = ':';
            out_.append(text.data(), static_cast<std::size_t>(p - text.data()));
            return;
        }
        raw(separator);
        text(key);
        raw(":");
    }

    /// Appends `prefix` as it is (a comma or brace, a quoted key and a colon), then `s` as a JSON string.
    void text_member(std::string_view prefix, std::string_view s) {
        raw(prefix);
        text(s);
    }

    /// Appends any JSON value as boost::json::serialize() writes it.
    void value(const boost::json::value& v) {
        serializer_.reset(&v);
        finish();
    }

    void number(std::int64_t n) { integer(n); }
    void number(std::uint64_t n) { integer(n); }
    void boolean(bool b) { raw(b ? "true" : "false"); }
    void null() { raw("null"); }

    /// Whether JSON writes every byte of `s` as it is: printable ASCII (0x20 to 0x7E) but the quote and the
    /// backslash. Eight bytes at a time, each test a borrow into a byte's top bit (Hacker's Delight 6-1); the tail
    /// as the last eight bytes (read again in part), or a short string padded with a plain byte.
    static bool plain(std::string_view s) {
        constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
        constexpr std::uint64_t kTops = 0x8080808080808080ULL;
        const auto below = [](std::uint64_t x, std::uint64_t n) { return (x - kOnes * n) & ~x & kTops; };
        const auto zero = [&below](std::uint64_t x) { return below(x, 1); };
        const auto plain8 = [&](std::uint64_t x) {
            return (below(x, 0x20) | (x & kTops) | zero(x ^ (kOnes * 0x7F)) | zero(x ^ (kOnes * '"')) |
                    zero(x ^ (kOnes * '\\'))) == 0;
        };
        std::uint64_t x = kOnes * 'a';
        if (s.size() < 8) {
            if (!s.empty()) std::memcpy(&x, s.data(), s.size());
            return plain8(x);
        }
        for (std::size_t i = 0; i + 8 <= s.size(); i += 8) {
            std::memcpy(&x, s.data() + i, 8);
            if (!plain8(x)) return false;
        }
        if (s.size() % 8 == 0) return true;
        std::memcpy(&x, s.data() + s.size() - 8, 8);
        return plain8(x);
    }

private:
    static constexpr std::size_t kShortMember = 64;

    template <class Integer>
    void integer(Integer n) {
        char digits[24];
        out_.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
    }

    void finish() {
        while (!serializer_.done()) {
            char more[256];
            out_.append(serializer_.read(more));
        }
    }

    std::string& out_;
    boost::json::serializer serializer_;
};

}  // namespace common::json
