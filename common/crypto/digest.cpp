#include "common/crypto/digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <climits>
#include <memory>
#include <stdexcept>

#include "common/crypto/algorithms.hpp"
#include "common/crypto/encoding.hpp"

namespace common::crypto {
namespace {

// OpenSSL wants a non-null pointer even for zero bytes; an empty string_view may hold nullptr.
const void* data_or_empty(std::string_view text) {
    return text.data() != nullptr ? static_cast<const void*>(text.data()) : static_cast<const void*>("");
}

/// SHA-256 of `data` into `out` (kSha256Bytes). The thread's digest context is kept from one digest to the next:
/// EVP_Digest allocated a context and its provider's state, four allocations, for every order's payload hash.
void sha256_into(std::string_view data, unsigned char* out) {
    thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> kContext(EVP_MD_CTX_new(),
                                                                                        &EVP_MD_CTX_free);
    unsigned int length = 0;
    if (!kContext || EVP_DigestInit_ex2(kContext.get(), sha256_md(), nullptr) != 1 ||
        EVP_DigestUpdate(kContext.get(), data_or_empty(data), data.size()) != 1 ||
        EVP_DigestFinal_ex(kContext.get(), out, &length) != 1 || length != kSha256Bytes) {
        throw std::runtime_error("SHA-256 failed");
    }
}

}  // namespace

std::string sha256(std::string_view data) {
    std::string out(kSha256Bytes, '\0');
    sha256_into(data, reinterpret_cast<unsigned char*>(out.data()));
    return out;
}

std::string sha256_hex(std::string_view data) {
    // The digest on the stack: only the hex text is allocated (an order's payload hash, every order).
    std::array<unsigned char, kSha256Bytes> digest{};
    sha256_into(data, digest.data());
    return hex_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
    if (key.size() > static_cast<std::size_t>(INT_MAX)) {
        throw std::length_error("HMAC key too long");
    }
    std::string out(kSha256Bytes, '\0');
    unsigned int length = 0;
    if (HMAC(sha256_md(), data_or_empty(key), static_cast<int>(key.size()),
             static_cast<const unsigned char*>(data_or_empty(data)), data.size(),
             reinterpret_cast<unsigned char*>(out.data()), &length) == nullptr ||
        length != kSha256Bytes) {
        throw std::runtime_error("HMAC-SHA256 failed");
    }
    return out;
}

bool constant_time_equals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace common::crypto
