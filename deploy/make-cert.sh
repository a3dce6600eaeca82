#!/usr/bin/env bash
# Throwaway TLS material for local HTTPS and the tests, made with the openssl CLI:
#   deploy/make-cert.sh DIR
# writes into DIR (created if needed):
#   ca.pem, ca.key            a private CA (10 years; trust it with --ca-file DIR/ca.pem)
#   server.pem, server.key    a server certificate for localhost, 127.0.0.1 and ::1 (SAN), signed by the CA
#   wrong.pem, wrong.key      a certificate for wrong.example only, signed by the same CA (host-name mismatch tests)
# and prints one `name=path` line per file. Idempotent: files that exist, verify against the CA and stay valid for
# another day are kept; otherwise the whole set is made again. Keys are P-256 and readable by the owner only.
# For local use and tests only: a real deployment uses a certificate from a real CA.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
command -v openssl >/dev/null || { echo "openssl is not installed: apt-get install openssl" >&2; exit 1; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
umask 077

valid() {  # valid NAME: the pair exists, is signed by the CA and does not expire within a day
  [ -s "$dir/$1.pem" ] && [ -s "$dir/$1.key" ] &&
    openssl verify -CAfile "$dir/ca.pem" "$dir/$1.pem" >/dev/null 2>&1 &&
    openssl x509 -checkend 86400 -noout -in "$dir/$1.pem" >/dev/null 2>&1
}

leaf() {  # leaf NAME CN SAN
  local name=$1 cn=$2 san=$3 tmp
  tmp=$(mktemp -d)
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/key" 2>/dev/null
  openssl req -new -key "$tmp/key" -subj "/CN=$cn/O=OrderHub test" -out "$tmp/csr"
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" "subjectAltName=$san" >"$tmp/ext"
  openssl x509 -req -in "$tmp/csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -CAserial "$tmp/serial" -days 825 -sha256 -extfile "$tmp/ext" -out "$tmp/pem" 2>/dev/null
  mv "$tmp/key" "$dir/$name.key"
  mv "$tmp/pem" "$dir/$name.pem"
  chmod 644 "$dir/$name.pem"
  rm -rf "$tmp"
}

if ! { [ -s "$dir/ca.pem" ] && [ -s "$dir/ca.key" ] && valid server && valid wrong; }; then
  tmp=$(mktemp -d)
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$tmp/ca.key" -subj "/CN=OrderHub throwaway test CA" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$tmp/ca.pem"
  mv "$tmp/ca.key" "$dir/ca.key"
  mv "$tmp/ca.pem" "$dir/ca.pem"
  chmod 644 "$dir/ca.pem"
  rm -rf "$tmp"
  leaf server localhost "DNS:localhost,IP:127.0.0.1,IP:::1"
  leaf wrong wrong.example "DNS:wrong.example"
fi

for f in ca.pem ca.key server.pem server.key wrong.pem wrong.key; do
  echo "${f%.*}_${f##*.}=$dir/$f"
done
