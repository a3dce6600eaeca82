#pragma once

#include <cstddef>
#include <string>

namespace common::crypto {

/// Default size of a random token: 32 bytes, 256 bits.
inline constexpr std::size_t kTokenBytes = 32;

/// Smallest token random_token accepts: 16 bytes, 128 bits.
inline constexpr std::size_t kMinTokenBytes = 16;

/// `n` bytes from OpenSSL's CSPRNG (RAND_bytes). Thread-safe. Throws std::runtime_error if RAND_bytes fails.
std::string random_bytes(std::size_t n);

/// A URL-safe base64 token (no padding) of `bytes` random bytes: 43 characters for the default 32 bytes.
/// Throws std::invalid_argument below kMinTokenBytes.
std::string random_token(std::size_t bytes = kTokenBytes);

}  // namespace common::crypto
