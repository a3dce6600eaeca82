#include "common/crypto/password.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstddef>
#include <optional>
#include <stdexcept>

#include "common/crypto/algorithms.hpp"
#include "common/crypto/digest.hpp"
#include "common/crypto/encoding.hpp"
#include "common/crypto/random.hpp"

namespace common::crypto {
namespace {

constexpr std::string_view kScheme = "pbkdf2_sha256";
constexpr std::size_t kSaltBytes = 16;
constexpr std::size_t kMinSaltBytes = 8;
constexpr std::size_t kHashBytes = 32;

struct ParsedHash {
    int iterations = 0;
    std::string salt;
    std::string hash;
};

std::string derive(std::string_view password, std::string_view salt, int iterations) {
    if (password.size() > static_cast<std::size_t>(INT_MAX) || salt.size() > static_cast<std::size_t>(INT_MAX)) {
        throw std::length_error("password too long");
    }
    std::string out(kHashBytes, '\0');
    const char* pw = password.data() != nullptr ? password.data() : "";
    if (PKCS5_PBKDF2_HMAC(pw, static_cast<int>(password.size()), reinterpret_cast<const unsigned char*>(salt.data()),
                          static_cast<int>(salt.size()), iterations, sha256_md(), static_cast<int>(kHashBytes),
                          reinterpret_cast<unsigned char*>(out.data())) != 1) {
        throw std::runtime_error("PBKDF2 failed");
    }
    return out;
}

// Splits `pbkdf2_sha256$<iterations>$<salt>$<hash>`; nullopt for anything else.
std::optional<ParsedHash> parse(std::string_view encoded) {
    if (std::count(encoded.begin(), encoded.end(), '$') != 3) {
        return std::nullopt;
    }
    std::string_view parts[4];
    for (std::string_view& part : parts) {
        const std::size_t dollar = encoded.find('$');
        part = encoded.substr(0, dollar);
        encoded.remove_prefix(dollar == std::string_view::npos ? encoded.size() : dollar + 1);
    }
    if (parts[0] != kScheme) {
        return std::nullopt;
    }
    // Digits only, no sign and no leading zero.
    const std::string_view digits = parts[1];
    if (digits.empty() || digits.front() == '0' || digits.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
    }
    ParsedHash parsed;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed.iterations);
    if (error != std::errc{} || end != digits.data() + digits.size() || parsed.iterations > kMaxPasswordIterations) {
        return std::nullopt;
    }
    auto salt = base64_decode(parts[2]);
    auto hash = base64_decode(parts[3]);
    if (!salt || !hash || salt->size() < kMinSaltBytes || hash->size() != kHashBytes) {
        return std::nullopt;
    }
    parsed.salt = std::move(*salt);
    parsed.hash = std::move(*hash);
    return parsed;
}

}  // namespace

std::string hash_password(std::string_view password) { return hash_password(password, kPasswordIterations); }

std::string hash_password(std::string_view password, int iterations) {
    if (iterations < 1 || iterations > kMaxPasswordIterations) {
        throw std::invalid_argument("password hash iterations out of range");
    }
    const std::string salt = random_bytes(kSaltBytes);
    const std::string hash = derive(password, salt, iterations);
    std::string encoded(kScheme);
    encoded.append("$").append(std::to_string(iterations));
    encoded.append("$").append(base64_encode(salt));
    encoded.append("$").append(base64_encode(hash));
    return encoded;
}

bool verify_password(std::string_view password, std::string_view encoded) {
    const auto parsed = parse(encoded);
    if (!parsed) {
        return false;
    }
    return constant_time_equals(derive(password, parsed->salt, parsed->iterations), parsed->hash);
}

bool dummy_verify(std::string_view password) {
    static constexpr std::string_view kDummySalt = "orderhub-dummy!!";
    static const std::string kDummyHash(kHashBytes, '\x5a');
    // Same work as verify_password: one derivation at the default cost and a constant-time comparison.
    const bool equal = constant_time_equals(derive(password, kDummySalt, kPasswordIterations), kDummyHash);
    static_cast<void>(equal);
    return false;
}

bool password_needs_rehash(std::string_view encoded) {
    const auto parsed = parse(encoded);
    return !parsed || parsed->iterations < kPasswordIterations;
}

}  // namespace common::crypto
