#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace common::crypto {

/// Size in bytes of a SHA-256 digest and of an HMAC-SHA256 tag.
inline constexpr std::size_t kSha256Bytes = 32;

/// The raw 32-byte SHA-256 digest of `data`.
std::string sha256(std::string_view data);

/// The SHA-256 digest of `data` as 64 lowercase hex characters (what tokens are stored as).
std::string sha256_hex(std::string_view data);

/// The raw 32-byte HMAC-SHA256 tag of `data` under `key` (RFC 2104; any key length).
std::string hmac_sha256(std::string_view key, std::string_view data);

/// True when `a` and `b` hold the same bytes. The time taken depends only on the lengths (CRYPTO_memcmp), so
/// secrets of a fixed length (digests, tags) can be compared without leaking where they differ.
bool constant_time_equals(std::string_view a, std::string_view b);

}  // namespace common::crypto
