#include "common/crypto/secret_box.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "common/crypto/encoding.hpp"
#include "common/crypto/random.hpp"

namespace common::crypto {
namespace {

constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;
constexpr std::size_t kMaxPlaintextBytes = std::size_t{1} << 30;

struct CipherCtxFree {
    void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

const unsigned char* bytes_of(std::string_view text) {
    static constexpr unsigned char kEmpty[1] = {0};
    return text.data() != nullptr ? reinterpret_cast<const unsigned char*>(text.data()) : kEmpty;
}

// Wipes a string holding key material or failed plaintext before it is freed.
void cleanse(std::string& text) {
    if (!text.empty()) {
        OPENSSL_cleanse(text.data(), text.size());
    }
    text.clear();
}

}  // namespace

std::optional<SecretBox> SecretBox::from_hex(std::string_view hex_key) {
    if (hex_key.size() != 2 * kKeyBytes) {
        return std::nullopt;
    }
    auto key = hex_decode(hex_key);
    if (!key) {
        return std::nullopt;
    }
    std::optional<SecretBox> box = from_bytes(*key);
    cleanse(*key);
    return box;
}

std::optional<SecretBox> SecretBox::from_bytes(std::string_view key) {
    if (key.size() != kKeyBytes) {
        return std::nullopt;
    }
    return SecretBox(key);
}

SecretBox::SecretBox(std::string_view key) { std::copy(key.begin(), key.end(), key_.begin()); }

SecretBox::~SecretBox() { OPENSSL_cleanse(key_.data(), key_.size()); }

std::string SecretBox::seal(std::string_view plaintext, std::string_view associated_data) const {
    if (plaintext.size() > kMaxPlaintextBytes || associated_data.size() > kMaxPlaintextBytes) {
        throw std::length_error("secret too large to seal");
    }
    const std::string nonce = random_bytes(kNonceBytes);
    std::string sealed(plaintext.size() + kTagBytes, '\0');
    auto* out = reinterpret_cast<unsigned char*>(sealed.data());

    const CipherCtx ctx(EVP_CIPHER_CTX_new());
    int length = 0;
    int final_length = 0;
    const bool ok =
        ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kNonceBytes), nullptr) == 1 &&
        EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key_.data(), bytes_of(nonce)) == 1 &&
        (associated_data.empty() || EVP_EncryptUpdate(ctx.get(), nullptr, &length, bytes_of(associated_data),
                                                      static_cast<int>(associated_data.size())) == 1) &&
        EVP_EncryptUpdate(ctx.get(), out, &length, bytes_of(plaintext), static_cast<int>(plaintext.size())) == 1 &&
        EVP_EncryptFinal_ex(ctx.get(), out + length, &final_length) == 1 &&
        static_cast<std::size_t>(length) + static_cast<std::size_t>(final_length) == plaintext.size() &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes), out + plaintext.size()) == 1;
    if (!ok) {
        throw std::runtime_error("AES-256-GCM seal failed");
    }
    std::string result(kVersionPrefix);
    result.append(base64_encode(nonce)).append(1, ':').append(base64_encode(sealed));
    return result;
}

std::optional<std::string> SecretBox::open(std::string_view sealed, std::string_view associated_data) const {
    if (!sealed.starts_with(kVersionPrefix) || associated_data.size() > kMaxPlaintextBytes) {
        return std::nullopt;
    }
    sealed.remove_prefix(kVersionPrefix.size());
    const std::size_t colon = sealed.find(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    const auto nonce = base64_decode(sealed.substr(0, colon));
    const auto body = base64_decode(sealed.substr(colon + 1));
    if (!nonce || !body || nonce->size() != kNonceBytes || body->size() < kTagBytes ||
        body->size() - kTagBytes > kMaxPlaintextBytes) {
        return std::nullopt;
    }
    const std::size_t text_size = body->size() - kTagBytes;
    std::array<unsigned char, kTagBytes> tag{};
    std::copy(body->begin() + static_cast<std::ptrdiff_t>(text_size), body->end(), tag.begin());

    std::string plaintext(text_size, '\0');
    const CipherCtx ctx(EVP_CIPHER_CTX_new());
    int length = 0;
    int final_length = 0;
    // The final call checks the tag: on any mismatch the plaintext is discarded.
    const bool ok =
        ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kNonceBytes), nullptr) == 1 &&
        EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key_.data(), bytes_of(*nonce)) == 1 &&
        (associated_data.empty() || EVP_DecryptUpdate(ctx.get(), nullptr, &length, bytes_of(associated_data),
                                                      static_cast<int>(associated_data.size())) == 1) &&
        EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plaintext.data()), &length, bytes_of(*body),
                          static_cast<int>(text_size)) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes), tag.data()) == 1 &&
        EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plaintext.data()) + length, &final_length) >
            0 &&
        static_cast<std::size_t>(length) + static_cast<std::size_t>(final_length) == text_size;
    if (!ok) {
        cleanse(plaintext);
        return std::nullopt;
    }
    return plaintext;
}

}  // namespace common::crypto
