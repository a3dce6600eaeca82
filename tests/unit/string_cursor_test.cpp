// common::text::StringCursor: writes after what a string held, through room taken ahead or exactly.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "common/text/string_cursor.hpp"

namespace {

/// Writes `pieces` pieces of growing size through a cursor with `ahead`, giving back part of every third.
std::string written(std::string before, std::size_t ahead, std::size_t pieces, std::string& expected) {
    expected = before;
    {
        common::text::StringCursor cursor(before, ahead);
        for (std::size_t k = 0; k < pieces; ++k) {
            const std::string piece(k % 40 + 1, static_cast<char>('a' + k % 26));
            char* at = cursor.take(piece.size() + 3);
            std::memcpy(at, piece.data(), piece.size());
            cursor.give_back(3);  // taken for a worst case, not written
            expected += piece;
            CHECK(cursor.size() == expected.size());
            if (ahead == 0) CHECK(before == expected);  // exact: the string is the text after every piece
        }
    }
    return before;
}

}  // namespace

TEST_CASE("string cursor: what was written follows what the string held, however far the room grew", "[text]") {
    for (const std::size_t ahead : {std::size_t{0}, std::size_t{1}, std::size_t{64}, std::size_t{4096}}) {
        for (const std::size_t pieces : {std::size_t{0}, std::size_t{1}, std::size_t{500}}) {
            INFO("ahead " << ahead << ", pieces " << pieces);
            std::string expected;
            CHECK(written("held:", ahead, pieces, expected) == expected);
        }
    }
}
