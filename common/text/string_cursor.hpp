#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace common::text {

/// Writes after what a string held, through a cursor: appended piece by piece, a string's bookkeeping (a capacity
/// check, a length and a terminator per append) was most of the cost of the texts the hub writes per order (its
/// JSON forms, the access line, a batch entry's values). Made with `ahead` bytes, it takes that much room at once
/// (doubled whenever a piece does not fit) and cuts the string to what was written when it ends: until then the
/// string holds more than the text (size() tells its end), so such a cursor lives in a scope of its own that ends
/// before the string is read. Without `ahead`, the string holds exactly the text after every piece.
class StringCursor {
public:
    StringCursor(std::string& out, std::size_t ahead) : out_(out), used_(out.size()), ahead_(ahead > 0) {
        if (ahead_) out_.resize(used_ + ahead);
    }
    StringCursor(const StringCursor&) = delete;
    StringCursor& operator=(const StringCursor&) = delete;
    ~StringCursor() {
        if (out_.size() != used_) out_.resize(used_);
    }

    /// Where the text written so far ends in the string.
    std::size_t size() const { return used_; }

    /// The next `n` bytes of the string, taken, for the caller to write. Inlined: the growth is a call of its own.
    [[gnu::always_inline]] char* take(std::size_t n) {
        if (used_ + n > out_.size()) [[unlikely]]
            grow(n);
        char* at = out_.data() + used_;
        used_ += n;
        return at;
    }

    /// The last `n` bytes taken, not written after all.
    void give_back(std::size_t n) {
        used_ -= n;
        if (!ahead_) out_.resize(used_);
    }

private:
    /// Makes room for `n` more bytes after the text (take()'s rare part, kept out of its inlined copies).
    [[gnu::noinline]] void grow(std::size_t n) {
        out_.resize(ahead_ ? std::max(out_.size() * 2, used_ + n) : used_ + n);
    }

    std::string& out_;
    std::size_t used_;
    bool ahead_;
};

}  // namespace common::text
