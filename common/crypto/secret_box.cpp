#include "common/crypto/secret_box.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "common/crypto/algorithms.hpp"
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

const unsigned char* bytes_or_empty(std::string_view text) {
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

// AES-256-GCM over `in` into `out` (as many bytes) in one direction, with `associated_data` authenticated too.
// Encrypting, the tag is written to `tag`; decrypting, `tag` is checked when the text ends and a mismatch is a
// failure. Returns false on any failure.
bool aes_256_gcm(bool encrypt, const unsigned char* key, std::string_view nonce, std::string_view associated_data,
                 std::string_view in, unsigned char* out, unsigned char* tag) {
    const CipherCtx ctx(EVP_CIPHER_CTX_new());
    const int enc = encrypt ? 1 : 0;
    int length = 0;
    int final_length = 0;
    return ctx && EVP_CipherInit_ex(ctx.get(), aes_256_gcm_cipher(), nullptr, nullptr, nullptr, enc) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kNonceBytes), nullptr) == 1 &&
           EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, key, bytes_or_empty(nonce), enc) == 1 &&
           (associated_data.empty() || EVP_CipherUpdate(ctx.get(), nullptr, &length, bytes_or_empty(associated_data),
                                                        static_cast<int>(associated_data.size())) == 1) &&
           EVP_CipherUpdate(ctx.get(), out, &length, bytes_or_empty(in), static_cast<int>(in.size())) == 1 &&
           (encrypt || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes), tag) == 1) &&
           EVP_CipherFinal_ex(ctx.get(), out + length, &final_length) == 1 &&
           static_cast<std::size_t>(length) + static_cast<std::size_t>(final_length) == in.size() &&
           (!encrypt || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes), tag) == 1);
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

    if (!aes_256_gcm(true, key_.data(), nonce, associated_data, plaintext, out, out + plaintext.size())) {
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
    // The tag is checked when the text ends: on any mismatch the plaintext is discarded.
    const bool ok =
        aes_256_gcm(false, key_.data(), *nonce, associated_data, std::string_view(*body).substr(0, text_size),
                    reinterpret_cast<unsigned char*>(plaintext.data()), tag.data());
    if (!ok) {
        cleanse(plaintext);
        return std::nullopt;
    }
    return plaintext;
}

}  // namespace common::crypto
