/*
 * OpenSSL's own DSA speed with a key of our choosing, for comparing like
 * with like: `openssl speed dsa2048` signs with its built-in test key
 * (apps/testdsa.h: a 160-bit q), sysgauge's crypto.dsa-2048 with RFC 6979's
 * (a 256-bit q), and DSA's exponents are as long as q. The loops are
 * `openssl speed`'s: EVP_PKEY_sign / EVP_PKEY_verify of a 20-byte digest on
 * a prepared context, by wall time. See docs/performance.md.
 *
 *   cc -O2 -o /tmp/openssl-dsa-same-key scripts/openssl-dsa-same-key.c -lcrypto
 *   taskset -c 1 /tmp/openssl-dsa-same-key \
 *       crates/sysgauge-crypto/src/crypto/keys/dsa-2048.pk8.der 1
 *
 * Prints "sign N/s" and "verify N/s".
 */
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s KEY.pk8.der [SECONDS]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    unsigned char der[8192];
    long n = (long)fread(der, 1, sizeof der, f);
    fclose(f);
    const unsigned char *p = der;
    EVP_PKEY *key = d2i_AutoPrivateKey(NULL, &p, n);
    if (key == NULL) {
        fprintf(stderr, "%s: not a PKCS#8 private key\n", argv[1]);
        return 1;
    }
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    unsigned char md[20] = {1, 2, 3};
    unsigned char sig[256];
    size_t siglen = sizeof sig;
    EVP_PKEY_CTX *s = EVP_PKEY_CTX_new(key, NULL);
    EVP_PKEY_CTX *v = EVP_PKEY_CTX_new(key, NULL);
    if (s == NULL || v == NULL || EVP_PKEY_sign_init(s) <= 0 || EVP_PKEY_verify_init(v) <= 0) {
        fprintf(stderr, "cannot set up signing\n");
        return 1;
    }
    long count = 0;
    double t0 = now(), t;
    do {
        siglen = sizeof sig;
        if (EVP_PKEY_sign(s, sig, &siglen, md, sizeof md) <= 0) {
            fprintf(stderr, "signing failed\n");
            return 1;
        }
        count++;
        t = now() - t0;
    } while (t < secs);
    printf("sign %.0f/s\n", count / t);
    count = 0;
    t0 = now();
    do {
        if (EVP_PKEY_verify(v, sig, siglen, md, sizeof md) != 1) {
            fprintf(stderr, "verification failed\n");
            return 1;
        }
        count++;
        t = now() - t0;
    } while (t < secs);
    printf("verify %.0f/s\n", count / t);
    return 0;
}
