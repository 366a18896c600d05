// The SZ3 calls tensor-pipeline makes, each inside a try block: SZ3's C++ throws on a
// malformed stream (and may throw std::bad_alloc), and an exception that reached Rust would
// abort the process. Each function returns 0 on success and 1 when anything was thrown.
//
// The functions called here are those of the `tensogram-sz3-sys` crate's shim, which is
// C++ compiled with exception tables: an exception thrown inside them unwinds into these
// frames and stops at the catch.

#include <cstddef>
#include <cstdint>

// The layout of `tensogram_sz3_sys::SZ3_Config` (#[repr(C)]).
struct Sz3Config {
    uint8_t N;
    size_t* dims;
    size_t num;
    uint8_t errorBoundMode;
    double absErrorBound;
    double relErrorBound;
    double l2normErrorBound;
    double psnrErrorBound;
    uint8_t cmprAlgo;
    bool lorenzo;
    bool lorenzo2;
    bool regression;
    bool openmp;
    uint8_t dataType;
    int32_t blockSize;
    int32_t quantbinCnt;
};

extern "C" size_t sz3_compress_size_bound_f64(Sz3Config config);
extern "C" size_t sz3_compress_f64(Sz3Config config, const double* data, char* out, size_t capacity);
extern "C" void sz3_decompress_f64(const char* src, size_t len, double* out);

extern "C" int tensorkit_sz3_bound_f64(Sz3Config config, size_t* bound) {
    try {
        *bound = sz3_compress_size_bound_f64(config);
        return 0;
    } catch (...) {
        return 1;
    }
}

extern "C" int tensorkit_sz3_compress_f64(Sz3Config config, const double* data, char* out,
                                          size_t capacity, size_t* written) {
    try {
        *written = sz3_compress_f64(config, data, out, capacity);
        return 0;
    } catch (...) {
        return 1;
    }
}

extern "C" int tensorkit_sz3_decompress_f64(const char* src, size_t len, double* out) {
    try {
        sz3_decompress_f64(src, len, out);
        return 0;
    } catch (...) {
        return 1;
    }
}
