// Text from outside made safe to print on a terminal: common::text::terminal_safe.
#include <catch2/catch.hpp>
#include <string>

#include "common/text/terminal.hpp"

using common::text::LineBreaks;
using common::text::terminal_safe;
using common::text::terminal_safe_json;

namespace {

/// True when `s` has no byte a terminal acts on: no C0 control, no DEL, and no C1 control in UTF-8 (C2 80..9F).
bool no_control_bytes(const std::string& s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x20 || b == 0x7F) return false;
        if (b == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("terminal: plain text and non-ASCII letters pass unchanged", "[text]") {
    CHECK(terminal_safe("Sara Al-Harbi") == "Sara Al-Harbi");
    CHECK(terminal_safe("سارة 🍔 — Café") == "سارة 🍔 — Café");
    CHECK(terminal_safe("") == "");
}

TEST_CASE("terminal: ESC sequences and other C0 controls are escaped, visibly", "[text]") {
    CHECK(terminal_safe("\x1b[2J\x1b]0;owned\x07name") == "\\x1b[2J\\x1b]0;owned\\x07name");
    CHECK(terminal_safe("a\nb\tc\rd") == "a\\nb\\tc\\rd");
    CHECK(terminal_safe(std::string("nul\0here", 8)) == "nul\\x00here");
    CHECK(terminal_safe("del\x7F") == "del\\x7f");
    CHECK(terminal_safe("\x08\x08\x08") == "\\x08\\x08\\x08");
}

TEST_CASE("terminal: line breaks and tabs may be kept, every other control is still escaped", "[text]") {
    CHECK(terminal_safe("{\n\t\"a\": 1\n}", LineBreaks::keep) == "{\n\t\"a\": 1\n}");
    CHECK(terminal_safe("a\r\n\x1b[31m", LineBreaks::keep) == "a\\r\n\\x1b[31m");
}

TEST_CASE("terminal: C1 controls and reordering format characters are escaped as code points", "[text]") {
    CHECK(terminal_safe("\xC2\x9B"
                        "31m") == "\\u{009b}31m");    // CSI in UTF-8
    CHECK(terminal_safe("\xC2\x85") == "\\u{0085}");  // NEL
    CHECK(terminal_safe("abc\xE2\x80\xAE"
                        "fed") == "abc\\u{202e}fed");                            // right-to-left override
    CHECK(terminal_safe("\xE2\x81\xA6x\xE2\x81\xA9") == "\\u{2066}x\\u{2069}");  // isolates
    CHECK(terminal_safe("\xE2\x80\xA8") == "\\u{2028}");                         // line separator
    CHECK(terminal_safe("\xC2\xA0") == "\xC2\xA0");                              // no-break space is kept
}

TEST_CASE("terminal: bytes outside well-formed UTF-8 are escaped one by one", "[text]") {
    CHECK(terminal_safe("r\xE9sum\xE9") == "r\\xe9sum\\xe9");
    CHECK(terminal_safe("\x9b"
                        "31m") == "\\x9b31m");  // a bare C1 byte (8-bit CSI)
    CHECK(terminal_safe("\xC0\xAF") == "\\xc0\\xaf");
    CHECK(terminal_safe("\xE2\x80") == "\\xe2\\x80");  // cut short
}

TEST_CASE("terminal: a backslash is doubled, so an escape in the output always stands for a character", "[text]") {
    CHECK(terminal_safe("C:\\x1b") == "C:\\\\x1b");
    CHECK(terminal_safe("\\") == "\\\\");
}

TEST_CASE("terminal: no byte sequence survives that a terminal acts on", "[text]") {
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    all += "\xC2\x80\xC2\x9F\xC2\x9B";
    CHECK(no_control_bytes(terminal_safe(all)));
    std::string kept = terminal_safe(all, LineBreaks::keep);
    for (char c : std::string("\t\n")) kept.erase(kept.find(c), 1);
    CHECK(no_control_bytes(kept));
}

TEST_CASE("terminal: serialized JSON keeps its own escapes and loses what JSON leaves raw", "[text]") {
    CHECK(terminal_safe_json(R"({"name":"Sara\u001b[2J","path":"C:\\x"})") ==
          R"({"name":"Sara\u001b[2J","path":"C:\\x"})");
    CHECK(terminal_safe_json("{\"a\":\"\xC2\x9B"
                             "31m\x7F\xE2\x80\xAE\"}") == R"({"a":"\u{009b}31m\x7f\u{202e}"})");
    CHECK(terminal_safe_json("\"\xFF\"") == R"("\xff")");
}
