#include "common/crypto/algorithms.hpp"

namespace common::crypto {

// Fetched once and kept for the life of the process (the pointers stay reachable, so they are not leaks).
const EVP_MD* sha256_md() {
    static const EVP_MD* const kMd = [] {
        const EVP_MD* md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
        return md != nullptr ? md : EVP_sha256();
    }();
    return kMd;
}

const EVP_CIPHER* aes_256_gcm_cipher() {
    static const EVP_CIPHER* const kCipher = [] {
        const EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
        return cipher != nullptr ? cipher : EVP_aes_256_gcm();
    }();
    return kCipher;
}

}  // namespace common::crypto
