#include "common/crypto/encoding.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstddef>

namespace common::crypto {
namespace {

// EVP_EncodeBlock/EVP_DecodeBlock take an int length: work in chunks that keep the 3:4 alignment.
constexpr std::size_t kEncodeChunk = 3 * (1U << 20);
constexpr std::size_t kDecodeChunk = 4 * (1U << 20);

const unsigned char* bytes_of(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }

bool is_base64_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

}  // namespace

std::string base64_encode(std::string_view data) {
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    for (std::size_t pos = 0; pos < data.size(); pos += kEncodeChunk) {
        const std::string_view chunk = data.substr(pos, kEncodeChunk);
        const std::size_t start = out.size();
        // EVP_EncodeBlock also writes a terminating NUL.
        out.resize(start + (chunk.size() + 2) / 3 * 4 + 1);
        const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + start), bytes_of(chunk),
                                            static_cast<int>(chunk.size()));
        out.resize(start + static_cast<std::size_t>(written));
    }
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) {
        return std::nullopt;
    }
    if (text.empty()) {
        return std::string{};
    }
    std::size_t padding = 0;
    if (text.back() == '=') {
        padding = text[text.size() - 2] == '=' ? 2 : 1;
    }
    // EVP_DecodeBlock skips surrounding whitespace and is lax about padding: check the alphabet first.
    if (!std::all_of(text.begin(), text.end() - static_cast<std::ptrdiff_t>(padding), is_base64_char)) {
        return std::nullopt;
    }
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t pos = 0; pos < text.size(); pos += kDecodeChunk) {
        const std::string_view chunk = text.substr(pos, kDecodeChunk);
        const std::size_t start = out.size();
        out.resize(start + chunk.size() / 4 * 3);
        const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data() + start), bytes_of(chunk),
                                            static_cast<int>(chunk.size()));
        if (written < 0) {
            return std::nullopt;
        }
        out.resize(start + static_cast<std::size_t>(written));
    }
    // EVP_DecodeBlock counts padding as zero bytes.
    out.resize(out.size() - padding);
    // Only the canonical form: this refuses non-zero padding bits, so each byte string has one encoding.
    if (base64_encode(out) != text) {
        return std::nullopt;
    }
    return out;
}

std::string base64url_encode(std::string_view data) {
    std::string out = base64_encode(data);
    while (!out.empty() && out.back() == '=') {
        out.pop_back();
    }
    std::replace(out.begin(), out.end(), '+', '-');
    std::replace(out.begin(), out.end(), '/', '_');
    return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
    if (text.size() % 4 == 1) {
        return std::nullopt;
    }
    std::string standard(text);
    for (char& c : standard) {
        if (c == '+' || c == '/' || c == '=') {
            return std::nullopt;
        }
        if (c == '-') {
            c = '+';
        } else if (c == '_') {
            c = '/';
        }
    }
    standard.append((4 - standard.size() % 4) % 4, '=');
    return base64_decode(standard);
}

char* hex_encode_to(std::string_view data, char* out) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (const char c : data) {
        const auto byte = static_cast<unsigned char>(c);
        *out++ = kDigits[byte >> 4];
        *out++ = kDigits[byte & 0x0F];
    }
    return out;
}

std::string hex_encode(std::string_view data) {
    std::string out(data.size() * 2, '\0');
    hex_encode_to(data, out.data());
    return out;
}

std::optional<std::string> hex_decode(std::string_view text) {
    if (text.size() % 2 != 0) {
        return std::nullopt;
    }
    std::string out;
    out.reserve(text.size() / 2);
    for (std::size_t i = 0; i < text.size(); i += 2) {
        const int high = hex_value(text[i]);
        const int low = hex_value(text[i + 1]);
        if (high < 0 || low < 0) {
            return std::nullopt;
        }
        out.push_back(static_cast<char>((high << 4) | low));
    }
    return out;
}

}  // namespace common::crypto
