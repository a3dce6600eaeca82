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

#include "common/text/string_cursor.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace common::json {

/// Appends JSON text to a string piece by piece, for texts whose shape the caller knows (an order's document, a
/// batch entry, a log line): the text boost::json::serialize() gives for the same values, without building a
/// boost::json::value tree first. Strings and arbitrary values go through Boost.JSON's serializer, so escaping and
/// number forms are Boost.JSON's own; the caller writes the punctuation and keys it knows with raw().
///
/// Writes through a common::text::StringCursor after what `out` held: made with `ahead` bytes, it takes that much
/// room at once and cuts `out` to the text when it ends (so it lives in a scope of its own that ends before `out` is
/// read); without, `out` holds exactly the text after every piece.
class Writer {
public:
    explicit Writer(std::string& out, std::size_t ahead = 0) : cursor_(out, ahead) {}

    /// Where the text written so far ends in `out`.
    std::size_t size() const { return cursor_.size(); }

    /// Appends `text` as it is: punctuation, or a quoted key the caller knows needs no escaping.
    /// Always inlined: most calls pass a literal, whose copy then takes a few stores instead of a call to memcpy.
    [[gnu::always_inline]] void raw(std::string_view text) {
        if (!text.empty()) std::memcpy(cursor_.take(text.size()), text.data(), text.size());
    }

    /// Appends `s` as a JSON string (quoted and escaped).
    void text(std::string_view s) {
        // Most strings are printable ASCII without a quote or a backslash, which JSON writes as they are; anything
        // else (control characters, quotes, backslashes, bytes above 0x7E) goes through Boost.JSON's serializer.
        if (plain(s)) {
            char* at = cursor_.take(s.size() + 2);
            at[0] = '"';
            if (!s.empty()) std::memcpy(at + 1, s.data(), s.size());
            at[s.size() + 1] = '"';
            return;
        }
        // At most six characters per byte (\u00XX) and the quotes: one read writes it all.
        const std::size_t most = s.size() * 6 + 2;
        char* at = cursor_.take(most);
        serializer_.reset(boost::json::string_view(s.data(), s.size()));
        cursor_.give_back(most - serializer_.read(at, most).size());
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
            raw(std::string_view(text.data(), static_cast<std::size_t>(p - text.data())));
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
    /// backslash. Sixteen bytes at a time (SSE2, part of every x86-64; elsewhere two words the same way); a text
    /// of 16 bytes or more has its tail read as its last 16 bytes (partly again); a shorter one is read from
    /// overlapping pieces of it into one block padded with a plain byte: never a byte outside `s`.
    static bool plain(std::string_view s) {
        const char* const p = s.data();
        const std::size_t n = s.size();
        if (n >= kBlock) {
            for (std::size_t i = 0; i + kBlock <= n; i += kBlock)
                if (!plain_block(load_block(p + i))) return false;
            return n % kBlock == 0 || plain_block(load_block(p + n - kBlock));
        }
        // Under a block: two words, each read from pieces that cover its part of the text (bytes read twice are
        // the same bytes); lanes past the text hold a plain byte.
        std::uint64_t low = kOnes * 'a';
        std::uint64_t high = kOnes * 'a';
        if (n >= 8) {
            std::memcpy(&low, p, 8);
            std::memcpy(&high, p + n - 8, 8);
        } else if (n >= 4) {
            std::uint32_t first = 0;
            std::uint32_t last = 0;
            std::memcpy(&first, p, 4);
            std::memcpy(&last, p + n - 4, 4);
            low = first | (std::uint64_t{last} << 32);
        } else if (n > 0) {
            // Bytes 0, n / 2 and n - 1 are every byte of a text of 1 to 3.
            low = static_cast<unsigned char>(p[0]) | (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
                  (std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16) | (low & ~std::uint64_t{0xFFFFFF});
        }
        return plain_words(low, high);
    }

private:
    static constexpr std::size_t kShortMember = 64;
    static constexpr std::size_t kBlock = 16;
    static constexpr std::uint64_t kOnes = 0x0101010101010101ULL;

#if defined(__SSE2__)
    using Block = __m128i;
    static Block load_block(const char* p) {
        Block b;
        std::memcpy(&b, p, sizeof b);
        return b;
    }
    /// Signed bytes: those from 0x80 up are negative, so one "less than 0x20" finds them and the control bytes.
    static bool plain_block(Block b) {
        const Block bad =
            _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(b, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(b, _mm_set1_epi8(0x7F))),
                         _mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('"')), _mm_cmpeq_epi8(b, _mm_set1_epi8('\\'))));
        return _mm_movemask_epi8(bad) == 0;
    }
    static bool plain_words(std::uint64_t low, std::uint64_t high) {
        return plain_block(_mm_set_epi64x(static_cast<long long>(high), static_cast<long long>(low)));
    }
#else
    using Block = std::array<std::uint64_t, 2>;
    static Block load_block(const char* p) {
        Block b;
        std::memcpy(b.data(), p, sizeof b);
        return b;
    }
    static bool plain_block(Block b) { return plain_words(b[0], b[1]); }
    /// Each test a borrow into a byte's top bit (Hacker's Delight 6-1).
    static bool plain_words(std::uint64_t low, std::uint64_t high) {
        constexpr std::uint64_t kTops = 0x8080808080808080ULL;
        const auto below = [](std::uint64_t x, std::uint64_t n) { return (x - kOnes * n) & ~x & kTops; };
        const auto zero = [&below](std::uint64_t x) { return below(x, 1); };
        const auto bad = [&](std::uint64_t x) {
            return below(x, 0x20) | (x & kTops) | zero(x ^ (kOnes * 0x7F)) | zero(x ^ (kOnes * '"')) |
                   zero(x ^ (kOnes * '\\'));
        };
        return (bad(low) | bad(high)) == 0;
    }
#endif

    template <class Integer>
    void integer(Integer n) {
        char digits[24];
        raw(std::string_view(digits,
                             static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, n).ptr - digits)));
    }

    void finish() {
        while (!serializer_.done()) {
            char more[256];
            const auto piece = serializer_.read(more);
            raw(std::string_view(piece.data(), piece.size()));
        }
    }

    common::text::StringCursor cursor_;
    boost::json::serializer serializer_;
};

}  // namespace common::json
