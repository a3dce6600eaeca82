#include "common/crypto/random.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <stdexcept>

#include "common/crypto/encoding.hpp"

namespace common::crypto {

std::string random_bytes(std::size_t n) {
    // RAND_bytes takes an int length.
    constexpr std::size_t kChunk = 1U << 30;
    std::string out(n, '\0');
    for (std::size_t pos = 0; pos < n; pos += kChunk) {
        const std::size_t length = std::min(kChunk, n - pos);
        if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data() + pos), static_cast<int>(length)) != 1) {
            throw std::runtime_error("RAND_bytes failed");
        }
    }
    return out;
}

std::string random_token(std::size_t bytes) {
    if (bytes < kMinTokenBytes) {
        throw std::invalid_argument("random_token needs at least 16 bytes");
    }
    return base64url_encode(random_bytes(bytes));
}

}  // namespace common::crypto
