#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/crypto/algorithms.hpp"
#include "common/crypto/digest.hpp"
#include "common/crypto/encoding.hpp"
#include "common/crypto/password.hpp"
#include "common/crypto/random.hpp"
#include "common/crypto/secret_box.hpp"
#include "common/crypto/uuid.hpp"

namespace crypto = common::crypto;

namespace {

std::string from_hex(std::string_view hex) {
    auto bytes = crypto::hex_decode(hex);
    REQUIRE(bytes);
    return *bytes;
}

// Splits on '$' for inspecting encoded password hashes.
std::vector<std::string> split_dollar(const std::string& text) {
    std::vector<std::string> parts(1);
    for (const char c : text) {
        if (c == '$') {
            parts.emplace_back();
        } else {
            parts.back().push_back(c);
        }
    }
    return parts;
}

// True when every character of `text` is in `allowed` (std::regex trips GCC 12 warnings at -O2).
bool only_chars(std::string_view text, std::string_view allowed) {
    return !text.empty() && text.find_first_not_of(allowed) == std::string_view::npos;
}

constexpr std::string_view kUrlSafe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::string_view kStandard = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kLowerHex = "0123456789abcdef";

// 8-4-4-4-12 lowercase hex, version 7, RFC 9562 variant.
bool is_uuid_v7(const std::string& id) {
    if (id.size() != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-') {
        return false;
    }
    std::string hex = id;
    std::erase(hex, '-');
    return hex.size() == 32 && only_chars(hex, kLowerHex) && hex[12] == '7' &&
           std::string_view("89ab").find(hex[16]) != std::string_view::npos;
}

const std::string kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const std::string kOtherKeyHex = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

}  // namespace

TEST_CASE("sha256_hex matches the FIPS 180-2 vectors", "[crypto]") {
    CHECK(crypto::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(crypto::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(crypto::sha256("abc") == from_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
}

TEST_CASE("the algorithms fetched once are SHA-256 and AES-256-GCM, the same object for every thread", "[crypto]") {
    REQUIRE(crypto::sha256_md() != nullptr);
    REQUIRE(crypto::aes_256_gcm_cipher() != nullptr);
    CHECK(EVP_MD_is_a(crypto::sha256_md(), "SHA2-256") == 1);
    CHECK(EVP_MD_get_size(crypto::sha256_md()) == static_cast<int>(crypto::kSha256Bytes));
    CHECK(EVP_CIPHER_is_a(crypto::aes_256_gcm_cipher(), "AES-256-GCM") == 1);
    CHECK(EVP_CIPHER_get_mode(crypto::aes_256_gcm_cipher()) == EVP_CIPH_GCM_MODE);
    // Digests computed on many threads at once with the shared object are all right.
    std::vector<std::thread> threads;
    std::vector<std::string> digests(8);
    std::vector<const EVP_MD*> seen(8);
    for (std::size_t i = 0; i < digests.size(); ++i)
        threads.emplace_back([&digests, &seen, i] {
            seen[i] = crypto::sha256_md();
            for (int n = 0; n < 200; ++n) digests[i] = crypto::sha256_hex("abc");
        });
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < digests.size(); ++i) {
        CHECK(digests[i] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        CHECK(seen[i] == crypto::sha256_md());
    }
}

TEST_CASE("hmac_sha256 matches RFC 4231", "[crypto]") {
    SECTION("test case 1") {
        CHECK(crypto::hex_encode(crypto::hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    }
    SECTION("test case 2") {
        CHECK(crypto::hex_encode(crypto::hmac_sha256("Jefe", "what do ya want for nothing?")) ==
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }
    SECTION("test case 6: key longer than a block") {
        CHECK(crypto::hex_encode(crypto::hmac_sha256(std::string(131, '\xaa'),
                                                     "Test Using Larger Than Block-Size Key - Hash Key First")) ==
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }
    SECTION("raw 32 bytes, empty key allowed") { CHECK(crypto::hmac_sha256("", "").size() == 32); }
}

TEST_CASE("base64 follows RFC 4648 and refuses garbage", "[crypto]") {
    const std::vector<std::pair<std::string, std::string>> vectors = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        CHECK(crypto::base64_encode(plain) == encoded);
        CHECK(crypto::base64_decode(encoded) == plain);
    }

    std::string all_bytes;
    for (int i = 0; i < 256; ++i) {
        all_bytes.push_back(static_cast<char>(i));
    }
    CHECK(crypto::base64_decode(crypto::base64_encode(all_bytes)) == all_bytes);

    for (const std::string garbage : {"Zm9", "Zm9v!", "Zm=v", "Z===", "====", "Zm9vYg=", " Zm9v", "Zm9v\n", "Zm9v Zm9v",
                                      "Zh==", "Zm9=", "Zm9-", "Zm9_", "Zm9vYg==Zm9v"}) {
        INFO(garbage);
        CHECK_FALSE(crypto::base64_decode(garbage).has_value());
    }
}

TEST_CASE("base64url has no padding and the URL-safe alphabet", "[crypto]") {
    CHECK(crypto::base64url_encode("\xfb\xff") == "-_8");
    CHECK(crypto::base64url_decode("-_8") == "\xfb\xff");
    CHECK(crypto::base64url_encode("f") == "Zg");
    CHECK(crypto::base64url_decode("Zg") == "f");
    CHECK(crypto::base64url_decode("") == "");
    CHECK_FALSE(crypto::base64url_decode("+/8").has_value());
    CHECK_FALSE(crypto::base64url_decode("Zg==").has_value());
    CHECK_FALSE(crypto::base64url_decode("Z").has_value());
    CHECK_FALSE(crypto::base64url_decode("Zh").has_value());
}

TEST_CASE("hex encodes lowercase and decodes strictly", "[crypto]") {
    CHECK(crypto::hex_encode(std::string("\x00\xab\xff", 3)) == "00abff");
    CHECK(crypto::hex_decode("00ABff") == std::string("\x00\xab\xff", 3));
    CHECK_FALSE(crypto::hex_decode("abc").has_value());
    CHECK_FALSE(crypto::hex_decode("zz").has_value());
}

TEST_CASE("constant_time_equals compares bytes and lengths", "[crypto]") {
    CHECK(crypto::constant_time_equals("", ""));
    CHECK(crypto::constant_time_equals("abc", "abc"));
    CHECK_FALSE(crypto::constant_time_equals("abc", "abd"));
    CHECK_FALSE(crypto::constant_time_equals("abc", "abcd"));
    CHECK_FALSE(crypto::constant_time_equals("", "a"));
    CHECK(crypto::constant_time_equals(std::string("a\0b", 3), std::string("a\0b", 3)));
    CHECK_FALSE(crypto::constant_time_equals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST_CASE("random bytes and tokens", "[crypto]") {
    CHECK(crypto::random_bytes(0).empty());
    CHECK(crypto::random_bytes(64).size() == 64);
    CHECK(crypto::random_bytes(32) != crypto::random_bytes(32));

    std::set<std::string> tokens;
    for (int i = 0; i < 200; ++i) {
        const std::string token = crypto::random_token();
        CHECK(token.size() == 43);  // 256 bits
        CHECK(only_chars(token, kUrlSafe));
        const auto raw = crypto::base64url_decode(token);
        REQUIRE(raw);
        CHECK(raw->size() == 32);
        tokens.insert(token);
    }
    CHECK(tokens.size() == 200);

    CHECK(crypto::random_token(16).size() == 22);
    CHECK_THROWS_AS(crypto::random_token(15), std::invalid_argument);

    // Every byte value shows up in a large sample: the bytes are not from a narrow range.
    const std::string sample = crypto::random_bytes(65536);
    std::set<unsigned char> seen(sample.begin(), sample.end());
    CHECK(seen.size() == 256);
}

TEST_CASE("uuid_v7 has the canonical form, version 7 and the current time", "[crypto]") {
    const auto before =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const std::string id = crypto::uuid_v7();
    const auto after =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    CHECK(id.size() == 36);
    CHECK(is_uuid_v7(id));
    CHECK_FALSE(is_uuid_v7("0190a1b2-c3d4-4e5f-8a6b-7c8d9e0f1a2b"));  // v4: the checker itself works
    const long long stamp = std::stoll(id.substr(0, 8) + id.substr(9, 4), nullptr, 16);
    CHECK(stamp >= before);
    CHECK(stamp <= after + 1);  // +1: the counter may borrow a millisecond
}

TEST_CASE("uuid_v7 is strictly increasing within a process and unique across threads", "[crypto]") {
    std::string previous = crypto::uuid_v7();
    for (int i = 0; i < 20000; ++i) {
        std::string next = crypto::uuid_v7();
        REQUIRE(is_uuid_v7(next));
        REQUIRE(next > previous);
        previous = std::move(next);
    }

    std::mutex mutex;
    std::set<std::string> ids;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            std::vector<std::string> local;
            for (int i = 0; i < 2000; ++i) {
                local.push_back(crypto::uuid_v7());
            }
            const std::lock_guard lock(mutex);
            ids.insert(local.begin(), local.end());
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    CHECK(ids.size() == 8000);
}

TEST_CASE("uuid_v7's random bits never repeat: not across draws, not between a parent and its forked child",
          "[crypto]") {
    // The random bits are drawn in blocks for many ids; an id's last 16 hex digits (variant aside) are random.
    const auto random_part = [](const std::string& id) { return id.substr(19, 4) + id.substr(24); };
    std::set<std::string> seen;
    for (int i = 0; i < 5000; ++i) REQUIRE(seen.insert(random_part(crypto::uuid_v7())).second);

    // A child forked with part of a block unused must not hand out the parent's next bytes.
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const std::string id = crypto::uuid_v7();
        const ssize_t written = write(fds[1], id.data(), id.size());
        _exit(written == static_cast<ssize_t>(id.size()) ? 0 : 1);
    }
    close(fds[1]);
    const std::string mine = crypto::uuid_v7();
    std::string theirs(36, '\0');
    const ssize_t got = read(fds[0], theirs.data(), theirs.size());
    close(fds[0]);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    REQUIRE(got == 36);
    CHECK(is_uuid_v7(theirs));
    CHECK(random_part(theirs) != random_part(mine));
}

TEST_CASE("hash_password encodes pbkdf2_sha256 with salt and hash", "[crypto]") {
    const std::string encoded = crypto::hash_password("s3cret pw", 1000);
    const auto parts = split_dollar(encoded);
    REQUIRE(parts.size() == 4);
    CHECK(parts[0] == "pbkdf2_sha256");
    CHECK(parts[1] == "1000");
    CHECK(crypto::base64_decode(parts[2])->size() == 16);
    CHECK(crypto::base64_decode(parts[3])->size() == 32);

    CHECK(crypto::verify_password("s3cret pw", encoded));
    CHECK_FALSE(crypto::verify_password("s3cret pW", encoded));
    CHECK_FALSE(crypto::verify_password("", encoded));
    CHECK(crypto::hash_password("s3cret pw", 1000) != encoded);  // fresh salt each time

    CHECK_THROWS_AS(crypto::hash_password("x", 0), std::invalid_argument);
    CHECK_THROWS_AS(crypto::hash_password("x", crypto::kMaxPasswordIterations + 1), std::invalid_argument);
}

TEST_CASE("verify_password agrees with an independent PBKDF2 implementation", "[crypto]") {
    // Python: hashlib.pbkdf2_hmac('sha256', b'correct horse', b'0123456789abcdef', 1000)
    const std::string encoded =
        "pbkdf2_sha256$1000$MDEyMzQ1Njc4OWFiY2RlZg==$cBg8D2DungRB9k76szThf5ehfyBz991ay6PT8Srwk4M=";
    CHECK(crypto::verify_password("correct horse", encoded));
    CHECK_FALSE(crypto::verify_password("correct horse!", encoded));
}

TEST_CASE("verify_password refuses tampered and malformed hashes", "[crypto]") {
    const std::string encoded = crypto::hash_password("pw", 1000);
    const auto parts = split_dollar(encoded);

    std::string other_iterations = "pbkdf2_sha256$1001$" + parts[2] + "$" + parts[3];
    CHECK_FALSE(crypto::verify_password("pw", other_iterations));

    std::string hash = *crypto::base64_decode(parts[3]);
    hash[0] = static_cast<char>(hash[0] ^ 1);
    CHECK_FALSE(crypto::verify_password("pw", "pbkdf2_sha256$1000$" + parts[2] + "$" + crypto::base64_encode(hash)));

    std::string salt = *crypto::base64_decode(parts[2]);
    salt[0] = static_cast<char>(salt[0] ^ 1);
    CHECK_FALSE(crypto::verify_password("pw", "pbkdf2_sha256$1000$" + crypto::base64_encode(salt) + "$" + parts[3]));

    for (const std::string& bad : {
             std::string(),
             std::string("pbkdf2_sha256"),
             std::string("pbkdf2_sha256$"),
             "pbkdf2_sha1$1000$" + parts[2] + "$" + parts[3],
             "pbkdf2_sha256$01000$" + parts[2] + "$" + parts[3],
             "pbkdf2_sha256$-1000$" + parts[2] + "$" + parts[3],
             "pbkdf2_sha256$0$" + parts[2] + "$" + parts[3],
             "pbkdf2_sha256$99999999999$" + parts[2] + "$" + parts[3],
             "pbkdf2_sha256$1e3$" + parts[2] + "$" + parts[3],
             "pbkdf2_sha256$1000$" + parts[2] + "$" + parts[3] + "$",
             "pbkdf2_sha256$1000$" + parts[2],
             "pbkdf2_sha256$1000$!!!!$" + parts[3],
             "pbkdf2_sha256$1000$" + parts[2] + "$" + crypto::base64_encode("short"),
             "pbkdf2_sha256$1000$" + crypto::base64_encode("tiny") + "$" + parts[3],
         }) {
        INFO(bad);
        CHECK_FALSE(crypto::verify_password("pw", bad));
        CHECK(crypto::password_needs_rehash(bad));
    }
}

TEST_CASE("the default password hash uses 600000 iterations, dummy_verify never accepts", "[crypto][slow]") {
    // That dummy_verify costs as much as a real verify is a timing property: measured in tests/load, not here.
    const std::string encoded = crypto::hash_password("correct horse battery staple");
    CHECK(encoded.rfind("pbkdf2_sha256$600000$", 0) == 0);
    CHECK_FALSE(crypto::password_needs_rehash(encoded));
    CHECK(crypto::password_needs_rehash(crypto::hash_password("x", 1000)));
    CHECK(crypto::verify_password("correct horse battery staple", encoded));
    CHECK_FALSE(crypto::dummy_verify("correct horse battery staple"));
}

TEST_CASE("SecretBox seals with AES-256-GCM and opens only what it sealed", "[crypto]") {
    const auto box = crypto::SecretBox::from_hex(kKeyHex);
    REQUIRE(box);

    const std::string secret("pos-token-\x01\x00-end", 16);  // binary, with a NUL inside
    const std::string sealed = box->seal(secret);
    CHECK(sealed.rfind("v1:", 0) == 0);
    CHECK(sealed.find("pos-token") == std::string::npos);
    CHECK(box->open(sealed) == secret);
    CHECK(box->seal(secret) != sealed);  // fresh nonce each time

    const std::size_t second_colon = sealed.find(':', 3);
    REQUIRE(second_colon == 3 + 16);  // 12-byte nonce
    CHECK(only_chars(sealed.substr(3, 16), kStandard));
    CHECK(crypto::base64_decode(sealed.substr(second_colon + 1))->size() == secret.size() + 16);

    SECTION("empty plaintext") { CHECK(box->open(box->seal("")) == ""); }
    SECTION("uppercase key is the same key") {
        std::string upper = kKeyHex;
        for (char& c : upper) {
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        CHECK(crypto::SecretBox::from_hex(upper)->open(sealed) == secret);
    }
    SECTION("wrong key") { CHECK_FALSE(crypto::SecretBox::from_hex(kOtherKeyHex)->open(sealed).has_value()); }
    SECTION("associated data must match") {
        const std::string bound = box->seal(secret, "brand:BRAND-A");
        CHECK(box->open(bound, "brand:BRAND-A") == secret);
        CHECK_FALSE(box->open(bound, "brand:BRAND-B").has_value());
        CHECK_FALSE(box->open(bound).has_value());
    }
    SECTION("tampering with ciphertext, tag or nonce") {
        const std::size_t colon = sealed.find(':', 3);
        const std::string nonce = *crypto::base64_decode(sealed.substr(3, colon - 3));
        const std::string body = *crypto::base64_decode(sealed.substr(colon + 1));
        for (std::size_t i = 0; i < body.size(); ++i) {
            std::string flipped = body;
            flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
            INFO(i);
            CHECK_FALSE(box->open("v1:" + crypto::base64_encode(nonce) + ":" + crypto::base64_encode(flipped)));
        }
        std::string other_nonce = nonce;
        other_nonce[0] = static_cast<char>(other_nonce[0] ^ 0x80);
        CHECK_FALSE(box->open("v1:" + crypto::base64_encode(other_nonce) + ":" + crypto::base64_encode(body)));
        CHECK_FALSE(box->open("v1:" + crypto::base64_encode(nonce) + ":" +
                              crypto::base64_encode(body.substr(0, body.size() - 1))));
    }
    SECTION("malformed sealed strings") {
        for (const std::string& bad : {std::string(), std::string("v1:"), std::string("v1::"), "v2" + sealed.substr(2),
                                       sealed.substr(3), sealed + "=", sealed + ":x", std::string("v1:AAAA:AAAA")}) {
            INFO(bad);
            CHECK_FALSE(box->open(bad).has_value());
        }
    }
}

TEST_CASE("SecretBox keys are exactly 64 hex characters", "[crypto]") {
    CHECK(crypto::SecretBox::from_hex(kKeyHex).has_value());
    CHECK_FALSE(crypto::SecretBox::from_hex("").has_value());
    CHECK_FALSE(crypto::SecretBox::from_hex(kKeyHex.substr(1)).has_value());
    CHECK_FALSE(crypto::SecretBox::from_hex(kKeyHex + "0").has_value());
    CHECK_FALSE(crypto::SecretBox::from_hex(kKeyHex + "00").has_value());
    CHECK_FALSE(crypto::SecretBox::from_hex("g" + kKeyHex.substr(1)).has_value());
    CHECK(crypto::SecretBox::from_bytes(std::string(32, 'k')).has_value());
    CHECK_FALSE(crypto::SecretBox::from_bytes(std::string(31, 'k')).has_value());
}
