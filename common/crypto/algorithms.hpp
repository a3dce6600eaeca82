#pragma once

#include <openssl/evp.h>

namespace common::crypto {

// The algorithms the hub and the POS use on every request, fetched from OpenSSL's default provider once per
// process. OpenSSL 3 resolves a legacy `EVP_sha256()` or `EVP_aes_256_gcm()` again on every use (an implicit
// fetch: a name lookup in the method store under a lock), which cost about two thirds of hashing a webhook's body; an
// explicitly fetched object is used as it is (measured in docs/performance.md). Never null: if the fetch fails
// (no default provider), the legacy object is returned and OpenSSL falls back to fetching it per use.

/// SHA-256.
const EVP_MD* sha256_md();

/// AES-256-GCM.
const EVP_CIPHER* aes_256_gcm_cipher();

}  // namespace common::crypto
