#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace common::crypto {

/// Seals secrets at rest with AES-256-GCM under one 32-byte key (ORDERHUB_SECRET_KEY). The sealed form is
/// `v1:<base64 nonce>:<base64 ciphertext+tag>` with a random 12-byte nonce per seal and a 16-byte tag.
/// The key is never printed or exposed and is wiped on destruction. Immutable: safe to share across threads.
class SecretBox {
public:
    /// Key size in bytes; the hex form is twice as long.
    static constexpr std::size_t kKeyBytes = 32;

    /// Prefix of the current sealed format.
    static constexpr std::string_view kVersionPrefix = "v1:";

    /// A box for a key given as 64 hex characters (either case); nullopt for any other input. The caller
    /// reports "must be 64 hex characters (32 bytes)" without echoing the input.
    static std::optional<SecretBox> from_hex(std::string_view hex_key);

    /// A box for a key given as 32 raw bytes; nullopt for another length.
    static std::optional<SecretBox> from_bytes(std::string_view key);

    SecretBox(const SecretBox&) = default;
    SecretBox(SecretBox&&) noexcept = default;
    SecretBox& operator=(const SecretBox&) = default;
    SecretBox& operator=(SecretBox&&) noexcept = default;
    ~SecretBox();

    /// Encrypts `plaintext`; `associated_data` (optional) is authenticated, not stored, and must be given
    /// again to open. Throws std::length_error above 1 GiB and std::runtime_error if OpenSSL fails.
    std::string seal(std::string_view plaintext, std::string_view associated_data = {}) const;

    /// The plaintext of a `seal` result; nullopt for a malformed string, another key, other associated data
    /// or any tampering (never partial or garbage plaintext).
    std::optional<std::string> open(std::string_view sealed, std::string_view associated_data = {}) const;

private:
    explicit SecretBox(std::string_view key);

    std::array<unsigned char, kKeyBytes> key_{};
};

}  // namespace common::crypto
