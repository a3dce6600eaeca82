#pragma once

#include <string>
#include <string_view>

namespace common::crypto {

/// PBKDF2-HMAC-SHA256 iterations of a new password hash (OWASP 2023 recommendation).
inline constexpr int kPasswordIterations = 600'000;

/// Upper bound on the iterations verify_password will run, so a corrupt record cannot stall a login.
inline constexpr int kMaxPasswordIterations = 10'000'000;

/// Hashes `password` with PBKDF2-HMAC-SHA256, a 16-byte random salt and a 32-byte output, encoded as
/// `pbkdf2_sha256$<iterations>$<base64 salt>$<base64 hash>` (standard base64, padded). Takes about 0.3 s.
std::string hash_password(std::string_view password);

/// The same with an explicit iteration count (tests use a cheap one); throws std::invalid_argument outside
/// 1..kMaxPasswordIterations.
std::string hash_password(std::string_view password, int iterations);

/// True when `password` matches `encoded` (iterations read from the string; constant-time comparison).
/// False for any malformed `encoded`: other scheme, bad number, bad base64, short salt, hash not 32 bytes.
bool verify_password(std::string_view password, std::string_view encoded);

/// Burns the time of one verify_password at kPasswordIterations and returns false: call it when the user is
/// unknown, so that an unknown email answers as slowly as a wrong password.
bool dummy_verify(std::string_view password);

/// True when `encoded` is malformed or uses fewer than kPasswordIterations (re-hash it after a good login).
bool password_needs_rehash(std::string_view encoded);

}  // namespace common::crypto
